package nfs

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// The pNFS operations of the metadata-server role (RFC 8881 sections
// 18.40-18.44, RFC 7862 sections 15.6-15.7) for the flexible-files
// layout (RFC 8435). With the role off every one answers NFS4ERR_NOTSUPP
// before reading its arguments, as it did before the role existed.

// layoutBodyMax bounds an encoded ff_layout4: stripe unit, the mirror
// array, and per mirror one ff_data_server4 (device id, efficiency,
// stateid, one handle, user and group as decimal strings), then flags and
// the stats hint.
const layoutBodyMax = 8 + 4 + maxMirrors*(4+nfs4.DeviceIDSize+4+stateidLen+4+4+nfs4.FHSize+2*(4+12)) + 4 + 4

// layoutgetRsize bounds LAYOUTGET's result by the current file's own
// layout (loaded here if need be: LAYOUTGET runs on a worker), not by
// the largest possible: the Linux client sends LAYOUTGET inside its OPEN
// (pnfs_lgopen_prepare), a COMPOUND it asks the server to cache, and
// ca_maxresponsesize_cached must hold the whole reply.
func layoutgetRsize(c *compound) int {
	l := c.s.layoutOf(c.cfh)
	if l == nil {
		return 4 // logr_will_signal_layout_avail, or nothing
	}
	body := 8 + 4 + 4 + 4
	for _, m := range l.Mirrors {
		body += 4 + nfs4.DeviceIDSize + 4 + stateidLen + 4 + 4 + xdrLen(len(m.FH)) + 2*(4+12)
	}
	return 4 + stateidLen + 4 + (8 + 8 + 4 + 4 + 4 + body)
}

// layoutgetArgs is LAYOUTGET4args (RFC 8881 section 18.43.1).
type layoutgetArgs struct {
	signalAvail bool
	layoutType  uint32
	iomode      uint32
	offset      uint64
	length      uint64
	minlength   uint64
	stateid     nfs4.Stateid
	maxcount    uint32
}

func decodeLayoutget(d *xdr.Decoder) layoutgetArgs {
	return layoutgetArgs{signalAvail: d.Bool(), layoutType: d.Uint32(), iomode: d.Uint32(),
		offset: d.Uint64(), length: d.Uint64(), minlength: d.Uint64(),
		stateid: nfs4.DecodeStateid(d), maxcount: d.Uint32()}
}

// checkRange applies section 18.43.3's rules on loga_length and
// loga_minlength (knfsd's nfsd4_layoutget cites them).
func (a *layoutgetArgs) checkRange() nfs4.Status {
	const max = nfs4.LengthToEOF
	switch {
	case a.length < a.minlength:
		return nfs4.ErrInval
	case a.minlength != max && a.offset > max-a.minlength:
		return nfs4.ErrInval
	case a.length != max && a.offset > max-a.length:
		return nfs4.ErrInval
	}
	return nfs4.OK
}

// layoutTarget checks that the current filehandle is a regular file
// (NFS4ERR_ISDIR, NFS4ERR_WRONG_TYPE otherwise, section 18.43.3).
func (c *compound) layoutTarget() (*node, nfs4.Status) {
	n := c.cfh
	switch {
	case n == nil:
		return nil, nfs4.ErrNofilehandle
	case n.exp == nil || n.isDir():
		return nil, nfs4.ErrIsdir
	case !n.isReg():
		return nil, nfs4.ErrWrongType
	}
	return n, nfs4.OK
}

func opLayoutget(c *compound) nfs4.Status {
	if c.s.mds == nil {
		return nfs4.ErrNotsupp
	}
	st := c.layoutget()
	if st == nfs4.ErrLayoutTryLater {
		// LAYOUTGET4res carries logr_will_signal_layout_avail then: no
		// CB_RECALLABLE_OBJ_AVAIL will come.
		c.e.Bool(false)
		c.keepResult = true
	}
	return st
}

func (c *compound) layoutget() nfs4.Status {
	a := decodeLayoutget(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	n, s := c.layoutTarget()
	if s != nfs4.OK {
		return s
	}
	switch {
	case a.layoutType != nfs4.LayoutFlexFiles:
		return nfs4.ErrUnknownLayoutType
	case a.iomode != nfs4.LayoutIOModeRead && a.iomode != nfs4.LayoutIOModeRW:
		return nfs4.ErrBadIOMode // ANY is for returns and recalls only
	}
	if s := a.checkRange(); s != nfs4.OK {
		return s
	}
	sid, s := c.resolveSid(a.stateid)
	if s != nfs4.OK {
		return s
	}
	if sid == nfs4.AnonStateid || sid == nfs4.BypassStateid {
		return nfs4.ErrBadStateid
	}
	// The synthetic owner lets whoever holds the layout read (and, RW,
	// write) the data files: the caller must be allowed that on the file
	// now, as for a READ or WRITE through the MDS.
	var st unix.Stat_t
	if s := c.s.statNode(n, &st); s != nfs4.OK {
		return s
	}
	if a.iomode == nfs4.LayoutIOModeRW {
		if c.readOnlyFH() {
			return nfs4.ErrRofs
		}
		s = c.mayWrite(n, &st)
	} else {
		s = c.mayRead(n, &st)
	}
	if s != nfs4.OK {
		return s
	}
	l := c.s.layoutOf(n)
	if l == nil || !c.mayStripe(l) {
		return nfs4.ErrLayoutUnavailable
	}
	mirrors, s := c.s.usableMirrors(l, a.iomode)
	if s != nfs4.OK {
		return s
	}
	body := encodeFFLayout(l, mirrors, a.iomode)
	if need := 4 + stateidLen + 4 + 8 + 8 + 4 + 4 + 4 + xdrLen(len(body)); a.maxcount != 0 && need > int(a.maxcount) {
		return nfs4.ErrToosmall // section 18.43.3: loga_maxcount
	}
	devs := make([]DeviceID, len(mirrors))
	for i, m := range mirrors {
		devs[i] = m.Device
	}
	t := c.s.state
	t.mu.Lock()
	lsid, s := t.grantLayoutLocked(c.sess.client, n, sid, a.iomode, devs)
	t.mu.Unlock()
	if s != nfs4.OK {
		return s
	}
	c.s.mds.granted.Add(1)
	e := c.e
	e.Bool(true) // logr_return_on_close: knfsd always sets it
	lsid.Encode(e)
	e.Uint32(1) // one layout4: the whole file
	e.Uint64(0)
	e.Uint64(nfs4.LengthToEOF)
	e.Uint32(a.iomode)
	e.Uint32(nfs4.LayoutFlexFiles)
	e.Opaque(body)
	return nfs4.OK
}

// usableMirrors returns the mirrors of l whose data servers are in
// service. A READ layout may leave a failed one out; a RW layout may not
// (a mirror not written would differ from the others), so without all of
// them the client does its I/O through the MDS
// (NFS4ERR_LAYOUTUNAVAILABLE).
func (s *Server) usableMirrors(l *FileLayout, iomode uint32) ([]DSFile, nfs4.Status) {
	up := make(map[DeviceID]bool)
	for _, d := range s.mds.ds.Devices() {
		up[d.ID] = true
	}
	if st, ok := s.mds.ds.(StaleMirrors); ok {
		// A mirror that missed writes while its server was away is not
		// named until it is copied over again (pnfs.Pool.Resilver).
		for _, id := range st.StaleMirrors(*l) {
			up[id] = false
		}
	}
	var out []DSFile
	for m := range l.MirrorCount() {
		// A striped mirror is usable only whole (pnfs_stripe.go).
		row := l.Row(m)
		if rowUp(row, up) {
			out = append(out, row...)
		} else if iomode == nfs4.LayoutIOModeRW {
			return nil, nfs4.ErrLayoutUnavailable
		}
	}
	if len(out) == 0 {
		return nil, nfs4.ErrLayoutUnavailable
	}
	return out, nfs4.OK
}

// readerUID is the synthetic user of every READ layout: outside the
// range the data-server pool gives owners (pnfs: 0x40000000-0x7fffffff),
// so it owns no data file, and reads through the group's r bit.
const readerUID = 0x3fffffff

// ffFlags is ffl_flags. FF_FLAGS_NO_LAYOUTCOMMIT stays clear so that
// clients send LAYOUTCOMMIT after writing to the data servers: the MDS
// learns the file's new size and mtime from it (a DS WRITE does not
// reach the MDS). FF_FLAGS_NO_IO_THRU_MDS stays clear: a client that
// cannot reach a data server may fall back to I/O through the MDS, which
// proxies it (pnfs_proxy.go). The Linux client reads these in
// ff_layout_alloc_lseg (fs/nfs/flexfilelayout/flexfilelayout.c).
const ffFlags = 0

// encodeFFLayout writes ff_layout4 (RFC 8435 section 5.1) for mirrors of
// l: one ff_mirror4 per mirror, each with one ff_data_server4 naming the
// data file (one per stripe of a striped layout, pnfs_stripe.go), the
// anonymous stateid (loose coupling: section 5.1, the DS knows nothing
// of the MDS's state) and the synthetic ids as numeric
// strings, as knfsd's flexfiles server sends its uid and gid. A RW
// layout names the data file's owner (mode 0640: read and write); a READ
// layout names readerUID with the file's group, so that its holder can
// read the data file but not write it (RFC 8435 section 2.2; pynfs
// FFLA1 checks the uids differ and the gids match).
func encodeFFLayout(l *FileLayout, mirrors []DSFile, iomode uint32) []byte {
	e := xdr.NewEncoder(layoutBodyMax)
	e.Uint64(l.StripeUnit)
	e.Uint32(uint32(len(mirrors) / l.Stripes()))
	uid := l.UID
	if iomode == nfs4.LayoutIOModeRead {
		uid = readerUID
	}
	user := strconv.FormatUint(uint64(uid), 10)
	group := strconv.FormatUint(uint64(l.GID), 10)
	w := l.Stripes()
	rows := len(mirrors) / w
	for i, m := range mirrors {
		if i%w == 0 {
			e.Uint32(uint32(w)) // ffm_data_servers: the mirror's stripes (pnfs_stripe.go)
		}
		e.Fixed(m.Device[:])
		// ffds_efficiency: the Linux client reads from the mirror with
		// the highest; the first mirror is the placement's first choice.
		e.Uint32(uint32(rows - i/w))
		nfs4.AnonStateid.Encode(e)
		e.Uint32(1) // ffds_fh_vers: one handle
		e.Opaque(m.FH)
		e.String(user)
		e.String(group)
	}
	e.Uint32(ffFlags)
	e.Uint32(0) // ffl_stats_collect_hint: no hint
	return e.Header()
}

// layoutcommitArgs is LAYOUTCOMMIT4args (RFC 8881 section 18.42.1).
type layoutcommitArgs struct {
	offset, length uint64
	reclaim        bool
	stateid        nfs4.Stateid
	newOffset      bool   // loca_last_write_offset given
	lastWrite      uint64 // its offset
	timeSet        bool   // loca_time_modify given
	mtime          unix.Timespec
	layoutType     uint32
	body           []byte // loca_layoutupdate's body: empty for flex files (RFC 8435 section 9.1)
}

func decodeLayoutcommit(d *xdr.Decoder) layoutcommitArgs {
	a := layoutcommitArgs{offset: d.Uint64(), length: d.Uint64(), reclaim: d.Bool(), stateid: nfs4.DecodeStateid(d)}
	if a.newOffset = d.Bool(); a.newOffset {
		a.lastWrite = d.Uint64()
	}
	if a.timeSet = d.Bool(); a.timeSet {
		a.mtime.Sec = d.Int64()
		nsec := d.Uint32()
		if nsec >= 1e9 {
			d.Fail(xdr.ErrTooLong)
		}
		a.mtime.Nsec = int64(nsec)
	}
	a.layoutType = d.Uint32()
	a.body = d.Opaque(nfs4.OpaqueLimit)
	return a
}

// opLayoutcommit makes the MDS file agree with what the client wrote to
// the data servers: its size grows to loca_last_write_offset+1 and never
// shrinks (section 18.42.3: a client's last write offset lower than the
// size changes nothing), and its mtime is the client's when given, else
// the server's time.
func opLayoutcommit(c *compound) nfs4.Status {
	if c.s.mds == nil {
		return nfs4.ErrNotsupp
	}
	a := decodeLayoutcommit(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	n, s := c.layoutTarget()
	if s != nfs4.OK {
		return s
	}
	if a.layoutType != nfs4.LayoutFlexFiles {
		return nfs4.ErrUnknownLayoutType
	}
	t := c.s.state
	if a.reclaim {
		// Section 18.42.3: in the grace period a client commits what it
		// wrote to the data servers under a layout of the previous boot
		// (the MDS died before its LAYOUTCOMMIT); its stateid is of that
		// boot, so only the client's right to reclaim is checked.
		t.mu.Lock()
		s := t.mayReclaimLocked(c.sess.client)
		t.mu.Unlock()
		if s != nfs4.OK {
			return s
		}
	} else if s := c.checkLayoutStateid(n, a.stateid); s != nfs4.OK {
		return s
	}
	if a.newOffset && (a.lastWrite < a.offset || a.length != nfs4.LengthToEOF && a.lastWrite-a.offset >= a.length) {
		return nfs4.ErrInval // section 18.42.3: the offset lies in the range committed
	}
	c.rep.pin(n)
	fd, err := n.writeFD(c.cred)
	if err != nil {
		return errno(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return errno(err)
	}
	size := uint64(st.Size)
	changed := false
	if a.newOffset && a.lastWrite < 1<<63-1 && a.lastWrite+1 > size {
		size = a.lastWrite + 1
		if err := unix.Ftruncate(fd, int64(size)); err != nil {
			return errno(err)
		}
		n.extent.changed()
		changed = true
	}
	mt := unix.Timespec{Nsec: unix.UTIME_NOW}
	if a.timeSet {
		mt = a.mtime
	}
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, "/proc/self/fd/"+itoa(fd),
		[]unix.Timespec{{Nsec: unix.UTIME_OMIT}, mt}, 0); err != nil {
		return errno(err)
	}
	c.e.Bool(changed)
	if changed {
		c.e.Uint64(size)
	}
	return nfs4.OK
}

// layoutreturnArgs is LAYOUTRETURN4args (RFC 8881 section 18.44.1);
// offset, length, stateid and body are layoutreturn_file4's.
type layoutreturnArgs struct {
	reclaim        bool
	layoutType     uint32
	iomode         uint32
	returnType     uint32
	offset, length uint64
	stateid        nfs4.Stateid
	body           []byte // lrf_body: ff_layoutreturn4 (RFC 8435 section 9.3)
}

func decodeLayoutreturn(d *xdr.Decoder) layoutreturnArgs {
	a := layoutreturnArgs{reclaim: d.Bool(), layoutType: d.Uint32(), iomode: d.Uint32(), returnType: d.Uint32()}
	if a.returnType == nfs4.LayoutReturnFile {
		a.offset, a.length = d.Uint64(), d.Uint64()
		a.stateid = nfs4.DecodeStateid(d)
		a.body = d.Opaque(maxLayoutReturnBody)
	}
	return a
}

// maxLayoutReturnBody bounds lrf_body: the Linux client sends at most a
// page of error and stats reports (ff_layout_encode_layoutreturn).
const maxLayoutReturnBody = 64 << 10

func opLayoutreturn(c *compound) nfs4.Status {
	if c.s.mds == nil {
		return nfs4.ErrNotsupp
	}
	a := decodeLayoutreturn(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	switch {
	case a.layoutType != nfs4.LayoutFlexFiles:
		return nfs4.ErrUnknownLayoutType
	case a.iomode < nfs4.LayoutIOModeRead || a.iomode > nfs4.LayoutIOModeAny:
		return nfs4.ErrInval
	case a.returnType < nfs4.LayoutReturnFile || a.returnType > nfs4.LayoutReturnAll:
		return nfs4.ErrInval
	case a.reclaim:
		return nfs4.ErrNoGrace
	}
	if c.cfh == nil {
		return nfs4.ErrNofilehandle
	}
	cl := c.sess.client
	t := c.s.state
	if a.returnType != nfs4.LayoutReturnFile {
		var match func(*node) bool
		if a.returnType == nfs4.LayoutReturnFSID {
			cur := c.cfh
			match = func(n *node) bool { return n.exp == cur.exp && n.fs == cur.fs }
		}
		t.mu.Lock()
		t.returnAllLocked(cl, a.iomode, match)
		t.mu.Unlock()
		c.e.Bool(false) // lrs_present
		return nfs4.OK
	}
	n, s := c.layoutTarget()
	if s != nfs4.OK {
		return s
	}
	if a.length == 0 || a.length != nfs4.LengthToEOF && a.offset > nfs4.LengthToEOF-a.length {
		return nfs4.ErrInval
	}
	sid, s := c.resolveSid(a.stateid)
	if s != nfs4.OK {
		return s
	}
	whole := a.offset == 0 && a.length == nfs4.LengthToEOF
	t.mu.Lock()
	lsid, present, s := t.returnLayoutLocked(cl, n, sid, a.iomode, whole)
	t.mu.Unlock()
	// The reports stand even if the stateid turns out stale; they come
	// after the return, whose seqid a recall they cause would move.
	if r, ok := decodeFFLayoutreturn(a.body); ok {
		c.s.noteIOErrors(r.errors)
		c.s.mds.statsReports.Add(uint64(r.stats))
	}
	if s != nfs4.OK {
		return s
	}
	c.e.Bool(present)
	if present {
		lsid.Encode(c.e)
	}
	return nfs4.OK
}

// deviceError is device_error4 (RFC 7862 section 15.6.1).
type deviceError struct {
	device DeviceID
	status nfs4.Status
	opnum  uint32
}

// maxDeviceErrors bounds the errors read from one report.
const maxDeviceErrors = 64

func decodeDeviceErrors(d *xdr.Decoder, out []deviceError) []deviceError {
	n := d.ArrayLen(maxDeviceErrors, nfs4.DeviceIDSize+8)
	for i := 0; i < n && d.Err() == nil; i++ {
		var de deviceError
		copy(de.device[:], d.Fixed(nfs4.DeviceIDSize))
		de.status = nfs4.Status(d.Uint32())
		de.opnum = d.Uint32()
		out = append(out, de)
	}
	return out
}

// ffLayoutreturn is what the server uses of ff_layoutreturn4 (RFC 8435
// section 9.3): the data server errors of every ff_ioerr4, and the count
// of ff_iostats4 reports.
type ffLayoutreturn struct {
	errors []deviceError
	stats  int
}

// decodeFFLayoutreturn reads ff_layoutreturn4 from lrf_body. An empty
// body (a client with nothing to report) is fine; one that does not
// decode is ignored (ok false): the return itself still counts.
func decodeFFLayoutreturn(body []byte) (r ffLayoutreturn, ok bool) {
	if len(body) == 0 {
		return r, true
	}
	d := xdr.NewDecoder(body)
	n := d.ArrayLen(maxDeviceErrors, 8+8+stateidLen+4)
	for i := 0; i < n && d.Err() == nil; i++ {
		d.Skip(8 + 8 + stateidLen) // ffie_offset, ffie_length, ffie_stateid
		r.errors = decodeDeviceErrors(d, r.errors)
	}
	m := d.ArrayLen(maxDeviceErrors, 8+8+stateidLen+16+16+nfs4.DeviceIDSize)
	for i := 0; i < m && d.Err() == nil; i++ {
		d.Skip(8 + 8 + stateidLen + 16 + 16 + nfs4.DeviceIDSize) // offset, length, stateid, read, write, device
		skipFFLayoutupdate(d)
		r.stats++
	}
	if d.Err() != nil {
		return ffLayoutreturn{}, false
	}
	return r, true
}

// skipFFLayoutupdate skips ff_layoutupdate4: netaddr4, a handle, two
// ff_io_latency4, a duration and a bool.
func skipFFLayoutupdate(d *xdr.Decoder) {
	d.Opaque(nfs4.OpaqueLimit) // na_r_netid
	d.Opaque(nfs4.OpaqueLimit) // na_r_addr
	d.Opaque(nfs4.FHSize)
	d.Skip(2 * (5*8 + 2*12)) // ffl_read, ffl_write
	d.Skip(12 + 4)           // ffl_duration, ffl_local
}

// noteIOErrors hands reported data server errors to DataServers.Failed
// and recalls the layouts that name a server reported failing, so that
// clients come back for layouts without it.
//
// NFS4ERR_ACCESS and NFS4ERR_PERM are not failures of the server: they are
// what a client meets after a fence (RFC 8435 section 14) with the ids of
// a layout from before it, and it gets a layout with the new ids next.
func (s *Server) noteIOErrors(errs []deviceError) {
	for _, e := range errs {
		if e.status == nfs4.OK || e.status == nfs4.ErrAccess || e.status == nfs4.ErrPerm {
			continue
		}
		s.failed(e.device, e.status) // checked there; a recall follows if it leaves service (DeviceWatcher)
	}
}

// getdeviceinfoArgs is GETDEVICEINFO4args (RFC 8881 section 18.40.1).
type getdeviceinfoArgs struct {
	device     DeviceID
	layoutType uint32
	maxcount   uint32
	notify     nfs4.Bitmap
}

func decodeGetdeviceinfo(d *xdr.Decoder) getdeviceinfoArgs {
	var a getdeviceinfoArgs
	copy(a.device[:], d.Fixed(nfs4.DeviceIDSize))
	a.layoutType, a.maxcount = d.Uint32(), d.Uint32()
	a.notify = nfs4.DecodeBitmap(d)
	return a
}

// deviceAddrMax bounds ff_device_addr4: one netaddr4 (netid and a
// universal address of IPv6 with port) and one ff_device_versions4.
const deviceAddrMax = 4 + (4 + 4) + (4 + 56) + 4 + 5*4

func opGetdeviceinfo(c *compound) nfs4.Status {
	if c.s.mds == nil {
		return nfs4.ErrNotsupp
	}
	a := decodeGetdeviceinfo(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	if a.layoutType != nfs4.LayoutFlexFiles {
		return nfs4.ErrUnknownLayoutType
	}
	ds, ok := c.s.mds.ds.Device(a.device)
	if !ok {
		return nfs4.ErrNoent // section 18.40.3: a device id the server does not know
	}
	var body []byte
	if a.maxcount != 0 { // section 18.40.3: 0 asks only about notifications
		var s nfs4.Status
		if body, s = encodeFFDeviceAddr(ds); s != nfs4.OK {
			return s
		}
	}
	// No CB_NOTIFY_DEVICEID is ever sent, so no notification is
	// promised: gdir_notification is empty whatever was asked.
	need := 4 + 4 + xdrLen(len(body)) + 4
	if a.maxcount != 0 && need > int(a.maxcount) {
		c.e.Uint32(uint32(need)) // gdir_mincount (knfsd counts the same bytes)
		c.keepResult = true
		return nfs4.ErrToosmall
	}
	c.e.Uint32(nfs4.LayoutFlexFiles)
	c.e.Opaque(body)
	nfs4.Bitmap{}.Encode(c.e)
	return nfs4.OK
}

// encodeFFDeviceAddr writes ff_device_addr4 (RFC 8435 section 5.1) for
// ds: its address as netaddr4 and one version, NFSv4.1, loosely coupled.
func encodeFFDeviceAddr(ds DataServer) ([]byte, nfs4.Status) {
	netid, uaddr, ok := universalAddr(ds.Addr)
	if !ok {
		return nil, nfs4.ErrServerfault
	}
	e := xdr.NewEncoder(deviceAddrMax)
	e.Uint32(1) // ffda_netaddrs: one
	e.String(netid)
	e.String(uaddr)
	e.Uint32(1) // ffda_versions: one
	e.Uint32(4)
	e.Uint32(1)
	e.Uint32(ds.RSize)
	e.Uint32(ds.WSize)
	e.Bool(false) // ffdv_tightly_coupled
	return e.Header(), nfs4.OK
}

// universalAddr turns "host:port" into a netid and universal address
// (RFC 5665 section 5.2.3: h1.h2.h3.h4.p1.p2, or an IPv6 address with
// .p1.p2). A host name is resolved.
func universalAddr(addr string) (netid, uaddr string, ok bool) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return "", "", false
		}
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return "", "", false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil || len(ips) == 0 {
			return "", "", false
		}
		ap = netip.AddrPortFrom(ips[0], uint16(p))
	}
	ip := ap.Addr().Unmap()
	netid = nfs4.NetidTCP
	if ip.Is6() {
		netid = "tcp6"
	}
	p := ap.Port()
	return netid, ip.String() + "." + strconv.Itoa(int(p>>8)) + "." + strconv.Itoa(int(p&0xff)), true
}

// getdevicelistArgs is GETDEVICELIST4args (RFC 8881 section 18.41.1).
type getdevicelistArgs struct {
	layoutType uint32
	maxdevices uint32
	cookie     uint64
	verf       [nfs4.VerifierSize]byte
}

func decodeGetdevicelist(d *xdr.Decoder) getdevicelistArgs {
	a := getdevicelistArgs{layoutType: d.Uint32(), maxdevices: d.Uint32(), cookie: d.Uint64()}
	copy(a.verf[:], d.Fixed(nfs4.VerifierSize))
	return a
}

// maxDeviceList bounds the device ids of one GETDEVICELIST reply.
const maxDeviceList = 256

func getdevicelistRsize(c *compound) int {
	d := c.peekArgs()
	return 8 + 8 + 4 + nfs4.DeviceIDSize*min(int(decodeGetdevicelist(&d).maxdevices), maxDeviceList) + 4
}

// opGetdevicelist lists the data servers in service. NFSv4.1 only: RFC
// 7862 section 13 makes it MUST NOT implement in NFSv4.2 (and the Linux
// client stopped sending it in 4.0, 2015), so a 4.2 COMPOUND gets
// NFS4ERR_NOTSUPP.
func opGetdevicelist(c *compound) nfs4.Status {
	if c.s.mds == nil || c.minor >= 2 {
		return nfs4.ErrNotsupp
	}
	a := decodeGetdevicelist(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	if c.cfh == nil {
		return nfs4.ErrNofilehandle
	}
	if a.layoutType != nfs4.LayoutFlexFiles {
		return nfs4.ErrUnknownLayoutType
	}
	if a.maxdevices == 0 {
		return nfs4.ErrInval
	}
	devs := c.s.mds.ds.Devices()
	if a.cookie > uint64(len(devs)) || a.cookie != 0 && a.verf != c.s.bootVer {
		return nfs4.ErrBadCookie
	}
	rest := devs[a.cookie:]
	n := min(len(rest), int(a.maxdevices), maxDeviceList)
	c.e.Uint64(a.cookie + uint64(n))
	c.e.Fixed(c.s.bootVer[:])
	c.e.Uint32(uint32(n))
	for _, d := range rest[:n] {
		c.e.Fixed(d.ID[:])
	}
	c.e.Bool(n == len(rest))
	return nfs4.OK
}

// layouterrorArgs is LAYOUTERROR4args (RFC 7862 section 15.6.1).
type layouterrorArgs struct {
	offset, length uint64
	stateid        nfs4.Stateid
	errors         []deviceError
}

func decodeLayouterror(d *xdr.Decoder) layouterrorArgs {
	a := layouterrorArgs{offset: d.Uint64(), length: d.Uint64(), stateid: nfs4.DecodeStateid(d)}
	a.errors = decodeDeviceErrors(d, nil)
	return a
}

// opLayouterror takes a client's report of data server errors: each goes
// to DataServers.Failed, which checks the server; the layouts naming it
// are recalled if it leaves service (DeviceWatcher). RFC 7862 section
// 15.6.3 leaves what to do to the server.
func opLayouterror(c *compound) nfs4.Status {
	if c.s.mds == nil {
		return nfs4.ErrNotsupp
	}
	a := decodeLayouterror(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	if s := c.checkLayoutReport(a.stateid); s != nfs4.OK {
		return s
	}
	c.s.noteIOErrors(a.errors)
	return nfs4.OK
}

// checkLayoutReport checks what a client's report of its I/O through a
// layout (LAYOUTERROR, LAYOUTSTATS) is about: the current file, and a
// layout of the caller's client on it named by sid.
func (c *compound) checkLayoutReport(sid nfs4.Stateid) nfs4.Status {
	n, s := c.layoutTarget()
	if s != nfs4.OK {
		return s
	}
	return c.checkLayoutStateid(n, sid)
}

// checkLayoutStateid checks sid names a layout of the caller's client on
// n.
func (c *compound) checkLayoutStateid(n *node, sid nfs4.Stateid) nfs4.Status {
	sid, s := c.resolveSid(sid)
	if s != nfs4.OK {
		return s
	}
	t := c.s.state
	t.mu.Lock()
	_, isLayout, s := t.layoutLocked(c.sess.client, n, sid)
	t.mu.Unlock()
	if s == nfs4.OK && !isLayout {
		return nfs4.ErrBadStateid
	}
	return s
}

// layoutstatsArgs is LAYOUTSTATS4args (RFC 7862 section 15.7.1).
type layoutstatsArgs struct {
	offset, length      uint64
	stateid             nfs4.Stateid
	readCount, readB    uint64 // lsa_read: io_info4
	writeCount, writeB  uint64 // lsa_write
	device              DeviceID
	layoutType          uint32
	layoutupdateBodyLen int
}

func decodeLayoutstats(d *xdr.Decoder) layoutstatsArgs {
	a := layoutstatsArgs{offset: d.Uint64(), length: d.Uint64(), stateid: nfs4.DecodeStateid(d),
		readCount: d.Uint64(), readB: d.Uint64(), writeCount: d.Uint64(), writeB: d.Uint64()}
	copy(a.device[:], d.Fixed(nfs4.DeviceIDSize))
	a.layoutType = d.Uint32()
	a.layoutupdateBodyLen = len(d.Opaque(nfs4.OpaqueLimit))
	return a
}

// opLayoutstats adds a client's I/O statistics report to the metrics
// (bytes read and written through layouts, which the MDS does not see
// otherwise); the numbers are not used for placement yet.
func opLayoutstats(c *compound) nfs4.Status {
	if c.s.mds == nil {
		return nfs4.ErrNotsupp
	}
	a := decodeLayoutstats(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	if s := c.checkLayoutReport(a.stateid); s != nfs4.OK {
		return s
	}
	c.s.mds.statsReports.Add(1)
	c.s.mds.statsRead.Add(a.readB)
	c.s.mds.statsWritten.Add(a.writeB)
	return nfs4.OK
}
