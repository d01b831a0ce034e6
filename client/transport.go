package client

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// ErrClosed is returned for calls on a connection that has gone away.
var ErrClosed = errors.New("client: connection closed")

// result is one reply record, or the error that ended the connection.
// When the call had a sink and its reply matched, placed is the number of
// bytes read into the sink and rec lacks them (see sink).
type result struct {
	rec    []byte
	err    error
	sunk   bool
	placed int
}

// pending is a call waiting for its reply.
type pending struct {
	ch   chan result
	sink *sink // nil: the whole reply goes to rec
}

// sink lets a call receive its reply in the caller's memory: no record
// buffer to allocate, clear and, for data, copy out of.
//
// With locate, one opaque goes straight into dst, as the kernel client
// reads READ data into the page cache: locate is given the first bytes of
// the reply record (at most sinkHead) and returns where the opaque's bytes
// start and how many there are, or ok false to take the reply the
// ordinary way. The opaque (with its XDR padding) must end the record and
// fit in dst.
//
// Without locate, a reply that fits in cap(dst) is read whole into dst
// (a buffer the caller reuses), and the result's rec is that memory; so is
// a reply locate declines when whole is set, into whole.
type sink struct {
	dst    []byte
	locate func(head []byte) (start, n int, ok bool)
	whole  []byte
}

// sinkHead is how much of a record locate may see; replies whose opaque
// starts later are read the ordinary way.
const sinkHead = 512

// readBuffer is the reply stream's buffer: small replies are read many to
// a system call, and a large opaque bound for a sink passes through at
// most this much of it before the rest is read straight into the sink.
const readBuffer = 16 << 10

// transport multiplexes RPC calls over one TCP connection: writers take a
// mutex to send whole records, and one reader goroutine hands each reply to
// the caller waiting on its xid.
type transport struct {
	conn net.Conn

	// The send side: one writer at a time (flushing); small records of
	// calls made meanwhile wait in wbuf for it (see write).
	wmu      sync.Mutex
	wdone    *sync.Cond // flushing became false
	flushing bool
	wbuf     []byte        // records queued for the writer
	wspare   []byte        // the writer's last batch, reused as the next wbuf
	writes   atomic.Uint64 // flushes: system calls, unless a write is short

	mu      sync.Mutex
	pending map[uint32]*pending
	err     error
	done    chan struct{}

	xid       atomic.Uint32
	bytesOut  atomic.Uint64
	bytesIn   atomic.Uint64
	dropped   atomic.Uint64
	sunk      atomic.Uint64 // replies whose data was read into a sink
	reused    atomic.Uint64 // replies read whole into a caller's buffer
	maxRecord int
	// onCall answers a CALL record from the server (a callback).
	onCall func(rec []byte)
}

func newTransport(conn net.Conn, maxRecord int, firstXID uint32, onCall func([]byte)) *transport {
	t := &transport{
		conn:      conn,
		onCall:    onCall,
		pending:   make(map[uint32]*pending),
		done:      make(chan struct{}),
		maxRecord: maxRecord,
	}
	t.wdone = sync.NewCond(&t.wmu)
	t.xid.Store(firstXID)
	go t.readLoop()
	return t
}

func (t *transport) nextXID() uint32 { return t.xid.Add(1) }

// readLoop delivers reply records by xid until the connection fails.
func (t *transport) readLoop() {
	br := bufio.NewReaderSize(t.conn, readBuffer)
	rr := xdr.NewRecordReader(br, t.maxRecord)
	for {
		if done, err := t.readIntoSink(br); err != nil {
			t.fail(err)
			return
		} else if done {
			continue
		}
		rec, err := rr.Next()
		if err != nil {
			t.fail(err)
			return
		}
		rr.Detach()
		t.bytesIn.Add(uint64(len(rec)) + 4)
		if len(rec) < 4 {
			t.dropped.Add(1)
			continue
		}
		if isCall(rec) && t.onCall != nil {
			go t.onCall(rec)
			continue
		}
		p := t.claim(binary.BigEndian.Uint32(rec))
		if p == nil {
			t.dropped.Add(1)
			continue
		}
		p.ch <- result{rec: rec}
	}
}

// claim takes the call waiting for xid out of the table, or returns nil.
func (t *transport) claim(xid uint32) *pending {
	t.mu.Lock()
	p := t.pending[xid]
	delete(t.pending, xid)
	t.mu.Unlock()
	return p
}

// readWholeIntoSink reads a record of size bytes into buf (p's sink's
// memory) if it fits, as readIntoSink does.
func (t *transport) readWholeIntoSink(br *bufio.Reader, xid uint32, p *pending, size int, buf []byte) (bool, error) {
	if size > cap(buf) || !t.take(xid, p) {
		return false, nil
	}
	rec := buf[:size]
	_, err := br.Discard(4)
	if err == nil {
		_, err = io.ReadFull(br, rec)
	}
	if err == nil {
		t.reused.Add(1)
	}
	return true, t.answer(p, size, result{rec: rec}, err)
}

// answer gives a call the reader took its result: r, or err when reading
// its record of size bytes failed (the error is the connection's too).
func (t *transport) answer(p *pending, size int, r result, err error) error {
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		p.ch <- result{err: err}
		return err
	}
	t.bytesIn.Add(uint64(size) + 4)
	p.ch <- r
	return nil
}

// take removes the call waiting for xid from the table if it is still p.
func (t *transport) take(xid uint32, p *pending) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending[xid] != p {
		return false // given up on (unsink) since it was looked up
	}
	delete(t.pending, xid)
	return true
}

// readIntoSink reads the next record if it is a single-fragment reply to a
// call with a sink whose locate accepts it; done reports that it did.
// It only peeks until it commits, so on done false the record is still
// whole in br.
func (t *transport) readIntoSink(br *bufio.Reader) (done bool, err error) {
	h, err := br.Peek(4)
	if err != nil {
		return false, nil // let the record reader report it
	}
	last, size := xdr.ParseMark(binary.BigEndian.Uint32(h))
	if !last || size < 8 || size > t.maxRecord {
		return false, nil
	}
	// The record has 8 bytes or more, so these peeks wait only for bytes
	// that are coming.
	if h, err = br.Peek(8); err != nil {
		return false, nil
	}
	xid := binary.BigEndian.Uint32(h[4:])
	t.mu.Lock()
	p := t.pending[xid]
	if p == nil || p.sink == nil {
		t.mu.Unlock()
		return false, nil
	}
	t.mu.Unlock()
	if p.sink.locate == nil {
		return t.readWholeIntoSink(br, xid, p, size, p.sink.dst)
	}
	h, err = br.Peek(4 + min(size, sinkHead))
	if err != nil {
		return false, nil
	}
	start, n, ok := p.sink.locate(h[4:])
	padded := n + (4-n%4)%4
	if !ok || n < 0 || n > len(p.sink.dst) || start < 0 || start+padded != size {
		if p.sink.whole != nil {
			return t.readWholeIntoSink(br, xid, p, size, p.sink.whole)
		}
		return false, nil
	}
	if !t.take(xid, p) {
		return false, nil
	}
	// Committed: the call is ours to answer, whatever happens now.
	rec := make([]byte, start)
	if _, err = br.Discard(4); err == nil {
		if _, err = io.ReadFull(br, rec); err == nil {
			if _, err = io.ReadFull(br, p.sink.dst[:n]); err == nil {
				_, err = br.Discard(padded - n)
			}
		}
	}
	if err == nil {
		t.sunk.Add(1)
	}
	return true, t.answer(p, size, result{rec: rec, sunk: true, placed: n}, err)
}

// fail ends the connection, failing every pending call with err.
func (t *transport) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return
	}
	if errors.Is(err, net.ErrClosed) {
		err = ErrClosed
	}
	t.err = err
	for xid, p := range t.pending {
		p.ch <- result{err: err}
		delete(t.pending, xid)
	}
	close(t.done)
	t.conn.Close()
}

// send registers xid and writes the record pieces (record mark included).
// The returned channel receives exactly one result.
func (t *transport) send(xid uint32, bufs [][]byte) (chan result, error) {
	return t.sendSink(xid, bufs, nil)
}

// sendSink is send for a call whose reply may be read into s (nil: none).
// Until the result arrives, s.dst may be written by the reader; a caller
// that stops waiting must call unsink first.
func (t *transport) sendSink(xid uint32, bufs [][]byte, s *sink) (chan result, error) {
	ch := make(chan result, 1)
	t.mu.Lock()
	if t.err != nil {
		err := t.err
		t.mu.Unlock()
		return nil, err
	}
	t.pending[xid] = &pending{ch: ch, sink: s}
	t.mu.Unlock()
	if err := t.write(bufs); err != nil {
		p := t.claim(xid)
		t.fail(err)
		if p == nil && s != nil {
			// The reader took the call (a reply to a request whose
			// sending failed part-way): it may be writing into s.dst
			// until it answers, which the closed connection makes
			// soon.
			<-ch
		}
		return nil, err
	}
	return ch, nil
}

// coalesceMax is the largest record a call leaves to another caller's
// system call (copied into wbuf): requests and small WRITEs, not 1 MiB
// payloads, which are written from the caller's memory.
const coalesceMax = 8 << 10

// write sends bytes as they are, whole and in order with other writes.
//
// Calls made while another caller writes leave records of up to
// coalesceMax bytes in a queue, copied, and return; when its write
// returns, the writer sends the whole queue in one more system call,
// and so on until the queue is empty. To give the queue a
// chance to fill, a caller that becomes the writer with a small record
// queues it too and yields the processor first (runtime.Gosched): the
// goroutines the reader has just handed replies to run, and their next
// requests join the batch. With many calls in flight a load generator
// then sends several requests per writev instead of one, and on a
// loopback connection each writev also runs the receiving side's TCP
// input: randread 4 KiB, 4 connections, depth 16, one server, 95 000 ->
// 19 000 writes per 100 000 READs, the client's CPU 0.68-0.81x, the
// server's 0.69-0.94x per op (fewer receive completions). A queued caller's bytes
// may fail to go out after it returned: the writer's failure fails the
// connection, and so every call waiting for a reply.
//
// A larger record waits for the writer and then writes itself, from the
// caller's memory.
func (t *transport) write(bufs [][]byte) error {
	size := 0
	for _, b := range bufs {
		size += len(b)
	}
	small := size <= coalesceMax
	t.wmu.Lock()
	if t.flushing && small {
		t.queue(bufs)
		t.wmu.Unlock()
		return nil
	}
	for t.flushing {
		t.wdone.Wait()
	}
	t.flushing = true
	if small {
		t.queue(bufs)
		bufs = nil
		t.wmu.Unlock()
		runtime.Gosched()
		t.wmu.Lock()
	}
	err := t.flush(bufs)
	t.flushing = false
	t.wdone.Broadcast()
	t.wmu.Unlock()
	if err != nil {
		t.fail(err)
	}
	return err
}

// queue copies bufs to the end of the writer's queue; wmu is held.
func (t *transport) queue(bufs [][]byte) {
	for _, b := range bufs {
		t.wbuf = append(t.wbuf, b...)
	}
}

// flush writes what is queued, then bufs, then whatever was queued while
// it wrote, until the queue is empty. Called and returns with wmu held;
// releases it around each system call.
func (t *transport) flush(bufs [][]byte) error {
	var vecs [8][]byte
	for {
		batch := net.Buffers(vecs[:0])
		var q []byte
		if len(t.wbuf) > 0 {
			q, t.wbuf, t.wspare = t.wbuf, t.wspare, nil
			batch = append(batch, q)
		}
		batch = append(batch, bufs...)
		bufs = nil
		if len(batch) == 0 {
			return nil
		}
		t.wmu.Unlock()
		n, err := batch.WriteTo(t.conn)
		t.bytesOut.Add(uint64(n))
		t.writes.Add(1)
		t.wmu.Lock()
		if q != nil {
			t.wspare = q[:0]
		}
		if err != nil {
			t.wbuf = t.wbuf[:0]
			return err
		}
	}
}

func (t *transport) forget(xid uint32) {
	t.mu.Lock()
	delete(t.pending, xid)
	t.mu.Unlock()
}

// placeGrace is how long a caller that gave up waits for a reply already
// being read into its buffer before the connection is closed under it: a
// server that stalls in the middle of a record must not hold the caller
// past its deadline for ever.
const placeGrace = 2 * time.Second

// errPlaceStalled ends a connection whose server stalled in the middle of
// a reply a caller had given up on.
var errPlaceStalled = errors.New("client: server stalled in the middle of a reply")

// awaitPlaced waits for the result of a call whose reply the reader took
// (unsink returned false), closing the connection if it does not come
// within placeGrace; the result then carries the error.
func (t *transport) awaitPlaced(ch chan result) result {
	tm := time.NewTimer(placeGrace)
	defer tm.Stop()
	select {
	case r := <-ch:
		return r
	case <-tm.C:
		t.fail(errPlaceStalled)
		return <-ch
	}
}

// unsink stops the reply to xid from going into its sink, for a caller
// that stops waiting. It returns false when the reader has already taken
// the call: then the sink may be written until the result arrives on the
// call's channel, which the caller must wait for before reusing it.
func (t *transport) unsink(xid uint32) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.pending[xid]
	if p == nil {
		return false
	}
	t.pending[xid] = &pending{ch: p.ch}
	return true
}

// wait returns the reply on ch, or ctx's error. On ctx's error the xid is
// forgotten, so a late reply is dropped.
func (t *transport) wait(ctx context.Context, xid uint32, ch chan result) ([]byte, error) {
	select {
	case r := <-ch:
		return r.rec, r.err
	case <-ctx.Done():
		t.forget(xid)
		return nil, ctx.Err()
	}
}

// close shuts the connection down and waits for the reader to finish.
func (t *transport) close() {
	t.fail(ErrClosed)
	<-t.done
}
