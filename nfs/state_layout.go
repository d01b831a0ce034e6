package nfs

import (
	"slices"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Layout state (RFC 8881 section 12.5). A client holds at most one layout
// stateid per file; the layout it names always covers the whole file
// (offset 0, length NFS4_UINT64_MAX), as knfsd's flexfiles server hands
// out, in the iomodes granted so far. Its seqid starts at 1 and moves on
// with every LAYOUTGET, every LAYOUTRETURN that leaves something, and the
// first CB_LAYOUTRECALL of it (section 12.5.3; knfsd's
// nfsd4_cb_layout_prepare).
type layoutState struct {
	other    [nfs4.OtherSize]byte
	seq      uint32 // under stateTable.mu, as is everything below
	client   *client
	node     *node
	iomodes  uint32     // 1<<LAYOUTIOMODE4_READ, 1<<LAYOUTIOMODE4_RW: what it was granted
	devices  []DeviceID // the data servers its layouts named
	recalled time.Time  // when CB_LAYOUTRECALL was first sent; zero: not recalled
	fenced   bool       // dropped with a fence, not returned (quiesceRW)
	gone     chan struct{}
}

func (ls *layoutState) stateid() nfs4.Stateid {
	return nfs4.Stateid{Seqid: ls.seq, Other: ls.other}
}

// layoutLocked finds a layout stateid of cl on n, with the seqid rule of
// RFC 8881 section 12.5.3 as knfsd applies it
// (nfsd4_preprocess_layout_stateid): a seqid newer than the server's is
// NFS4ERR_BAD_STATEID; an older one names the same layout (replies may
// cross a recall). ok is false when sid is not a layout stateid at all.
func (t *stateTable) layoutLocked(cl *client, n *node, sid nfs4.Stateid) (ls *layoutState, ok bool, st nfs4.Status) {
	ls = t.layouts[sid.Other]
	if ls == nil {
		return nil, false, nfs4.OK
	}
	if ls.client != cl || !ls.node.same(n) || sid.Seqid > ls.seq {
		return nil, true, nfs4.ErrBadStateid
	}
	return ls, true, nfs4.OK
}

// layoutStatusLocked is TEST_STATEID's answer for sid when it names a
// layout stateid (isLayout): OK for cl's own with a seqid not from the
// future, NFS4ERR_BAD_STATEID otherwise, as for any stateid.
func (t *stateTable) layoutStatusLocked(cl *client, sid nfs4.Stateid) (st nfs4.Status, isLayout bool) {
	ls := t.layouts[sid.Other]
	switch {
	case ls == nil:
		return nfs4.OK, false
	case ls.client != cl || sid.Seqid > ls.seq:
		return nfs4.ErrBadStateid, true
	}
	return nfs4.OK, true
}

// grantLayoutLocked records that cl gets a layout of iomode on n naming
// devs, from sid: a layout stateid of cl on n, or (its first LAYOUTGET
// of the file) an open, lock or delegation stateid of it (section
// 12.5.2). It returns the layout stateid to answer with.
func (t *stateTable) grantLayoutLocked(cl *client, n *node, sid nfs4.Stateid, iomode uint32, devs []DeviceID) (nfs4.Stateid, nfs4.Status) {
	ls, isLayout, st := t.layoutLocked(cl, n, sid)
	if st != nfs4.OK {
		return sid, st
	}
	if !isLayout {
		o, st := t.find(cl, sid)
		if st != nfs4.OK {
			return sid, st
		}
		if !o.node.same(n) {
			return sid, nfs4.ErrBadStateid
		}
		ls = cl.layouts[n.fileID()]
	}
	if ls != nil && !ls.recalled.IsZero() {
		// Section 12.5.5.2: no new layout while a recall of it is out.
		return sid, nfs4.ErrRecallConflict
	}
	if ls == nil {
		if len(cl.layouts) >= t.s.cfg.MaxOpensPerClient {
			t.recallAnyLocked(cl)
			return sid, nfs4.ErrLayoutTryLater // the per-client cap of state (state_limits.go)
		}
		ls = &layoutState{other: t.newOther(), client: cl, node: n, gone: make(chan struct{})}
		t.layouts[ls.other] = ls
		if cl.layouts == nil {
			cl.layouts = make(map[fileID]*layoutState)
		}
		cl.layouts[n.fileID()] = ls
		f := t.fileLocked(n)
		f.layouts = append(f.layouts, ls)
		t.s.ledgerHeld(cl, n)
	}
	ls.seq++
	ls.iomodes |= 1 << iomode
	for _, d := range devs {
		if !slices.Contains(ls.devices, d) {
			ls.devices = append(ls.devices, d)
		}
	}
	return ls.stateid(), nfs4.OK
}

// iomodeBits is the set of iomodes a LAYOUTRETURN or recall of iomode
// covers: LAYOUTIOMODE4_ANY covers both.
func iomodeBits(iomode uint32) uint32 {
	if iomode == nfs4.LayoutIOModeAny {
		return 1<<nfs4.LayoutIOModeRead | 1<<nfs4.LayoutIOModeRW
	}
	return 1 << iomode
}

// returnLayoutLocked is LAYOUTRETURN4_FILE of cl's layout sid on n: the
// iomodes returned are dropped when the range covers the file (every
// layout here does), and the stateid is freed once none is left
// (present false, section 18.44.3).
func (t *stateTable) returnLayoutLocked(cl *client, n *node, sid nfs4.Stateid, iomode uint32, whole bool) (nfs4.Stateid, bool, nfs4.Status) {
	ls, isLayout, st := t.layoutLocked(cl, n, sid)
	if st != nfs4.OK {
		return sid, false, st
	}
	if !isLayout {
		return sid, false, nfs4.ErrBadStateid
	}
	if sid.Seqid != 0 && sid.Seqid < ls.seq {
		// Unlike LAYOUTGET, a return must name the layout as it is now:
		// one that crossed a newer LAYOUTGET's reply would return
		// ranges the client has since been given again (section
		// 18.44.3; pynfs FFLOOS).
		return sid, false, nfs4.ErrOldStateid
	}
	if whole {
		ls.iomodes &^= iomodeBits(iomode)
	}
	if ls.iomodes == 0 {
		t.dropLayoutLocked(ls, false)
		return sid, false, nfs4.OK
	}
	ls.seq++
	return ls.stateid(), true, nfs4.OK
}

// returnAllLocked is LAYOUTRETURN4_FSID (match set) and LAYOUTRETURN4_ALL
// (match nil) of cl's layouts of iomode.
func (t *stateTable) returnAllLocked(cl *client, iomode uint32, match func(*node) bool) {
	for _, ls := range cl.layouts {
		if match != nil && !match(ls.node) {
			continue
		}
		if ls.iomodes &^= iomodeBits(iomode); ls.iomodes == 0 {
			t.dropLayoutLocked(ls, false)
		}
	}
}

// dropLayoutLocked forgets a layout stateid. fence: the client did not
// give it back (its lease ended, it was destroyed, a recall went
// unanswered), so the file's data files get new owners and what it holds
// no longer works (RFC 8435 section 14).
func (t *stateTable) dropLayoutLocked(ls *layoutState, fence bool) {
	if t.layouts[ls.other] != ls {
		return
	}
	delete(t.layouts, ls.other)
	delete(ls.client.layouts, ls.node.fileID())
	if f := t.files[ls.node.fileID()]; f != nil {
		f.layouts = slices.DeleteFunc(f.layouts, func(x *layoutState) bool { return x == ls })
		t.tidyFileLocked(ls.node)
	}
	ls.fenced = fence
	close(ls.gone)
	if !fence {
		t.s.ledgerReleased(ls) // a fenced one once the fence is done (fenceReleased)
	}
	if t.s.mds == nil {
		return
	}
	t.s.mds.returned.Add(1)
	if fence {
		go t.s.fenceReleased(ls)
	}
}

// closeLayoutsLocked forgets the layout o's client holds on o's file once
// the CLOSE of o leaves it no open there: LAYOUTGET said
// logr_return_on_close (RFC 8881 section 18.43.3), and knfsd returns
// them so too (nfsd4_return_all_file_layouts from nfsd4_close). In
// memory only: CLOSE may run on an event loop.
func (t *stateTable) closeLayoutsLocked(o *openState) {
	ls := o.client.layouts[o.node.fileID()]
	if ls == nil {
		return
	}
	for _, x := range t.peekFileLocked(o.node).opens {
		if x.client == o.client {
			return
		}
	}
	t.dropLayoutLocked(ls, false)
}

// dropClientLayoutsLocked forgets every layout of c.
func (t *stateTable) dropClientLayoutsLocked(c *client, fence bool) {
	for _, ls := range c.layouts {
		t.dropLayoutLocked(ls, fence)
	}
}

// layoutsOverdue fences what clients can no longer be trusted to have
// given back: the layouts of a client whose lease ran out (a courtesy
// client keeps its opens, not its layouts: RFC 8435 section 14), and a
// layout recalled more than a lease ago and not returned (RFC 8881
// section 12.5.5.2: the server may then revoke it). Called with each
// lease check.
func (t *stateTable) layoutsOverdue(now time.Time) {
	if t.s.mds == nil {
		return
	}
	lease := time.Duration(t.s.cfg.LeaseTime) * time.Second
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ls := range t.layouts {
		switch {
		case t.leaseExpiredLocked(ls.client, now):
			t.s.log.Info("pnfs: layout fenced: its client's lease ended", "clientid", ls.client.id)
		case !ls.recalled.IsZero() && now.Sub(ls.recalled) > lease:
			t.s.log.Info("pnfs: layout fenced: recall not answered within a lease", "clientid", ls.client.id)
		default:
			continue
		}
		t.dropLayoutLocked(ls, true)
	}
}

// recallLayouts recalls the layouts other clients than cl hold on n
// before a change they must not write across (SETATTR of mode, owner,
// group or size: RFC 8435 section 15), waits up to recallWait for them to
// come back, and answers NFS4ERR_DELAY while any remains. A layout
// recalled more than a lease ago is fenced and forgotten instead.
func (s *Server) recallLayouts(cl *client, n *node) nfs4.Status {
	if s.mds == nil {
		return nfs4.OK
	}
	t := s.state
	now := time.Now()
	lease := time.Duration(s.cfg.LeaseTime) * time.Second
	var wait []chan struct{}
	t.mu.Lock()
	for _, ls := range slices.Clone(t.peekFileLocked(n).layouts) {
		if ls.client == cl {
			continue
		}
		if !ls.recalled.IsZero() && now.Sub(ls.recalled) > lease {
			t.dropLayoutLocked(ls, true)
			continue
		}
		t.startRecallLocked(ls, now)
		wait = append(wait, ls.gone)
	}
	t.mu.Unlock()
	return waitGone(wait)
}

// recallDevice recalls every layout that names data server id (it left
// service: DeviceWatcher), so that clients get layouts that leave it
// out.
func (s *Server) recallDevice(id DeviceID) {
	t := s.state
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ls := range t.layouts {
		if slices.Contains(ls.devices, id) {
			t.startRecallLocked(ls, now)
		}
	}
}

// recallFile recalls every layout of n's file (after a fence).
func (s *Server) recallFile(n *node) {
	t := s.state
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ls := range t.peekFileLocked(n).layouts {
		t.startRecallLocked(ls, now)
	}
}

// recallAnyLocked asks cl, at its cap of layouts, to return some
// (CB_RECALL_ANY, RFC 8881 section 20.6): keep half, of the flexfiles
// types (RFC 8435 section 16: RCA4_TYPE_MASK_FF_LAYOUT_MIN and _MAX, READ
// and RW; the Linux client's nfs4_callback_recallany returns all its
// layouts of those). At most once a lease per client.
func (t *stateTable) recallAnyLocked(cl *client) {
	now := time.Now()
	if now.Sub(cl.recallAnyAt) < time.Duration(t.s.cfg.LeaseTime)*time.Second {
		return
	}
	cl.recallAnyAt = now
	var sess *session
	for _, x := range cl.sessions {
		if x.canCall() {
			sess = x
			break
		}
	}
	if sess == nil {
		return
	}
	keep := uint32(len(cl.layouts) / 2)
	go func() {
		_, err := t.s.cbCompound(sess, 1, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpCBRecallAny)
			e.Uint32(keep)
			nfs4.BitmapOf(rcaFFLayoutRead, rcaFFLayoutRW).Encode(e)
		}, cbTimeout)
		if err != nil {
			t.s.log.Debug("CB_RECALL_ANY not delivered", "client", cl.id, "err", err)
		}
	}()
}

// The CB_RECALL_ANY type bits of flexfiles layouts (RFC 8435 section 16).
const (
	rcaFFLayoutRead = 16
	rcaFFLayoutRW   = 17
)

// startRecallLocked sends CB_LAYOUTRECALL for ls unless it is out
// already.
func (t *stateTable) startRecallLocked(ls *layoutState, now time.Time) {
	if !ls.recalled.IsZero() {
		return
	}
	ls.recalled = now
	ls.seq++
	t.s.mds.recalled.Add(1)
	go t.s.recallLayout(ls)
}

// recallLayout sends CB_LAYOUTRECALL (RFC 8881 section 20.3) of the whole
// file for ls over a back channel of its client, again every recallRetry
// while it cannot be delivered, as recall does for delegations. An answer
// of NFS4ERR_NOMATCHING_LAYOUT means the client holds none: the state is
// forgotten at once. Any other answer waits for the LAYOUTRETURN, or for
// layoutsOverdue to fence it a lease after the recall.
func (s *Server) recallLayout(ls *layoutState) {
	for {
		sess, sid := s.layoutRecallTarget(ls)
		if sess != nil {
			res, err := s.cbCompound(sess, 1, func(e *xdr.Encoder) {
				e.Uint32(nfs4.OpCBLayoutrecall)
				e.Uint32(nfs4.LayoutFlexFiles)
				e.Uint32(nfs4.LayoutIOModeAny)
				e.Bool(true) // clora_changed: the layout will differ when got again
				e.Uint32(nfs4.LayoutReturnFile)
				e.Opaque(ls.node.handle)
				e.Uint64(0)
				e.Uint64(nfs4.LengthToEOF)
				sid.Encode(e)
			}, cbTimeout)
			if err == nil {
				st := res.status
				if st == nfs4.OK && res.d != nil {
					// the CB_LAYOUTRECALL result itself
					res.d.Uint32()
					st = nfs4.Status(res.d.Uint32())
				}
				if st == nfs4.ErrNoMatchingLayout {
					s.state.mu.Lock()
					s.state.dropLayoutLocked(ls, false)
					s.state.mu.Unlock()
				} else if st != nfs4.OK {
					s.log.Debug("CB_LAYOUTRECALL refused", "client", ls.client.id, "status", st)
				}
				return
			}
			s.log.Debug("CB_LAYOUTRECALL not delivered; sent again later", "client", ls.client.id, "err", err)
		}
		select {
		case <-ls.gone:
			return
		case <-s.stop:
			return
		case <-time.After(recallRetry):
		}
	}
}

// layoutRecallTarget picks a session of ls's client that can be called
// back, and the stateid to recall.
func (s *Server) layoutRecallTarget(ls *layoutState) (*session, nfs4.Stateid) {
	t := s.state
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.layouts[ls.other] != ls {
		return nil, nfs4.Stateid{}
	}
	for _, x := range ls.client.sessions {
		if x.canCall() {
			return x, ls.stateid()
		}
	}
	return nil, ls.stateid()
}
