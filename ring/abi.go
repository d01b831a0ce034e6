package ring

// Kernel ABI: constants and structures from include/uapi/linux/io_uring.h.
// The layouts are checked against the kernel's sizes in abi_test.go.

// Setup flags (io_uring_params.flags).
const (
	SetupIOPoll       uint32 = 1 << 0
	SetupSQPoll       uint32 = 1 << 1
	SetupSQAff        uint32 = 1 << 2
	SetupCQSize       uint32 = 1 << 3
	SetupClamp        uint32 = 1 << 4
	SetupAttachWQ     uint32 = 1 << 5
	SetupRDisabled    uint32 = 1 << 6
	SetupSubmitAll    uint32 = 1 << 7
	SetupCoopTaskrun  uint32 = 1 << 8
	SetupTaskrunFlag  uint32 = 1 << 9
	SetupSQE128       uint32 = 1 << 10
	SetupCQE32        uint32 = 1 << 11
	SetupSingleIssuer uint32 = 1 << 12
	SetupDeferTaskrun uint32 = 1 << 13
	SetupNoMmap       uint32 = 1 << 14
	SetupRegisteredFD uint32 = 1 << 15
	SetupNoSQArray    uint32 = 1 << 16
)

// Features reported by the kernel (io_uring_params.features).
const (
	FeatSingleMmap     uint32 = 1 << 0
	FeatNoDrop         uint32 = 1 << 1
	FeatSubmitStable   uint32 = 1 << 2
	FeatRWCurPos       uint32 = 1 << 3
	FeatCurPersonality uint32 = 1 << 4
	FeatFastPoll       uint32 = 1 << 5
	FeatPoll32Bits     uint32 = 1 << 6
	FeatSQPollNonfixed uint32 = 1 << 7
	FeatExtArg         uint32 = 1 << 8
	FeatNativeWorkers  uint32 = 1 << 9
	FeatRsrcTags       uint32 = 1 << 10
	FeatCQESkip        uint32 = 1 << 11
	FeatLinkedFile     uint32 = 1 << 12
	FeatRegRegRing     uint32 = 1 << 13
)

// Opcodes (enum io_uring_op).
const (
	OpNop uint8 = iota
	OpReadv
	OpWritev
	OpFsync
	OpReadFixed
	OpWriteFixed
	OpPollAdd
	OpPollRemove
	OpSyncFileRange
	OpSendmsg
	OpRecvmsg
	OpTimeout
	OpTimeoutRemove
	OpAccept
	OpAsyncCancel
	OpLinkTimeout
	OpConnect
	OpFallocate
	OpOpenat
	OpClose
	OpFilesUpdate
	OpStatx
	OpRead
	OpWrite
	OpFadvise
	OpMadvise
	OpSend
	OpRecv
	OpOpenat2
	OpEpollCtl
	OpSplice
	OpProvideBuffers
	OpRemoveBuffers
	OpTee
	OpShutdown
	OpRenameat
	OpUnlinkat
	OpMkdirat
	OpSymlinkat
	OpLinkat
	OpMsgRing
	OpFsetxattr
	OpSetxattr
	OpFgetxattr
	OpGetxattr
	OpSocket
	OpUringCmd
	OpSendZC
	OpSendmsgZC
	OpReadMultishot
	OpWaitid
	OpFutexWait
	OpFutexWake
	OpFutexWaitv
)

// SQE flags (io_uring_sqe.flags).
const (
	SQEFixedFile      uint8 = 1 << 0     // Fd is an index into the registered file table
	SQEIODrain        uint8 = 1 << 1     // issue after all earlier requests complete
	SQEIOLink         uint8 = 1 << 2     // the next SQE starts only when this one succeeds
	SQEIOHardlink     uint8 = 1 << 3     // like IOLink, but the chain survives failure
	SQEAsync          uint8 = 1 << 4     // skip the inline attempt, go straight to io-wq
	SQEBufferSelect   uint8 = 1 << 5     // take a buffer from the group in BufIndex
	SQECQESkipSuccess uint8 = 1 << 6     // post no CQE when the request succeeds
	FileIndexAlloc          = ^uint32(0) // let the kernel pick a registered file slot
	RegisterFilesSkip       = -2         // in UpdateFiles: leave this slot alone
)

// FsyncDatasync makes OpFsync behave like fdatasync(2).
const FsyncDatasync uint32 = 1 << 0

// acceptMultishot goes in io_uring_sqe.ioprio of an OpAccept.
const acceptMultishot uint16 = 1 << 0

// Timeout flags (io_uring_sqe.timeout_flags).
const (
	TimeoutAbs          uint32 = 1 << 0
	TimeoutUpdate       uint32 = 1 << 1
	TimeoutBoottime     uint32 = 1 << 2
	TimeoutRealtime     uint32 = 1 << 3
	LinkTimeoutUpdate   uint32 = 1 << 4
	TimeoutETimeSuccess uint32 = 1 << 5
	TimeoutMultishot    uint32 = 1 << 6
)

// Cancel flags (io_uring_sqe.cancel_flags).
const (
	CancelAll      uint32 = 1 << 0
	CancelFD       uint32 = 1 << 1
	CancelAny      uint32 = 1 << 2
	CancelFDFixed  uint32 = 1 << 3
	CancelUserData uint32 = 1 << 4
	CancelOp       uint32 = 1 << 5
)

// Send/recv flags, carried in io_uring_sqe.ioprio.
const (
	RecvSendPollFirst  uint16 = 1 << 0
	RecvMultishot      uint16 = 1 << 1
	RecvSendFixedBuf   uint16 = 1 << 2
	SendZCReportUsage  uint16 = 1 << 3
	NotifUsageZCCopied uint32 = 1 << 31 // in Res of a notification CQE with SendZCReportUsage
)

// CQE flags (io_uring_cqe.flags).
const (
	CQEFBuffer       uint32 = 1 << 0 // upper 16 bits hold the provided buffer id
	CQEFMore         uint32 = 1 << 1 // the request will post more CQEs
	CQEFSockNonempty uint32 = 1 << 2 // more data is waiting on the socket
	CQEFNotif        uint32 = 1 << 3 // zero-copy notification: the send buffer is free
	cqeBufferShift          = 16
)

// SQ ring flags (the word at sq_off.flags).
const (
	sqNeedWakeup uint32 = 1 << 0
	sqCQOverflow uint32 = 1 << 1
	sqTaskrun    uint32 = 1 << 2
)

// io_uring_enter flags.
const (
	enterGetEvents      uint32 = 1 << 0
	enterSQWakeup       uint32 = 1 << 1
	enterSQWait         uint32 = 1 << 2
	enterExtArg         uint32 = 1 << 3
	enterRegisteredRing uint32 = 1 << 4
)

// io_uring_register opcodes.
const (
	regBuffers         = 0
	unregBuffers       = 1
	regFiles           = 2
	unregFiles         = 3
	regFilesUpdate     = 6
	regProbe           = 8
	regFiles2          = 13
	regPbufRing        = 22
	unregPbufRing      = 23
	rsrcRegisterSparse = 1 << 0
	probeOpSupported   = 1 << 0
)

// mmap offsets.
const (
	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000
)

// SQE is struct io_uring_sqe (64 bytes). Fields that share a union in C carry
// the name of their most common use; the prep helpers fill them.
type SQE struct {
	Opcode      uint8
	Flags       uint8
	Ioprio      uint16
	Fd          int32
	Off         uint64 // also addr2
	Addr        uint64 // also splice_off_in
	Len         uint32
	OpFlags     uint32 // rw_flags, fsync_flags, msg_flags, timeout_flags, ...
	UserData    uint64
	BufIndex    uint16 // also buf_group
	Personality uint16
	FileIndex   uint32 // also splice_fd_in, addr_len
	Addr3       uint64
	_           uint64
}

// CQE is struct io_uring_cqe (16 bytes).
type CQE struct {
	UserData uint64
	Res      int32 // result, or -errno
	Flags    uint32
}

// SQRingOffsets is struct io_sqring_offsets.
type SQRingOffsets struct {
	Head        uint32
	Tail        uint32
	RingMask    uint32
	RingEntries uint32
	Flags       uint32
	Dropped     uint32
	Array       uint32
	Resv1       uint32
	UserAddr    uint64
}

// CQRingOffsets is struct io_cqring_offsets.
type CQRingOffsets struct {
	Head        uint32
	Tail        uint32
	RingMask    uint32
	RingEntries uint32
	Overflow    uint32
	CQEs        uint32
	Flags       uint32
	Resv1       uint32
	UserAddr    uint64
}

// Params is struct io_uring_params (120 bytes).
type Params struct {
	SQEntries    uint32
	CQEntries    uint32
	Flags        uint32
	SQThreadCPU  uint32
	SQThreadIdle uint32
	Features     uint32
	WQFd         uint32
	Resv         [3]uint32
	SQOff        SQRingOffsets
	CQOff        CQRingOffsets
}

// probeOp is struct io_uring_probe_op.
type probeOp struct {
	Op    uint8
	Resv  uint8
	Flags uint16
	Resv2 uint32
}

// probeHeader is struct io_uring_probe without its flexible ops array.
type probeHeader struct {
	LastOp uint8
	OpsLen uint8
	Resv   uint16
	Resv2  [3]uint32
}

// bufEntry is struct io_uring_buf, one slot of a provided-buffer ring.
type bufEntry struct {
	Addr uint64
	Len  uint32
	Bid  uint16
	Resv uint16 // in slot 0 this is the ring tail
}

// bufReg is struct io_uring_buf_reg.
type bufReg struct {
	RingAddr    uint64
	RingEntries uint32
	Bgid        uint16
	Flags       uint16
	Resv        [3]uint64
}

// rsrcRegister is struct io_uring_rsrc_register.
type rsrcRegister struct {
	Nr    uint32
	Flags uint32
	Resv2 uint64
	Data  uint64
	Tags  uint64
}

// rsrcUpdate is struct io_uring_rsrc_update.
type rsrcUpdate struct {
	Offset uint32
	Resv   uint32
	Data   uint64
}

// geteventsArg is struct io_uring_getevents_arg.
type geteventsArg struct {
	Sigmask   uint64
	SigmaskSz uint32
	Pad       uint32
	Ts        uint64
}
