// Package nfs4 holds the NFSv4.1/4.2 and ONC RPC wire constants and small wire
// types shared by the server (package nfs) and the in-repo client. Numbers are
// from RFC 5531 (RPC), RFC 8881 (NFSv4.1) and RFC 7862 (NFSv4.2).
package nfs4

// ONC RPC (RFC 5531).
const (
	RPCVersion = 2

	MsgCall  = 0
	MsgReply = 1

	MsgAccepted = 0
	MsgDenied   = 1

	AcceptSuccess      = 0
	AcceptProgUnavail  = 1
	AcceptProgMismatch = 2
	AcceptProcUnavail  = 3
	AcceptGarbageArgs  = 4
	AcceptSystemErr    = 5

	RejectRPCMismatch = 0
	RejectAuthError   = 1

	AuthOK           = 0
	AuthBadCred      = 1
	AuthRejectedCred = 2
	AuthBadVerf      = 3
	AuthRejectedVerf = 4
	AuthTooWeak      = 5
	// RPCSEC_GSS's (RFC 2203 section 5.3.3.3).
	AuthGSSCredProblem = 13
	AuthGSSCtxProblem  = 14

	AuthNone = 0
	AuthSys  = 1
	AuthGSS  = 6 // RPCSEC_GSS (RFC 2203)

	ProgramNFS   = 100003
	NFSVersion   = 4
	ProcNull     = 0
	ProcCompound = 1

	// MaxAuthBytes is the RFC 5531 limit on a credential or verifier body.
	MaxAuthBytes = 400
)

// Operation numbers.
const (
	OpAccess             = 3
	OpClose              = 4
	OpCommit             = 5
	OpCreate             = 6
	OpDelegPurge         = 7
	OpDelegReturn        = 8
	OpGetattr            = 9
	OpGetfh              = 10
	OpLink               = 11
	OpLock               = 12
	OpLockt              = 13
	OpLocku              = 14
	OpLookup             = 15
	OpLookupp            = 16
	OpNverify            = 17
	OpOpen               = 18
	OpOpenattr           = 19
	OpOpenConfirm        = 20
	OpOpenDowngrade      = 21
	OpPutfh              = 22
	OpPutpubfh           = 23
	OpPutrootfh          = 24
	OpRead               = 25
	OpReaddir            = 26
	OpReadlink           = 27
	OpRemove             = 28
	OpRename             = 29
	OpRenew              = 30
	OpRestorefh          = 31
	OpSavefh             = 32
	OpSecinfo            = 33
	OpSetattr            = 34
	OpSetclientid        = 35
	OpSetclientidConfirm = 36
	OpVerify             = 37
	OpWrite              = 38
	OpReleaseLockowner   = 39
	OpBackchannelCtl     = 40
	OpBindConnToSession  = 41
	OpExchangeID         = 42
	OpCreateSession      = 43
	OpDestroySession     = 44
	OpFreeStateid        = 45
	OpGetDirDelegation   = 46
	OpGetdeviceinfo      = 47
	OpGetdevicelist      = 48
	OpLayoutcommit       = 49
	OpLayoutget          = 50
	OpLayoutreturn       = 51
	OpSecinfoNoName      = 52
	OpSequence           = 53
	OpSetSSV             = 54
	OpTestStateid        = 55
	OpWantDelegation     = 56
	OpDestroyClientid    = 57
	OpReclaimComplete    = 58
	OpAllocate           = 59
	OpCopy               = 60
	OpCopyNotify         = 61
	OpDeallocate         = 62
	OpIOAdvise           = 63
	OpLayouterror        = 64
	OpLayoutstats        = 65
	OpOffloadCancel      = 66
	OpOffloadStatus      = 67
	OpReadPlus           = 68
	OpSeek               = 69
	OpWriteSame          = 70
	OpClone              = 71
	OpGetxattr           = 72
	OpSetxattr           = 73
	OpListxattrs         = 74
	OpRemovexattr        = 75
	OpIllegal            = 10044
)

// Status is an NFSv4 status code (nfsstat4, RFC 8881 section 15).
type Status uint32

// Status codes (nfsstat4).
const (
	OK                   Status = 0
	ErrPerm              Status = 1
	ErrNoent             Status = 2
	ErrIO                Status = 5
	ErrNxio              Status = 6
	ErrAccess            Status = 13
	ErrExist             Status = 17
	ErrXdev              Status = 18
	ErrNotdir            Status = 20
	ErrIsdir             Status = 21
	ErrInval             Status = 22
	ErrFbig              Status = 27
	ErrNospc             Status = 28
	ErrRofs              Status = 30
	ErrMlink             Status = 31
	ErrNametoolong       Status = 63
	ErrNotempty          Status = 66
	ErrDquot             Status = 69
	ErrStale             Status = 70
	ErrBadhandle         Status = 10001
	ErrBadCookie         Status = 10003
	ErrNotsupp           Status = 10004
	ErrToosmall          Status = 10005
	ErrServerfault       Status = 10006
	ErrBadtype           Status = 10007
	ErrDelay             Status = 10008
	ErrSame              Status = 10009
	ErrDenied            Status = 10010
	ErrExpired           Status = 10011
	ErrLocked            Status = 10012
	ErrGrace             Status = 10013
	ErrFhexpired         Status = 10014
	ErrShareDenied       Status = 10015
	ErrWrongsec          Status = 10016
	ErrClidInuse         Status = 10017
	ErrResource          Status = 10018
	ErrMoved             Status = 10019
	ErrNofilehandle      Status = 10020
	ErrMinorVersMismatch Status = 10021
	ErrStaleClientid     Status = 10022
	ErrStaleStateid      Status = 10023
	ErrOldStateid        Status = 10024
	ErrBadStateid        Status = 10025
	ErrBadSeqid          Status = 10026
	ErrNotSame           Status = 10027
	ErrLockRange         Status = 10028
	ErrSymlink           Status = 10029
	ErrRestorefh         Status = 10030
	ErrAttrnotsupp       Status = 10032
	ErrNoGrace           Status = 10033
	ErrReclaimBad        Status = 10034
	ErrBadXDR            Status = 10036
	ErrLocksHeld         Status = 10037
	ErrOpenmode          Status = 10038
	ErrBadowner          Status = 10039
	ErrBadchar           Status = 10040
	ErrBadname           Status = 10041
	ErrBadRange          Status = 10042
	ErrLockNotsupp       Status = 10043
	ErrOpIllegal         Status = 10044
	ErrDeadlock          Status = 10045
	ErrFileOpen          Status = 10046
	ErrAdminRevoked      Status = 10047
	ErrBadsession        Status = 10052
	ErrBadslot           Status = 10053
	ErrCompleteAlready   Status = 10054
	ErrConnNotBound      Status = 10055
	ErrSeqMisordered     Status = 10063
	ErrSequencePos       Status = 10064
	ErrReqTooBig         Status = 10065
	ErrRepTooBig         Status = 10066
	ErrRepTooBigToCache  Status = 10067
	ErrRetryUncachedRep  Status = 10068
	ErrTooManyOps        Status = 10070
	ErrOpNotInSession    Status = 10071
	ErrClientidBusy      Status = 10074
	ErrSeqFalseRetry     Status = 10076
	ErrBadHighSlot       Status = 10077
	ErrDeadsession       Status = 10078
	ErrNotOnlyOp         Status = 10081
	ErrWrongCred         Status = 10082
	ErrWrongType         Status = 10083
	ErrUnionNotsupp      Status = 10090
	ErrOffloadNoReqs     Status = 10094
	ErrNoxattr           Status = 10095 // RFC 8276
	ErrXattr2big         Status = 10096 // RFC 8276
)

// File types (nfs_ftype4).
const (
	NF4REG       = 1
	NF4DIR       = 2
	NF4BLK       = 3
	NF4CHR       = 4
	NF4LNK       = 5
	NF4SOCK      = 6
	NF4FIFO      = 7
	NF4ATTRDIR   = 8
	NF4NAMEDATTR = 9
)

// Attribute numbers.
const (
	AttrSupportedAttrs    = 0
	AttrType              = 1
	AttrFhExpireType      = 2
	AttrChange            = 3
	AttrSize              = 4
	AttrLinkSupport       = 5
	AttrSymlinkSupport    = 6
	AttrNamedAttr         = 7
	AttrFsid              = 8
	AttrUniqueHandles     = 9
	AttrLeaseTime         = 10
	AttrRdattrError       = 11
	AttrACL               = 12
	AttrACLSupport        = 13
	AttrArchive           = 14
	AttrCansettime        = 15
	AttrCaseInsensitive   = 16
	AttrCasePreserving    = 17
	AttrChownRestricted   = 18
	AttrFilehandle        = 19
	AttrFileid            = 20
	AttrFilesAvail        = 21
	AttrFilesFree         = 22
	AttrFilesTotal        = 23
	AttrFsLocations       = 24
	AttrHidden            = 25
	AttrHomogeneous       = 26
	AttrMaxfilesize       = 27
	AttrMaxlink           = 28
	AttrMaxname           = 29
	AttrMaxread           = 30
	AttrMaxwrite          = 31
	AttrMimetype          = 32
	AttrMode              = 33
	AttrNoTrunc           = 34
	AttrNumlinks          = 35
	AttrOwner             = 36
	AttrOwnerGroup        = 37
	AttrQuotaAvailHard    = 38
	AttrQuotaAvailSoft    = 39
	AttrQuotaUsed         = 40
	AttrRawdev            = 41
	AttrSpaceAvail        = 42
	AttrSpaceFree         = 43
	AttrSpaceTotal        = 44
	AttrSpaceUsed         = 45
	AttrSystem            = 46
	AttrTimeAccess        = 47
	AttrTimeAccessSet     = 48
	AttrTimeBackup        = 49
	AttrTimeCreate        = 50
	AttrTimeDelta         = 51
	AttrTimeMetadata      = 52
	AttrTimeModify        = 53
	AttrTimeModifySet     = 54
	AttrMountedOnFileid   = 55
	AttrFsLayoutType      = 62
	AttrLayoutBlksize     = 65
	AttrSuppattrExclcreat = 75
	AttrCloneBlksize      = 77
	AttrSpaceFreed        = 78
	AttrChangeAttrType    = 79
	AttrSecLabel          = 80
	AttrModeUmask         = 81
	AttrXattrSupport      = 82
	AttrMax               = 82
)

// ACCESS bits.
const (
	AccessRead    = 0x01
	AccessLookup  = 0x02
	AccessModify  = 0x04
	AccessExtend  = 0x08
	AccessDelete  = 0x10
	AccessExecute = 0x20
	// RFC 8276 extends ACCESS for the xattr operations (NFSv4.2 only).
	AccessXaread  = 0x40
	AccessXawrite = 0x80
	AccessXalist  = 0x100
)

// SETXATTR's setxattr_option4 (RFC 8276 section 8.4.2).
const (
	SetxattrEither  = 0
	SetxattrCreate  = 1
	SetxattrReplace = 2
)

// OPEN.
const (
	ShareAccessRead  = 1
	ShareAccessWrite = 2
	ShareAccessBoth  = 3
	ShareDenyNone    = 0
	ShareDenyRead    = 1
	ShareDenyWrite   = 2
	ShareDenyBoth    = 3
	// ShareAccessWantMask covers the 4.1 "want" bits carried in share_access.
	ShareAccessWantMask = 0xff00

	OpenNoCreate = 0
	OpenCreate   = 1

	CreateUnchecked   = 0
	CreateGuarded     = 1
	CreateExclusive   = 2
	CreateExclusive41 = 3

	ClaimNull         = 0
	ClaimPrevious     = 1
	ClaimDelegateCur  = 2
	ClaimDelegatePrev = 3
	ClaimFH           = 4
	ClaimDelegCurFH   = 5
	ClaimDelegPrevFH  = 6

	DelegateNone    = 0
	DelegateRead    = 1
	DelegateWrite   = 2
	DelegateNoneExt = 3

	WhyNoDelegNotWanted   = 0
	WhyNoDelegContention  = 1
	WhyNoDelegResource    = 2
	WhyNoDelegNotSuppFile = 3

	OpenResultLocktype         = 0x4
	OpenResultPreserveUnlinked = 0x8
)

// EXCHANGE_ID / CREATE_SESSION / SEQUENCE flags.
const (
	ExchgIDSuppMovedRefer   = 0x00000001
	ExchgIDSuppMovedMigr    = 0x00000002
	ExchgIDBindPrincStateid = 0x00000100
	ExchgIDUseNonPNFS       = 0x00010000
	ExchgIDUsePNFSMDS       = 0x00020000
	ExchgIDUsePNFSDS        = 0x00040000
	ExchgIDUpdConfirmedRecA = 0x40000000
	ExchgIDConfirmedR       = 0x80000000

	SP4None     = 0
	SP4MachCred = 1
	SP4SSV      = 2

	CreateSessionPersist      = 0x1
	CreateSessionConnBackChan = 0x2
	CreateSessionConnRDMA     = 0x4

	SeqStatusCBPathDown           = 0x1
	SeqStatusLeaseMoved           = 0x80
	SeqStatusRestartReclaimNeeded = 0x100
)

// Stable-how values for WRITE.
const (
	Unstable4 = 0
	DataSync4 = 1
	FileSync4 = 2
)

// SEEK and READ_PLUS content types.
const (
	ContentData = 0
	ContentHole = 1
)

// Channel directions for BIND_CONN_TO_SESSION.
const (
	CDRFore       = 1
	CDRBack       = 2
	CDRForeOrBoth = 3
	CDRBackOrBoth = 7
	CDRBoth       = 3
)

// Limits.
const (
	FHSize        = 128 // NFS4_FHSIZE
	VerifierSize  = 8
	SessionIDSize = 16
	DeviceIDSize  = 16 // NFS4_DEVICEID4_SIZE
	OtherSize     = 12
	OpaqueLimit   = 1024
	MaxNameLen    = 255
	MaxPathLen    = 4096
)

// Time setting (time_how4).
const (
	SetToServerTime = 0
	SetToClientTime = 1
)

// Delegations and the callback program (RFC 8881 sections 10.2, 18.16,
// 20): added with the back channel.
const (
	ErrCbPathDown         = 10048
	ErrDelegAlreadyWanted = 10056
	ErrDelegRevoked       = 10087
	ErrEncrAlgUnsupp      = 10079

	// OPEN4_SHARE_ACCESS_WANT_* values under ShareAccessWantMask.
	ShareAccessWantNoPreference = 0x0000
	ShareAccessWantReadDeleg    = 0x0100
	ShareAccessWantWriteDeleg   = 0x0200
	ShareAccessWantAnyDeleg     = 0x0300
	ShareAccessWantNoDeleg      = 0x0400
	ShareAccessWantCancel       = 0x0500
	// Flags above the share_access and want fields.
	ShareAccessWantSignalDelegWhenResrcAvail = 0x10000
	ShareAccessWantPushDelegWhenUncontended  = 0x20000

	WhyNoDelegWriteDelegNotSuppFile = 4
	WhyNoDelegNotSuppUpgrade        = 5
	WhyNoDelegNotSuppDowngrade      = 6
	WhyNoDelegCancelled             = 7
	WhyNoDelegIsDir                 = 8

	SeqStatusCBPathDownSession      = 0x200
	SeqStatusRecallableStateRevoked = 0x40
	SeqStatusBackchannelFault       = 0x400

	// The callback program: NFS4_CALLBACK version 1, CB_COMPOUND.
	CBVersion      = 1
	CBProcNull     = 0
	CBProcCompound = 1

	// AttrOpenArguments is FATTR4_OPEN_ARGUMENTS (RFC 9754): which OPEN
	// arguments the server supports.
	AttrOpenArguments = 86

	OpCBGetattr  = 3
	OpCBRecall   = 4
	OpCBSequence = 11
	OpCBOffload  = 15 // RFC 7862 section 16.1
)
