package nfs

import (
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Read is a file read the protocol layer asks the engine to perform before a
// reply is sent: "read Len bytes at Off from FD into the reply here". The
// engine supplies the buffer (aligned, pooled, outside the Go heap if it
// likes), performs the read by whatever means it has, and calls
// Reply.CompleteRead. nfs never reads file data itself.
//
// Whether the bytes come through the page cache or O_DIRECT is the engine's
// decision alone (it knows its buffers and can ask where the bytes are);
// nfs only offers DirectFD for when it decides to go direct.
type Read struct {
	FD  int
	Off int64
	Len int

	first, last int   // the reply's segs this read fills
	node        *node // the file: a retransmit's re-read, the O_DIRECT open
	direct      int   // NewRead's O_DIRECT descriptor + 1 when node is nil
}

// NewRead describes a read by descriptors, for tools and tests: direct is
// an O_DIRECT descriptor for the same file, or -1.
func NewRead(fd, direct int, off int64, n int) Read {
	return Read{FD: fd, Off: off, Len: n, direct: direct + 1}
}

// DirectFD returns an O_DIRECT descriptor for the read's file, opening it
// on first use (through the node's confined open, like every open of a
// stored path) and caching it with the file's other descriptors; -1 when
// the filesystem refuses O_DIRECT. It stays open while the reply is alive
// (the node is pinned). Safe from any goroutine, but the first call for a
// file walks its path and opens it, which can wait on the disk: an event
// loop calls CachedDirectFD instead.
func (r *Read) DirectFD() int {
	if r.node == nil {
		return r.direct - 1
	}
	return r.node.directFD()
}

// CachedDirectFD is DirectFD without the open, for event loops: ok is
// false when the file's O_DIRECT descriptor has not been opened yet (or is
// being closed), and then only DirectFD, off the loop, can tell.
func (r *Read) CachedDirectFD() (fd int, ok bool) {
	if r.node == nil {
		return r.direct - 1, true
	}
	r.node.touch()
	return r.node.pub.direct.get()
}

// readSeg is one borrowed piece of a reply filled from part of a Read's
// buffer: the data of a READ, or one DATA segment of a READ_PLUS.
type readSeg struct {
	piece    int // encoder piece
	at       int // header position the piece follows
	countPos int // position of the length field before the data, or -1
	eofPos   int // position of the eof bool, or -1
	off, n   int // where in the read's buffer, and how much

	// count2Pos, when not 0, is a second count patched with countPos
	// (NFSv3 READ's count before eof, nfs3_ops.go).
	count2Pos int
}

// Reply is one RPC reply under construction. The engine gets one from
// NewReply, passes it to Handler.Handle, performs Reads, calls
// Handler.Complete, sends Iovecs, and then releases its buffers.
type Reply struct {
	Enc   *xdr.Encoder
	Reads []Read
	segs  []readSeg

	// Inline is set by the engine when Handle runs on an event loop (or
	// the portable engine's connection reader) for a record Server.Inline
	// accepted: nothing may wait there, so the ops that could (a READ_PLUS
	// extent walk) take a way that does not (planSegmentsLoop).
	Inline bool
	// Close asks the engine to close the connection after sending (for
	// example after an unrecoverable framing error).
	Close bool
	// Drop means there is nothing to send.
	Drop bool

	markPos int // record marker
	bodyPos int // start of the COMPOUND result, for the reply cache
	slot    *slot
	sess    *session
	slotSeq uint32
	// replay is set by SEQUENCE on a retransmit: the slot's cached reply.
	replay replyCache
	// zeroFill: short reads are padded with zeros rather than shortening
	// the reply, whose lengths are fixed (a replayed reply).
	zeroFill bool

	// Scratch kept with the pooled reply so a request allocates nothing.
	pinned  []*node // nodes whose descriptors the reads use
	dec     xdr.Decoder
	cmp     compound
	extents []extent
	xid     uint32
	gss     gssReply // RPCSEC_GSS body protection, made in Complete (rpc_gss.go)
}

// NewReply returns an empty reply.
func NewReply() *Reply {
	return &Reply{Enc: xdr.NewEncoder(1024)}
}

// Reset empties the reply for reuse. The engine calls it once the reply is
// sent: only then may the descriptors its reads used be closed.
func (r *Reply) Reset() {
	r.Enc.Reset()
	r.Reads = r.Reads[:0]
	r.segs = r.segs[:0]
	for i, n := range r.pinned {
		n.unpin()
		r.pinned[i] = nil
	}
	r.pinned = r.pinned[:0]
	r.Close, r.Drop, r.Inline = false, false, false
	r.markPos, r.bodyPos = 0, 0
	r.replay.ok, r.zeroFill = false, false
	clear(r.replay.reads) // let go of nodes
	if r.slot != nil {
		// Complete never ran: the engine gave the reply up (its
		// connection closed before the reads). The slot must not stay
		// in use, or the client's retransmit on a new connection would
		// answer NFS4ERR_DELAY for ever.
		r.slot.abandon(r.slotSeq)
	}
	r.slot, r.sess, r.slotSeq, r.xid = nil, nil, 0, 0
	r.gss = gssReply{}
}

// CompleteRead hands the engine's data for Reads[i] to the reply. data may be
// shorter than asked (end of file moved, or an error after some bytes):
// lengths and eof are patched to match, so the client never sees wrong
// bytes, at worst a short read.
func (r *Reply) CompleteRead(i int, data []byte) {
	rd := &r.Reads[i]
	for k := rd.first; k < rd.last; k++ {
		sg := &r.segs[k]
		avail := min(max(len(data)-sg.off, 0), sg.n)
		if avail < sg.n && r.zeroFill {
			buf := make([]byte, sg.n)
			copy(buf, data[sg.off:sg.off+avail])
			r.Enc.SetBorrowed(sg.piece, buf)
			continue
		}
		if avail == 0 {
			r.Enc.SetBorrowed(sg.piece, nil)
		} else {
			r.Enc.SetBorrowed(sg.piece, data[sg.off:sg.off+avail])
		}
		if avail < sg.n {
			r.Enc.Patch(sg.countPos, uint32(avail))
			if sg.count2Pos > 0 {
				r.Enc.Patch(sg.count2Pos, uint32(avail))
			}
			r.Enc.Patch(sg.eofPos, 1)
			sg.n = avail // what the slot's reply cache keeps
		}
	}
}

// Iovecs returns the reply, record marker included, as buffers to send in
// order.
func (r *Reply) Iovecs() [][]byte {
	r.Enc.Patch(r.markPos, xdr.RecordMark(r.Enc.Len()-4))
	return r.Enc.Iovecs()
}

// pin keeps n's descriptors open until the reply is Reset.
func (r *Reply) pin(n *node) {
	for _, p := range r.pinned {
		if p == n {
			return
		}
	}
	n.pin()
	r.pinned = append(r.pinned, n)
}

// addRead plans a read of n bytes at off; addSeg then places parts of it
// in the reply.
func (r *Reply) addRead(nd *node, fd int, off int64, n int) {
	r.Reads = append(r.Reads, Read{FD: fd, Off: off, Len: n,
		first: len(r.segs), last: len(r.segs), node: nd})
}

// addSeg borrows a piece for n bytes at offset off of the last planned read.
func (r *Reply) addSeg(countPos, eofPos, off, n int) {
	at := r.Enc.Pos()
	p := r.Enc.Borrow(nil)
	r.segs = append(r.segs, readSeg{piece: p, at: at, countPos: countPos, eofPos: eofPos, off: off, n: n})
	r.Reads[len(r.Reads)-1].last = len(r.segs)
}
