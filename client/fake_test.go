package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// fakeServer speaks just enough NFSv4.1 for the client's session machinery:
// handshake, SEQUENCE with per-slot checks, PUTFH and READ_PLUS over a
// synthetic file, replying out of order and injecting NFS4ERR_DELAY.
type fakeServer struct {
	t        *testing.T
	ln       net.Listener
	mu       sync.Mutex
	slots    map[uint32]uint32 // slot -> last seqid
	calls    atomic.Int64
	delayAll atomic.Bool
	stall    atomic.Bool  // the next reply stops half-way (stallOff)
	grace    atomic.Int64 // READs still to answer NFS4ERR_GRACE
}

const (
	fakeSize  = 1 << 20
	fakeBlock = 4096
	slowOff   = 1 << 40 // READ_PLUS at this offset stalls
	stallOff  = 1 << 41 // READ at this offset: the reply stops half-way
)

// fakeByte is the file content: even 4K blocks hold data, odd ones are holes.
func fakeByte(i uint64) byte {
	if (i/fakeBlock)%2 == 1 {
		return 0
	}
	return byte(i*7 + 1)
}

func startFake(t *testing.T) *fakeServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{t: t, ln: ln, slots: map[uint32]uint32{}}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(conn)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return s
}

func (s *fakeServer) serve(conn net.Conn) {
	defer conn.Close()
	var wmu sync.Mutex
	rr := xdr.NewRecordReader(conn, 4<<20)
	for {
		rec, err := rr.Next()
		if err != nil {
			return
		}
		rr.Detach()
		go func() {
			time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
			reply := s.handle(rec)
			wmu.Lock()
			defer wmu.Unlock()
			if s.stall.Swap(false) {
				conn.Write(reply[:len(reply)/2])
				time.Sleep(10 * time.Second)
				return
			}
			conn.Write(reply)
		}()
	}
}

func (s *fakeServer) handle(rec []byte) []byte {
	d := xdr.NewDecoder(rec)
	xid := d.Uint32()
	d.Skip(20)
	d.Uint32()
	d.Opaque(400)
	d.Uint32()
	d.Opaque(400)
	d.Opaque(1024) // tag
	d.Uint32()     // minor
	nops := int(d.Uint32())
	e := xdr.NewEncoder(256)
	e.Reserve()
	e.Uint32(xid)
	e.Uint32(1)
	e.Uint32(0)
	e.Uint32(0)
	e.Uint32(0)
	e.Uint32(0)
	stPos := e.Reserve()
	e.Uint32(0) // tag
	nPos := e.Reserve()
	var status nfs4.Status
	n := 0
	for i := 0; i < nops && status == 0; i++ {
		op := d.Uint32()
		e.Uint32(op)
		status = s.op(op, d, e)
		n++
	}
	if d.Err() != nil {
		s.t.Errorf("fake: bad request: %v", d.Err())
	}
	e.Patch(stPos, uint32(status))
	e.Patch(nPos, uint32(n))
	e.Patch(0, xdr.RecordMark(e.Len()-4))
	return e.AppendTo(nil)
}

var fakeSession = [16]byte{'s', 'e', 's', 's'}

// op decodes one operation's arguments and encodes its status and result.
func (s *fakeServer) op(op uint32, d *xdr.Decoder, e *xdr.Encoder) nfs4.Status {
	switch op {
	case nfs4.OpExchangeID:
		d.Skip(8)
		d.Opaque(1024)
		d.Skip(12)
		e.Uint32(0)
		e.Uint64(0xc1)
		e.Uint32(1)
		e.Uint32(nfs4.ExchgIDUseNonPNFS)
		e.Uint32(nfs4.SP4None)
		e.Uint64(0)
		e.Opaque([]byte("fake"))
		e.Opaque(nil)
		e.Uint32(0)
	case nfs4.OpCreateSession:
		d.Skip(16)
		fore := decodeChannelAttrs(d)
		back := decodeChannelAttrs(d)
		d.Uint32()
		d.Skip(4 * d.ArrayLen(4, 4))
		fore.MaxRequests = 8
		e.Uint32(0)
		e.Fixed(fakeSession[:])
		e.Uint32(1)
		e.Uint32(0)
		fore.encode(e)
		back.encode(e)
	case nfs4.OpSequence:
		return s.sequence(d, e)
	case nfs4.OpReclaimComplete:
		d.Bool()
		e.Uint32(0)
	case nfs4.OpPutfh:
		d.Opaque(128)
		e.Uint32(0)
	case nfs4.OpReadPlus:
		nfs4.DecodeStateid(d)
		off, count := d.Uint64(), d.Uint32()
		if off == slowOff {
			time.Sleep(200 * time.Millisecond)
		}
		if s.calls.Add(1)%5 == 0 || s.delayAll.Load() {
			e.Uint32(uint32(nfs4.ErrDelay))
			return nfs4.ErrDelay
		}
		e.Uint32(0)
		fakeReadPlus(e, off, count)
	case nfs4.OpRead:
		nfs4.DecodeStateid(d)
		off, count := d.Uint64(), d.Uint32()
		if off == slowOff {
			time.Sleep(200 * time.Millisecond)
		}
		if off == stallOff {
			s.stall.Store(true)
			off = 0
		}
		if s.grace.Add(-1) >= 0 {
			e.Uint32(uint32(nfs4.ErrGrace))
			return nfs4.ErrGrace
		}
		if s.calls.Add(1)%5 == 0 || s.delayAll.Load() {
			e.Uint32(uint32(nfs4.ErrDelay))
			return nfs4.ErrDelay
		}
		e.Uint32(0)
		end := min(off+uint64(count), fakeSize)
		if off > end {
			end = off
		}
		e.Bool(end == fakeSize)
		buf := make([]byte, end-off)
		for i := range buf {
			buf[i] = fakeByte(off + uint64(i))
		}
		e.Opaque(buf)
	case nfs4.OpDestroySession:
		d.Skip(16)
		e.Uint32(0)
	case nfs4.OpDestroyClientid:
		d.Uint64()
		e.Uint32(0)
	default:
		e.Uint32(uint32(nfs4.ErrNotsupp))
		return nfs4.ErrNotsupp
	}
	return 0
}

func (s *fakeServer) sequence(d *xdr.Decoder, e *xdr.Encoder) nfs4.Status {
	var sid [16]byte
	copy(sid[:], d.Fixed(16))
	seq, slot, high := d.Uint32(), d.Uint32(), d.Uint32()
	d.Bool()
	s.mu.Lock()
	last := s.slots[slot]
	ok := seq == last+1
	if ok {
		s.slots[slot] = seq
	}
	s.mu.Unlock()
	if !ok || sid != fakeSession || slot >= 8 {
		s.t.Errorf("fake: SEQUENCE slot %d seq %d after %d", slot, seq, last)
		e.Uint32(uint32(nfs4.ErrSeqMisordered))
		return nfs4.ErrSeqMisordered
	}
	e.Uint32(0)
	e.Fixed(sid[:])
	for _, v := range []uint32{seq, slot, high, 7, 0} {
		e.Uint32(v)
	}
	return 0
}

// fakeReadPlus encodes the synthetic file's [off, off+count) as segments.
func fakeReadPlus(e *xdr.Encoder, off uint64, count uint32) {
	end := min(off+uint64(count), fakeSize)
	e.Bool(end == fakeSize)
	nPos := e.Reserve()
	n := 0
	for pos := off; pos < end; n++ {
		stop := min((pos/fakeBlock+1)*fakeBlock, end)
		if fakeByte(pos) == 0 && (pos/fakeBlock)%2 == 1 {
			e.Uint32(nfs4.ContentHole)
			e.Uint64(pos)
			e.Uint64(stop - pos)
		} else {
			buf := make([]byte, stop-pos)
			for i := range buf {
				buf[i] = fakeByte(pos + uint64(i))
			}
			e.Uint32(nfs4.ContentData)
			e.Uint64(pos)
			e.Opaque(buf)
		}
		pos = stop
	}
	e.Patch(nPos, uint32(n))
}

func dialFake(t *testing.T, s *fakeServer) *Client {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, s.ln.Addr().String(), Options{UID: 1000, GID: 1000, DelayMin: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFakeConcurrentReadPlus(t *testing.T) {
	s := startFake(t)
	c := dialFake(t, s)
	if got := c.ForeChannel().MaxRequests; got != 8 {
		t.Fatalf("granted slots %d", got)
	}
	ctx := context.Background()
	var reads []func() error
	for g := range 16 {
		reads = append(reads, func() error { return readAndCheck(ctx, c, uint64(g*997), 5000+uint32(g)) })
	}
	inParallel(t, reads)
	st := c.Stats()
	if st.Delays == 0 || st.ReadPlusHoleBytes == 0 || st.ReadPlusDataBytes == 0 {
		t.Errorf("stats %+v", st)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// inParallel runs each of fns in a goroutine of its own and reports their
// errors.
func inParallel(t *testing.T, fns []func() error) {
	var wg sync.WaitGroup
	errs := make([]error, len(fns))
	for i, f := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// readAndCheck reads the fake file from off to eof in chunks with
// READ_PLUS.
func readAndCheck(ctx context.Context, c *Client, off uint64, chunk uint32) error {
	return checkReads(off, chunk, func(off uint64, buf []byte) (int, bool, error) {
		n, eof, _, err := c.ReadPlus(ctx, []byte("fh"), nfs4.AnonStateid, off, uint32(len(buf)), buf)
		return n, eof, err
	})
}

// readIntoAndCheck is readAndCheck with READ into the caller's buffer.
func readIntoAndCheck(ctx context.Context, c *Client, off uint64, chunk uint32) error {
	return checkReads(off, chunk, func(off uint64, buf []byte) (int, bool, error) {
		return c.ReadInto(ctx, []byte("fh"), nfs4.AnonStateid, off, buf)
	})
}

// checkReads reads the fake file from off to eof in chunks with read,
// poisoning the buffer before each call so that bytes left unwritten show,
// and checks every byte and the end of file.
func checkReads(off uint64, chunk uint32, read func(off uint64, buf []byte) (int, bool, error)) error {
	buf := make([]byte, chunk)
	for {
		for i := range buf {
			buf[i] = 0xee
		}
		n, eof, err := read(off, buf)
		if err != nil {
			return err
		}
		if want := min(uint64(chunk), fakeSize-off); uint64(n) != want {
			return fmt.Errorf("read at %d: %d bytes, want %d", off, n, want)
		}
		for i := range n {
			if buf[i] != fakeByte(off+uint64(i)) {
				return fmt.Errorf("byte %d: %#x want %#x", off+uint64(i), buf[i], fakeByte(off+uint64(i)))
			}
		}
		off += uint64(n)
		if eof {
			if off != fakeSize {
				return fmt.Errorf("eof at %d", off)
			}
			return nil
		}
	}
}

func TestFakeCancelKeepsSlotsInOrder(t *testing.T) {
	s := startFake(t)
	c := dialFake(t, s)
	defer c.Close()
	buf := make([]byte, 100)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	_, _, _, err := c.ReadPlus(ctx, []byte("fh"), nfs4.AnonStateid, slowOff, 100, buf)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	// Every slot must still carry the right seqid afterwards: the fake
	// fails the test on a misordered SEQUENCE.
	for i := range 40 {
		if _, _, _, err := c.ReadPlus(context.Background(), []byte("fh"), nfs4.AnonStateid, uint64(i), 100, buf); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFakeDelayGivesUp(t *testing.T) {
	s := startFake(t)
	c := dialFake(t, s)
	defer c.Close()
	c.opts.DelayRetries = 3
	s.delayAll.Store(true)
	_, _, _, err := c.ReadPlus(context.Background(), []byte("fh"), nfs4.AnonStateid, 0, 100, make([]byte, 100))
	if !IsStatus(err, nfs4.ErrDelay) {
		t.Fatalf("err %v", err)
	}
	if d := c.Stats().Delays; d != 3 {
		t.Fatalf("%d delays", d)
	}
}

// NFS4ERR_GRACE is waited out for Options.GraceWait, with OnGrace called
// once per waiting call; without GraceWait it is returned at once.
func TestFakeGraceWait(t *testing.T) {
	s := startFake(t)
	c := dialFake(t, s)
	defer c.Close()
	c.opts.DelayMax = 2 * time.Millisecond
	read := func() error {
		_, _, err := c.Read(context.Background(), []byte("fh"), nfs4.AnonStateid, 0, 100)
		return err
	}
	s.grace.Store(1)
	if err := read(); !IsStatus(err, nfs4.ErrGrace) {
		t.Fatalf("without GraceWait: %v, want NFS4ERR_GRACE", err)
	}

	var told atomic.Int64
	c.opts.GraceWait, c.opts.OnGrace = 5*time.Second, func() { told.Add(1) }
	s.grace.Store(4)
	if err := read(); err != nil {
		t.Fatalf("with GraceWait: %v", err)
	}
	if told.Load() != 1 || c.Stats().GraceWaits != 1 {
		t.Fatalf("OnGrace called %d times, GraceWaits %d; want 1 and 1", told.Load(), c.Stats().GraceWaits)
	}

	c.opts.GraceWait = 30 * time.Millisecond
	s.grace.Store(1 << 40)
	start := time.Now()
	if err := read(); !IsStatus(err, nfs4.ErrGrace) || time.Since(start) < 30*time.Millisecond {
		t.Fatalf("past GraceWait: %v after %v, want NFS4ERR_GRACE after 30ms", err, time.Since(start))
	}
}

func TestFakeConnectionLoss(t *testing.T) {
	s := startFake(t)
	c := dialFake(t, s)
	c.t.conn.Close()
	_, _, _, err := c.ReadPlus(context.Background(), []byte("fh"), nfs4.AnonStateid, 0, 100, make([]byte, 100))
	if err == nil {
		t.Fatal("read on closed connection succeeded")
	}
	<-c.Closed()
	c.Close()
}

// TestFakeReadInto reads the fake file with READ into the caller's buffer
// from many goroutines, beside READ_PLUS calls taking the ordinary path,
// with odd lengths (XDR padding) and NFS4ERR_DELAY replies (not placed).
func TestFakeReadInto(t *testing.T) {
	s := startFake(t)
	c := dialFake(t, s)
	defer c.Close()
	ctx := context.Background()
	var reads []func() error
	for g := range 16 {
		reads = append(reads,
			func() error { return readIntoAndCheck(ctx, c, uint64(g*991), 3001+uint32(g)*4099) },
			func() error { return readAndCheck(ctx, c, uint64(g*997), 5000+uint32(g)) })
	}
	inParallel(t, reads)
	st := c.Stats()
	if st.ReadsPlaced == 0 || st.Delays == 0 {
		t.Errorf("stats %+v: want placed reads and delays", st)
	}
}

// TestFakeReadIntoCancel gives up on a READ (and a READ_PLUS) whose reply
// comes late: the reply must not land in the buffer afterwards, and the
// slot must stay in order.
func TestFakeReadIntoCancel(t *testing.T) {
	s := startFake(t)
	c := dialFake(t, s)
	defer c.Close()
	reads := map[string]func(ctx context.Context, off uint64, buf []byte) error{
		"READ": func(ctx context.Context, off uint64, buf []byte) error {
			_, _, err := c.ReadInto(ctx, []byte("fh"), nfs4.AnonStateid, off, buf)
			return err
		},
		"READ_PLUS": func(ctx context.Context, off uint64, buf []byte) error {
			_, _, _, err := c.ReadPlus(ctx, []byte("fh"), nfs4.AnonStateid, off, uint32(len(buf)), buf)
			return err
		},
	}
	for name, read := range reads {
		buf := make([]byte, 100)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		err := read(ctx, slowOff, buf)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: err %v", name, err)
		}
		for i := range buf {
			buf[i] = 0xee
		}
		time.Sleep(300 * time.Millisecond) // the late reply arrives
		for i, b := range buf {
			if b != 0xee {
				t.Fatalf("%s: byte %d written after the call gave up", name, i)
			}
		}
		for i := range 40 {
			if err := read(context.Background(), uint64(i), buf); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
}

// sinkReplyHead encodes the head of a successful SEQUENCE, PUTFH, op reply
// (xid 7, the given tag) up to op's result.
func sinkReplyHead(tag string, op uint32) *xdr.Encoder {
	e := xdr.NewEncoder(256)
	for _, v := range []uint32{7, nfs4.MsgReply, nfs4.MsgAccepted, 0, 0, nfs4.AcceptSuccess, uint32(nfs4.OK)} {
		e.Uint32(v)
	}
	e.Opaque([]byte(tag))
	e.Uint32(3)
	e.Uint32(nfs4.OpSequence)
	e.Uint32(uint32(nfs4.OK))
	e.Fixed(make([]byte, nfs4.SessionIDSize+20))
	for _, o := range []uint32{nfs4.OpPutfh, op} {
		e.Uint32(o)
		e.Uint32(uint32(nfs4.OK))
	}
	return e
}

// TestLocateReadData checks the reply parser on a real reply and on every
// truncation of it.
func TestLocateReadData(t *testing.T) {
	e := sinkReplyHead("tag", nfs4.OpRead)
	e.Bool(true)
	e.Uint32(5)
	head := e.AppendTo(nil)
	start, n, ok := locateReadData(head)
	if !ok || start != len(head) || n != 5 {
		t.Fatalf("locate = %d, %d, %v; want %d, 5, true", start, n, ok, len(head))
	}
	for k := range len(head) {
		if _, _, ok := locateReadData(head[:k]); ok {
			t.Fatalf("located in the first %d bytes", k)
		}
	}
	bad := append([]byte(nil), head...)
	bad[len(bad)-12+3] = byte(nfs4.ErrIO) // READ's status
	if _, _, ok := locateReadData(bad); ok {
		t.Fatal("located the data of a failed READ")
	}
}

// TestFakeReadPlusReusesReplyBuffer: READ_PLUS replies are read into a
// reused buffer, not a fresh record each.
func TestFakeReadPlusReusesReplyBuffer(t *testing.T) {
	s := startFake(t)
	c := dialFake(t, s)
	defer c.Close()
	buf := make([]byte, 64<<10)
	for range 8 {
		if s.calls.Load()%5 == 4 {
			s.calls.Add(1) // the fake delays every fifth call
		}
		if _, _, _, err := c.ReadPlus(context.Background(), []byte("fh"), nfs4.AnonStateid, 0, uint32(len(buf)), buf); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.t.reused.Load(); got != 8 {
		t.Errorf("%d of 8 READ_PLUS replies read into the reused buffer", got)
	}
	if err := readAndCheck(context.Background(), c, 7, 50000); err != nil {
		t.Fatal(err)
	}
}

// TestFakeReadPlusPlacesData: a READ_PLUS reply of one DATA segment is read
// straight into the caller's buffer, one with holes into the reused reply
// buffer, from many goroutines, with odd lengths (XDR padding) and
// NFS4ERR_DELAY replies (neither).
func TestFakeReadPlusPlacesData(t *testing.T) {
	s := startFake(t)
	c := dialFake(t, s)
	defer c.Close()
	ctx := context.Background()
	var reads []func() error
	for g := range 16 {
		// Inside an even (data) block, then across blocks.
		off := uint64(2*g*fakeBlock + g)
		reads = append(reads,
			func() error { return readAndCheckOnce(ctx, c, off, fakeBlock-uint32(g)-1) },
			func() error { return readAndCheck(ctx, c, uint64(g*997), 5000+uint32(g)) })
	}
	inParallel(t, reads)
	if c.Stats().ReadsPlaced == 0 || c.t.reused.Load() == 0 {
		t.Errorf("placed %d, reused %d: want both", c.Stats().ReadsPlaced, c.t.reused.Load())
	}
}

// readAndCheckOnce reads count bytes at off with one READ_PLUS (retried on
// NFS4ERR_DELAY by the client) and checks them.
func readAndCheckOnce(ctx context.Context, c *Client, off uint64, count uint32) error {
	buf := bytes.Repeat([]byte{0xee}, int(count)+8)
	n, eof, segs, err := c.ReadPlus(ctx, []byte("fh"), nfs4.AnonStateid, off, count, buf)
	if err != nil {
		return err
	}
	if n != int(count) || eof || len(segs) != 1 || segs[0] != (Segment{nfs4.ContentData, off, uint64(count)}) {
		return fmt.Errorf("READ_PLUS %d@%d: %d bytes, eof %v, segments %v", count, off, n, eof, segs)
	}
	for i := range n {
		if buf[i] != fakeByte(off+uint64(i)) {
			return fmt.Errorf("byte %d: %#x want %#x", off+uint64(i), buf[i], fakeByte(off+uint64(i)))
		}
	}
	if buf[n] != 0xee {
		return fmt.Errorf("byte past the range written")
	}
	return nil
}

// TestLocateReadPlusData checks the one-DATA-segment parser on a real
// reply, every truncation of it, and replies it must leave alone.
func TestLocateReadPlusData(t *testing.T) {
	build := func(nsegs, typ uint32) []byte {
		e := sinkReplyHead("", nfs4.OpReadPlus)
		e.Bool(false)
		e.Uint32(nsegs)
		e.Uint32(typ)
		e.Uint64(4096)
		e.Uint32(5)
		return e.AppendTo(nil)
	}
	head := build(1, nfs4.ContentData)
	start, n, ok := locateReadPlusData(head)
	if !ok || start != len(head) || n != 5 {
		t.Fatalf("locate = %d, %d, %v; want %d, 5, true", start, n, ok, len(head))
	}
	for k := range len(head) {
		if _, _, ok := locateReadPlusData(head[:k]); ok {
			t.Fatalf("located in the first %d bytes", k)
		}
	}
	if _, _, ok := locateReadPlusData(build(2, nfs4.ContentData)); ok {
		t.Fatal("located the data of a reply of two segments")
	}
	if _, _, ok := locateReadPlusData(build(1, nfs4.ContentHole)); ok {
		t.Fatal("located data in a HOLE segment")
	}
	if _, _, ok := locateReadData(head); ok {
		t.Fatal("READ's parser took a READ_PLUS reply")
	}
}

// TestDecodePlacedReadPlus: the rest of a placed reply is checked as
// DecodeReadPlusRes would check it.
func TestDecodePlacedReadPlus(t *testing.T) {
	res := func(eof bool, at uint64, n uint32) *xdr.Decoder {
		e := xdr.NewEncoder(64)
		e.Bool(eof)
		e.Uint32(1)
		e.Uint32(nfs4.ContentData)
		e.Uint64(at)
		e.Uint32(n)
		return xdr.NewDecoder(e.AppendTo(nil))
	}
	if n, eof, segs, err := decodePlacedReadPlus(res(true, 100, 5), 100, 5); err != nil || n != 5 || !eof || len(segs) != 1 {
		t.Fatalf("good reply: %d %v %v %v", n, eof, segs, err)
	}
	if _, _, _, err := decodePlacedReadPlus(res(false, 101, 5), 100, 5); err == nil {
		t.Fatal("a DATA segment not at the requested offset was taken")
	}
	if _, _, _, err := decodePlacedReadPlus(res(false, 100, 6), 100, 5); err == nil {
		t.Fatal("announced and placed lengths differ, and no error")
	}
	if _, _, _, err := decodePlacedReadPlus(res(false, 100, 0), 100, 0); !errors.Is(err, ErrNoProgress) {
		t.Fatalf("empty, not eof: %v", err)
	}
	if _, _, _, err := decodePlacedReadPlus(xdr.NewDecoder([]byte{0, 0}), 100, 5); err == nil {
		t.Fatal("truncated result taken")
	}
}

// FuzzLocateReadData: any bytes give a clean answer, and an accepted one
// lies within what was seen.
func FuzzLocateReadData(f *testing.F) {
	e := xdr.NewEncoder(256)
	for _, v := range []uint32{7, nfs4.MsgReply, nfs4.MsgAccepted, 0, 0, nfs4.AcceptSuccess, uint32(nfs4.OK), 0, 3, nfs4.OpSequence, uint32(nfs4.OK)} {
		e.Uint32(v)
	}
	e.Fixed(make([]byte, nfs4.SessionIDSize+20))
	for _, v := range []uint32{nfs4.OpPutfh, uint32(nfs4.OK), nfs4.OpRead, uint32(nfs4.OK), 1, 4096} {
		e.Uint32(v)
	}
	f.Add(e.AppendTo(nil))
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, head []byte) {
		for _, locate := range []func([]byte) (int, int, bool){locateReadData, locateReadPlusData} {
			start, n, ok := locate(head)
			if ok && (start < 0 || start > len(head) || n < 0) {
				t.Fatalf("locate = %d, %d for %d bytes", start, n, len(head))
			}
		}
	})
}

// TestFakeReadIntoStalledReply: the server stops in the middle of a reply
// being read into the caller's buffer, and the caller gives up: it gets an
// error soon after the grace period (the connection is closed under the
// reader), and its buffer is not written after that.
func TestFakeReadIntoStalledReply(t *testing.T) {
	s := startFake(t)
	c := dialFake(t, s)
	defer c.Close()
	if s.calls.Load()%5 == 4 {
		s.calls.Add(1) // the fake delays every fifth call
	}
	buf := make([]byte, 256<<10)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := c.ReadInto(ctx, []byte("fh"), nfs4.AnonStateid, stallOff, buf)
	if err == nil {
		t.Fatal("READ of a stalled reply succeeded")
	}
	if d := time.Since(start); d > placeGrace+2*time.Second {
		t.Fatalf("gave up after %v", d)
	}
	for i := range buf {
		buf[i] = 0xee
	}
	time.Sleep(200 * time.Millisecond)
	for i, b := range buf {
		if b != 0xee {
			t.Fatalf("byte %d written after the call returned", i)
		}
	}
	<-c.Closed()
}

// TestTransportCoalescesWrites: records sent while another is being
// written are queued and go out together, whole and in order, in the
// writer's next write; when that write fails, every call waiting for a
// reply fails with it.
func TestTransportCoalescesWrites(t *testing.T) {
	for _, fail := range []bool{false, true} {
		ours, theirs := net.Pipe()
		tr := newTransport(ours, 1<<20, 1, nil)
		rec := func(i byte) [][]byte { return [][]byte{{0x80, 0, 0, 4}, {i, i, i, i}} }
		first := make(chan error, 1)
		go func() { _, err := tr.sendSink(101, rec(1), nil); first <- err }()
		// Record 1 is being written (net.Pipe: until theirs reads); the
		// next ones queue and return at once.
		head := make([]byte, 8)
		if _, err := io.ReadFull(theirs, head[:1]); err != nil {
			t.Fatal(err)
		}
		var chans []chan result
		for i := byte(2); i < 6; i++ {
			ch, err := tr.send(uint32(100+i), rec(i))
			if err != nil {
				t.Fatal(err)
			}
			chans = append(chans, ch)
		}
		if fail {
			theirs.Close()
			if err := <-first; err == nil {
				t.Fatal("the failed write reported no error")
			}
			for _, ch := range chans {
				if r := <-ch; r.err == nil {
					t.Fatal("a queued call got no error when the writer's write failed")
				}
			}
			tr.close()
			continue
		}
		want := []byte{0x80, 0, 0, 4, 1, 1, 1, 1}
		for i := byte(2); i < 6; i++ {
			want = append(want, 0x80, 0, 0, 4, i, i, i, i)
		}
		got := make([]byte, len(want))
		got[0] = head[0]
		if _, err := io.ReadFull(theirs, got[1:]); err != nil {
			t.Fatal(err)
		}
		if err := <-first; err != nil || !bytes.Equal(got, want) {
			t.Fatalf("err %v, bytes %v, want %v", err, got, want)
		}
		if n := tr.writes.Load(); n > 3 {
			t.Errorf("%d writes for 5 records sent while one was being written", n)
		}
		theirs.Close()
		tr.close()
	}
}
