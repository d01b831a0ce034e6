package nfs

import (
	"errors"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

func joinRel(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// parentRel returns the parent of rel, "." for top-level names.
func parentRel(rel string) string {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "."
	}
	return rel[:i]
}

// decodeName reads a component4 (LOOKUP, CREATE, OPEN, REMOVE, RENAME,
// LINK, SECINFO). XDR gives it no bound, so any length that fits in the
// request decodes, and checkName answers NFS4ERR_NAMETOOLONG past
// NFS4_MAXNAMLEN, as knfsd does (a 4,000-byte name was NFS4ERR_BADXDR
// when decoding stopped at 1,024 bytes). A length past the end of the
// request still fails to decode: NFS4ERR_BADXDR.
func decodeName(d *xdr.Decoder) []byte { return d.Opaque(d.Remaining()) }

// checkName validates a component name from the wire.
func checkName(name []byte) nfs4.Status {
	if len(name) == 0 {
		return nfs4.ErrInval
	}
	if len(name) > nfs4.MaxNameLen {
		return nfs4.ErrNametoolong
	}
	if string(name) == "." || string(name) == ".." {
		return nfs4.ErrBadname
	}
	for _, c := range name {
		if c == '/' || c == 0 {
			return nfs4.ErrBadchar
		}
	}
	return nfs4.OK
}

// errno maps a syscall error to an NFS status.
func errno(err error) nfs4.Status {
	var en unix.Errno
	if !errors.As(err, &en) {
		if se, ok := err.(statusErr); ok {
			return nfs4.Status(se) // acl_attr.go
		}
		if errors.Is(err, errStale) {
			return nfs4.ErrStale
		}
		if errors.Is(err, errNotRegular) {
			return nfs4.ErrWrongType
		}
		return nfs4.ErrIO
	}
	switch en {
	case unix.EPERM:
		return nfs4.ErrPerm
	case unix.ENOENT:
		return nfs4.ErrNoent
	case unix.EACCES:
		return nfs4.ErrAccess
	case unix.EEXIST:
		return nfs4.ErrExist
	case unix.EXDEV:
		return nfs4.ErrXdev
	case unix.ENOTDIR:
		return nfs4.ErrNotdir
	case unix.EISDIR:
		return nfs4.ErrIsdir
	case unix.EINVAL:
		return nfs4.ErrInval
	case unix.EFBIG:
		return nfs4.ErrFbig
	case unix.ENOSPC:
		return nfs4.ErrNospc
	case unix.EROFS:
		return nfs4.ErrRofs
	case unix.EMLINK:
		return nfs4.ErrMlink
	case unix.ENAMETOOLONG:
		return nfs4.ErrNametoolong
	case unix.ENOTEMPTY:
		return nfs4.ErrNotempty
	case unix.EDQUOT:
		return nfs4.ErrDquot
	case unix.ESTALE:
		return nfs4.ErrStale
	case unix.ELOOP:
		return nfs4.ErrSymlink
	case unix.ENXIO:
		return nfs4.ErrNxio
	case unix.EOPNOTSUPP:
		return nfs4.ErrNotsupp
	case unix.EWOULDBLOCK:
		// An open held off by a lease being broken (vfs_lease.go).
		return nfs4.ErrDelay
	}
	return nfs4.ErrIO
}
