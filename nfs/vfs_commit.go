package nfs

import (
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// Metadata syncs (exports(5) sync, the default): a namespace change
// (OPEN-create, CREATE, REMOVE, RENAME, LINK) and SETATTR are on stable
// storage before the reply, as knfsd's commit_metadata makes them, by an
// fsync (through the engine's FileIO, so on the io_uring write rings) of
// each inode changed.
//
// The fsyncs of concurrent operations are issued at once, each from its
// own worker: the filesystem's journal folds every fsync that arrives
// while a commit runs into the next commit (jbd2's group commit, xfs log
// forces), so N concurrent creates cost about two journal commits, not N.
// Coalescing them in user space as well (a round per export, or one fsync
// per inode shared by the requests waiting for it) measured slower: the
// next commit then starts only after the previous fsync returned to user
// space and its waiters woke. mdtest-hard, 4 x 16 in flight, on ext4:
// creates/s 761-1327 issued at once, 583-781 shared per inode, 514-763
// per round (its fsyncs in parallel), 238-250 per round (one after the
// other); removes/s 7187-10718 issued at once, 2586-4297 shared per inode
// (BENCHMARKS.md, "Exports: sync and async").

// commitMeta makes the change just made durable when the current
// filehandle's export is sync for the caller: pathFDs are descriptors (O_PATH
// or real) of the directories and files changed. Symlinks and special
// files are not synced themselves (they cannot be opened to fsync); the
// directory that holds them is. A failed sync fails the operation, as in
// knfsd.
func (c *compound) commitMeta(pathFDs ...int) nfs4.Status {
	if c.opts.Async || c.cfh == nil || c.cfh.exp == nil {
		return nfs4.OK
	}
	for _, p := range pathFDs {
		if p < 0 {
			continue
		}
		fd, err := syncableFD(p)
		if err == nil && fd >= 0 {
			err = c.s.io.Sync(fd, false)
			unix.Close(fd)
		}
		if err != nil {
			return errno(err)
		}
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
func (c *compound) commitCreated(dirfd int, name string) nfs4.Status {
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
