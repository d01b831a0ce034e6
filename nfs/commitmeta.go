package nfs

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// metaSync is the group commit of one export's metadata changes: with
// sync (the exports(5) default), a namespace change (OPEN-create, CREATE,
// REMOVE, RENAME, LINK) and SETATTR are on stable storage before the
// reply, as knfsd's commit_metadata makes them. Each operation adds the
// inodes it changed to the next round and waits for it; one caller runs
// the round (an fsync per distinct inode, through the engine's FileIO)
// while the others wait. Operations arriving while a round runs go into
// the next one together, so N concurrent creates cost about two rounds,
// not N. On ext4 and xfs the first fsync of a round commits the journal
// and the rest find their inodes already committed.
type metaSync struct {
	mu       sync.Mutex
	cond     sync.Cond
	next     []*syncReq // for the round after the one running
	started  uint64     // rounds begun
	finished uint64     // rounds done
	running  bool
}

// syncReq is one operation's part of a round: descriptors (real, not
// O_PATH) of the inodes it changed, and the round's verdict for them.
type syncReq struct {
	fds []int
	err error
}

// commit waits until req's descriptors are synced and returns the error
// of the first that failed.
func (m *metaSync) commit(io FileIO, req *syncReq) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cond.L == nil {
		m.cond.L = &m.mu
	}
	m.next = append(m.next, req)
	// The round that takes m.next is the next one to start: whatever
	// runs now may have begun before this change was made.
	round := m.started + 1
	for m.finished < round {
		if m.running {
			m.cond.Wait()
			continue
		}
		m.running = true
		m.started++
		batch := m.next
		m.next = nil
		m.mu.Unlock()
		syncRound(io, batch)
		m.mu.Lock()
		m.running = false
		m.finished = m.started
		m.cond.Broadcast()
	}
	return req.err
}

// syncRound fsyncs every distinct inode of batch once and gives each
// request the error of its inodes.
func syncRound(io FileIO, batch []*syncReq) {
	type inode struct{ dev, ino uint64 }
	done := map[inode]error{}
	for _, r := range batch {
		for _, fd := range r.fds {
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil {
				r.err = err
				continue
			}
			k := inode{st.Dev, st.Ino}
			err, seen := done[k]
			if !seen {
				err = io.Sync(fd, false)
				done[k] = err
			}
			if err != nil && r.err == nil {
				r.err = err
			}
		}
	}
}

// commitMeta makes the change just made durable when the current
// filehandle's export is sync for the caller: pathFDs are descriptors (O_PATH
// or real) of the directories and files changed. Symlinks and special
// files are not synced themselves (they cannot be opened to fsync); the
// directory that holds them is. A failed sync fails the operation, as in
// knfsd.
func (c *compound) commitMeta(pathFDs ...int) uint32 {
	if c.opts.Async || c.cfh == nil || c.cfh.exp == nil {
		return nfs4.OK
	}
	req := &syncReq{fds: make([]int, 0, len(pathFDs))}
	defer func() {
		for _, fd := range req.fds {
			unix.Close(fd)
		}
	}()
	for _, p := range pathFDs {
		if p < 0 {
			continue
		}
		fd, err := syncableFD(p)
		if err != nil {
			return errno(err)
		}
		if fd >= 0 {
			req.fds = append(req.fds, fd)
		}
	}
	if err := c.cfh.exp.meta.commit(c.s.io, req); err != nil {
		return errno(err)
	}
	return nfs4.OK
}

// syncableFD reopens the directory or regular file p refers to for
// reading, since fsync refuses O_PATH descriptors: the same inode, no
// path walk. Other file types give -1.
func syncableFD(p int) (int, error) {
	var st unix.Stat_t
	if err := unix.Fstat(p, &st); err != nil {
		return -1, err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return unix.Openat(p, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	case unix.S_IFREG:
		return unix.Open("/proc/self/fd/"+itoa(p), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	}
	return -1, nil
}

// commitCreated is commitMeta for a create: the directory and the new
// object name in it.
func (c *compound) commitCreated(dirfd int, name string) uint32 {
	if c.opts.Async {
		return nfs4.OK
	}
	fd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return errno(err)
	}
	defer unix.Close(fd)
	return c.commitMeta(dirfd, fd)
}
