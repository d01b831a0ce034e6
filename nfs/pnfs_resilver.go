package nfs

import (
	"context"
	"errors"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// watchDataServers hands ds the server's side of its optional
// interfaces: recalls when a data server leaves service, and the wait
// before a stale mirror is copied over (pnfs.go).
func (s *Server) watchDataServers(ds DataServers) {
	if w, ok := ds.(DeviceWatcher); ok {
		w.OnOutOfService(s.recallDevice)
	}
	if r, ok := ds.(Resilverer); ok {
		r.BeforeResilver(s.quiesceRW)
	}
	if o, ok := ds.(OrphanStore); ok {
		s.mds.store = o
		s.removeOldOrphans()
	}
}

// errGraceResilver: during the grace period clients of the previous boot
// may still write with layouts this boot does not know of.
var errGraceResilver = errors.New("nfs: in the grace period")

// quiesceRW recalls every RW layout of the file whose data files are
// named name and waits until they are gone (Resilverer): returned, or
// fenced by layoutsOverdue a lease after the recall. A layout that was
// fenced rather than returned has its fence run in the background
// (dropLayoutLocked): it is fenced again here, synchronously, so the
// data files have owners its client does not know before the copy
// starts (RFC 8435 section 14).
func (s *Server) quiesceRW(ctx context.Context, name string) error {
	t := s.state
	lease := time.Duration(s.cfg.LeaseTime) * time.Second
	now := time.Now()
	var wait []*layoutState
	t.mu.Lock()
	if t.inGraceLocked() {
		t.mu.Unlock()
		return errGraceResilver
	}
	for _, ls := range t.layouts {
		l, _ := ls.node.layoutKnown()
		if l == nil || l.Name != name || ls.iomodes&(1<<nfs4.LayoutIOModeRW) == 0 {
			continue
		}
		if !ls.recalled.IsZero() && now.Sub(ls.recalled) > lease {
			t.dropLayoutLocked(ls, true)
		} else {
			t.startRecallLocked(ls, now)
		}
		wait = append(wait, ls)
	}
	t.mu.Unlock()
	var fence *node
	for _, ls := range wait {
		select {
		case <-ls.gone:
		case <-ctx.Done():
			return ctx.Err()
		}
		t.mu.Lock()
		if ls.fenced {
			fence = ls.node
		}
		t.mu.Unlock()
	}
	if fence != nil {
		old, _ := fence.layoutKnown()
		s.fence(fence)
		if nl, _ := fence.layoutKnown(); old != nil && nl != nil && nl.UID == old.UID {
			return errors.New("nfs: fencing the file failed")
		}
	}
	return nil
}
