package client

import (
	"fmt"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Time is nfstime4.
type Time struct {
	Sec  int64
	Nsec uint32
}

// Fsid is fsid4.
type Fsid struct{ Major, Minor uint64 }

// Attrs holds decoded fattr4 values. Mask says which are present.
type Attrs struct {
	Mask            nfs4.Bitmap
	Supported       nfs4.Bitmap
	Type            uint32
	FhExpireType    uint32
	Change          uint64
	Size            uint64
	Fsid            Fsid
	LeaseTime       uint32
	RdattrError     uint32
	FH              []byte
	Fileid          uint64
	Maxfilesize     uint64
	Maxread         uint64
	Maxwrite        uint64
	Mode            uint32
	Numlinks        uint32
	Owner           string
	OwnerGroup      string
	Rawdev          [2]uint32
	SpaceUsed       uint64
	Atime           Time
	Ctime           Time // time_metadata
	Mtime           Time
	MountedOnFileid uint64
	ACL             []ACE  // acl (acl.go)
	ACLSupport      uint32 // aclsupport
}

// attribute value shapes, for decoding attributes we only skip.
const (
	kU32 = iota + 1
	kU64
	kBool
	kBitmap
	kString
	kTime
	kU32List
	kACL
)

var attrKinds = map[int]int{
	nfs4.AttrLinkSupport: kBool, nfs4.AttrSymlinkSupport: kBool, nfs4.AttrNamedAttr: kBool,
	nfs4.AttrUniqueHandles: kBool, nfs4.AttrACL: kACL, nfs4.AttrACLSupport: kU32,
	nfs4.AttrArchive: kBool, nfs4.AttrCansettime: kBool, nfs4.AttrCaseInsensitive: kBool,
	nfs4.AttrCasePreserving: kBool, nfs4.AttrChownRestricted: kBool,
	nfs4.AttrFilesAvail: kU64, nfs4.AttrFilesFree: kU64, nfs4.AttrFilesTotal: kU64,
	nfs4.AttrHidden: kBool, nfs4.AttrHomogeneous: kBool, nfs4.AttrMaxlink: kU32,
	nfs4.AttrMaxname: kU32, nfs4.AttrMimetype: kString, nfs4.AttrNoTrunc: kBool,
	nfs4.AttrQuotaAvailHard: kU64, nfs4.AttrQuotaAvailSoft: kU64, nfs4.AttrQuotaUsed: kU64,
	nfs4.AttrSpaceAvail: kU64, nfs4.AttrSpaceFree: kU64, nfs4.AttrSpaceTotal: kU64,
	nfs4.AttrSystem: kBool, nfs4.AttrTimeBackup: kTime, nfs4.AttrTimeCreate: kTime,
	nfs4.AttrTimeDelta: kTime, nfs4.AttrFsLayoutType: kU32List, nfs4.AttrLayoutBlksize: kU32,
	nfs4.AttrSuppattrExclcreat: kBitmap, nfs4.AttrCloneBlksize: kU32, nfs4.AttrSpaceFreed: kU64,
	nfs4.AttrChangeAttrType: kU32, nfs4.AttrXattrSupport: kBool,
}

// DecodeFattr reads a fattr4 (bitmap and attribute values). Strings and
// byte fields are copied, so the result outlives the input.
func DecodeFattr(d *xdr.Decoder) (Attrs, error) {
	mask := nfs4.DecodeBitmap(d)
	vals := d.Opaque(1 << 20)
	if err := d.Err(); err != nil {
		return Attrs{}, fmt.Errorf("fattr4: %w", err)
	}
	return decodeAttrVals(mask, xdr.NewDecoder(vals))
}

func decodeAttrVals(mask nfs4.Bitmap, d *xdr.Decoder) (Attrs, error) {
	a := Attrs{Mask: mask}
	for n := 0; n < len(mask)*32; n++ {
		if !mask.Has(n) {
			continue
		}
		if !a.decodeOne(n, d) {
			return a, fmt.Errorf("fattr4: cannot decode attribute %d", n)
		}
		if err := d.Err(); err != nil {
			return a, fmt.Errorf("fattr4: attribute %d: %w", n, err)
		}
	}
	return a, nil
}

// decodeOne decodes attribute n into a; false if n is unknown.
func (a *Attrs) decodeOne(n int, d *xdr.Decoder) bool {
	switch n {
	case nfs4.AttrSupportedAttrs:
		a.Supported = nfs4.DecodeBitmap(d)
	case nfs4.AttrType:
		a.Type = d.Uint32()
	case nfs4.AttrFhExpireType:
		a.FhExpireType = d.Uint32()
	case nfs4.AttrChange:
		a.Change = d.Uint64()
	case nfs4.AttrSize:
		a.Size = d.Uint64()
	case nfs4.AttrFsid:
		a.Fsid = Fsid{d.Uint64(), d.Uint64()}
	case nfs4.AttrLeaseTime:
		a.LeaseTime = d.Uint32()
	case nfs4.AttrRdattrError:
		a.RdattrError = d.Uint32()
	case nfs4.AttrFilehandle:
		a.FH = clone(d.Opaque(nfs4.FHSize))
	case nfs4.AttrFileid:
		a.Fileid = d.Uint64()
	case nfs4.AttrMaxfilesize:
		a.Maxfilesize = d.Uint64()
	case nfs4.AttrMaxread:
		a.Maxread = d.Uint64()
	case nfs4.AttrMaxwrite:
		a.Maxwrite = d.Uint64()
	case nfs4.AttrMode:
		a.Mode = d.Uint32()
	case nfs4.AttrNumlinks:
		a.Numlinks = d.Uint32()
	case nfs4.AttrOwner:
		a.Owner = string(d.String(nfs4.OpaqueLimit))
	case nfs4.AttrOwnerGroup:
		a.OwnerGroup = string(d.String(nfs4.OpaqueLimit))
	case nfs4.AttrRawdev:
		a.Rawdev = [2]uint32{d.Uint32(), d.Uint32()}
	case nfs4.AttrSpaceUsed:
		a.SpaceUsed = d.Uint64()
	case nfs4.AttrTimeAccess:
		a.Atime = decodeTime(d)
	case nfs4.AttrTimeMetadata:
		a.Ctime = decodeTime(d)
	case nfs4.AttrTimeModify:
		a.Mtime = decodeTime(d)
	case nfs4.AttrMountedOnFileid:
		a.MountedOnFileid = d.Uint64()
	case nfs4.AttrACL:
		a.ACL = DecodeACL(d)
	case nfs4.AttrACLSupport:
		a.ACLSupport = d.Uint32()
	default:
		return skipAttr(attrKinds[n], d)
	}
	return true
}

func decodeTime(d *xdr.Decoder) Time { return Time{d.Int64(), d.Uint32()} }

func skipAttr(kind int, d *xdr.Decoder) bool {
	switch kind {
	case kU32, kBool:
		d.Uint32()
	case kU64:
		d.Uint64()
	case kTime:
		d.Skip(12)
	case kBitmap:
		nfs4.DecodeBitmap(d)
	case kString:
		d.Opaque(1 << 16)
	case kU32List:
		d.Skip(4 * d.ArrayLen(1<<10, 4))
	case kACL:
		for range d.ArrayLen(1<<16, 16) {
			d.Skip(12)
			d.Opaque(nfs4.OpaqueLimit)
		}
	default:
		return false
	}
	return true
}

// EncodeFattr writes a fattr4 for the attributes in mask that Attrs can
// express (used by tests to build replies; later by SETATTR and CREATE).
func EncodeFattr(e *xdr.Encoder, a *Attrs) {
	a.Mask.Encode(e)
	lenPos := e.Reserve()
	start := e.Pos()
	for n := 0; n < len(a.Mask)*32; n++ {
		if a.Mask.Has(n) {
			a.encodeOne(n, e)
		}
	}
	e.Patch(lenPos, uint32(e.Pos()-start))
}

func (a *Attrs) encodeOne(n int, e *xdr.Encoder) {
	switch n {
	case nfs4.AttrSupportedAttrs:
		a.Supported.Encode(e)
	case nfs4.AttrType:
		e.Uint32(a.Type)
	case nfs4.AttrChange:
		e.Uint64(a.Change)
	case nfs4.AttrSize:
		e.Uint64(a.Size)
	case nfs4.AttrFsid:
		e.Uint64(a.Fsid.Major)
		e.Uint64(a.Fsid.Minor)
	case nfs4.AttrFileid:
		e.Uint64(a.Fileid)
	case nfs4.AttrMode:
		e.Uint32(a.Mode)
	case nfs4.AttrNumlinks:
		e.Uint32(a.Numlinks)
	case nfs4.AttrOwner:
		e.String(a.Owner)
	case nfs4.AttrOwnerGroup:
		e.String(a.OwnerGroup)
	case nfs4.AttrSpaceUsed:
		e.Uint64(a.SpaceUsed)
	case nfs4.AttrTimeAccess, nfs4.AttrTimeMetadata, nfs4.AttrTimeModify:
		t := map[int]Time{nfs4.AttrTimeAccess: a.Atime, nfs4.AttrTimeMetadata: a.Ctime, nfs4.AttrTimeModify: a.Mtime}[n]
		e.Int64(t.Sec)
		e.Uint32(t.Nsec)
	case nfs4.AttrMountedOnFileid:
		e.Uint64(a.MountedOnFileid)
	case nfs4.AttrACL:
		EncodeACL(e, a.ACL)
	case nfs4.AttrACLSupport:
		e.Uint32(a.ACLSupport)
	default:
		panic(fmt.Sprintf("client: EncodeFattr cannot encode attribute %d", n))
	}
}

// StandardAttrs is the bitmap Getattr callers usually want.
var StandardAttrs = nfs4.BitmapOf(
	nfs4.AttrType, nfs4.AttrChange, nfs4.AttrSize, nfs4.AttrFsid, nfs4.AttrFileid,
	nfs4.AttrMode, nfs4.AttrNumlinks, nfs4.AttrOwner, nfs4.AttrOwnerGroup,
	nfs4.AttrSpaceUsed, nfs4.AttrTimeAccess, nfs4.AttrTimeMetadata, nfs4.AttrTimeModify,
	nfs4.AttrMountedOnFileid,
)
