package nfs

import (
	"encoding/binary"
	"errors"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// layoutXattr is the extended attribute of an export file that holds its
// FileLayout. The trusted.* namespace needs CAP_SYS_ADMIN to read or
// write, and the RFC 8276 xattr ops reach user.* only (op_xattr.go,
// xattrUserPrefix), so no NFS client can see or forge where a file's data
// lives.
const layoutXattr = "trusted.nfsd-uring.layout"

// layoutVersion is the first byte of an encoded layout without striping;
// layoutVersionStriped that of one with (pnfs_stripe.go). A decoder
// meeting another version refuses the layout (the file is then served as
// one without a layout would be, and the refusal logged): a layout it
// cannot read must never be guessed at.
const (
	layoutVersion        = 1
	layoutVersionStriped = 2
)

// maxMirrors bounds the data files of a stored layout (mirrors times
// stripes); RFC 8435 sets no limit, the Linux client handles up to 16
// mirrors per layout (ff_layout_alloc_lseg).
const maxMirrors = 16

// maxDataName bounds the data files' name (FileLayout.Name): dataName
// makes names of at most 4 hex numbers.
const maxDataName = 128

// layoutXattrMax bounds an encoded layout: version, uid, gid, stripe
// unit, name, width, mirror count and per data file a device id and a
// handle.
const layoutXattrMax = 1 + 4 + 4 + 8 + 1 + maxDataName + 1 + 1 + maxMirrors*(nfs4.DeviceIDSize+1+nfs4.FHSize)

var errBadLayoutXattr = errors.New("nfs: malformed layout attribute")

// encodeLayout writes l in the layoutXattr format. Version 1, a layout
// without striping (Width 0 or 1):
//
//	version(1) uid(4) gid(4) stripe_unit(8) name_len(1) name(name_len)
//	mirrors(1) { device_id(16) fh_len(1) fh(fh_len) } * mirrors
//
// version 2, a striped one (Width 2 or more, a stripe unit):
//
//	version(2) uid(4) gid(4) stripe_unit(8) name_len(1) name(name_len)
//	width(1) mirrors(1) { device_id(16) fh_len(1) fh(fh_len) } * mirrors*width
//
// data files mirror after mirror, all big-endian.
func encodeLayout(l FileLayout) ([]byte, error) {
	if len(l.Mirrors) == 0 || len(l.Mirrors) > maxMirrors || l.Name == "" || len(l.Name) > maxDataName || !l.validStriping() {
		return nil, errBadLayoutXattr
	}
	b := make([]byte, 0, layoutXattrMax)
	if l.Striped() {
		b = append(b, layoutVersionStriped)
	} else {
		b = append(b, layoutVersion)
	}
	b = binary.BigEndian.AppendUint32(b, l.UID)
	b = binary.BigEndian.AppendUint32(b, l.GID)
	b = binary.BigEndian.AppendUint64(b, l.StripeUnit)
	b = append(b, byte(len(l.Name)))
	b = append(b, l.Name...)
	if l.Striped() {
		b = append(b, byte(l.Width))
	}
	b = append(b, byte(l.MirrorCount()))
	for _, m := range l.Mirrors {
		if len(m.FH) == 0 || len(m.FH) > nfs4.FHSize {
			return nil, errBadLayoutXattr
		}
		b = append(b, m.Device[:]...)
		b = append(b, byte(len(m.FH)))
		b = append(b, m.FH...)
	}
	return b, nil
}

// decodeLayout reads what encodeLayout wrote, and refuses anything else:
// another version, no mirror or too many data files, a striped layout
// (version 2) with fewer than two stripes or no stripe unit, an empty or
// oversized handle, bytes missing or left over. The result owns its
// memory.
func decodeLayout(b []byte) (FileLayout, error) {
	var l FileLayout
	if len(b) < 18 || (b[0] != layoutVersion && b[0] != layoutVersionStriped) {
		return l, errBadLayoutXattr
	}
	striped := b[0] == layoutVersionStriped
	l.UID = binary.BigEndian.Uint32(b[1:])
	l.GID = binary.BigEndian.Uint32(b[5:])
	l.StripeUnit = binary.BigEndian.Uint64(b[9:])
	nameLen := int(b[17])
	b = b[18:]
	if nameLen == 0 || nameLen > maxDataName || len(b) < nameLen+1 {
		return FileLayout{}, errBadLayoutXattr
	}
	l.Name = string(b[:nameLen])
	b = b[nameLen:]
	width := 1
	if striped {
		width = int(b[0])
		b = b[1:]
		if width < 2 || l.StripeUnit == 0 || len(b) < 1 {
			return FileLayout{}, errBadLayoutXattr
		}
		l.Width = width
	}
	n := int(b[0]) * width
	if n == 0 || n > maxMirrors {
		return FileLayout{}, errBadLayoutXattr
	}
	b = b[1:]
	l.Mirrors = make([]DSFile, n)
	for i := range l.Mirrors {
		if len(b) < nfs4.DeviceIDSize+1 {
			return FileLayout{}, errBadLayoutXattr
		}
		m := &l.Mirrors[i]
		copy(m.Device[:], b)
		fhLen := int(b[nfs4.DeviceIDSize])
		b = b[nfs4.DeviceIDSize+1:]
		if fhLen == 0 || fhLen > nfs4.FHSize || len(b) < fhLen {
			return FileLayout{}, errBadLayoutXattr
		}
		m.FH = append([]byte(nil), b[:fhLen]...)
		b = b[fhLen:]
	}
	if len(b) != 0 {
		return FileLayout{}, errBadLayoutXattr
	}
	return l, nil
}

// readLayoutXattr reads the layout stored on the file open as fd: nil
// and no error when it has none.
func readLayoutXattr(fd int) (*FileLayout, error) {
	buf := make([]byte, layoutXattrMax)
	n, err := unix.Fgetxattr(fd, layoutXattr, buf)
	switch {
	case err == unix.ENODATA || err == unix.EOPNOTSUPP:
		return nil, nil
	case err != nil:
		return nil, err
	}
	l, err := decodeLayout(buf[:n])
	if err != nil {
		return nil, err
	}
	return &l, nil
}

// writeLayoutXattr stores l on the file open as fd.
func writeLayoutXattr(fd int, l FileLayout) error {
	b, err := encodeLayout(l)
	if err != nil {
		return err
	}
	return unix.Fsetxattr(fd, layoutXattr, b, 0)
}
