// Command fshelper is a tiny static tool for the kernel-client e2e: the
// file-system calls busybox lacks (fallocate punch-hole, SEEK_HOLE/DATA,
// copy_file_range, FICLONE, POSIX byte-range locks between two processes).
// It is built with CGO_ENABLED=0 and runs both in the guest (over the NFS
// mount) and on the host (against the export directory).
//
// Every failure prints "fshelper: OP: ERRNO_NAME (message)" on stderr and
// exits 1, so the e2e can report the exact errno of the step.
//
//	fshelper punch FILE OFF LEN      fallocate(PUNCH_HOLE|KEEP_SIZE)  (DEALLOCATE)
//	fshelper alloc FILE OFF LEN      fallocate(0)                     (ALLOCATE)
//	fshelper seek FILE OFF hole|data lseek(SEEK_HOLE|SEEK_DATA), prints the offset (SEEK)
//	fshelper copy SRC DST            copy_file_range, whole file, DST created (COPY)
//	fshelper clone SRC DST           ioctl(FICLONE), DST created; removed on failure (CLONE)
//	fshelper locks FILE              POSIX lock conflicts between two processes (LOCK/LOCKT/LOCKU)
//	fshelper holdlock FILE HELD REL  write-lock [0,100), create HELD, wait for REL to exist, unlock (F_UNLCK must succeed)
//	fshelper trylock FILE            F_SETLK write [0,100) and unlock: exit 0 if granted, 3 if refused (EAGAIN/EACCES)
//	fshelper runas UID GID PROG ARGS  exec PROG as UID:GID, no supplementary groups
//	fshelper setxattr|getxattr|listxattr|removexattr FILE ...  user xattrs (xattr.go)
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

func die(op string, err error) {
	var en unix.Errno
	if errors.As(err, &en) {
		fmt.Fprintf(os.Stderr, "fshelper: %s: %s (%v)\n", op, unix.ErrnoName(en), en)
	} else {
		fmt.Fprintf(os.Stderr, "fshelper: %s: %v\n", op, err)
	}
	os.Exit(1)
}

func num(s string) int64 {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		die("bad number "+s, err)
	}
	return n
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: fshelper punch|alloc FILE OFF LEN | seek FILE OFF hole|data | copy|clone SRC DST | locks FILE | runas UID GID PROG ARGS... | setxattr FILE NAME VALUE [create|replace] | getxattr FILE NAME | listxattr FILE | removexattr FILE NAME")
	os.Exit(2)
}

func main() {
	if len(os.Args) < 3 {
		usage()
	}
	a := os.Args[2:]
	switch os.Args[1] {
	case "punch", "alloc":
		if len(a) != 3 {
			usage()
		}
		mode := uint32(0)
		if os.Args[1] == "punch" {
			mode = unix.FALLOC_FL_PUNCH_HOLE | unix.FALLOC_FL_KEEP_SIZE
		}
		fd, err := unix.Open(a[0], unix.O_RDWR|unix.O_CREAT, 0o644)
		if err != nil {
			die("open "+a[0], err)
		}
		if err := unix.Fallocate(fd, mode, num(a[1]), num(a[2])); err != nil {
			die("fallocate "+os.Args[1], err)
		}
		if err := unix.Close(fd); err != nil {
			die("close", err)
		}
	case "seek":
		if len(a) != 3 {
			usage()
		}
		whence := unix.SEEK_HOLE
		if a[2] == "data" {
			whence = unix.SEEK_DATA
		}
		fd, err := unix.Open(a[0], unix.O_RDONLY, 0)
		if err != nil {
			die("open "+a[0], err)
		}
		off, err := unix.Seek(fd, num(a[1]), whence)
		if err != nil {
			die("lseek "+a[2], err)
		}
		fmt.Println(off)
	case "copy", "clone":
		if len(a) != 2 {
			usage()
		}
		src, err := unix.Open(a[0], unix.O_RDONLY, 0)
		if err != nil {
			die("open "+a[0], err)
		}
		dst, err := unix.Open(a[1], unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC, 0o644)
		if err != nil {
			die("open "+a[1], err)
		}
		if os.Args[1] == "clone" {
			if err := unix.IoctlFileClone(dst, src); err != nil {
				unix.Close(dst)
				unix.Unlink(a[1])
				die("ioctl FICLONE", err)
			}
		} else {
			var st unix.Stat_t
			if err := unix.Fstat(src, &st); err != nil {
				die("fstat", err)
			}
			for left := st.Size; left > 0; {
				n, err := unix.CopyFileRange(src, nil, dst, nil, int(left), 0)
				if err != nil {
					die("copy_file_range", err)
				}
				if n == 0 {
					die("copy_file_range", fmt.Errorf("returned 0 with %d bytes left", left))
				}
				left -= int64(n)
			}
		}
		if err := unix.Close(dst); err != nil {
			die("close", err)
		}
	case "setxattr", "getxattr", "listxattr", "removexattr":
		xattrCmd(os.Args[1], a)
	case "locks":
		if len(a) != 1 {
			usage()
		}
		locks(a[0])
	case "holdlock":
		if len(a) != 3 {
			usage()
		}
		holdlock(a[0], a[1], a[2])
	case "trylock":
		if len(a) != 1 {
			usage()
		}
		trylock(a[0])
	case "runas":
		if len(a) < 3 {
			usage()
		}
		uid, gid := int(num(a[0])), int(num(a[1]))
		if err := unix.Setgroups(nil); err != nil {
			die("setgroups", err)
		}
		if err := unix.Setgid(gid); err != nil {
			die("setgid", err)
		}
		if err := unix.Setuid(uid); err != nil {
			die("setuid", err)
		}
		prog, err := exec.LookPath(a[2])
		if err != nil {
			die("exec "+a[2], err)
		}
		die("exec "+prog, unix.Exec(prog, a[2:], os.Environ()))
	case "lockchild":
		// Internal: run by "locks" as the second lock owner.
		if len(a) != 2 {
			usage()
		}
		lockchild(a[0], a[1])
	default:
		usage()
	}
}

func flock(typ int16, start, length int64) *unix.Flock_t {
	return &unix.Flock_t{Type: typ, Whence: 0, Start: start, Len: length}
}

// child runs "fshelper lockchild FILE WHAT" and fails unless it exits 0.
func child(file, what string, timeout time.Duration) {
	cmd := exec.Command("/proc/self/exe", "lockchild", file, what)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		die("start lock child", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			die("lock child "+what, err)
		}
	case <-time.After(timeout):
		cmd.Process.Kill()
		die("lock child "+what, fmt.Errorf("no result after %v", timeout))
	}
}

// locks: this process takes a write lock on [0,100) and a read lock on
// [1000,1100); a second process checks LOCKT and LOCK see the conflicts and
// the free ranges; then this process unlocks and the second one must get
// what was refused; finally a blocking lock (F_SETLKW) in the second process
// must be granted once this process lets go.
func locks(file string) {
	fd, err := unix.Open(file, unix.O_RDWR|unix.O_CREAT, 0o644)
	if err != nil {
		die("open "+file, err)
	}
	if err := unix.FcntlFlock(uintptr(fd), unix.F_SETLK, flock(unix.F_WRLCK, 0, 100)); err != nil {
		die("F_SETLK write [0,100)", err)
	}
	if err := unix.FcntlFlock(uintptr(fd), unix.F_SETLK, flock(unix.F_RDLCK, 1000, 100)); err != nil {
		die("F_SETLK read [1000,1100)", err)
	}
	child(file, "conflicts", 30*time.Second)
	if err := unix.FcntlFlock(uintptr(fd), unix.F_SETLK, flock(unix.F_UNLCK, 0, 0)); err != nil {
		die("F_SETLK unlock all", err)
	}
	child(file, "free", 30*time.Second)
	// Blocking: hold [0,100) again, start a child blocked on it, release.
	if err := unix.FcntlFlock(uintptr(fd), unix.F_SETLK, flock(unix.F_WRLCK, 0, 100)); err != nil {
		die("F_SETLK write [0,100) again", err)
	}
	cmd := exec.Command("/proc/self/exe", "lockchild", file, "wait")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		die("start lock child", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		die("blocking lock child", fmt.Errorf("finished while the lock was held: %v", err))
	case <-time.After(2 * time.Second):
	}
	if err := unix.FcntlFlock(uintptr(fd), unix.F_SETLK, flock(unix.F_UNLCK, 0, 0)); err != nil {
		die("F_SETLK unlock (blocking test)", err)
	}
	select {
	case err := <-done:
		if err != nil {
			die("blocking lock child", err)
		}
	case <-time.After(40 * time.Second):
		cmd.Process.Kill()
		die("blocking lock child", fmt.Errorf("F_SETLKW not granted 40s after the holder unlocked"))
	}
	unix.Close(fd)
	fmt.Println("locks ok")
}

func lockchild(file, what string) {
	fd, err := unix.Open(file, unix.O_RDWR, 0)
	if err != nil {
		die("child open "+file, err)
	}
	switch what {
	case "conflicts":
		fl := flock(unix.F_WRLCK, 50, 10)
		if err := unix.FcntlFlock(uintptr(fd), unix.F_GETLK, fl); err != nil {
			die("child F_GETLK [50,60)", err)
		}
		if fl.Type != unix.F_WRLCK {
			die("child F_GETLK [50,60)", fmt.Errorf("type %d, want F_WRLCK (%d): LOCKT missed the parent's write lock", fl.Type, unix.F_WRLCK))
		}
		err := unix.FcntlFlock(uintptr(fd), unix.F_SETLK, flock(unix.F_WRLCK, 0, 100))
		if err != unix.EAGAIN && err != unix.EACCES {
			die("child F_SETLK write [0,100) over the parent's write lock", fmt.Errorf("got %v, want EAGAIN", err))
		}
		err = unix.FcntlFlock(uintptr(fd), unix.F_SETLK, flock(unix.F_WRLCK, 1050, 10))
		if err != unix.EAGAIN && err != unix.EACCES {
			die("child F_SETLK write [1050,1060) over the parent's read lock", fmt.Errorf("got %v, want EAGAIN", err))
		}
		// Shared with the parent's read lock: granted.
		if err := unix.FcntlFlock(uintptr(fd), unix.F_SETLK, flock(unix.F_RDLCK, 1000, 100)); err != nil {
			die("child F_SETLK read [1000,1100) next to the parent's read lock", err)
		}
		// Free range.
		if err := unix.FcntlFlock(uintptr(fd), unix.F_SETLK, flock(unix.F_WRLCK, 200, 100)); err != nil {
			die("child F_SETLK write [200,300) (free)", err)
		}
		fl = flock(unix.F_WRLCK, 500, 10)
		if err := unix.FcntlFlock(uintptr(fd), unix.F_GETLK, fl); err != nil {
			die("child F_GETLK [500,510)", err)
		}
		if fl.Type != unix.F_UNLCK {
			die("child F_GETLK [500,510)", fmt.Errorf("type %d, want F_UNLCK: LOCKT saw a conflict on a free range", fl.Type))
		}
	case "free":
		if err := unix.FcntlFlock(uintptr(fd), unix.F_SETLK, flock(unix.F_WRLCK, 0, 2000)); err != nil {
			die("child F_SETLK write [0,2000) after the parent unlocked", err)
		}
	case "wait":
		if err := unix.FcntlFlock(uintptr(fd), unix.F_SETLKW, flock(unix.F_WRLCK, 0, 100)); err != nil {
			die("child F_SETLKW write [0,100)", err)
		}
	default:
		usage()
	}
	unix.Close(fd) // drops the locks
}

// holdlock holds a write lock on [0,100) of file until the file rel
// exists, then unlocks: the e2e restarts the server meanwhile, so the lock
// lives only if the client reclaimed it, and the unlock must still work.
func holdlock(file, held, rel string) {
	fd, err := unix.Open(file, unix.O_RDWR, 0)
	if err != nil {
		die("open "+file, err)
	}
	if err := unix.FcntlFlock(uintptr(fd), unix.F_SETLK, flock(unix.F_WRLCK, 0, 100)); err != nil {
		die("F_SETLK write [0,100)", err)
	}
	if err := os.WriteFile(held, nil, 0o644); err != nil {
		die("create "+held, err)
	}
	for deadline := time.Now().Add(10 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(rel); err == nil {
			break
		}
		if time.Now().After(deadline) {
			die("wait for "+rel, fmt.Errorf("not there after 10 minutes"))
		}
	}
	if err := unix.FcntlFlock(uintptr(fd), unix.F_SETLK, flock(unix.F_UNLCK, 0, 0)); err != nil {
		die("F_SETLK unlock", err)
	}
	if err := unix.Close(fd); err != nil {
		die("close", err)
	}
	fmt.Println("unlocked")
}

// trylock tries a write lock on [0,100) without waiting: exit 0 when
// granted (released again), 3 when another owner holds a conflicting lock.
func trylock(file string) {
	fd, err := unix.Open(file, unix.O_RDWR, 0)
	if err != nil {
		die("open "+file, err)
	}
	err = unix.FcntlFlock(uintptr(fd), unix.F_SETLK, flock(unix.F_WRLCK, 0, 100))
	if err == unix.EAGAIN || err == unix.EACCES {
		fmt.Println("denied")
		os.Exit(3)
	}
	if err != nil {
		die("F_SETLK write [0,100)", err)
	}
	if err := unix.FcntlFlock(uintptr(fd), unix.F_SETLK, flock(unix.F_UNLCK, 0, 0)); err != nil {
		die("F_SETLK unlock", err)
	}
	unix.Close(fd)
	fmt.Println("granted")
}
