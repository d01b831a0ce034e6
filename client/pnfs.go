package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// PNFS drives the I/O of files on a flexible-files metadata server (RFC
// 8435) straight to its data servers, as the Linux client's flexfiles
// driver does (fs/nfs/flexfilelayout): LAYOUTGET on the MDS, GETDEVICEINFO
// for each data server named, one connection per data server address,
// READ and WRITE to the data server's file with the layout's synthetic
// AUTH_SYS ids and stateid (loose coupling, RFC 8435 section 2.2), COMMIT
// to the data servers written unstably, LAYOUTCOMMIT on the MDS, and
// LAYOUTRETURN on close. A data server that fails is reported (LAYOUTERROR,
// or the ff_ioerr4 of LAYOUTRETURN) and the I/O goes through the MDS.
// It is safe for concurrent use.
type PNFS struct {
	mds  *Client
	opts PNFSOptions

	mu    sync.Mutex
	devs  map[DeviceID]*dsDevice
	conns map[string]*dsConn     // by "host:port"
	stats map[string]*dsCounters // by "host:port", across reconnections
	// gone: wire bytes of connections dropped (dropConn).
	goneSent, goneReceived uint64

	fallbacks atomic.Uint64 // I/Os sent through the MDS
	reports   atomic.Uint64 // data-server errors reported to the MDS
}

// PNFSOptions configure NewPNFS.
type PNFSOptions struct {
	// DS are the options data-server clients are dialed with (Slots,
	// Machine...). UID and GID are unused: each call carries its
	// layout's synthetic ids. Minor is the device's ffdv_minorversion.
	DS Options
	// Dial replaces Dial for data servers (tests); nil: Dial.
	Dial func(ctx context.Context, addr string, opts Options) (*Client, error)
	// ReportInReturn reports data-server errors only in LAYOUTRETURN's
	// ff_ioerr4 (RFC 8435 section 9.1), as an NFSv4.1 client must, rather
	// than with LAYOUTERROR (RFC 7862 section 15.6) followed by a plain
	// LAYOUTRETURN. It is implied when the MDS client's minor version is 1.
	ReportInReturn bool
	// MaxFailures is how many data-server failures a file may have before
	// its I/O stays on the MDS for good; 0: 3.
	MaxFailures int
	// RetryAfter is how long after LAYOUTTRYLATER (or a recall) the
	// client waits before asking for a layout again; 0: 1 s.
	RetryAfter time.Duration
	// ReturnStats puts an ff_iostats4 per data server (RFC 8435 section
	// 9.2) in every LAYOUTRETURN, as the Linux client does on return.
	ReturnStats bool
}

// NewPNFS returns a pNFS driver over the MDS client mds. The MDS client
// should have a back channel (Options.BackChannel) for CB_LAYOUTRECALL.
func NewPNFS(mds *Client, opts PNFSOptions) *PNFS {
	if opts.Dial == nil {
		opts.Dial = Dial
	}
	if opts.MaxFailures == 0 {
		opts.MaxFailures = 3
	}
	if opts.RetryAfter == 0 {
		opts.RetryAfter = time.Second
	}
	if mds.opts.Minor < 2 {
		opts.ReportInReturn = true
	}
	return &PNFS{mds: mds, opts: opts, devs: map[DeviceID]*dsDevice{}, conns: map[string]*dsConn{}, stats: map[string]*dsCounters{}}
}

// MDS returns the metadata-server client.
func (p *PNFS) MDS() *Client { return p.mds }

// DSStat is what went to one data server.
type DSStat struct {
	Addr                   string
	ReadBytes, WriteBytes  uint64
	Reads, Writes, Commits uint64
	Errors                 uint64
}

// Stats returns the per-data-server counts, by address.
func (p *PNFS) Stats() []DSStat {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []DSStat
	for addr, st := range p.stats {
		out = append(out, st.snapshot(addr))
	}
	slices.SortFunc(out, func(a, b DSStat) int { return strings.Compare(a.Addr, b.Addr) })
	return out
}

// WireBytes returns the bytes sent to and received from the data
// servers, record marks included.
func (p *PNFS) WireBytes() (sent, received uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sent, received = p.goneSent, p.goneReceived
	for _, c := range p.conns {
		if dc := c.ready.Load(); dc != nil {
			s := dc.Stats()
			sent += s.BytesSent
			received += s.BytesReceived
		}
	}
	return sent, received
}

// Fallbacks returns how many READs and WRITEs went through the MDS
// because no layout (or no working data server) was at hand.
func (p *PNFS) Fallbacks() uint64 { return p.fallbacks.Load() }

// Reports returns how many data-server errors were reported to the MDS.
func (p *PNFS) Reports() uint64 { return p.reports.Load() }

// Close closes the data-server connections.
func (p *PNFS) Close() error {
	p.mu.Lock()
	conns := p.conns
	p.conns = map[string]*dsConn{}
	p.mu.Unlock()
	var first error
	for _, c := range conns {
		if dc := c.ready.Load(); dc != nil {
			if err := dc.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// dsDevice is a data server as GETDEVICEINFO describes it.
type dsDevice struct {
	addrs        []string // host:port, in the server's order
	minor        uint32
	rsize, wsize uint32
}

// dsConn is the one connection to a data server address.
type dsConn struct {
	once  sync.Once
	c     *Client // set in once
	err   error
	ready atomic.Pointer[Client] // c, once dialed: for Close and WireBytes
	st    *dsCounters
}

type dsCounters struct {
	readBytes, writeBytes  atomic.Uint64
	reads, writes, commits atomic.Uint64
	errors                 atomic.Uint64
}

func (s *dsCounters) snapshot(addr string) DSStat {
	return DSStat{Addr: addr, ReadBytes: s.readBytes.Load(), WriteBytes: s.writeBytes.Load(),
		Reads: s.reads.Load(), Writes: s.writes.Load(), Commits: s.commits.Load(), Errors: s.errors.Load()}
}

// device returns what GETDEVICEINFO says of id, asking once.
func (p *PNFS) device(ctx context.Context, id DeviceID) (*dsDevice, error) {
	p.mu.Lock()
	d := p.devs[id]
	p.mu.Unlock()
	if d != nil {
		return d, nil
	}
	a, err := p.mds.FFDeviceInfo(ctx, id)
	if err != nil {
		return nil, err
	}
	d, err = deviceOf(a)
	if err != nil {
		return nil, fmt.Errorf("device %x: %w", id[:], err)
	}
	p.mu.Lock()
	p.devs[id] = d
	p.mu.Unlock()
	return d, nil
}

// deviceOf picks from an ff_device_addr4 the TCP addresses and the first
// NFSv4.1+ version (the client speaks no NFSv3).
func deviceOf(a FFDeviceAddr) (*dsDevice, error) {
	d := &dsDevice{}
	for _, v := range a.Versions {
		if v.Version == 4 && v.Minor >= 1 {
			d.minor, d.rsize, d.wsize = min(v.Minor, 2), v.RSize, v.WSize
			break
		}
	}
	if d.minor == 0 {
		return nil, fmt.Errorf("no NFSv4.1+ version among %+v", a.Versions)
	}
	for _, na := range a.Addrs {
		if na.Netid != "tcp" && na.Netid != "tcp6" {
			continue
		}
		if hp, err := UaddrToHostPort(na.Addr); err == nil {
			d.addrs = append(d.addrs, hp)
		}
	}
	if len(d.addrs) == 0 {
		return nil, fmt.Errorf("no TCP address among %+v", a.Addrs)
	}
	return d, nil
}

// UaddrToHostPort turns an RPC universal address (RFC 5665 section 5.2.3:
// "h1.h2.h3.h4.p1.p2", or an IPv6 address followed by ".p1.p2") into
// "host:port".
func UaddrToHostPort(ua string) (string, error) {
	i := strings.LastIndexByte(ua, '.')
	if i < 0 {
		return "", fmt.Errorf("universal address %q has no port", ua)
	}
	j := strings.LastIndexByte(ua[:i], '.')
	if j < 0 {
		return "", fmt.Errorf("universal address %q has no port", ua)
	}
	hi, err1 := strconv.ParseUint(ua[j+1:i], 10, 8)
	lo, err2 := strconv.ParseUint(ua[i+1:], 10, 8)
	if err1 != nil || err2 != nil || j == 0 {
		return "", fmt.Errorf("bad universal address %q", ua)
	}
	return net.JoinHostPort(ua[:j], strconv.FormatUint(hi<<8|lo, 10)), nil
}

// HostPortToUaddr is the inverse of UaddrToHostPort.
func HostPortToUaddr(hp string) (string, error) {
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		return "", err
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return "", fmt.Errorf("bad port in %q", hp)
	}
	return fmt.Sprintf("%s.%d.%d", host, n>>8, n&0xff), nil
}

// conn returns the connection to a data server, dialing it once (each
// address of the device in turn).
func (p *PNFS) conn(ctx context.Context, d *dsDevice) (*dsConn, string, error) {
	var last error
	for _, addr := range d.addrs {
		p.mu.Lock()
		c := p.conns[addr]
		if c == nil {
			if p.stats[addr] == nil {
				p.stats[addr] = &dsCounters{}
			}
			c = &dsConn{st: p.stats[addr]}
			p.conns[addr] = c
		}
		p.mu.Unlock()
		c.once.Do(func() {
			o := p.opts.DS
			o.Minor = d.minor
			o.BackChannel = false
			o.Callbacks = Callbacks{}
			c.c, c.err = p.opts.Dial(ctx, addr, o)
			if c.err == nil {
				c.ready.Store(c.c)
			}
		})
		if c.err == nil {
			return c, addr, nil
		}
		last = c.err
	}
	return nil, "", last
}

// dsTarget is one data server's file of a layout.
type dsTarget struct {
	conn     *dsConn
	addr     string
	dev      DeviceID
	fh       []byte
	sid      nfs4.Stateid
	cred     Cred
	rsize    uint32
	wsize    uint32
	unstable atomic.Bool // written UNSTABLE since its last COMMIT
	// What went through this layout to this data server, for
	// ff_iostats4 and LAYOUTSTATS.
	reads, readBytes, writes, writeBytes atomic.Uint64
}

// heldLayout is a layout a PNFSFile holds.
type heldLayout struct {
	sid           nfs4.Stateid
	returnOnClose bool
	ff            FFLayout
	mirrors       [][]*dsTarget // [mirror][stripe]
	iomode        uint32
	got           time.Time
	retired       atomic.Bool
	// wrote, lastWrite: what LAYOUTCOMMIT must tell the MDS; sid is
	// changed by a recall (recallStateid).
	mu        sync.Mutex
	wrote     bool
	lastWrite uint64
	errs      []DeviceError // reported in LAYOUTRETURN (ReportInReturn)
}

// PNFSFile is an open file whose I/O goes through layouts.
type PNFSFile struct {
	p      *PNFS
	F      *File // the open on the MDS
	iomode uint32

	mu       sync.Mutex
	lay      *heldLayout
	noLayout bool      // LAYOUTUNAVAILABLE, too many failures: MDS only
	retryAt  time.Time // no LAYOUTGET before
	failures int
	// mdsUnstable: UNSTABLE WRITEs went through the MDS and need its COMMIT.
	mdsUnstable atomic.Bool
}

// Open wraps f, an open of the MDS client, for I/O through layouts of
// iomode (IOModeRead or IOModeRW). The layout is asked for on first I/O.
func (p *PNFS) Open(f *File, iomode uint32) *PNFSFile {
	return &PNFSFile{p: p, F: f, iomode: iomode}
}

// Layout returns the layout held now, getting one if none is held; nil
// when I/O must go through the MDS.
func (f *PNFSFile) Layout(ctx context.Context) (*FFLayout, error) {
	l, err := f.layout(ctx)
	if l == nil {
		return nil, err
	}
	return &l.ff, err
}

// layout returns the layout to use, getting one when none is held and
// getting one may work; nil (with the reason, when new) means through the
// MDS.
func (f *PNFSFile) layout(ctx context.Context) (*heldLayout, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lay != nil || f.noLayout || time.Now().Before(f.retryAt) {
		return f.lay, nil
	}
	l, err := f.p.getLayout(ctx, f.F, f.iomode)
	switch {
	case err == nil:
		f.lay = l
		f.p.mds.layouts.add(f.F.FH, f)
		return l, nil
	case IsStatus(err, ErrLayoutTryLater), IsStatus(err, ErrRecallConflict), IsStatus(err, nfs4.ErrDelay):
		f.retryAt = time.Now().Add(f.p.opts.RetryAfter)
		return nil, nil
	case l != nil:
		// A data server that did not answer: try again later, as
		// after a failure in I/O.
		f.failures++
		f.noLayout = f.failures >= f.p.opts.MaxFailures
		f.retryAt = time.Now().Add(f.p.opts.RetryAfter)
		return nil, err
	default:
		// LAYOUTUNAVAILABLE, NOTSUPP, UNKNOWN_LAYOUTTYPE, a layout
		// the client cannot use: the file is served by the MDS.
		f.noLayout = true
		return nil, err
	}
}

// getLayout does LAYOUTGET and sets up a connection to every data server
// the layout names. A layout that came but cannot be used is returned
// (already given back to the MDS) with the error.
func (p *PNFS) getLayout(ctx context.Context, f *File, iomode uint32) (*heldLayout, error) {
	res, ff, err := p.mds.FFLayoutGet(ctx, f.FH, iomode, f.Stateid)
	if err != nil {
		return nil, err
	}
	l := &heldLayout{sid: res.Stateid, returnOnClose: res.ReturnOnClose, ff: ff, iomode: res.Segments[0].IOMode, got: time.Now()}
	if err = p.attach(ctx, l); err != nil {
		// A layout the client cannot use goes back at once, with the
		// reason when a data server would not answer.
		l.retired.Store(true)
		p.returnLayout(ctx, f.FH, l)
		if len(l.errs) > 0 {
			p.reports.Add(1)
		}
		return l, err
	}
	return l, nil
}

// attach resolves the devices of l and dials them.
func (p *PNFS) attach(ctx context.Context, l *heldLayout) error {
	if len(l.ff.Mirrors) == 0 {
		return errors.New("layout with no mirrors")
	}
	for _, m := range l.ff.Mirrors {
		if len(m.Servers) == 0 {
			return errors.New("mirror with no data servers")
		}
		var row []*dsTarget
		for _, s := range m.Servers {
			t, err := p.target(ctx, s)
			if err != nil {
				if t != nil {
					l.errs = append(l.errs, DeviceError{Device: s.Device, Status: nfs4.ErrNxio, Op: nfs4.OpExchangeID})
				}
				return err
			}
			row = append(row, t)
		}
		l.mirrors = append(l.mirrors, row)
	}
	return nil
}

// target sets up one ff_data_server4. A non-nil target with an error is
// a data server that did not answer.
func (p *PNFS) target(ctx context.Context, s FFDataServer) (*dsTarget, error) {
	uid, err1 := strconv.ParseUint(s.User, 10, 32)
	gid, err2 := strconv.ParseUint(s.Group, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("layout's synthetic owner %q/%q is not numeric", s.User, s.Group)
	}
	if len(s.FHs) == 0 {
		return nil, errors.New("data server entry with no file handle")
	}
	d, err := p.device(ctx, s.Device)
	if err != nil {
		return nil, err
	}
	t := &dsTarget{dev: s.Device, fh: s.FHs[0], sid: s.Stateid, rsize: d.rsize, wsize: d.wsize,
		cred: Cred{Stamp: p.mds.cred.Stamp, Machine: p.mds.cred.Machine, UID: uint32(uid), GID: uint32(gid)}}
	t.conn, t.addr, err = p.conn(ctx, d)
	if err != nil {
		return t, fmt.Errorf("data server %v: %w", d.addrs, err)
	}
	return t, nil
}

// stripe returns the data server of mirror m that holds off, and how
// many bytes from off stay on it. With ffl_stripe_unit, stripe units go
// round robin over the mirror's data servers at their file offsets (as
// Linux 6.18's ff_layout_calc_dss_id); without it one server holds all.
func (l *heldLayout) stripe(m int, off uint64, n int) (*dsTarget, int) {
	row := l.mirrors[m]
	su := l.ff.StripeUnit
	if su == 0 || len(row) == 1 {
		return row[0], n
	}
	t := row[(off/su)%uint64(len(row))]
	left := su - off%su
	return t, int(min(uint64(n), left))
}

// stateid is the layout stateid to send now.
func (l *heldLayout) stateid() nfs4.Stateid {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sid
}

// recallStateid takes the layout stateid of a CB_LAYOUTRECALL: the server
// bumps its seqid when it recalls (RFC 8881 section 12.5.5.2), and a
// LAYOUTRETURN with the older one is NFS4ERR_OLD_STATEID. The Linux client
// does the same (pnfs_set_layout_stateid in initiate_file_draining).
func (l *heldLayout) recallStateid(sid nfs4.Stateid) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sid.Other == l.sid.Other && int32(sid.Seqid-l.sid.Seqid) > 0 {
		l.sid = sid
	}
}

// ReadAt reads into dst at off: from the first mirror's data server, or
// through the MDS without a usable layout. A short read (a stripe edge,
// rsize, eof) returns fewer bytes, as READ does. With striping, eof is
// said only when the data server holding off has nothing there: a data
// file's end is not the file's, and a hole at a stripe's place reads as
// the end of file (the caller knows the size it expects).
func (f *PNFSFile) ReadAt(ctx context.Context, dst []byte, off uint64) (int, bool, error) {
	l, _ := f.layout(ctx)
	if l != nil && l.ff.Flags&FFFlagNoReadIO == 0 {
		// The first mirror, and on an error the others (RFC 8435
		// section 8.2: any mirror may be read), before the MDS.
		for m := range l.mirrors {
			n, eof, err := f.readMirror(ctx, l, m, dst, off)
			if err == nil || ctx.Err() != nil {
				return n, eof, err
			}
		}
	}
	f.p.fallbacks.Add(1)
	return f.p.mds.ReadInto(ctx, f.F.FH, f.F.Stateid, off, dst)
}

// readMirror reads from mirror m's data server holding off; an error is
// reported (failed).
func (f *PNFSFile) readMirror(ctx context.Context, l *heldLayout, m int, dst []byte, off uint64) (int, bool, error) {
	t, n := l.stripe(m, off, len(dst))
	if t.rsize > 0 {
		n = min(n, int(t.rsize))
	}
	got, eof, err := t.conn.c.ReadInto(WithCred(ctx, t.cred), t.fh, t.sid, off, dst[:n])
	if err != nil {
		if ctx.Err() == nil {
			f.failed(ctx, l, t, nfs4.OpRead, off, uint64(n), err)
		}
		return 0, false, err
	}
	t.conn.st.reads.Add(1)
	t.conn.st.readBytes.Add(uint64(got))
	t.reads.Add(1)
	t.readBytes.Add(uint64(got))
	if len(l.mirrors[m]) > 1 && got > 0 {
		// One stripe's data file ends where that stripe does: the
		// file goes on on the next server.
		eof = false
	}
	return got, eof, nil
}

// WriteAt writes data at off with the stability asked for: to every
// mirror's data server through the layout, else through the MDS. It
// writes no more than one stripe unit and wsize: check Count.
func (f *PNFSFile) WriteAt(ctx context.Context, data []byte, off uint64, stable uint32) (WriteRes, error) {
	l, _ := f.layout(ctx)
	if l != nil && l.iomode == IOModeRW {
		res, err := f.writeMirrors(ctx, l, data, off, stable)
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil {
			return res, err
		}
	}
	f.p.fallbacks.Add(1)
	if stable != nfs4.FileSync4 {
		f.mdsUnstable.Store(true)
	}
	return f.p.mds.Write(ctx, f.F.FH, f.F.Stateid, off, stable, data)
}

// writeMirrors writes the same bytes to each mirror (RFC 8435 section
// 8.1: the client writes every mirror) and returns the smallest count.
func (f *PNFSFile) writeMirrors(ctx context.Context, l *heldLayout, data []byte, off uint64, stable uint32) (WriteRes, error) {
	// One piece that every mirror's stripe and wsize can take whole.
	n := len(data)
	for m := range l.mirrors {
		t, k := l.stripe(m, off, n)
		n = k
		if t.wsize > 0 {
			n = min(n, int(t.wsize))
		}
	}
	var out WriteRes
	for m := range l.mirrors {
		t, _ := l.stripe(m, off, n)
		res, err := t.conn.c.Write(WithCred(ctx, t.cred), t.fh, t.sid, off, stable, data[:n])
		if err != nil {
			if ctx.Err() == nil {
				f.failed(ctx, l, t, nfs4.OpWrite, off, uint64(n), err)
			}
			return out, err
		}
		t.conn.st.writes.Add(1)
		t.conn.st.writeBytes.Add(uint64(res.Count))
		t.writes.Add(1)
		t.writeBytes.Add(uint64(res.Count))
		if res.Committed != nfs4.FileSync4 {
			t.unstable.Store(true)
		}
		if m == 0 || res.Count < out.Count {
			out = res
		}
	}
	if out.Count > 0 {
		l.mu.Lock()
		l.wrote = true
		l.lastWrite = max(l.lastWrite, off+uint64(out.Count)-1)
		l.mu.Unlock()
	}
	return out, nil
}

// Commit makes what was written stable: COMMIT to each data server
// written unstably, LAYOUTCOMMIT on the MDS (unless the layout says
// FF_FLAGS_NO_LAYOUTCOMMIT), and COMMIT on the MDS for WRITEs that went
// through it.
func (f *PNFSFile) Commit(ctx context.Context) error {
	f.mu.Lock()
	l := f.lay
	f.mu.Unlock()
	if l != nil {
		if err := f.commitLayout(ctx, l); err != nil {
			return err
		}
	}
	if f.mdsUnstable.Swap(false) {
		if _, err := f.p.mds.Commit(ctx, f.F.FH, 0, 0); err != nil {
			return err
		}
	}
	return nil
}

// commitLayout commits l's data servers and then l on the MDS.
func (f *PNFSFile) commitLayout(ctx context.Context, l *heldLayout) error {
	for _, row := range l.mirrors {
		for _, t := range row {
			if !t.unstable.Swap(false) {
				continue
			}
			if _, err := t.conn.c.Commit(WithCred(ctx, t.cred), t.fh, 0, 0); err != nil {
				f.failed(ctx, l, t, nfs4.OpCommit, 0, LengthAll, err)
				return fmt.Errorf("COMMIT to data server %s: %w", t.addr, err)
			}
			t.conn.st.commits.Add(1)
		}
	}
	return f.p.layoutCommit(ctx, f.F.FH, l)
}

// layoutCommit sends LAYOUTCOMMIT for what l wrote, once.
func (p *PNFS) layoutCommit(ctx context.Context, fh []byte, l *heldLayout) error {
	l.mu.Lock()
	wrote, last := l.wrote, l.lastWrite
	l.wrote = false
	l.mu.Unlock()
	if !wrote || l.ff.Flags&FFFlagNoLayoutcommit != 0 {
		return nil
	}
	_, _, err := p.mds.LayoutCommit(ctx, fh, &LayoutCommitArgs{
		Length: LengthAll, Stateid: l.stateid(), HasLastWrite: true, LastWrite: last, Type: LayoutFlexFiles,
	})
	if err != nil {
		return fmt.Errorf("LAYOUTCOMMIT: %w", err)
	}
	return nil
}

// failed handles an error from data server t: the error is reported to
// the MDS and the layout returned, once, so that the next I/O asks for a
// new layout (the MDS leaves a failed server out) or goes through the MDS.
func (f *PNFSFile) failed(ctx context.Context, l *heldLayout, t *dsTarget, op uint32, off, n uint64, err error) {
	t.conn.st.errors.Add(1)
	f.mu.Lock()
	if f.lay != l {
		f.mu.Unlock()
		return // already dropped by another failure or a recall
	}
	f.lay = nil
	f.failures++
	if f.failures >= f.p.opts.MaxFailures {
		f.noLayout = true
	}
	f.p.mds.layouts.remove(f.F.FH, f)
	f.mu.Unlock()
	de := DeviceError{Device: t.dev, Status: dsStatus(err), Op: op}
	if de.Status == nfs4.ErrNxio {
		f.p.dropConn(t.addr, t.conn)
	}
	f.p.reports.Add(1)
	if f.p.opts.ReportInReturn {
		l.errs = append(l.errs, de)
	} else {
		f.p.mds.LayoutError(ctx, f.F.FH, off, n, l.stateid(), []DeviceError{de})
	}
	f.p.retire(ctx, f.F.FH, l)
}

// dropConn forgets a data-server connection that failed, so that the
// next layout naming its address dials it again (a restarted server).
func (p *PNFS) dropConn(addr string, c *dsConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns[addr] != c {
		return // dropped already
	}
	delete(p.conns, addr)
	if dc := c.ready.Load(); dc != nil {
		s := dc.Stats()
		p.goneSent += s.BytesSent
		p.goneReceived += s.BytesReceived
		go dc.Close()
	}
}

// dsStatus is the nfsstat4 to report for an error from a data server: its
// own status, or NFS4ERR_NXIO when it could not be reached (as the Linux
// client reports a connection error, ff_layout_io_track_ds_error).
func dsStatus(err error) nfs4.Status {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status
	}
	return nfs4.ErrNxio
}

// recalled is the client's answer to CB_LAYOUTRECALL for this file: the
// layout is dropped at once and returned (after its LAYOUTCOMMIT).
func (f *PNFSFile) recalled(r LayoutRecall) {
	f.mu.Lock()
	l := f.lay
	f.lay = nil
	f.retryAt = time.Now().Add(f.p.opts.RetryAfter)
	f.mu.Unlock()
	if l == nil {
		return
	}
	if r.Kind == LayoutReturnFile {
		l.recallStateid(r.Stateid)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f.p.retire(ctx, f.F.FH, l)
}

// retire commits and returns a layout no longer used. Data written
// unstably to its data servers is committed first: after LAYOUTRETURN the
// MDS may fence the files (RFC 8435 section 2.3.1).
func (p *PNFS) retire(ctx context.Context, fh []byte, l *heldLayout) error {
	if l.retired.Swap(true) {
		return nil
	}
	var first error
	for _, row := range l.mirrors {
		for _, t := range row {
			if t.unstable.Swap(false) {
				if _, err := t.conn.c.Commit(WithCred(ctx, t.cred), t.fh, 0, 0); err != nil && first == nil {
					first = err
				}
			}
		}
	}
	if err := p.layoutCommit(ctx, fh, l); err != nil && first == nil {
		first = err
	}
	if err := p.returnLayout(ctx, fh, l); err != nil && first == nil {
		first = err
	}
	return first
}

// returnLayout sends LAYOUTRETURN of the whole file with l's error
// reports, if any.
func (p *PNFS) returnLayout(ctx context.Context, fh []byte, l *heldLayout) error {
	sid := l.stateid()
	a := &LayoutReturnArgs{Type: LayoutFlexFiles, IOMode: IOModeAny, Length: LengthAll, Stateid: sid}
	var r FFLayoutReturn
	if len(l.errs) > 0 {
		r.IOErrs = []FFIOErr{{Length: LengthAll, Stateid: sid, Errors: l.errs}}
	}
	if p.opts.ReturnStats {
		r.IOStats = l.iostats()
	}
	if len(r.IOErrs)+len(r.IOStats) > 0 {
		a.Report = &r
	}
	_, _, err := p.mds.LayoutReturn(ctx, fh, a)
	if IsStatus(err, ErrNoMatchingLayout) {
		return nil // recalled and forgotten by the server already
	}
	if err != nil {
		return fmt.Errorf("LAYOUTRETURN: %w", err)
	}
	return nil
}

// Close commits, returns the layout and closes the MDS open.
func (f *PNFSFile) Close(ctx context.Context) error {
	err := f.Commit(ctx)
	f.mu.Lock()
	l := f.lay
	f.lay = nil
	f.noLayout = true
	f.mu.Unlock()
	if l != nil {
		f.p.mds.layouts.remove(f.F.FH, f)
		if rerr := f.p.retire(ctx, f.F.FH, l); err == nil {
			err = rerr
		}
	}
	if cerr := f.p.mds.CloseFile(ctx, f.F.FH, f.F.Stateid); err == nil {
		err = cerr
	}
	return err
}

// iostats is an ff_iostats4 for each data server of l that did I/O.
func (l *heldLayout) iostats() []FFIOStats {
	var out []FFIOStats
	d := time.Since(l.got)
	for _, row := range l.mirrors {
		for _, t := range row {
			s := t.iostat(l.stateid(), d)
			if s.Read.Count+s.Write.Count > 0 {
				out = append(out, s)
			}
		}
	}
	return out
}

// iostat is ff_iostats4 for t (the client keeps no latencies: the
// ff_io_latency4 carry counts only).
func (t *dsTarget) iostat(sid nfs4.Stateid, d time.Duration) FFIOStats {
	r := IOInfo{Count: t.reads.Load(), Bytes: t.readBytes.Load()}
	w := IOInfo{Count: t.writes.Load(), Bytes: t.writeBytes.Load()}
	ua, _ := HostPortToUaddr(t.addr)
	netid := "tcp"
	if strings.Count(ua, ":") > 0 {
		netid = "tcp6"
	}
	return FFIOStats{Length: LengthAll, Stateid: sid, Read: r, Write: w, Device: t.dev,
		Update: FFLayoutUpdate{
			Addr: NetAddr{Netid: netid, Addr: ua}, FH: t.fh,
			Read:     FFIOLatency{OpsRequested: r.Count, BytesRequested: r.Bytes, OpsCompleted: r.Count, BytesCompleted: r.Bytes},
			Write:    FFIOLatency{OpsRequested: w.Count, BytesRequested: w.Bytes, OpsCompleted: w.Count, BytesCompleted: w.Bytes},
			Duration: Time{Sec: int64(d / time.Second), Nsec: uint32(d % time.Second)},
		}}
}

// SendStats reports the I/O of the layout held to the MDS with one
// LAYOUTSTATS per data server that did I/O (RFC 7862 section 15.7), as
// the Linux client does every ffl_stats_collect_hint seconds.
func (f *PNFSFile) SendStats(ctx context.Context) error {
	f.mu.Lock()
	l := f.lay
	f.mu.Unlock()
	if l == nil {
		return nil
	}
	for _, s := range l.iostats() {
		err := f.p.mds.LayoutStats(ctx, f.F.FH, &LayoutStatsArgs{Offset: s.Offset, Length: s.Length, Stateid: s.Stateid,
			Read: s.Read, Write: s.Write, Device: s.Device, Update: s.Update})
		if err != nil {
			return fmt.Errorf("LAYOUTSTATS: %w", err)
		}
	}
	return nil
}
