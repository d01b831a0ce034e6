package nfs

import (
	"bytes"
	"crypto/rand"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// layoutget sends PUTFH fh + LAYOUTGET (whole file, iomode) with sid and
// returns the status and a decoder at LAYOUTGET4resok (or at the error
// body).
func (h *harness) layoutget(fh []byte, sid nfs4.Stateid, iomode, maxcount uint32) (nfs4.Status, *xdr.Decoder) {
	h.t.Helper()
	d, st := h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpLayoutget)
		e.Bool(false)
		e.Uint32(nfs4.LayoutFlexFiles)
		e.Uint32(iomode)
		e.Uint64(0)
		e.Uint64(nfs4.LengthToEOF)
		e.Uint64(0)
		sid.Encode(e)
		e.Uint32(maxcount)
	})
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpLayoutget, st)
	return st, d
}

// ffLayout is an ff_layout4 as the test reads it by hand from RFC 8435
// section 5.1's XDR.
type ffLayout struct {
	stripeUnit  uint64
	mirrors     []ffDS
	flags, hint uint32
}

type ffDS struct {
	device      DeviceID
	efficiency  uint32
	stateid     nfs4.Stateid
	fh          []byte
	user, group string
}

// readLayoutget reads LAYOUTGET4resok with one flexfiles layout4.
func readLayoutget(t *testing.T, d *xdr.Decoder) (roc bool, sid nfs4.Stateid, iomode uint32, l ffLayout) {
	t.Helper()
	roc = d.Bool()
	sid = nfs4.DecodeStateid(d)
	if n := d.Uint32(); n != 1 {
		t.Fatalf("%d layouts, want 1", n)
	}
	if off, length := d.Uint64(), d.Uint64(); off != 0 || length != nfs4.LengthToEOF {
		t.Errorf("layout range %d+%d, want the whole file", off, length)
	}
	iomode = d.Uint32()
	if typ := d.Uint32(); typ != nfs4.LayoutFlexFiles {
		t.Fatalf("layout type %d", typ)
	}
	b := xdr.NewDecoder(d.Opaque(1 << 16))
	l.stripeUnit = b.Uint64()
	nm := b.Uint32()
	for i := uint32(0); i < nm && b.Err() == nil; i++ {
		if nds := b.Uint32(); nds != 1 {
			t.Fatalf("mirror %d: %d data servers, want 1", i, nds)
		}
		var ds ffDS
		copy(ds.device[:], b.Fixed(nfs4.DeviceIDSize))
		ds.efficiency = b.Uint32()
		ds.stateid = nfs4.DecodeStateid(b)
		if nfh := b.Uint32(); nfh != 1 {
			t.Fatalf("%d handles, want 1", nfh)
		}
		ds.fh = bytes.Clone(b.Opaque(nfs4.FHSize))
		ds.user, ds.group = string(b.String(64)), string(b.String(64))
		l.mirrors = append(l.mirrors, ds)
	}
	l.flags, l.hint = b.Uint32(), b.Uint32()
	if b.Err() != nil || b.Remaining() != 0 || d.Err() != nil {
		t.Fatalf("ff_layout4 did not decode: %v, %d bytes left", b.Err(), b.Remaining())
	}
	return
}

// storedLayout reads the layout xattr of name in h's export.
func (h *harness) storedLayout(name string) *FileLayout {
	h.t.Helper()
	f, err := os.Open(filepath.Join(h.dir, name))
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	l, err := readLayoutXattr(int(f.Fd()))
	if err != nil {
		h.t.Fatal(err)
	}
	return l
}

// TestLayoutgetEncode: with the role on EXCHANGE_ID says USE_PNFS_MDS; a
// file created through OPEN gets data files (DataServers.Create) and
// its layout stored in the trusted xattr; LAYOUTGET answers an
// ff_layout4 naming them, decoded here by hand, with a layout stateid
// of seqid 1, then 2 for a LAYOUTGET with that stateid.
func TestLayoutgetEncode(t *testing.T) {
	ds := newFakeDS(2)
	h := newMDSHarness(t, ds)
	if _, _, flags := h.exchangeID("probe", "verifier", 0); flags&nfs4.ExchgIDUsePNFSMDS == 0 || flags&nfs4.ExchgIDUseNonPNFS != 0 {
		t.Errorf("EXCHANGE_ID flags %#x, want USE_PNFS_MDS alone", flags)
	}
	h.session()
	st, open, fh := h.create("f", nfs4.CreateUnchecked, "")
	if st != nfs4.OK {
		t.Fatalf("create: %d", st)
	}
	stored := h.storedLayout("f")
	if stored == nil || len(stored.Mirrors) != 1 {
		t.Fatalf("stored layout %+v", stored)
	}
	st, d := h.layoutget(fh, open, nfs4.LayoutIOModeRW, 4096)
	if st != nfs4.OK {
		t.Fatalf("LAYOUTGET: %d", st)
	}
	roc, lsid, iomode, l := readLayoutget(t, d)
	if !roc || lsid.Seqid != 1 || lsid.Other == open.Other || iomode != nfs4.LayoutIOModeRW {
		t.Errorf("return_on_close %v, stateid %+v, iomode %d", roc, lsid, iomode)
	}
	if l.stripeUnit != 0 || len(l.mirrors) != 1 || l.flags != 0 {
		t.Fatalf("layout %+v", l)
	}
	m := l.mirrors[0]
	if m.device != stored.Mirrors[0].Device || !bytes.Equal(m.fh, stored.Mirrors[0].FH) ||
		m.stateid != nfs4.AnonStateid || m.user != "10001" || m.group != "10001" {
		t.Errorf("data server %+v, stored %+v", m, stored)
	}
	st, d = h.layoutget(fh, lsid, nfs4.LayoutIOModeRead, 0)
	if st != nfs4.OK {
		t.Fatalf("second LAYOUTGET: %d", st)
	}
	if _, sid2, _, _ := readLayoutget(t, d); sid2.Other != lsid.Other || sid2.Seqid != 2 {
		t.Errorf("second stateid %+v, want seqid 2 of %+v", sid2, lsid)
	}
	if st, _ := h.layoutget(fh, nfs4.Stateid{Seqid: 9, Other: lsid.Other}, nfs4.LayoutIOModeRead, 0); st != nfs4.ErrBadStateid {
		t.Errorf("LAYOUTGET with a seqid from the future: %d, want BAD_STATEID", st)
	}
	if st, _ := h.layoutget(fh, open, nfs4.LayoutIOModeAny, 0); st != nfs4.ErrBadIOMode {
		t.Errorf("LAYOUTGET iomode ANY: %d, want BADIOMODE", st)
	}
	if st, _ := h.layoutget(fh, open, nfs4.LayoutIOModeRW, 40); st != nfs4.ErrToosmall {
		t.Errorf("LAYOUTGET maxcount 40: %d, want TOOSMALL", st)
	}
	// A file made on the export (no layout) is served as before.
	h.write("old", []byte("data"))
	old := h.lookupFH("old")
	_, osid := h.openIn(asRoot, h.rootFH(), "old", "o", nfs4.ShareAccessRead, nfs4.ShareDenyNone)
	if st, _ := h.layoutget(old, osid, nfs4.LayoutIOModeRead, 0); st != nfs4.ErrLayoutUnavailable {
		t.Errorf("LAYOUTGET of a file without layout: %d, want LAYOUTUNAVAILABLE", st)
	}
}

// TestCreateWithoutDataServers: a Create that fails leaves the file
// without a layout, created all the same, its data on the export.
func TestCreateWithoutDataServers(t *testing.T) {
	ds := newFakeDS(1)
	ds.createErr = os.ErrDeadlineExceeded
	h := newMDSHarness(t, ds)
	h.session()
	st, sid, fh := h.create("f", nfs4.CreateUnchecked, "")
	if st != nfs4.OK {
		t.Fatalf("create with the data servers down: %d", st)
	}
	if l := h.storedLayout("f"); l != nil {
		t.Fatalf("layout stored: %+v", l)
	}
	if st, n, _, _ := h.writeOp(fh, sid, 0, nfs4.FileSync4, []byte("local")); st != nfs4.OK || n != 5 {
		t.Fatalf("WRITE: %d %d", st, n)
	}
	if got := h.fileData("f"); string(got) != "local" {
		t.Fatalf("export file holds %q", got)
	}
}

// TestGetdeviceinfo reads ff_device_addr4 by hand (RFC 8435 section
// 5.1): one tcp netaddr4 with the universal address of the data server
// (port 2049 = 8.1) and one version {4, 1, rsize, wsize, loose}; a
// gdia_maxcount too small is NFS4ERR_TOOSMALL with the size needed.
func TestGetdeviceinfo(t *testing.T) {
	ds := newFakeDS(2)
	h := newMDSHarness(t, ds)
	h.session()
	gdi := func(id DeviceID, maxcount uint32) (nfs4.Status, *xdr.Decoder) {
		d, st := h.ops(1, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpGetdeviceinfo)
			e.Fixed(id[:])
			e.Uint32(nfs4.LayoutFlexFiles)
			e.Uint32(maxcount)
			nfs4.BitmapOf(nfs4.NotifyDeviceIDChange).Encode(e)
		})
		skipSequence(t, d)
		opResult(t, d, nfs4.OpGetdeviceinfo, st)
		return st, d
	}
	st, d := gdi(ds.devs[1].ID, 4096)
	if st != nfs4.OK {
		t.Fatalf("GETDEVICEINFO: %d", st)
	}
	if typ := d.Uint32(); typ != nfs4.LayoutFlexFiles {
		t.Fatalf("type %d", typ)
	}
	body := d.Opaque(4096)
	if notify := nfs4.DecodeBitmap(d); !notify.Empty() || d.Err() != nil {
		t.Errorf("notifications %v (none are sent)", notify)
	}
	b := xdr.NewDecoder(body)
	if n := b.Uint32(); n != 1 {
		t.Fatalf("%d netaddrs", n)
	}
	netid, uaddr := string(b.String(64)), string(b.String(64))
	if netid != "tcp" || uaddr != "127.0.0.2.8.1" {
		t.Errorf("netaddr %q %q", netid, uaddr)
	}
	if n := b.Uint32(); n != 1 {
		t.Fatalf("%d versions", n)
	}
	v := []uint32{b.Uint32(), b.Uint32(), b.Uint32(), b.Uint32(), b.Uint32()}
	if want := []uint32{4, 1, 1 << 20, 1 << 20, 0}; !slicesEqual(v, want) || b.Remaining() != 0 {
		t.Errorf("version %v, want %v (%d bytes left)", v, want, b.Remaining())
	}
	need := uint32(4 + 4 + len(body) + 4)
	st, d = gdi(ds.devs[1].ID, 16)
	if st != nfs4.ErrToosmall {
		t.Fatalf("small maxcount: %d", st)
	}
	if got := d.Uint32(); got != need {
		t.Errorf("gdir_mincount %d, want %d", got, need)
	}
	if st, _ := gdi(DeviceID{1}, 4096); st != nfs4.ErrNoent {
		t.Errorf("unknown device: %d, want NOENT", st)
	}
}

func slicesEqual(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// layoutSetup: an MDS over ds with client h holding a RW layout of a
// file f it created; returns the handle, open and layout stateids.
func layoutSetup(t *testing.T, ds *fakeDS) (h *harness, fh []byte, open, lsid nfs4.Stateid, l ffLayout) {
	h = newMDSHarness(t, ds)
	h.session()
	st, open, fh := h.create("f", nfs4.CreateUnchecked, "")
	if st != nfs4.OK {
		t.Fatalf("create: %d", st)
	}
	st, d := h.layoutget(fh, open, nfs4.LayoutIOModeRW, 0)
	if st != nfs4.OK {
		t.Fatalf("LAYOUTGET: %d", st)
	}
	_, lsid, _, l = readLayoutget(t, d)
	return h, fh, open, lsid, l
}

// layoutcommit sends LAYOUTCOMMIT of last write offset last and returns
// the status and ns_sizechanged, ns_size.
func (h *harness) layoutcommit(fh []byte, lsid nfs4.Stateid, last uint64) (nfs4.Status, bool, uint64) {
	h.t.Helper()
	d, st := h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpLayoutcommit)
		e.Uint64(0)
		e.Uint64(nfs4.LengthToEOF)
		e.Bool(false)
		lsid.Encode(e)
		e.Bool(true)
		e.Uint64(last)
		e.Bool(false) // server time
		e.Uint32(nfs4.LayoutFlexFiles)
		e.Opaque(nil)
	})
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpLayoutcommit, st)
	if st != nfs4.OK {
		return st, false, 0
	}
	changed := d.Bool()
	var size uint64
	if changed {
		size = d.Uint64()
	}
	return st, changed, size
}

// TestLayoutcommitNoShrink: LAYOUTCOMMIT grows the MDS file to the last
// write offset + 1 and answers the new size; a lower offset later
// changes nothing (RFC 8881 section 18.42.3).
func TestLayoutcommitNoShrink(t *testing.T) {
	h, fh, _, lsid, _ := layoutSetup(t, newFakeDS(1))
	if st, changed, size := h.layoutcommit(fh, lsid, 999); st != nfs4.OK || !changed || size != 1000 {
		t.Fatalf("LAYOUTCOMMIT 999: %d %v %d, want a new size of 1000", st, changed, size)
	}
	if st, changed, _ := h.layoutcommit(fh, lsid, 9); st != nfs4.OK || changed {
		t.Fatalf("LAYOUTCOMMIT 9: %d changed %v, want no change", st, changed)
	}
	fi, err := os.Stat(filepath.Join(h.dir, "f"))
	if err != nil || fi.Size() != 1000 {
		t.Fatalf("size %v %v, want 1000", fi.Size(), err)
	}
	if st, _, _ := h.layoutcommit(fh, nfs4.Stateid{Seqid: 1, Other: [12]byte{1}}, 5); st == nfs4.OK {
		t.Error("LAYOUTCOMMIT with a stateid that is no layout's succeeded")
	}
}

// TestLayoutreturnIOErr: a LAYOUTRETURN whose lrf_body carries an
// ff_ioerr4 hands the device error to DataServers.Failed; the layout is
// then gone (lrs_present false) and the file holds no state.
func TestLayoutreturnIOErr(t *testing.T) {
	ds := newFakeDS(1)
	h, fh, _, lsid, l := layoutSetup(t, ds)
	body := xdr.NewEncoder(128)
	body.Uint32(1) // fflr_ioerr_report: one
	body.Uint64(0)
	body.Uint64(4096)
	lsid.Encode(body)
	body.Uint32(1) // ffie_errors: one device_error4
	body.Fixed(l.mirrors[0].device[:])
	body.Uint32(uint32(nfs4.ErrNxio))
	body.Uint32(nfs4.OpWrite)
	body.Uint32(0) // fflr_iostats_report: none
	d, st := h.layoutreturn(fh, lsid, body.Header())
	if st != nfs4.OK {
		t.Fatalf("LAYOUTRETURN: %d", st)
	}
	skipSequence(t, d)
	opResult(t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(t, d, nfs4.OpLayoutreturn, nfs4.OK)
	if present := d.Bool(); present {
		t.Error("lrs_present after returning everything")
	}
	ds.mu.Lock()
	failed := append([]fakeFailure(nil), ds.failed...)
	ds.mu.Unlock()
	if len(failed) != 1 || failed[0].id != l.mirrors[0].device || failed[0].st != nfs4.ErrNxio {
		t.Errorf("Failed calls %+v", failed)
	}
	h.s.state.mu.Lock()
	left := len(h.s.state.layouts)
	h.s.state.mu.Unlock()
	if left != 0 {
		t.Errorf("%d layout stateids left", left)
	}
}

// layoutRecalls binds h's connection for callbacks and answers every
// CB_COMPOUND OK, passing on the handle of each CB_LAYOUTRECALL.
func (h *harness) layoutRecalls() <-chan []byte {
	h.t.Helper()
	got := make(chan []byte, 16)
	h.conn.SetSender(func(rec [][]byte) error {
		call := bytes.Join(rec, nil)[4:]
		d := xdr.NewDecoder(call)
		xid := d.Uint32()
		d.Skip(5 * 4)
		d.Uint32()
		d.Opaque(nfs4.MaxAuthBytes)
		d.Uint32()
		d.Opaque(nfs4.MaxAuthBytes)
		e := xdr.NewEncoder(128)
		e.Uint32(xid)
		e.Uint32(nfs4.MsgReply)
		e.Uint32(nfs4.MsgAccepted)
		e.Uint32(nfs4.AuthNone)
		e.Uint32(0)
		e.Uint32(nfs4.AcceptSuccess)
		if d.Remaining() > 0 { // CB_COMPOUND; CB_NULL has no arguments
			d.Opaque(nfs4.OpaqueLimit)
			d.Skip(8)
			nops := d.Uint32()
			d.Uint32()
			sess := d.Fixed(nfs4.SessionIDSize)
			seq := d.Uint32()
			d.Skip(4 * 4)
			if nops == 2 && d.Uint32() == nfs4.OpCBLayoutrecall {
				d.Skip(3 * 4) // type, iomode, changed
				if d.Uint32() == nfs4.LayoutReturnFile {
					got <- bytes.Clone(d.Opaque(nfs4.FHSize))
				}
			}
			e.Uint32(uint32(nfs4.OK))
			e.Uint32(0)
			e.Uint32(nops)
			e.Uint32(nfs4.OpCBSequence)
			e.Uint32(uint32(nfs4.OK))
			e.Fixed(sess)
			e.Uint32(seq)
			e.Uint32(0)
			e.Uint32(0)
			e.Uint32(0)
			if nops == 2 {
				e.Uint32(nfs4.OpCBLayoutrecall)
				e.Uint32(uint32(nfs4.OK))
			}
		}
		go h.s.Handle(h.conn, e.AppendTo(nil), NewReply())
		return nil
	})
	_, st, _ := h.compound(1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpBindConnToSession)
		e.Fixed(h.sess[:])
		e.Uint32(nfs4.CDRBackOrBoth)
		e.Bool(false)
	})
	if st != nfs4.OK {
		h.t.Fatalf("BIND_CONN_TO_SESSION: %d", st)
	}
	return got
}

// TestRecallOnSetattrMode: another client's SETATTR of mode recalls the
// layout a client holds (RFC 8435 section 15) and answers NFS4ERR_DELAY
// until it comes back; after the LAYOUTRETURN it succeeds. The holder's
// own SETATTR recalls nothing.
func TestRecallOnSetattrMode(t *testing.T) {
	h, fh, _, lsid, _ := layoutSetup(t, newFakeDS(1))
	recalls := h.layoutRecalls()
	if st := h.setattrAs(asRoot, fh, nfs4.AnonStateid, 0, 0o600); st != nfs4.OK {
		t.Fatalf("the holder's SETATTR mode: %d", st)
	}
	p := h.peer(0, "owner-2")
	p.session()
	if st := p.setattrAs(asRoot, fh, nfs4.AnonStateid, 0, 0o640); st != nfs4.ErrDelay {
		t.Fatalf("SETATTR mode over another client's layout: %d, want DELAY", st)
	}
	select {
	case got := <-recalls:
		if !bytes.Equal(got, fh) {
			t.Fatalf("CB_LAYOUTRECALL of %x, want %x", got, fh)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no CB_LAYOUTRECALL")
	}
	// The recall moved the stateid's seqid on; the client returns with it.
	_, st := h.layoutreturn(fh, nfs4.Stateid{Seqid: lsid.Seqid + 1, Other: lsid.Other}, nil)
	if st != nfs4.OK {
		t.Fatalf("LAYOUTRETURN after the recall: %d", st)
	}
	if st := p.setattrAs(asRoot, fh, nfs4.AnonStateid, 0, 0o640); st != nfs4.OK {
		t.Fatalf("SETATTR mode once the layout is back: %d", st)
	}
}

// TestFenceOnLeaseEnd: a client whose lease ran out loses its layout,
// and the data file's synthetic owner changes (RFC 8435 section 14):
// writing with the ids its layout named is refused, and the new ids are
// stored with the file.
func TestFenceOnLeaseEnd(t *testing.T) {
	ds := newFakeDS(1)
	h, _, _, _, l := layoutSetup(t, ds)
	m := l.mirrors[0]
	uid := parseID(t, m.user)
	if err := ds.writeAs(m.fh, uid, uid, []byte("before"), 0); err != nil {
		t.Fatalf("write with the layout's ids: %v", err)
	}
	h.silence(2 * time.Duration(h.s.cfg.LeaseTime) * time.Second)
	h.s.state.layoutsOverdue(time.Now())
	deadline := time.Now().Add(5 * time.Second)
	for {
		ds.mu.Lock()
		fences := ds.fences
		ds.mu.Unlock()
		if fences > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not fenced")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := ds.writeAs(m.fh, uid, uid, []byte("after"), 0); err != errFakeOwner {
		t.Fatalf("write with the fenced client's ids: %v, want refused", err)
	}
	time.Sleep(50 * time.Millisecond) // the fence stores the new ids after DataServers.Fence
	if stored := h.storedLayout("f"); stored == nil || stored.UID == uid {
		t.Fatalf("stored layout after the fence: %+v", stored)
	}
}

func parseID(t *testing.T, s string) uint32 {
	t.Helper()
	var v uint32
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("owner %q is not numeric", s)
		}
		v = v*10 + uint32(c-'0')
	}
	return v
}

// TestProxyReadWrite: a client that does not use layouts WRITEs and
// READs a file with one through the MDS, byte for byte; the data is on
// the data server and the export file holds no block of it, only the
// size. READ_PLUS gives one DATA segment; SETATTR of size truncates the
// data file and the export file alike.
func TestProxyReadWrite(t *testing.T) {
	ds := newFakeDS(1)
	h := newMDSHarness(t, ds)
	h.session()
	st, sid, fh := h.create("f", nfs4.CreateUnchecked, "")
	if st != nfs4.OK {
		t.Fatal(st)
	}
	data := make([]byte, 300<<10)
	rand.Read(data)
	if st, n, committed, _ := h.writeOp(fh, sid, 7, nfs4.Unstable4, data); st != nfs4.OK || int(n) != len(data) || committed != nfs4.FileSync4 {
		t.Fatalf("WRITE: %d %d %d", st, n, committed)
	}
	dsFH := h.storedLayout("f").Mirrors[0].FH
	if got := ds.data(dsFH); !bytes.Equal(got[7:], data) {
		t.Fatal("data server holds other bytes")
	}
	var st2 unix.Stat_t
	// At most one block: ext4 counts an xattr block outside the inode.
	if err := unix.Stat(filepath.Join(h.dir, "f"), &st2); err != nil || st2.Size != int64(7+len(data)) || st2.Blocks*512 > 4096 {
		t.Fatalf("export file: size %d blocks %d (%v), want %d and no data block", st2.Size, st2.Blocks, err, 7+len(data))
	}
	eof, got, st := h.readAt(fh, sid, 7, uint32(len(data)))
	if st != nfs4.OK || !eof || !bytes.Equal(got, data) {
		t.Fatalf("READ back: %d eof %v, %d bytes, same %v", st, eof, len(got), bytes.Equal(got, data))
	}
	if h.lastReads {
		t.Error("the proxied READ planned a read of the export file")
	}
	eofp, segs, plus := h.readPlusSid(fh, sid, 0, 100)
	if eofp || len(segs) != 1 || !bytes.Equal(plus, append(make([]byte, 7), data[:93]...)) {
		t.Errorf("READ_PLUS: eof %v segments %+v", eofp, segs)
	}
	if st := h.truncateAs(asRoot, fh, sid, 10); st != nfs4.OK {
		t.Fatalf("SETATTR size: %d", st)
	}
	if got := ds.data(dsFH); len(got) != 10 {
		t.Errorf("data file %d bytes after the truncate, want 10", len(got))
	}
	if fi, _ := os.Stat(filepath.Join(h.dir, "f")); fi.Size() != 10 {
		t.Errorf("export file %d bytes after the truncate, want 10", fi.Size())
	}
	// REMOVE: the data file goes at the sweep once nothing holds it.
	if st := h.closeOpen(fh, sid); st != nfs4.OK {
		t.Fatalf("CLOSE: %d", st)
	}
	_, st = h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpRemove)
		e.String("f")
	})
	if st != nfs4.OK {
		t.Fatalf("REMOVE: %d", st)
	}
	h.s.sweepOrphans()
	if ds.data(dsFH) != nil {
		t.Error("data file kept after the last name went")
	}
}

// TestLayoutFileGoesToWorker: Inline sends a READ of a file with a
// layout to a worker, and a READ of a file without one stays on the
// loop once its layout is known to be absent.
func TestLayoutFileGoesToWorker(t *testing.T) {
	ds := newFakeDS(1)
	h := newMDSHarness(t, ds)
	h.session()
	_, sid, fh := h.create("f", nfs4.CreateUnchecked, "")
	h.writeOp(fh, sid, 0, nfs4.FileSync4, []byte("pnfs"))
	h.write("plain", []byte("plain"))
	plain := h.lookupFH("plain")
	for i := 0; i < 2; i++ {
		h.readAt(fh, sid, 0, 4)
		if h.inlineSaid {
			t.Fatal("a READ of a file with a layout was inline")
		}
		h.readAt(plain, nfs4.AnonStateid, 0, 5)
	}
	if !h.inlineSaid {
		t.Error("a READ of a file without a layout, known, went to a worker")
	}
}

// TestLayoutOpsNotsuppWithoutRole: with the role off, EXCHANGE_ID still
// says USE_NON_PNFS and supported_attrs has no pNFS attribute.
func TestLayoutOpsNotsuppWithoutRole(t *testing.T) {
	h := newHarness(t)
	if _, _, flags := h.exchangeID("probe", "verifier", 0); flags&nfs4.ExchgIDUseNonPNFS == 0 || flags&nfs4.ExchgIDUsePNFSMDS != 0 {
		t.Errorf("EXCHANGE_ID flags %#x", flags)
	}
	if sup := h.s.supportedAttrs(); sup.Has(nfs4.AttrFsLayoutType) || sup.Has(nfs4.AttrLayoutBlksize) {
		t.Error("pNFS attributes supported with the role off")
	}
	m := newMDSHarness(t, newFakeDS(1))
	if sup := m.s.supportedAttrs(); !sup.Has(nfs4.AttrFsLayoutType) || !sup.Has(nfs4.AttrLayoutBlksize) {
		t.Error("pNFS attributes not supported with the role on")
	}
}

// TestCloseReturnsLayout: LAYOUTGET says return-on-close, and the last
// CLOSE of the file by the client forgets its layout, as knfsd does; the
// layout stateid is then unknown.
func TestCloseReturnsLayout(t *testing.T) {
	h, fh, open, lsid, _ := layoutSetup(t, newFakeDS(1))
	h.s.state.mu.Lock()
	st, isLayout := h.s.state.layoutStatusLocked(h.s.state.clients[h.clid], lsid)
	h.s.state.mu.Unlock()
	if st != nfs4.OK || !isLayout {
		t.Fatalf("layout stateid before CLOSE: %d %v", st, isLayout)
	}
	if st := h.closeOpen(fh, open); st != nfs4.OK {
		t.Fatalf("CLOSE: %d", st)
	}
	h.s.state.mu.Lock()
	left := len(h.s.state.layouts)
	h.s.state.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d layouts after the last CLOSE", left)
	}
}

// TestLayoutCap: layouts count against the client's cap of state; past
// it LAYOUTGET answers NFS4ERR_LAYOUTTRYLATER with
// logr_will_signal_layout_avail false.
func TestLayoutCap(t *testing.T) {
	h := newMDSHarness(t, newFakeDS(1))
	h.session()
	_, s1, f1 := h.create("f1", nfs4.CreateUnchecked, "")
	_, s2, f2 := h.create("f2", nfs4.CreateUnchecked, "")
	if st, _ := h.layoutget(f1, s1, nfs4.LayoutIOModeRead, 0); st != nfs4.OK {
		t.Fatalf("first LAYOUTGET: %d", st)
	}
	h.s.cfg.MaxOpensPerClient = 1
	st, d := h.layoutget(f2, s2, nfs4.LayoutIOModeRead, 0)
	if st != nfs4.ErrLayoutTryLater {
		t.Fatalf("LAYOUTGET past the cap: %d, want LAYOUTTRYLATER", st)
	}
	if signal := d.Bool(); signal || d.Err() != nil {
		t.Errorf("will_signal %v (%v)", signal, d.Err())
	}
}

// TestLayoutXattrHidden: the stored layout is in the trusted namespace,
// out of reach of the RFC 8276 ops (user.* only): a client can neither
// list it, read it, nor forge one.
func TestLayoutXattrHidden(t *testing.T) {
	h, fh, _, _, _ := layoutSetup(t, newFakeDS(1))
	if st, l := h.listxattrs(asRoot, fh, 0, 4096); st != nfs4.OK || len(l.names) != 0 {
		t.Errorf("LISTXATTRS: %d %v", st, l.names)
	}
	if st, _ := h.getxattr(asRoot, fh, layoutXattr); st != nfs4.ErrNoxattr {
		t.Errorf("GETXATTR of the layout's name: %d, want NOXATTR", st)
	}
	before := h.storedLayout("f")
	h.setxattr(asRoot, fh, nfs4.SetxattrEither, layoutXattr, "forged")
	if after := h.storedLayout("f"); after == nil || !bytes.Equal(after.Mirrors[0].FH, before.Mirrors[0].FH) {
		t.Errorf("layout after a SETXATTR of its name: %+v", after)
	}
}

// TestRecallWhenDeviceLeavesService: a client's error report only asks
// DataServers.Failed to check the server (no recall: one client must not
// make every client return its layouts); the server leaving service
// (DeviceWatcher) recalls the layouts naming it.
func TestRecallWhenDeviceLeavesService(t *testing.T) {
	ds := newFakeDS(1)
	h, fh, _, _, l := layoutSetup(t, ds)
	recalls := h.layoutRecalls()
	h.s.noteIOErrors([]deviceError{{device: l.mirrors[0].device, status: nfs4.ErrIO}})
	select {
	case <-recalls:
		t.Fatal("a client's report recalled the layouts")
	case <-time.After(200 * time.Millisecond):
	}
	ds.mu.Lock()
	reported := len(ds.failed)
	ds.mu.Unlock()
	if reported != 1 {
		t.Fatalf("Failed called %d times, want 1", reported)
	}
	ds.takeDown(0)
	select {
	case got := <-recalls:
		if !bytes.Equal(got, fh) {
			t.Fatalf("CB_LAYOUTRECALL of %x, want %x", got, fh)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no CB_LAYOUTRECALL when the data server left service")
	}
}

// layoutreturn sends PUTFH fh, LAYOUTRETURN4_FILE of the whole file in
// any iomode with stateid sid and lrf_body body.
func (h *harness) layoutreturn(fh []byte, sid nfs4.Stateid, body []byte) (*xdr.Decoder, nfs4.Status) {
	h.t.Helper()
	return h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpLayoutreturn)
		e.Bool(false)
		e.Uint32(nfs4.LayoutFlexFiles)
		e.Uint32(nfs4.LayoutIOModeAny)
		e.Uint32(nfs4.LayoutReturnFile)
		e.Uint64(0)
		e.Uint64(nfs4.LengthToEOF)
		sid.Encode(e)
		e.Opaque(body)
	})
}

// One host with maxProxiedPerHost proxied calls stuck on the data servers
// gets NFS4ERR_DELAY for the next instead of taking another worker; the
// same host while its calls progress, another host, and the host once a
// call ends, are served.
func TestProxyCallsPerHostBounded(t *testing.T) {
	ds := newFakeDS(1)
	h := newMDSHarness(t, ds)
	h.session()
	st, sid, fh := h.create("f", nfs4.CreateUnchecked, "")
	if st != nfs4.OK {
		t.Fatal(st)
	}
	g := &h.s.mds.proxyGate
	a := h.conn.addr
	long := time.Now().Add(-time.Minute) // as if they began a minute ago
	for i := 0; i < maxProxiedPerHost; i++ {
		if !g.enter(a, maxProxiedPerHost, long) {
			t.Fatalf("place %d refused", i)
		}
	}
	if st, _, _, _ := h.writeOp(fh, sid, 0, nfs4.Unstable4, []byte("x")); st != nfs4.ErrDelay {
		t.Fatalf("WRITE past the host's bound: %d, want DELAY", st)
	}
	if _, _, st := h.readAt(fh, sid, 0, 1); st != nfs4.ErrDelay {
		t.Fatalf("READ past the host's bound: %d, want DELAY", st)
	}
	if !g.enter(netip.MustParseAddr("192.0.2.7"), maxProxiedPerHost, long) {
		t.Fatal("another host was refused")
	}
	g.leave(a, time.Now()) // one ended: the host progresses
	for i := 0; i < 3; i++ {
		if st, _, _, _ := h.writeOp(fh, sid, 0, nfs4.Unstable4, []byte("x")); st != nfs4.OK {
			t.Fatalf("WRITE after a call ended: %d", st)
		}
	}
	if got := h.s.mds.proxyDelayed.Load(); got != 2 {
		t.Fatalf("proxyDelayed = %d, want 2", got)
	}
	// Calls in flight that progress are never refused, however many.
	b := netip.MustParseAddr("192.0.2.8")
	now := time.Now()
	for i := 0; i < 4*maxProxiedPerHost; i++ {
		if !g.enter(b, maxProxiedPerHost, now) {
			t.Fatalf("call %d of a progressing host refused", i)
		}
	}
}
