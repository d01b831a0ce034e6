package nfs4

// pNFS (RFC 8881 sections 3.3.13-3.3.21, 12, 18.40-18.44, 20.3) and the
// flexible-files layout (RFC 8435), with the NFSv4.2 LAYOUTERROR and
// LAYOUTSTATS (RFC 7862 sections 15.6, 15.7).

// layouttype4.
const (
	LayoutNFSv41Files = 1
	LayoutOSD2Objects = 2
	LayoutBlockVolume = 3
	LayoutFlexFiles   = 4 // LAYOUT4_FLEX_FILES, RFC 8435 section 1.1
)

// layoutiomode4.
const (
	LayoutIOModeRead = 1
	LayoutIOModeRW   = 2
	LayoutIOModeAny  = 3
)

// layoutreturn_type4, and layoutrecall_type4 of the same values.
const (
	LayoutReturnFile = 1
	LayoutReturnFSID = 2
	LayoutReturnAll  = 3
)

// ff_flags4 (RFC 8435 section 5.1).
const (
	FFFlagsNoLayoutcommit = 0x00000001
	FFFlagsNoIOThruMDS    = 0x00000002
	FFFlagsNoReadIO       = 0x00000004
	FFFlagsWriteOneMirror = 0x00000008
)

// notify_deviceid_type4 (RFC 8881 section 20.12), bits of GETDEVICEINFO's
// gdia_notify_types.
const (
	NotifyDeviceIDChange = 1
	NotifyDeviceIDDelete = 2
)

// NFS4_UINT64_MAX: a layout's length to the end of the file.
const LengthToEOF = ^uint64(0)

// pNFS status codes (nfsstat4).
const (
	ErrBadIOMode         Status = 10049
	ErrBadLayout         Status = 10050
	ErrLayoutTryLater    Status = 10058
	ErrLayoutUnavailable Status = 10059
	ErrNoMatchingLayout  Status = 10060
	ErrRecallConflict    Status = 10061
	ErrUnknownLayoutType Status = 10062
	ErrReturnConflict    Status = 10086
	ErrPNFSIOHole        Status = 10075
	ErrPNFSNoLayout      Status = 10080
)

// Callback operations of pNFS (RFC 8881 section 20).
const (
	OpCBLayoutrecall   = 5
	OpCBRecallAny      = 8
	OpCBNotifyDeviceID = 14
)

// Netid of a TCP data server address (netaddr4's na_r_netid).
const NetidTCP = "tcp"
