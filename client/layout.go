package client

import (
	"fmt"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// pNFS wire types (RFC 8881 sections 3.3.13-3.3.21, 18.40-18.44, 20.3),
// the flexible-files layout (RFC 8435 sections 5-9, 13) and the NFSv4.2
// error and statistics reports (RFC 7862 sections 15.6, 15.7). Written
// from the RFC text, independently of the server in package nfs, so that
// the client checks the server against a second reading of the spec.

// Layout types (layouttype4), iomodes (layoutiomode4), return and recall
// types, and the flexible-files layout flags (ff_flags4).
const (
	LayoutNFSv41Files = 1
	LayoutFlexFiles   = 4 // LAYOUT4_FLEX_FILES, RFC 8435 section 13

	IOModeRead = 1 // LAYOUTIOMODE4_READ
	IOModeRW   = 2 // LAYOUTIOMODE4_RW
	IOModeAny  = 3 // LAYOUTIOMODE4_ANY

	LayoutReturnFile = 1 // LAYOUTRETURN4_FILE (and LAYOUTRECALL4_FILE)
	LayoutReturnFsid = 2
	LayoutReturnAll  = 3

	FFFlagNoLayoutcommit = 0x1 // FF_FLAGS_NO_LAYOUTCOMMIT
	FFFlagNoIOThruMDS    = 0x2 // FF_FLAGS_NO_IO_THRU_MDS
	FFFlagNoReadIO       = 0x4 // FF_FLAGS_NO_READ_IO
	FFFlagWriteOneMirror = 0x8 // FF_FLAGS_WRITE_ONE_MIRROR

	// LengthAll is NFS4_UINT64_MAX: a layout range to the end of file.
	LengthAll = ^uint64(0)
)

// pNFS status codes (RFC 8881 section 15.1.10).
const (
	ErrBadIOMode         nfs4.Status = 10049
	ErrBadLayout         nfs4.Status = 10050
	ErrLayoutTryLater    nfs4.Status = 10058
	ErrLayoutUnavailable nfs4.Status = 10059
	ErrNoMatchingLayout  nfs4.Status = 10060
	ErrRecallConflict    nfs4.Status = 10061
	ErrUnknownLayoutType nfs4.Status = 10062
	ErrReturnConflict    nfs4.Status = 10086
)

// Decoding limits: generous for any real layout, small enough that a
// hostile reply cannot make the client allocate much.
const (
	maxLayouts    = 64 // layout4 entries in one LAYOUTGET reply
	maxMirrors    = 64
	maxDataServer = 64 // ff_data_server4 per mirror
	maxFHVersions = 16
	maxNetAddrs   = 16
	maxVersions   = 16
	maxReports    = 256 // ioerr / iostats / device_error4 entries
	maxBody       = 1 << 20
)

// DeviceID is deviceid4.
type DeviceID [nfs4.DeviceIDSize]byte

// LayoutGetArgs are LAYOUTGET4args (RFC 8881 section 18.43.1).
type LayoutGetArgs struct {
	Signal    bool   // loga_signal_layout_avail
	Type      uint32 // LayoutFlexFiles
	IOMode    uint32
	Offset    uint64
	Length    uint64 // LengthAll: to the end of file
	MinLength uint64
	Stateid   nfs4.Stateid // an open, lock, delegation or layout stateid
	MaxCount  uint32       // loga_maxcount: the largest reply body
}

// LayoutSegment is layout4: a range and its type-specific body.
type LayoutSegment struct {
	Offset, Length uint64
	IOMode         uint32
	Type           uint32
	Body           []byte // loc_body: for flexible files, an ff_layout4
}

// LayoutGetRes is LAYOUTGET4resok.
type LayoutGetRes struct {
	ReturnOnClose bool
	Stateid       nfs4.Stateid
	Segments      []LayoutSegment
}

// EncodeLayoutget writes LAYOUTGET.
func EncodeLayoutget(e *xdr.Encoder, a *LayoutGetArgs) {
	e.Uint32(nfs4.OpLayoutget)
	e.Bool(a.Signal)
	e.Uint32(a.Type)
	e.Uint32(a.IOMode)
	e.Uint64(a.Offset)
	e.Uint64(a.Length)
	e.Uint64(a.MinLength)
	a.Stateid.Encode(e)
	e.Uint32(a.MaxCount)
}

// DecodeLayoutgetRes reads LAYOUTGET4resok.
func DecodeLayoutgetRes(d *xdr.Decoder) (LayoutGetRes, error) {
	var r LayoutGetRes
	r.ReturnOnClose = d.Bool()
	r.Stateid = nfs4.DecodeStateid(d)
	n := d.ArrayLen(maxLayouts, 28)
	for i := 0; i < n && d.Err() == nil; i++ {
		var s LayoutSegment
		s.Offset = d.Uint64()
		s.Length = d.Uint64()
		s.IOMode = d.Uint32()
		s.Type = d.Uint32()
		s.Body = clone(d.Opaque(maxBody))
		r.Segments = append(r.Segments, s)
	}
	if err := d.Err(); err != nil {
		return r, fmt.Errorf("LAYOUTGET result: %w", err)
	}
	return r, nil
}

// FFDataServer is ff_data_server4: one data server's file of a mirror.
type FFDataServer struct {
	Device     DeviceID
	Efficiency uint32
	Stateid    nfs4.Stateid // for the data server (the anonymous one in loose coupling)
	FHs        [][]byte     // ffds_fh_vers: one handle per NFS version the device offers
	User       string       // ffds_user: the synthetic uid, as a string
	Group      string       // ffds_group
}

// FFMirror is ff_mirror4.
type FFMirror struct{ Servers []FFDataServer }

// FFLayout is ff_layout4 (RFC 8435 section 5.1).
type FFLayout struct {
	StripeUnit uint64
	Mirrors    []FFMirror
	Flags      uint32
	StatsHint  uint32 // ffl_stats_collect_hint, seconds
}

// DecodeFFLayout reads an ff_layout4 from a layout body; every byte of
// body must belong to it.
func DecodeFFLayout(body []byte) (FFLayout, error) {
	var l FFLayout
	d := xdr.NewDecoder(body)
	l.StripeUnit = d.Uint64()
	nm := d.ArrayLen(maxMirrors, 4)
	for i := 0; i < nm && d.Err() == nil; i++ {
		var m FFMirror
		ns := d.ArrayLen(maxDataServer, 48)
		for j := 0; j < ns && d.Err() == nil; j++ {
			m.Servers = append(m.Servers, decodeFFDataServer(d))
		}
		l.Mirrors = append(l.Mirrors, m)
	}
	l.Flags = d.Uint32()
	l.StatsHint = d.Uint32()
	if err := ended(d); err != nil {
		return l, fmt.Errorf("ff_layout4: %w", err)
	}
	return l, nil
}

func decodeFFDataServer(d *xdr.Decoder) FFDataServer {
	var s FFDataServer
	copy(s.Device[:], d.Fixed(nfs4.DeviceIDSize))
	s.Efficiency = d.Uint32()
	s.Stateid = nfs4.DecodeStateid(d)
	n := d.ArrayLen(maxFHVersions, 4)
	for i := 0; i < n && d.Err() == nil; i++ {
		s.FHs = append(s.FHs, clone(d.Opaque(nfs4.FHSize)))
	}
	s.User = string(d.String(nfs4.OpaqueLimit))
	s.Group = string(d.String(nfs4.OpaqueLimit))
	return s
}

// EncodeFFLayout writes l as an ff_layout4 (the body of a layout4; tests
// and fake servers use it).
func EncodeFFLayout(e *xdr.Encoder, l *FFLayout) {
	e.Uint64(l.StripeUnit)
	e.Uint32(uint32(len(l.Mirrors)))
	for _, m := range l.Mirrors {
		e.Uint32(uint32(len(m.Servers)))
		for _, s := range m.Servers {
			e.Fixed(s.Device[:])
			e.Uint32(s.Efficiency)
			s.Stateid.Encode(e)
			e.Uint32(uint32(len(s.FHs)))
			for _, fh := range s.FHs {
				e.Opaque(fh)
			}
			e.String(s.User)
			e.String(s.Group)
		}
	}
	e.Uint32(l.Flags)
	e.Uint32(l.StatsHint)
}

// NetAddr is netaddr4: an RPC network id ("tcp", "tcp6") and a universal
// address ("h1.h2.h3.h4.p1.p2", RFC 5665).
type NetAddr struct{ Netid, Addr string }

// FFDeviceVersion is ff_device_versions4.
type FFDeviceVersion struct {
	Version, Minor uint32
	RSize, WSize   uint32
	TightlyCoupled bool
}

// FFDeviceAddr is ff_device_addr4 (RFC 8435 section 5.1): where a data
// server is and which NFS versions it speaks.
type FFDeviceAddr struct {
	Addrs    []NetAddr // ffda_netaddrs (multipath_list4)
	Versions []FFDeviceVersion
}

// DecodeFFDeviceAddr reads an ff_device_addr4 from a device_addr4 body.
func DecodeFFDeviceAddr(body []byte) (FFDeviceAddr, error) {
	var a FFDeviceAddr
	d := xdr.NewDecoder(body)
	n := d.ArrayLen(maxNetAddrs, 8)
	for i := 0; i < n && d.Err() == nil; i++ {
		a.Addrs = append(a.Addrs, decodeNetAddr(d))
	}
	n = d.ArrayLen(maxVersions, 20)
	for i := 0; i < n && d.Err() == nil; i++ {
		v := FFDeviceVersion{Version: d.Uint32(), Minor: d.Uint32(), RSize: d.Uint32(), WSize: d.Uint32()}
		v.TightlyCoupled = d.Bool()
		a.Versions = append(a.Versions, v)
	}
	if err := ended(d); err != nil {
		return a, fmt.Errorf("ff_device_addr4: %w", err)
	}
	return a, nil
}

func decodeNetAddr(d *xdr.Decoder) NetAddr {
	return NetAddr{Netid: string(d.String(nfs4.OpaqueLimit)), Addr: string(d.String(nfs4.OpaqueLimit))}
}

func encodeNetAddr(e *xdr.Encoder, a NetAddr) {
	e.String(a.Netid)
	e.String(a.Addr)
}

// EncodeFFDeviceAddr writes a as an ff_device_addr4.
func EncodeFFDeviceAddr(e *xdr.Encoder, a *FFDeviceAddr) {
	e.Uint32(uint32(len(a.Addrs)))
	for _, n := range a.Addrs {
		encodeNetAddr(e, n)
	}
	e.Uint32(uint32(len(a.Versions)))
	for _, v := range a.Versions {
		e.Uint32(v.Version)
		e.Uint32(v.Minor)
		e.Uint32(v.RSize)
		e.Uint32(v.WSize)
		e.Bool(v.TightlyCoupled)
	}
}

// EncodeGetdeviceinfo writes GETDEVICEINFO with no notifications asked.
func EncodeGetdeviceinfo(e *xdr.Encoder, id DeviceID, layoutType, maxCount uint32) {
	e.Uint32(nfs4.OpGetdeviceinfo)
	e.Fixed(id[:])
	e.Uint32(layoutType)
	e.Uint32(maxCount)
	e.Uint32(0) // gdia_notify_types: empty bitmap4
}

// DecodeGetdeviceinfoRes reads GETDEVICEINFO4resok: the device_addr4's
// layout type and body, and the notification bitmap.
func DecodeGetdeviceinfoRes(d *xdr.Decoder) (layoutType uint32, body []byte, notify nfs4.Bitmap, err error) {
	layoutType = d.Uint32()
	body = clone(d.Opaque(maxBody))
	notify = nfs4.DecodeBitmap(d)
	if err := d.Err(); err != nil {
		return 0, nil, notify, fmt.Errorf("GETDEVICEINFO result: %w", err)
	}
	return layoutType, body, notify, nil
}

// EncodeGetdevicelist writes GETDEVICELIST (RFC 8881 section 18.41).
func EncodeGetdevicelist(e *xdr.Encoder, layoutType, maxDevices uint32, cookie uint64, verf [nfs4.VerifierSize]byte) {
	e.Uint32(nfs4.OpGetdevicelist)
	e.Uint32(layoutType)
	e.Uint32(maxDevices)
	e.Uint64(cookie)
	e.Fixed(verf[:])
}

// DeviceList is GETDEVICELIST4resok.
type DeviceList struct {
	Cookie  uint64
	Verf    [nfs4.VerifierSize]byte
	Devices []DeviceID
	EOF     bool
}

// DecodeGetdevicelistRes reads GETDEVICELIST4resok.
func DecodeGetdevicelistRes(d *xdr.Decoder) (DeviceList, error) {
	var r DeviceList
	r.Cookie = d.Uint64()
	copy(r.Verf[:], d.Fixed(nfs4.VerifierSize))
	n := d.ArrayLen(maxReports, nfs4.DeviceIDSize)
	for i := 0; i < n && d.Err() == nil; i++ {
		var id DeviceID
		copy(id[:], d.Fixed(nfs4.DeviceIDSize))
		r.Devices = append(r.Devices, id)
	}
	r.EOF = d.Bool()
	if err := d.Err(); err != nil {
		return r, fmt.Errorf("GETDEVICELIST result: %w", err)
	}
	return r, nil
}

// DeviceError is device_error4 (RFC 7862 section 15.6.1).
type DeviceError struct {
	Device DeviceID
	Status nfs4.Status
	Op     uint32
}

func encodeDeviceErrors(e *xdr.Encoder, errs []DeviceError) {
	e.Uint32(uint32(len(errs)))
	for _, x := range errs {
		e.Fixed(x.Device[:])
		e.Uint32(uint32(x.Status))
		e.Uint32(x.Op)
	}
}

func decodeDeviceErrors(d *xdr.Decoder) []DeviceError {
	n := d.ArrayLen(maxReports, 24)
	var out []DeviceError
	for i := 0; i < n && d.Err() == nil; i++ {
		var x DeviceError
		copy(x.Device[:], d.Fixed(nfs4.DeviceIDSize))
		x.Status = nfs4.Status(d.Uint32())
		x.Op = d.Uint32()
		out = append(out, x)
	}
	return out
}

// IOInfo is io_info4 (RFC 7862 section 15.7.1).
type IOInfo struct{ Count, Bytes uint64 }

// FFIOErr is ff_ioerr4 (RFC 8435 section 9.1.1).
type FFIOErr struct {
	Offset, Length uint64
	Stateid        nfs4.Stateid
	Errors         []DeviceError
}

// FFIOLatency is ff_io_latency4.
type FFIOLatency struct {
	OpsRequested, BytesRequested     uint64
	OpsCompleted, BytesCompleted     uint64
	BytesNotDelivered                uint64
	TotalBusyTime, AggregateComplete Time
}

// FFLayoutUpdate is ff_layoutupdate4 (RFC 8435 section 9.2.2).
type FFLayoutUpdate struct {
	Addr        NetAddr
	FH          []byte
	Read, Write FFIOLatency
	Duration    Time
	Local       bool
}

// FFIOStats is ff_iostats4 (RFC 8435 section 9.2.3).
type FFIOStats struct {
	Offset, Length uint64
	Stateid        nfs4.Stateid
	Read, Write    IOInfo
	Device         DeviceID
	Update         FFLayoutUpdate
}

// FFLayoutReturn is ff_layoutreturn4 (RFC 8435 section 9.3): the body of
// a flexible-files LAYOUTRETURN4_FILE.
type FFLayoutReturn struct {
	IOErrs  []FFIOErr
	IOStats []FFIOStats
}

// EncodeFFLayoutReturn writes r as an ff_layoutreturn4.
func EncodeFFLayoutReturn(e *xdr.Encoder, r *FFLayoutReturn) {
	e.Uint32(uint32(len(r.IOErrs)))
	for _, x := range r.IOErrs {
		e.Uint64(x.Offset)
		e.Uint64(x.Length)
		x.Stateid.Encode(e)
		encodeDeviceErrors(e, x.Errors)
	}
	e.Uint32(uint32(len(r.IOStats)))
	for i := range r.IOStats {
		encodeFFIOStats(e, &r.IOStats[i])
	}
}

func encodeFFIOStats(e *xdr.Encoder, s *FFIOStats) {
	e.Uint64(s.Offset)
	e.Uint64(s.Length)
	s.Stateid.Encode(e)
	encodeIOInfo(e, s.Read)
	encodeIOInfo(e, s.Write)
	e.Fixed(s.Device[:])
	encodeFFLayoutUpdate(e, &s.Update)
}

func encodeIOInfo(e *xdr.Encoder, i IOInfo) {
	e.Uint64(i.Count)
	e.Uint64(i.Bytes)
}

func encodeFFLayoutUpdate(e *xdr.Encoder, u *FFLayoutUpdate) {
	encodeNetAddr(e, u.Addr)
	e.Opaque(u.FH)
	encodeFFIOLatency(e, &u.Read)
	encodeFFIOLatency(e, &u.Write)
	encodeTime(e, u.Duration)
	e.Bool(u.Local)
}

func encodeFFIOLatency(e *xdr.Encoder, l *FFIOLatency) {
	e.Uint64(l.OpsRequested)
	e.Uint64(l.BytesRequested)
	e.Uint64(l.OpsCompleted)
	e.Uint64(l.BytesCompleted)
	e.Uint64(l.BytesNotDelivered)
	encodeTime(e, l.TotalBusyTime)
	encodeTime(e, l.AggregateComplete)
}

func encodeTime(e *xdr.Encoder, t Time) {
	e.Int64(t.Sec)
	e.Uint32(t.Nsec)
}

// DecodeFFLayoutReturn reads an ff_layoutreturn4 from a layoutreturn_file4
// body (what a server gets; the client's tests check its encoder with it).
func DecodeFFLayoutReturn(body []byte) (FFLayoutReturn, error) {
	var r FFLayoutReturn
	d := xdr.NewDecoder(body)
	n := d.ArrayLen(maxReports, 44)
	for i := 0; i < n && d.Err() == nil; i++ {
		x := FFIOErr{Offset: d.Uint64(), Length: d.Uint64(), Stateid: nfs4.DecodeStateid(d)}
		x.Errors = decodeDeviceErrors(d)
		r.IOErrs = append(r.IOErrs, x)
	}
	n = d.ArrayLen(maxReports, 200)
	for i := 0; i < n && d.Err() == nil; i++ {
		r.IOStats = append(r.IOStats, decodeFFIOStats(d))
	}
	if err := ended(d); err != nil {
		return r, fmt.Errorf("ff_layoutreturn4: %w", err)
	}
	return r, nil
}

func decodeFFIOStats(d *xdr.Decoder) FFIOStats {
	s := FFIOStats{Offset: d.Uint64(), Length: d.Uint64(), Stateid: nfs4.DecodeStateid(d)}
	s.Read = IOInfo{Count: d.Uint64(), Bytes: d.Uint64()}
	s.Write = IOInfo{Count: d.Uint64(), Bytes: d.Uint64()}
	copy(s.Device[:], d.Fixed(nfs4.DeviceIDSize))
	u := &s.Update
	u.Addr = decodeNetAddr(d)
	u.FH = clone(d.Opaque(nfs4.FHSize))
	u.Read = decodeFFIOLatency(d)
	u.Write = decodeFFIOLatency(d)
	u.Duration = decodeTime(d)
	u.Local = d.Bool()
	return s
}

func decodeFFIOLatency(d *xdr.Decoder) FFIOLatency {
	var l FFIOLatency
	l.OpsRequested, l.BytesRequested = d.Uint64(), d.Uint64()
	l.OpsCompleted, l.BytesCompleted = d.Uint64(), d.Uint64()
	l.BytesNotDelivered = d.Uint64()
	l.TotalBusyTime, l.AggregateComplete = decodeTime(d), decodeTime(d)
	return l
}

// LayoutReturnArgs are LAYOUTRETURN4args for LAYOUTRETURN4_FILE (Kind 0 or
// LayoutReturnFile), LAYOUTRETURN4_FSID or LAYOUTRETURN4_ALL.
type LayoutReturnArgs struct {
	Reclaim        bool
	Type           uint32 // LayoutFlexFiles
	IOMode         uint32 // IOModeAny to return every iomode
	Kind           uint32 // layoutreturn_type4; 0: LayoutReturnFile
	Offset, Length uint64
	Stateid        nfs4.Stateid // the layout stateid
	// Report, for a flexible-files FILE return, is the ff_layoutreturn4
	// body (I/O errors and statistics); nil: an empty body.
	Report *FFLayoutReturn
}

// EncodeLayoutreturn writes LAYOUTRETURN.
func EncodeLayoutreturn(e *xdr.Encoder, a *LayoutReturnArgs) {
	e.Uint32(nfs4.OpLayoutreturn)
	e.Bool(a.Reclaim)
	e.Uint32(a.Type)
	e.Uint32(a.IOMode)
	kind := a.Kind
	if kind == 0 {
		kind = LayoutReturnFile
	}
	e.Uint32(kind)
	if kind != LayoutReturnFile {
		return
	}
	e.Uint64(a.Offset)
	e.Uint64(a.Length)
	a.Stateid.Encode(e)
	// lrf_body<>: the length is patched once the body is written.
	lenPos := e.Reserve()
	start := e.Pos()
	if a.Report != nil {
		EncodeFFLayoutReturn(e, a.Report)
	} else if a.Type == LayoutFlexFiles {
		EncodeFFLayoutReturn(e, &FFLayoutReturn{})
	}
	e.Patch(lenPos, uint32(e.Pos()-start))
}

// DecodeLayoutreturnRes reads the layoutreturn_stateid of a successful
// LAYOUTRETURN: the new layout stateid, if the client still holds layouts.
func DecodeLayoutreturnRes(d *xdr.Decoder) (sid nfs4.Stateid, present bool, err error) {
	if present = d.Bool(); present {
		sid = nfs4.DecodeStateid(d)
	}
	if err := d.Err(); err != nil {
		return sid, false, fmt.Errorf("LAYOUTRETURN result: %w", err)
	}
	return sid, present, nil
}

// LayoutCommitArgs are LAYOUTCOMMIT4args (RFC 8881 section 18.42.1).
type LayoutCommitArgs struct {
	Offset, Length uint64
	Reclaim        bool
	Stateid        nfs4.Stateid // the layout stateid
	// LastWrite is the offset of the last byte written
	// (loca_last_write_offset), sent when HasLastWrite.
	LastWrite    uint64
	HasLastWrite bool
	Mtime        *Time  // loca_time_modify; nil: not changed
	Type         uint32 // lou_type; flexible files have an empty lou_body
	Body         []byte
}

// EncodeLayoutcommit writes LAYOUTCOMMIT.
func EncodeLayoutcommit(e *xdr.Encoder, a *LayoutCommitArgs) {
	e.Uint32(nfs4.OpLayoutcommit)
	e.Uint64(a.Offset)
	e.Uint64(a.Length)
	e.Bool(a.Reclaim)
	a.Stateid.Encode(e)
	e.Bool(a.HasLastWrite)
	if a.HasLastWrite {
		e.Uint64(a.LastWrite)
	}
	e.Bool(a.Mtime != nil)
	if a.Mtime != nil {
		encodeTime(e, *a.Mtime)
	}
	e.Uint32(a.Type)
	e.Opaque(a.Body)
}

// DecodeLayoutcommitRes reads LAYOUTCOMMIT4resok: the new size, if the
// server says the file's size changed.
func DecodeLayoutcommitRes(d *xdr.Decoder) (size uint64, changed bool, err error) {
	if changed = d.Bool(); changed {
		size = d.Uint64()
	}
	if err := d.Err(); err != nil {
		return 0, false, fmt.Errorf("LAYOUTCOMMIT result: %w", err)
	}
	return size, changed, nil
}

// EncodeLayouterror writes LAYOUTERROR (RFC 7862 section 15.6).
func EncodeLayouterror(e *xdr.Encoder, off, length uint64, sid nfs4.Stateid, errs []DeviceError) {
	e.Uint32(nfs4.OpLayouterror)
	e.Uint64(off)
	e.Uint64(length)
	sid.Encode(e)
	encodeDeviceErrors(e, errs)
}

// LayoutStatsArgs are LAYOUTSTATS4args (RFC 7862 section 15.7) with a
// flexible-files ff_layoutupdate4 as lsa_layoutupdate's body.
type LayoutStatsArgs struct {
	Offset, Length uint64
	Stateid        nfs4.Stateid
	Read, Write    IOInfo
	Device         DeviceID
	Update         FFLayoutUpdate
}

// EncodeLayoutstats writes LAYOUTSTATS.
func EncodeLayoutstats(e *xdr.Encoder, a *LayoutStatsArgs) {
	e.Uint32(nfs4.OpLayoutstats)
	e.Uint64(a.Offset)
	e.Uint64(a.Length)
	a.Stateid.Encode(e)
	encodeIOInfo(e, a.Read)
	encodeIOInfo(e, a.Write)
	e.Fixed(a.Device[:])
	e.Uint32(LayoutFlexFiles) // lou_type
	lenPos := e.Reserve()
	start := e.Pos()
	encodeFFLayoutUpdate(e, &a.Update)
	e.Patch(lenPos, uint32(e.Pos()-start))
}

// ended checks that d decoded well and that nothing is left: a layout or
// device body is a whole XDR object, so trailing bytes mean the two sides
// disagree on its shape.
func ended(d *xdr.Decoder) error {
	if err := d.Err(); err != nil {
		return err
	}
	if n := d.Remaining(); n != 0 {
		return fmt.Errorf("%d bytes left over", n)
	}
	return nil
}

func init() {
	for s, n := range map[nfs4.Status]string{
		ErrBadIOMode: "NFS4ERR_BADIOMODE", ErrBadLayout: "NFS4ERR_BADLAYOUT",
		ErrLayoutTryLater: "NFS4ERR_LAYOUTTRYLATER", ErrLayoutUnavailable: "NFS4ERR_LAYOUTUNAVAILABLE",
		ErrNoMatchingLayout: "NFS4ERR_NOMATCHING_LAYOUT", ErrRecallConflict: "NFS4ERR_RECALLCONFLICT",
		ErrUnknownLayoutType: "NFS4ERR_UNKNOWN_LAYOUTTYPE", ErrReturnConflict: "NFS4ERR_RETURNCONFLICT",
	} {
		statusNames[s] = n
	}
	for op, n := range map[uint32]string{
		nfs4.OpLayoutget: "LAYOUTGET", nfs4.OpLayoutreturn: "LAYOUTRETURN", nfs4.OpLayoutcommit: "LAYOUTCOMMIT",
		nfs4.OpGetdeviceinfo: "GETDEVICEINFO", nfs4.OpGetdevicelist: "GETDEVICELIST",
		nfs4.OpLayouterror: "LAYOUTERROR", nfs4.OpLayoutstats: "LAYOUTSTATS",
	} {
		if _, ok := opNames[op]; !ok {
			opNames[op] = n
		}
	}
}
