package nfs

import (
	"context"
	"time"
)

// Orphaned data files across restarts. The layouts of removed files whose
// data files wait for the last state on them (mds.orphans) are kept in
// memory, and in the OrphanStore when DataServers offers one: a crash
// would otherwise leak their data files. A restarted server removes those
// a previous run left once its grace period is over. Their export files
// are gone by then: each had lost its last name, and the only
// descriptors holding it were the previous run's; a client of that run
// could only reach it again by reclaiming within grace (and its handle no
// longer resolves).

// orphanStoreTimeout bounds one call to the OrphanStore.
const orphanStoreTimeout = 5 * time.Second

// recordOrphan records l in the store, if any.
func (s *Server) recordOrphan(l FileLayout) {
	if s.mds.store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), orphanStoreTimeout)
	defer cancel()
	if err := s.mds.store.PutOrphan(ctx, l); err != nil {
		s.log.Warn("pnfs: removed file's data files not recorded: a crash before they go would leak them", "name", l.Name, "err", err)
	}
}

// forgetOrphan drops the record of data files now removed.
func (s *Server) forgetOrphan(name string) {
	if s.mds.store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), orphanStoreTimeout)
	defer cancel()
	if err := s.mds.store.DropOrphan(ctx, name); err != nil {
		s.log.Warn("pnfs: removed data files still recorded (removed again after a restart)", "name", name, "err", err)
	}
}

// removeOldOrphans reads the orphans a previous run recorded (before
// this one serves, so none of its own is among them) and removes their
// data files once the grace period is over.
func (s *Server) removeOldOrphans() {
	ctx, cancel := context.WithTimeout(context.Background(), orphanStoreTimeout)
	old, err := s.mds.store.Orphans(ctx)
	cancel()
	if err != nil {
		s.log.Warn("pnfs: the previous run's removed files not read; their data files stay", "err", err)
		return
	}
	if len(old) == 0 {
		return
	}
	go func() {
		for s.inGrace() {
			select {
			case <-s.stop:
				return
			case <-time.After(time.Second):
			}
		}
		removed := 0
		for _, l := range old {
			if s.removeData(l) == nil {
				s.forgetOrphan(l.Name)
				removed++
			}
		}
		s.log.Info("pnfs: data files of files removed before the restart removed", "files", removed, "of", len(old))
	}()
}

func (s *Server) inGrace() bool {
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	return s.state.inGraceLocked()
}
