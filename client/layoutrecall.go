package client

import (
	"sync"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Callback operations of pNFS (RFC 8881 sections 20.3 and 20.6).
const (
	opCBLayoutrecall = 5 // OP_CB_LAYOUTRECALL
	opCBRecallAny    = 8 // OP_CB_RECALL_ANY
)

// LayoutRecall is CB_LAYOUTRECALL4args.
type LayoutRecall struct {
	Type    uint32 // clora_type
	IOMode  uint32
	Changed bool
	Kind    uint32 // LayoutReturnFile, LayoutReturnFsid or LayoutReturnAll
	// For LayoutReturnFile:
	FH             []byte
	Offset, Length uint64
	Stateid        nfs4.Stateid
	// For LayoutReturnFsid:
	Fsid Fsid
}

// DecodeLayoutRecall reads CB_LAYOUTRECALL4args.
func DecodeLayoutRecall(d *xdr.Decoder) (LayoutRecall, bool) {
	r := LayoutRecall{Type: d.Uint32(), IOMode: d.Uint32(), Changed: d.Bool(), Kind: d.Uint32()}
	switch r.Kind {
	case LayoutReturnFile:
		r.FH = clone(d.Opaque(nfs4.FHSize))
		r.Offset, r.Length = d.Uint64(), d.Uint64()
		r.Stateid = nfs4.DecodeStateid(d)
	case LayoutReturnFsid:
		r.Fsid = Fsid{Major: d.Uint64(), Minor: d.Uint64()}
	case LayoutReturnAll:
	default:
		return r, false
	}
	return r, d.Err() == nil
}

// LayoutRecalls returns how many CB_LAYOUTRECALLs the client has answered.
func (c *Client) LayoutRecalls() uint64 { return c.cb.layouts.Load() }

// cbLayoutRecall answers CB_LAYOUTRECALL: the layouts it names are
// forgotten at once (no more I/O goes through them) and returned with
// LAYOUTRETURN on their own goroutines, and the answer is NFS4_OK; when
// the client holds none, NFS4ERR_NOMATCHING_LAYOUT, which tells the server
// that nothing is left to return (RFC 8881 section 20.3.3).
func (c *Client) cbLayoutRecall(d *xdr.Decoder) nfs4.Status {
	r, ok := DecodeLayoutRecall(d)
	if !ok {
		return nfs4.ErrBadXDR
	}
	c.cb.layouts.Add(1)
	if f := c.opts.Callbacks.OnLayoutRecall; f != nil {
		return f(r)
	}
	if r.Type != LayoutFlexFiles {
		return ErrNoMatchingLayout
	}
	held := c.layouts.take(r)
	for _, h := range held {
		go h.recalled(r)
	}
	if len(held) == 0 {
		return ErrNoMatchingLayout
	}
	return nfs4.OK
}

// RCA4_TYPE_MASK bits of flexible-files layouts (RFC 8435 section 16):
// READ layouts, and RW ones.
const (
	rcaFFLayoutRead = 16 // RCA4_TYPE_MASK_FF_LAYOUT_MIN
	rcaFFLayoutRW   = 17 // RCA4_TYPE_MASK_FF_LAYOUT_MAX
)

// cbRecallAny answers CB_RECALL_ANY (RFC 8881 section 20.6): when the mask
// names flexible-files layouts, all but craa_objects_to_keep of the
// layouts held are returned, as recalled ones are (the Linux client,
// nfs4_callback_recallany, returns all of them). The answer is NFS4_OK.
func (c *Client) cbRecallAny(d *xdr.Decoder) nfs4.Status {
	keep := d.Uint32() // craa_objects_to_keep
	mask := nfs4.DecodeBitmap(d)
	if d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	c.cb.anys.Add(1)
	if mask[0]&(1<<rcaFFLayoutRead|1<<rcaFFLayoutRW) == 0 {
		return nfs4.OK
	}
	r := LayoutRecall{Type: LayoutFlexFiles, IOMode: IOModeAny, Kind: LayoutReturnAll, Length: LengthAll}
	for _, h := range c.layouts.takeExcess(int(keep)) {
		go h.recalled(r)
	}
	return nfs4.OK
}

// RecallAnys returns how many CB_RECALL_ANYs the client has answered.
func (c *Client) RecallAnys() uint64 { return c.cb.anys.Load() }

// layoutHolder is what holds a layout of one file (a PNFSFile).
type layoutHolder interface {
	recalled(r LayoutRecall)
}

// layoutTable is the layouts a client holds, by file handle, for
// CB_LAYOUTRECALL to find.
type layoutTable struct {
	mu   sync.Mutex
	byFH map[string][]layoutHolder
}

func (t *layoutTable) add(fh []byte, h layoutHolder) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byFH == nil {
		t.byFH = map[string][]layoutHolder{}
	}
	t.byFH[string(fh)] = append(t.byFH[string(fh)], h)
}

func (t *layoutTable) remove(fh []byte, h layoutHolder) {
	t.mu.Lock()
	defer t.mu.Unlock()
	hs := t.byFH[string(fh)]
	for i, x := range hs {
		if x == h {
			hs = append(hs[:i], hs[i+1:]...)
			break
		}
	}
	if len(hs) == 0 {
		delete(t.byFH, string(fh))
	} else {
		t.byFH[string(fh)] = hs
	}
}

// take removes and returns the holders a recall names: one file's, or
// all (FSID and ALL recalls: the client uses one file system per MDS).
func (t *layoutTable) take(r LayoutRecall) []layoutHolder {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r.Kind == LayoutReturnFile {
		hs := t.byFH[string(r.FH)]
		delete(t.byFH, string(r.FH))
		return hs
	}
	var all []layoutHolder
	for _, hs := range t.byFH {
		all = append(all, hs...)
	}
	t.byFH = nil
	return all
}

// takeExcess removes and returns all but keep of the holders.
func (t *layoutTable) takeExcess(keep int) []layoutHolder {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []layoutHolder
	n := 0
	for fh, hs := range t.byFH {
		n += len(hs)
		if n <= keep {
			continue
		}
		out = append(out, hs...)
		delete(t.byFH, fh)
	}
	return out
}
