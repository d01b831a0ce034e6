package nfs

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// POSIX ACLs on disk: the system.posix_acl_access and
// system.posix_acl_default extended attributes, in the kernel's
// posix_acl_xattr format (include/uapi/linux/posix_acl_xattr.h): a
// little-endian u32 version (2), then per entry u16 tag, u16 perm, u32
// id. They are read and written through the /proc link of the file's
// confined O_PATH descriptor, as op_xattr.go does, and written as the
// caller (asCaller): the kernel allows only the owner (or a caller with
// CAP_FOWNER, which the switch takes away) to set them, and updates the
// mode as it does for setfacl.

const (
	xattrPosixACLAccess  = "system.posix_acl_access"
	xattrPosixACLDefault = "system.posix_acl_default"

	posixACLXattrVersion = 2
	posixACLHeaderSize   = 4
	posixACLEntrySize    = 8
	// posixACLMaxEntries bounds what is decoded (the kernel's limit for
	// an xattr value of XATTR_SIZE_MAX).
	posixACLMaxEntries = (xattrSizeMax - posixACLHeaderSize) / posixACLEntrySize
)

// decodePosixXattr reads a posix_acl_xattr value and checks it as
// posix_acl_valid would.
func decodePosixXattr(b []byte) (pACL, error) {
	if len(b) < posixACLHeaderSize || (len(b)-posixACLHeaderSize)%posixACLEntrySize != 0 {
		return nil, errPosixInvalid
	}
	if binary.LittleEndian.Uint32(b) != posixACLXattrVersion {
		return nil, errPosixInvalid
	}
	n := (len(b) - posixACLHeaderSize) / posixACLEntrySize
	if n > posixACLMaxEntries {
		return nil, errPosixInvalid
	}
	p := make(pACL, n)
	for i := range p {
		e := b[posixACLHeaderSize+i*posixACLEntrySize:]
		p[i] = posixEntry{
			tag:  binary.LittleEndian.Uint16(e),
			perm: binary.LittleEndian.Uint16(e[2:]),
			id:   binary.LittleEndian.Uint32(e[4:]),
		}
		if p[i].tag != aclUser && p[i].tag != aclGroup {
			p[i].id = aclUndefinedID
		}
	}
	if err := p.valid(); err != nil {
		return nil, err
	}
	return p, nil
}

// encodePosixXattr writes p in posix_acl_xattr format.
func encodePosixXattr(p pACL) []byte {
	b := make([]byte, posixACLHeaderSize+len(p)*posixACLEntrySize)
	binary.LittleEndian.PutUint32(b, posixACLXattrVersion)
	for i, e := range p {
		o := b[posixACLHeaderSize+i*posixACLEntrySize:]
		binary.LittleEndian.PutUint16(o, e.tag)
		binary.LittleEndian.PutUint16(o[2:], e.perm)
		id := e.id
		if e.tag != aclUser && e.tag != aclGroup {
			id = aclUndefinedID
		}
		binary.LittleEndian.PutUint32(o[4:], id)
	}
	return b
}

// readPosixACL reads one POSIX ACL of the file at path (a /proc link);
// nil when it has none (or the filesystem keeps none).
func readPosixACL(path, name string) (pACL, error) {
	b, err := readSized(xattrSizeMax, func(buf []byte) (int, error) {
		return unix.Getxattr(path, name, buf)
	})
	switch err {
	case nil:
	case unix.ENODATA, unix.EOPNOTSUPP:
		return nil, nil
	default:
		return nil, err
	}
	return decodePosixXattr(b)
}

// fileNFS4ACL is the NFSv4 ACL of the file open as fd (O_PATH) whose
// attributes are st, as nfsd4_get_nfs4_acl: from its access ACL, or its
// mode, and for a directory its default ACL. A symlink has no ACLs of its
// own (its mode stands).
func fileNFS4ACL(fd int, st *unix.Stat_t) ([]ace, error) {
	dir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return posixToNFS4(posixFromMode(st.Mode), nil, false), nil
	}
	path := "/proc/self/fd/" + itoa(fd)
	acc, err := readPosixACL(path, xattrPosixACLAccess)
	if err != nil {
		return nil, err
	}
	if acc == nil {
		acc = posixFromMode(st.Mode)
	}
	var def pACL
	if dir {
		if def, err = readPosixACL(path, xattrPosixACLDefault); err != nil {
			return nil, err
		}
	}
	return posixToNFS4(acc, def, dir), nil
}

// setPosixACLs sets the access ACL, and for a directory the default ACL
// (nil: removed), of the file at path (a /proc link), as the thread's
// current (the caller's) credentials. The kernel turns an access ACL that
// a mode can say into that mode.
func setPosixACLs(path string, acc, def pACL, dir bool) error {
	if err := unix.Setxattr(path, xattrPosixACLAccess, encodePosixXattr(acc), 0); err != nil {
		return err
	}
	if !dir {
		return nil
	}
	if def == nil {
		if err := unix.Removexattr(path, xattrPosixACLDefault); err != nil && err != unix.ENODATA {
			return err
		}
		return nil
	}
	return unix.Setxattr(path, xattrPosixACLDefault, encodePosixXattr(def), 0)
}

// inheritsACL reports whether the directory open as dirfd has a default
// ACL. A file created in it got its mode from the create mode and that
// ACL, with no umask (posix_acl_create), so the mode is not set again
// after the create: knfsd's nfsd_create_setattr leaves it too, and a
// chmod to the requested mode would widen what the ACL gave.
func inheritsACL(dirfd int) bool {
	n, err := unix.Getxattr("/proc/self/fd/"+itoa(dirfd), xattrPosixACLDefault, nil)
	return err == nil && n > 0
}
