package client

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// pfake is a fake pNFS metadata server or data server: enough NFSv4.1 for
// a session, PUTFH, READ, WRITE, COMMIT, CLOSE over in-memory files, and
// on the MDS LAYOUTGET, GETDEVICEINFO, LAYOUTCOMMIT, LAYOUTRETURN and
// LAYOUTERROR with hand-written layout bodies, plus CB_LAYOUTRECALL over
// the back channel. It logs what it was sent.
type pfake struct {
	t    *testing.T
	ln   net.Listener
	mds  bool
	mu   sync.Mutex
	ops  []string
	uids []uint32
	// files are the data, by file handle.
	files map[string][]byte
	// MDS: the ff_layout4 LAYOUTGET hands out, or layoutStatus; device
	// bodies; what came back.
	layout       []byte
	layoutStatus nfs4.Status
	devices      map[DeviceID][]byte
	getIOModes   []uint32
	getSids      []nfs4.Stateid
	commits      []uint64 // loca_last_write_offset of each LAYOUTCOMMIT
	returns      [][]byte // lrf_body of each LAYOUTRETURN
	returnSids   []nfs4.Stateid
	errors       [][]byte // lea_errors of each LAYOUTERROR, raw
	stats        [][]byte // LAYOUTSTATS4args after the stateid, raw
	// DS: the uid it wants, and a status for every WRITE.
	wantUID   uint32
	failWrite nfs4.Status
	conns     []*pconn
	cbReplies chan []byte
}

type pconn struct {
	net.Conn
	wmu sync.Mutex
}

func (c *pconn) send(rec []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.Write(rec)
}

var pfakeSession = [16]byte{'p', 'n', 'f', 's'}

func startPfake(t *testing.T, mds bool) *pfake {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &pfake{t: t, ln: ln, mds: mds, files: map[string][]byte{}, devices: map[DeviceID][]byte{}, cbReplies: make(chan []byte, 4)}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			pc := &pconn{Conn: conn}
			s.mu.Lock()
			s.conns = append(s.conns, pc)
			s.mu.Unlock()
			go s.serve(pc)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
	})
	return s
}

func (s *pfake) uaddr() string {
	ua, err := HostPortToUaddr(s.ln.Addr().String())
	if err != nil {
		s.t.Fatal(err)
	}
	return ua
}

func (s *pfake) serve(c *pconn) {
	defer c.Close()
	rr := xdr.NewRecordReader(c, 4<<20)
	for {
		rec, err := rr.Next()
		if err != nil {
			return
		}
		rr.Detach()
		if len(rec) >= 8 && binary.BigEndian.Uint32(rec[4:]) == nfs4.MsgReply {
			s.cbReplies <- rec
			continue
		}
		c.send(s.handle(rec))
	}
}

// snap is a deep copy of what the fake recorded, taken under its lock
// (the race detector does not see TCP as ordering the test and the fake).
func (s *pfake) snap() *pfake {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &pfake{files: map[string][]byte{}}
	for k, v := range s.files {
		c.files[k] = clone(v)
	}
	c.ops = append(c.ops, s.ops...)
	c.uids = append(c.uids, s.uids...)
	c.getIOModes = append(c.getIOModes, s.getIOModes...)
	c.getSids = append(c.getSids, s.getSids...)
	c.commits = append(c.commits, s.commits...)
	c.returnSids = append(c.returnSids, s.returnSids...)
	for _, r := range s.returns {
		c.returns = append(c.returns, clone(r))
	}
	for _, r := range s.errors {
		c.errors = append(c.errors, clone(r))
	}
	for _, r := range s.stats {
		c.stats = append(c.stats, clone(r))
	}
	return c
}

// set changes the fake's behaviour under its lock.
func (s *pfake) set(f func(s *pfake)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *pfake) log(op string) {
	s.mu.Lock()
	s.ops = append(s.ops, op)
	s.mu.Unlock()
}

func (s *pfake) count(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, o := range s.ops {
		if o == op {
			n++
		}
	}
	return n
}

func (s *pfake) handle(rec []byte) []byte {
	d := xdr.NewDecoder(rec)
	xid := d.Uint32()
	d.Skip(20)
	var uid uint32
	if d.Uint32() == nfs4.AuthSys {
		cd := xdr.NewDecoder(d.Opaque(400))
		cd.Uint32()
		cd.String(255)
		uid = cd.Uint32()
	}
	d.Uint32()
	d.Opaque(400)
	d.Opaque(1024) // tag
	d.Uint32()     // minor
	nops := int(d.Uint32())
	e := xdr.NewEncoder(256)
	e.Reserve()
	e.Uint32(xid)
	e.Uint32(nfs4.MsgReply)
	e.Uint32(0)
	e.Uint32(0)
	e.Uint32(0)
	e.Uint32(0)
	stPos := e.Reserve()
	e.Uint32(0)
	nPos := e.Reserve()
	var status nfs4.Status
	n := 0
	var fh string
	for i := 0; i < nops && status == 0; i++ {
		op := d.Uint32()
		e.Uint32(op)
		status = s.op(op, uid, &fh, d, e)
		n++
	}
	if d.Err() != nil {
		s.t.Errorf("pfake: bad request: %v", d.Err())
	}
	e.Patch(stPos, uint32(status))
	e.Patch(nPos, uint32(n))
	e.Patch(0, xdr.RecordMark(e.Len()-4))
	return e.AppendTo(nil)
}

func (s *pfake) op(op, uid uint32, fh *string, d *xdr.Decoder, e *xdr.Encoder) nfs4.Status {
	if op != nfs4.OpSequence {
		s.log(OpName(op))
	}
	fail := func(st nfs4.Status) nfs4.Status {
		e.Uint32(uint32(st))
		return st
	}
	switch op {
	case nfs4.OpExchangeID:
		d.Skip(8)
		d.Opaque(1024)
		d.Skip(12)
		flags := uint32(nfs4.ExchgIDUsePNFSDS)
		if s.mds {
			flags = nfs4.ExchgIDUsePNFSMDS
		}
		e.Uint32(0)
		e.Uint64(0xc1)
		e.Uint32(1)
		e.Uint32(flags)
		e.Uint32(nfs4.SP4None)
		e.Uint64(0)
		e.Opaque([]byte("pfake"))
		e.Opaque(nil)
		e.Uint32(0)
	case nfs4.OpCreateSession:
		d.Skip(16)
		fore := decodeChannelAttrs(d)
		back := decodeChannelAttrs(d)
		d.Uint32()
		d.Skip(4 * d.ArrayLen(4, 4))
		fore.MaxRequests = 16
		e.Uint32(0)
		e.Fixed(pfakeSession[:])
		e.Uint32(1)
		e.Uint32(0)
		fore.encode(e)
		back.encode(e)
	case nfs4.OpSequence:
		d.Fixed(16)
		seq, slot, high := d.Uint32(), d.Uint32(), d.Uint32()
		d.Bool()
		e.Uint32(0)
		e.Fixed(pfakeSession[:])
		for _, v := range []uint32{seq, slot, high, 15, 0} {
			e.Uint32(v)
		}
	case nfs4.OpReclaimComplete:
		d.Bool()
		e.Uint32(0)
	case nfs4.OpPutfh:
		*fh = string(d.Opaque(128))
		e.Uint32(0)
	case nfs4.OpDestroySession:
		d.Skip(16)
		e.Uint32(0)
	case nfs4.OpDestroyClientid:
		d.Uint64()
		e.Uint32(0)
	case nfs4.OpClose:
		d.Uint32()
		sid := nfs4.DecodeStateid(d)
		e.Uint32(0)
		sid.Encode(e)
	case nfs4.OpRead, nfs4.OpWrite, nfs4.OpCommit:
		return s.io(op, uid, *fh, d, e)
	case nfs4.OpLayoutget, nfs4.OpGetdeviceinfo, nfs4.OpLayoutcommit, nfs4.OpLayoutreturn, nfs4.OpLayouterror, nfs4.OpLayoutstats:
		if !s.mds {
			return fail(nfs4.ErrNotsupp)
		}
		return s.layoutOp(op, d, e)
	default:
		return fail(nfs4.ErrNotsupp)
	}
	return 0
}

// io serves READ, WRITE and COMMIT on the in-memory files; a data server
// refuses any uid but the layout's.
func (s *pfake) io(op, uid uint32, fh string, d *xdr.Decoder, e *xdr.Encoder) nfs4.Status {
	var sid nfs4.Stateid
	var off uint64
	if op != nfs4.OpCommit {
		sid = nfs4.DecodeStateid(d)
	}
	off = d.Uint64()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uids = append(s.uids, uid)
	st := nfs4.Status(0)
	if !s.mds && (uid != s.wantUID || sid != nfs4.AnonStateid) {
		st = nfs4.ErrAccess
	}
	switch op {
	case nfs4.OpRead:
		count := d.Uint32()
		if st != 0 {
			break
		}
		data := s.files[fh]
		end := min(uint64(len(data)), off+uint64(count))
		start := min(off, end)
		e.Uint32(0)
		e.Bool(end == uint64(len(data)))
		e.Opaque(data[start:end])
	case nfs4.OpWrite:
		stable := d.Uint32()
		data := d.Opaque(4 << 20)
		if st == 0 && op == nfs4.OpWrite && s.failWrite != 0 {
			st = s.failWrite
		}
		if st != 0 {
			break
		}
		f := s.files[fh]
		if end := off + uint64(len(data)); uint64(len(f)) < end {
			f = append(f, make([]byte, end-uint64(len(f)))...)
		}
		copy(f[off:], data)
		s.files[fh] = f
		e.Uint32(0)
		e.Uint32(uint32(len(data)))
		e.Uint32(stable)
		e.Fixed([]byte("verifier"))
	case nfs4.OpCommit:
		d.Uint32()
		if st != 0 {
			break
		}
		e.Uint32(0)
		e.Fixed([]byte("verifier"))
	}
	if st != 0 {
		e.Uint32(uint32(st))
	}
	return st
}

func (s *pfake) layoutOp(op uint32, d *xdr.Decoder, e *xdr.Encoder) nfs4.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch op {
	case nfs4.OpLayoutget:
		d.Bool()
		typ, iomode := d.Uint32(), d.Uint32()
		d.Skip(24)
		sid := nfs4.DecodeStateid(d)
		d.Uint32()
		s.getIOModes = append(s.getIOModes, iomode)
		s.getSids = append(s.getSids, sid)
		if s.layoutStatus != 0 || typ != LayoutFlexFiles {
			e.Uint32(uint32(s.layoutStatus))
			return s.layoutStatus
		}
		e.Uint32(0)
		e.Bool(false)
		lsid.Encode(e)
		e.Uint32(1)
		e.Uint64(0)
		e.Uint64(^uint64(0))
		e.Uint32(iomode)
		e.Uint32(LayoutFlexFiles)
		e.Opaque(s.layout)
	case nfs4.OpGetdeviceinfo:
		var id DeviceID
		copy(id[:], d.Fixed(16))
		d.Skip(8)
		nfs4.DecodeBitmap(d)
		body, ok := s.devices[id]
		if !ok {
			e.Uint32(uint32(nfs4.ErrInval))
			return nfs4.ErrInval
		}
		e.Uint32(0)
		e.Uint32(LayoutFlexFiles)
		e.Opaque(body)
		e.Uint32(0)
	case nfs4.OpLayoutcommit:
		d.Skip(8 + 8 + 4 + 16)
		last := ^uint64(0)
		if d.Bool() {
			last = d.Uint64()
		}
		if d.Bool() {
			d.Skip(12)
		}
		d.Uint32()
		d.Opaque(1024)
		s.commits = append(s.commits, last)
		e.Uint32(0)
		e.Bool(false)
	case nfs4.OpLayoutreturn:
		d.Skip(8)
		d.Uint32()
		if d.Uint32() == LayoutReturnFile {
			d.Skip(8 + 8)
			s.returnSids = append(s.returnSids, nfs4.DecodeStateid(d))
			s.returns = append(s.returns, clone(d.Opaque(1<<20)))
		}
		e.Uint32(0)
		e.Bool(false)
	case nfs4.OpLayouterror:
		d.Skip(8 + 8 + 16)
		n := d.ArrayLen(16, 24)
		s.errors = append(s.errors, clone(d.Fixed(24*n)))
		e.Uint32(0)
	case nfs4.OpLayoutstats:
		d.Skip(8 + 8 + 16)
		rest := d.Rest()
		d.Skip(32 + 16 + 4)
		d.Opaque(4096)
		s.stats = append(s.stats, clone(rest[:len(rest)-d.Remaining()]))
		e.Uint32(0)
	}
	return 0
}

// recall sends CB_COMPOUND(CB_SEQUENCE, CB_LAYOUTRECALL args) on the
// first connection and returns the CB_LAYOUTRECALL status.
func (s *pfake) recall(args []byte) (nfs4.Status, error) {
	return s.callback(opCBLayoutrecall, args)
}

// callback sends CB_COMPOUND(CB_SEQUENCE, op args) on the first
// connection and returns op's status.
func (s *pfake) callback(cbop uint32, args []byte) (nfs4.Status, error) {
	e := xdr.NewEncoder(256)
	e.Reserve()
	e.Uint32(0x1234)
	e.Uint32(nfs4.MsgCall)
	e.Uint32(2)
	e.Uint32(0x40000000)
	e.Uint32(1)
	e.Uint32(nfs4.CBProcCompound)
	e.Uint32(0)
	e.Uint32(0)
	e.Uint32(0)
	e.Uint32(0)
	e.Opaque(nil) // tag
	e.Uint32(1)
	e.Uint32(0)
	e.Uint32(2)
	e.Uint32(nfs4.OpCBSequence)
	e.Fixed(pfakeSession[:])
	e.Uint32(1)
	e.Uint32(0)
	e.Uint32(0)
	e.Bool(false)
	e.Uint32(0)
	e.Uint32(cbop)
	e.Fixed(args)
	e.Patch(0, xdr.RecordMark(e.Len()-4))
	s.mu.Lock()
	c := s.conns[0]
	s.mu.Unlock()
	c.send(e.AppendTo(nil))
	var rep []byte
	select {
	case rep = <-s.cbReplies:
	case <-time.After(5 * time.Second):
		return 0, fmt.Errorf("no callback reply")
	}
	d := xdr.NewDecoder(rep)
	d.Skip(4 * 6) // xid, REPLY, accepted, verifier, SUCCESS
	d.Uint32()    // CB_COMPOUND status
	d.Opaque(1024)
	if n := d.Uint32(); n != 2 {
		return 0, fmt.Errorf("%d results", n)
	}
	d.Skip(8 + 16 + 16) // CB_SEQUENCE result
	if op := d.Uint32(); op != cbop {
		return 0, fmt.Errorf("result for op %d", op)
	}
	return nfs4.Status(d.Uint32()), d.Err()
}

// pnfsSetup is an MDS and data servers, the layout naming them (mirrors
// of data servers, by index), and a client with a PNFS driver.
type pnfsSetup struct {
	mds *pfake
	ds  []*pfake
	c   *Client
	p   *PNFS
	f   *PNFSFile
}

var openSid = nfs4.Stateid{Seqid: 1, Other: [12]byte{'o', 'p', 'e', 'n'}}

func testDevice(i int) DeviceID { return DeviceID{'d', 's', byte('0' + i)} }

func newPNFSSetup(t *testing.T, nds int, stripeUnit uint64, mirrors [][]int, opts PNFSOptions) *pnfsSetup {
	s := &pnfsSetup{mds: startPfake(t, true)}
	for i := range nds {
		ds := startPfake(t, false)
		ds.set(func(ds *pfake) { ds.wantUID = 1001 })
		s.ds = append(s.ds, ds)
		dev := w{}.u32(1).opaque("tcp").opaque(ds.uaddr()).u32(1).u32(4, 1, 1<<20, 1<<20, 0)
		s.mds.set(func(m *pfake) { m.devices[testDevice(i)] = dev })
	}
	body := w{}.u64(stripeUnit).u32(uint32(len(mirrors)))
	for _, m := range mirrors {
		body = body.u32(uint32(len(m)))
		for _, i := range m {
			body = body.raw(string(ffDataServerWire(testDevice(i), fmt.Sprintf("fh-on-%d", i), "1001", "2001")))
		}
	}
	s.mds.set(func(m *pfake) { m.layout = body.u32(0, 0) })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, s.mds.ln.Addr().String(), Options{BackChannel: true, ExchangeFlags: nfs4.ExchgIDUsePNFSMDS})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if c.ExchangeFlags()&nfs4.ExchgIDUsePNFSMDS == 0 {
		t.Fatalf("server flags %#x", c.ExchangeFlags())
	}
	s.c = c
	s.p = NewPNFS(c, opts)
	t.Cleanup(func() { s.p.Close() })
	s.f = s.p.Open(&File{FH: []byte("mds-fh"), Stateid: openSid}, IOModeRW)
	return s
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*13 + i>>16)
	}
	return b
}

// pnfsWriteAll writes data at 0 with WriteAt, following short writes.
func pnfsWriteAll(t *testing.T, f *PNFSFile, data []byte, stable uint32) {
	for off := 0; off < len(data); {
		res, err := f.WriteAt(context.Background(), data[off:], uint64(off), stable)
		if err != nil {
			t.Fatal(err)
		}
		if res.Count == 0 {
			t.Fatal("wrote nothing")
		}
		off += int(res.Count)
	}
}

func pnfsReadAll(t *testing.T, f *PNFSFile, n int) []byte {
	out := make([]byte, n)
	for off := 0; off < n; {
		k, eof, err := f.ReadAt(context.Background(), out[off:], uint64(off))
		if err != nil {
			t.Fatal(err)
		}
		off += k
		if k == 0 || (eof && off < n) {
			t.Fatalf("short read at %d", off)
		}
	}
	return out
}

func TestPNFSMirrors(t *testing.T) {
	s := newPNFSSetup(t, 2, 0, [][]int{{0}, {1}}, PNFSOptions{})
	m := s.mds.snap
	data := pattern(3<<20 + 12345)
	pnfsWriteAll(t, s.f, data, nfs4.Unstable4)
	for i, ds := range s.ds {
		if !bytes.Equal(ds.snap().files[fmt.Sprintf("fh-on-%d", i)], data) {
			t.Fatalf("mirror %d does not hold the data", i)
		}
		for _, uid := range ds.snap().uids {
			if uid != 1001 {
				t.Fatalf("data server %d got uid %d", i, uid)
			}
		}
	}
	if len(m().files) != 0 || s.p.Fallbacks() != 0 {
		t.Fatalf("data went through the MDS (%d fallbacks)", s.p.Fallbacks())
	}
	if err := s.f.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.ds[0].count("COMMIT") != 1 || s.ds[1].count("COMMIT") != 1 {
		t.Fatal("no COMMIT to each data server")
	}
	if len(m().commits) != 1 || m().commits[0] != uint64(len(data)-1) {
		t.Fatalf("LAYOUTCOMMITs %v, want last write %d", m().commits, len(data)-1)
	}
	if got := pnfsReadAll(t, s.f, len(data)); !bytes.Equal(got, data) {
		t.Fatal("read back differs")
	}
	if s.ds[1].count("READ") != 0 || s.ds[0].count("READ") == 0 {
		t.Fatal("READs not all from the first mirror")
	}
	st := s.p.Stats()
	if len(st) != 2 || st[0].WriteBytes != uint64(len(data)) || st[1].WriteBytes != uint64(len(data)) ||
		st[0].ReadBytes+st[1].ReadBytes != uint64(len(data)) {
		t.Fatalf("stats %+v", st)
	}
	if err := s.f.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(m().returns) != 1 || !bytes.Equal(m().returns[0], w{}.u32(0, 0)) || s.mds.count("CLOSE") != 1 {
		t.Fatalf("LAYOUTRETURN bodies %x, ops %v", m().returns, m().ops)
	}
	if m().getIOModes[0] != IOModeRW || m().getSids[0] != openSid || s.mds.count("GETDEVICEINFO") != 2 {
		t.Fatalf("LAYOUTGET iomodes %v sids %v; ops %v", m().getIOModes, m().getSids, m().ops)
	}
}

func TestPNFSStriping(t *testing.T) {
	const su = 64 << 10
	s := newPNFSSetup(t, 2, su, [][]int{{0, 1}}, PNFSOptions{})
	m := s.mds.snap
	data := pattern(4*su + 100)
	pnfsWriteAll(t, s.f, data, nfs4.FileSync4)
	for k := 0; k*su < len(data); k++ {
		on := s.ds[k%2].snap().files[fmt.Sprintf("fh-on-%d", k%2)]
		end := min((k+1)*su, len(data))
		if len(on) < end || !bytes.Equal(on[k*su:end], data[k*su:end]) {
			t.Fatalf("stripe %d not on data server %d", k, k%2)
		}
		if other := s.ds[1-k%2].snap().files[fmt.Sprintf("fh-on-%d", 1-k%2)]; len(other) > k*su && !bytes.Equal(other[k*su:min(end, len(other))], make([]byte, min(end, len(other))-k*su)) {
			t.Fatalf("stripe %d also on data server %d", k, 1-k%2)
		}
	}
	if got := pnfsReadAll(t, s.f, len(data)); !bytes.Equal(got, data) {
		t.Fatal("striped read back differs")
	}
	if err := s.f.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// FILE_SYNC writes: no COMMIT, but still a LAYOUTCOMMIT.
	if s.ds[0].count("COMMIT")+s.ds[1].count("COMMIT") != 0 || len(m().commits) != 1 {
		t.Fatalf("COMMITs %d %d, LAYOUTCOMMITs %v", s.ds[0].count("COMMIT"), s.ds[1].count("COMMIT"), m().commits)
	}
}

func TestPNFSDataServerErrorLayoutError(t *testing.T) {
	s := newPNFSSetup(t, 1, 0, [][]int{{0}}, PNFSOptions{})
	m := s.mds.snap
	s.ds[0].set(func(ds *pfake) { ds.failWrite = nfs4.ErrIO })
	data := pattern(100000)
	pnfsWriteAll(t, s.f, data, nfs4.Unstable4)
	if !bytes.Equal(m().files["mds-fh"], data) {
		t.Fatal("the write did not fall back to the MDS")
	}
	dev := testDevice(0)
	want := w{}.raw(string(dev[:])).u32(uint32(nfs4.ErrIO), nfs4.OpWrite)
	if len(m().errors) != 1 || !bytes.Equal(m().errors[0], want) {
		t.Fatalf("LAYOUTERROR reports %x", m().errors)
	}
	if len(m().returns) != 1 || !bytes.Equal(m().returns[0], w{}.u32(0, 0)) {
		t.Fatalf("LAYOUTRETURN bodies %x", m().returns)
	}
	if err := s.f.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.mds.count("COMMIT") != 1 {
		t.Fatal("unstable WRITE through the MDS not committed there")
	}
	if s.p.Reports() != 1 || s.p.Stats()[0].Errors != 1 {
		t.Fatalf("reports %d stats %+v", s.p.Reports(), s.p.Stats())
	}
}

func TestPNFSDataServerErrorInReturn(t *testing.T) {
	s := newPNFSSetup(t, 1, 0, [][]int{{0}}, PNFSOptions{ReportInReturn: true, MaxFailures: 1})
	m := s.mds.snap
	s.ds[0].set(func(ds *pfake) { ds.failWrite = nfs4.ErrIO })
	pnfsWriteAll(t, s.f, pattern(5000), nfs4.FileSync4)
	pnfsWriteAll(t, s.f, pattern(5000), nfs4.FileSync4)
	if len(m().errors) != 0 || len(m().returns) != 1 {
		t.Fatalf("LAYOUTERRORs %d, LAYOUTRETURNs %d", len(m().errors), len(m().returns))
	}
	r, err := DecodeFFLayoutReturn(m().returns[0])
	if err != nil || len(r.IOErrs) != 1 || len(r.IOErrs[0].Errors) != 1 || r.IOErrs[0].Errors[0] != (DeviceError{testDevice(0), nfs4.ErrIO, nfs4.OpWrite}) {
		t.Fatalf("ff_layoutreturn4 %+v %v", r, err)
	}
	// MaxFailures 1: the second write went to the MDS without a new layout.
	if s.mds.count("LAYOUTGET") != 1 || s.p.Fallbacks() != 2 {
		t.Fatalf("LAYOUTGETs %d fallbacks %d", s.mds.count("LAYOUTGET"), s.p.Fallbacks())
	}
}

func TestPNFSDataServerUnreachable(t *testing.T) {
	s := newPNFSSetup(t, 1, 0, [][]int{{0}}, PNFSOptions{})
	m := s.mds.snap
	s.ds[0].ln.Close()
	pnfsWriteAll(t, s.f, pattern(5000), nfs4.FileSync4)
	if s.p.Fallbacks() != 1 || len(m().returns) != 1 {
		t.Fatalf("fallbacks %d returns %d", s.p.Fallbacks(), len(m().returns))
	}
	r, err := DecodeFFLayoutReturn(m().returns[0])
	if err != nil || len(r.IOErrs) != 1 || r.IOErrs[0].Errors[0].Status != nfs4.ErrNxio || r.IOErrs[0].Errors[0].Device != testDevice(0) {
		t.Fatalf("ff_layoutreturn4 %+v %v", r, err)
	}
}

func TestPNFSLayoutUnavailable(t *testing.T) {
	s := newPNFSSetup(t, 1, 0, [][]int{{0}}, PNFSOptions{})
	s.mds.set(func(m *pfake) { m.layoutStatus = ErrLayoutUnavailable })
	data := pattern(7000)
	pnfsWriteAll(t, s.f, data, nfs4.FileSync4)
	if got := pnfsReadAll(t, s.f, len(data)); !bytes.Equal(got, data) {
		t.Fatal("read through the MDS differs")
	}
	if s.mds.count("LAYOUTGET") != 1 || s.p.Fallbacks() != 2 || len(s.ds[0].snap().ops) != 0 {
		t.Fatalf("LAYOUTGETs %d fallbacks %d, data server ops %v", s.mds.count("LAYOUTGET"), s.p.Fallbacks(), s.ds[0].snap().ops)
	}
}

func TestPNFSLayoutRecall(t *testing.T) {
	s := newPNFSSetup(t, 1, 0, [][]int{{0}}, PNFSOptions{RetryAfter: time.Millisecond})
	m := s.mds.snap
	pnfsWriteAll(t, s.f, pattern(5000), nfs4.Unstable4)
	// The recall's stateid has the next seqid (RFC 8881 section
	// 12.5.5.2): LAYOUTCOMMIT and LAYOUTRETURN use it.
	args := w{}.u32(LayoutFlexFiles, IOModeAny, 0, LayoutReturnFile).opaque("mds-fh").u64(0, ^uint64(0)).u32(lsid.Seqid + 1).raw(string(lsid.Other[:]))
	st, err := s.mds.recall(args)
	if err != nil || st != nfs4.OK {
		t.Fatalf("recall: %v %v", StatusName(st), err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.mds.count("LAYOUTRETURN") == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	// The recalled layout's unstable data is committed and
	// LAYOUTCOMMITted before it goes back.
	if s.mds.count("LAYOUTRETURN") != 1 || s.ds[0].count("COMMIT") != 1 || len(m().commits) != 1 {
		t.Fatalf("MDS ops %v, data server ops %v", m().ops, s.ds[0].snap().ops)
	}
	if sids := m().returnSids; len(sids) != 1 || sids[0] != (nfs4.Stateid{Seqid: lsid.Seqid + 1, Other: lsid.Other}) {
		t.Fatalf("LAYOUTRETURN stateids %v", sids)
	}
	st, err = s.mds.recall(args)
	if err != nil || st != ErrNoMatchingLayout {
		t.Fatalf("second recall: %v %v", StatusName(st), err)
	}
	if s.c.LayoutRecalls() != 2 {
		t.Fatalf("recalls counted %d", s.c.LayoutRecalls())
	}
	time.Sleep(2 * time.Millisecond)
	pnfsWriteAll(t, s.f, pattern(5000), nfs4.FileSync4)
	if s.mds.count("LAYOUTGET") != 2 || s.p.Fallbacks() != 0 {
		t.Fatalf("LAYOUTGETs %d fallbacks %d", s.mds.count("LAYOUTGET"), s.p.Fallbacks())
	}
}

func TestPNFSStats(t *testing.T) {
	s := newPNFSSetup(t, 2, 0, [][]int{{0}, {1}}, PNFSOptions{ReturnStats: true})
	m := s.mds.snap
	pnfsWriteAll(t, s.f, pattern(3000), nfs4.FileSync4)
	pnfsReadAll(t, s.f, 3000)
	if err := s.f.SendStats(context.Background()); err != nil {
		t.Fatal(err)
	}
	// One LAYOUTSTATS per data server: io_info4 read, write, the device,
	// then lou_type and the ff_layoutupdate4 as lou_body.
	st := m().stats
	if len(st) != 2 {
		t.Fatalf("%d LAYOUTSTATS", len(st))
	}
	dev0 := testDevice(0)
	want := w{}.u64(1, 3000, 1, 3000).raw(string(dev0[:])).u32(LayoutFlexFiles)
	if !bytes.HasPrefix(st[0], want) {
		t.Fatalf("LAYOUTSTATS for data server 0: %x", st[0])
	}
	if err := s.f.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := DecodeFFLayoutReturn(m().returns[0])
	if err != nil || len(r.IOErrs) != 0 || len(r.IOStats) != 2 {
		t.Fatalf("ff_layoutreturn4 %+v %v", r, err)
	}
	for i, x := range r.IOStats {
		reads := uint64(1 - i) // READs go to the first mirror only
		if x.Device != testDevice(i) || x.Write != (IOInfo{1, 3000}) || x.Read != (IOInfo{reads, 3000 * reads}) ||
			x.Stateid != lsid || x.Update.Addr.Netid != "tcp" || string(x.Update.FH) != fmt.Sprintf("fh-on-%d", i) {
			t.Fatalf("ff_iostats4 %d: %+v", i, x)
		}
	}
}

func TestPNFSReadOtherMirror(t *testing.T) {
	s := newPNFSSetup(t, 2, 0, [][]int{{0}, {1}}, PNFSOptions{})
	m := s.mds.snap
	data := pattern(9000)
	pnfsWriteAll(t, s.f, data, nfs4.FileSync4)
	// Data server 0 now refuses the layout's owner, as after fencing.
	s.ds[0].set(func(ds *pfake) { ds.wantUID = 4242 })
	if got := pnfsReadAll(t, s.f, len(data)); !bytes.Equal(got, data) {
		t.Fatal("read back differs")
	}
	dev := testDevice(0)
	want := w{}.raw(string(dev[:])).u32(uint32(nfs4.ErrAccess), nfs4.OpRead)
	if len(m().errors) != 1 || !bytes.Equal(m().errors[0], want) {
		t.Fatalf("LAYOUTERROR reports %x", m().errors)
	}
	if s.ds[1].count("READ") == 0 || s.p.Fallbacks() != 0 {
		t.Fatalf("second mirror READs %d, fallbacks %d", s.ds[1].count("READ"), s.p.Fallbacks())
	}
}

func TestPNFSRecallAny(t *testing.T) {
	s := newPNFSSetup(t, 1, 0, [][]int{{0}}, PNFSOptions{RetryAfter: time.Millisecond})
	pnfsWriteAll(t, s.f, pattern(5000), nfs4.FileSync4)
	// A mask without the flexfiles bits leaves the layout held.
	if st, err := s.mds.callback(opCBRecallAny, w{}.u32(0, 1, 1<<3)); err != nil || st != nfs4.OK {
		t.Fatalf("CB_RECALL_ANY: %v %v", StatusName(st), err)
	}
	time.Sleep(20 * time.Millisecond)
	if s.mds.count("LAYOUTRETURN") != 0 {
		t.Fatal("a layout returned for a mask without flexfiles layouts")
	}
	// Keep 0 of RCA4_TYPE_MASK_FF_LAYOUT_MIN/MAX: the layout goes back.
	if st, err := s.mds.callback(opCBRecallAny, w{}.u32(0, 1, 1<<16|1<<17)); err != nil || st != nfs4.OK {
		t.Fatalf("CB_RECALL_ANY: %v %v", StatusName(st), err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.mds.count("LAYOUTRETURN") == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if s.mds.count("LAYOUTRETURN") != 1 || s.c.RecallAnys() != 2 {
		t.Fatalf("LAYOUTRETURNs %d, CB_RECALL_ANYs %d", s.mds.count("LAYOUTRETURN"), s.c.RecallAnys())
	}
}

// A data server whose connection breaks: the error is reported as
// NFS4ERR_NXIO, that write goes through the MDS, and the next layout
// dials the server again; its counts go on.
func TestPNFSDataServerReconnect(t *testing.T) {
	s := newPNFSSetup(t, 1, 0, [][]int{{0}}, PNFSOptions{RetryAfter: time.Millisecond})
	m := s.mds.snap
	pnfsWriteAll(t, s.f, pattern(5000), nfs4.FileSync4)
	s.ds[0].set(func(ds *pfake) {
		for _, c := range ds.conns {
			c.Close()
		}
		ds.conns = nil
	})
	pnfsWriteAll(t, s.f, pattern(5000), nfs4.FileSync4)
	dev := testDevice(0)
	want := w{}.raw(string(dev[:])).u32(uint32(nfs4.ErrNxio), nfs4.OpWrite)
	if len(m().errors) != 1 || !bytes.Equal(m().errors[0], want) || s.p.Fallbacks() != 1 {
		t.Fatalf("LAYOUTERROR reports %x, fallbacks %d", m().errors, s.p.Fallbacks())
	}
	time.Sleep(2 * time.Millisecond)
	pnfsWriteAll(t, s.f, pattern(5000), nfs4.FileSync4)
	st := s.p.Stats()
	if s.p.Fallbacks() != 1 || len(st) != 1 || st[0].Writes != 2 || st[0].Errors != 1 || s.ds[0].count("EXCHANGE_ID") != 2 {
		t.Fatalf("fallbacks %d, stats %+v, data server EXCHANGE_IDs %d", s.p.Fallbacks(), st, s.ds[0].count("EXCHANGE_ID"))
	}
	if sent, _ := s.p.WireBytes(); sent < 10000 {
		t.Fatalf("wire bytes sent %d", sent)
	}
}
