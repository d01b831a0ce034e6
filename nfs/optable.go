package nfs

import (
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// opInfo is what the server knows of one NFSv4 operation, as an entry of
// knfsd's nfsd4_ops (fs/nfsd/nfs4proc.c). Every cross-cutting question
// (may it come without SEQUENCE or a current filehandle, may it run on the
// event loop, what does it change, can its reply be kept, how big can
// that reply be) is answered here; nothing else lists operations.
type opInfo struct {
	name  string // as RFC 8881 / RFC 7862 / RFC 8276 spell it; also the metrics label
	minor uint32 // first minor version that defines it
	flags opFlags
	run   opFunc
	// rsize bounds the bytes of the result after the op number and
	// status, success or failure, given the op's arguments (which it may
	// peek at, see peekArgs): knfsd's op_rsize_bop. READ, READ_PLUS and
	// READDIR answer for the count the client asked; they then shrink to
	// the room left.
	rsize func(c *compound) int
	// args is the op's argument as the decoder its handler uses reads
	// it: exec reads it before it answers NFS4ERR_NOFILEHANDLE, the
	// quick scans of inline.go skip it. Every op that is opInline or
	// opNeedFH has one.
	args argShape
	// scan replaces args in Inline's quick scan for an op whose answer
	// there depends on the current filehandle (PUTFH, LOOKUP, SAVEFH...):
	// it reads the arguments, follows the filehandle in sc, and reports
	// whether the op can still run on the event loop.
	scan func(sc inlineScan, d *xdr.Decoder) (inlineScan, bool)
	// dataAt, for an op whose argument ends in file data (WRITE), reads
	// the argument up to the data's bytes and returns the file offset
	// they go to (WriteAlign).
	dataAt func(d *xdr.Decoder) uint64
}

type opFunc func(c *compound) nfs4.Status

type opFlags uint32

const (
	// opSessionless: may come without SEQUENCE, as the COMPOUND's only op
	// (RFC 8881 section 2.10.6.3; knfsd's ALLOWED_WITHOUT_FH|ALLOWED_AS_FIRST_OP).
	opSessionless opFlags = 1 << iota
	// opOnlyOp: may never follow SEQUENCE (NFS4ERR_NOT_ONLY_OP).
	opOnlyOp
	// opFirstOnly: only as the first op (SEQUENCE: NFS4ERR_SEQUENCE_POS elsewhere).
	opFirstOnly
	// opNeedFH: acts on the current filehandle, so exec answers
	// NFS4ERR_NOFILEHANDLE without one before the handler runs, once the
	// arguments are read (knfsd: ops without ALLOWED_WITHOUT_FH). RENAME,
	// LINK, COPY and CLONE check the saved filehandle themselves; SETATTR
	// checks the current one itself, as its error result carries a bitmap.
	opNeedFH
	// opInline: never blocks for long (no path walk, open, fsync,
	// directory read or lseek: SEEK is not one, see planSegmentsLoop), so
	// a COMPOUND made only of such ops runs on the event loop's own
	// thread. CLOSE is the one modifying op among them:
	// it drops in-memory open state and makes no system call, and on a
	// worker it was half the hand-offs of every open-read-close (mdtest's
	// create and read phases, every file a client opens): BENCHMARKS.md,
	// goal 1, "CLOSE went to a worker".
	opInline
	// opByFD: reads the current file through its open descriptor, which
	// it opens by path when the fd cache holds none: Inline sends such an
	// op to a worker then (GETATTR, ACCESS, READ, READ_PLUS).
	opByFD
	// opModifies: changes state, so it must not run when its reply could
	// not be sent or kept (knfsd's OP_MODIFIES_SOMETHING): the reply-size
	// estimate is checked before it runs.
	opModifies
	// opChangesFS: changes the filesystem, so a read-only export answers
	// NFS4ERR_ROFS before it runs (knfsd checks these with NFSD_MAY_WRITE;
	// refuseReadOnly). OPEN is left out, as only creating or opening for
	// write changes anything, and so is SETATTR, whose result carries a
	// bitmap even on error: both check by themselves.
	opChangesFS
	// opChangesFile: can change a file's attributes or names as inotify's
	// IN_ATTRIB, IN_MOVE_SELF or IN_DELETE_SELF see them, so its client is
	// not recalled for the events it causes (beginChange, state_deleg.go). WRITE
	// and the like only change data: IN_MODIFY, not watched.
	opChangesFile
	// opKeepsMemo: changes nothing the attribute memo of a LOOKUP
	// describes (compound.memo); any other op forgets it.
	opKeepsMemo
	// opDataReply: the result carries file data, which the slot cache
	// does not keep but reads again on a retransmit (state_slotcache.go). Such a
	// result is never cut back once planned, and metrics time it to the
	// end of its reads.
	opDataReply
	// opUntimed: so cheap that reading the clock would cost as much as the
	// op; metrics count it and give its time to the op after it.
	opUntimed
	// opUsesCurSid: a stateid argument may be the special "current
	// stateid" (RFC 8881 section 16.2.3.1.2), which resolveSid replaces
	// with the one an earlier op set; for any other op it stays the
	// special value and is refused as a bad stateid (knfsd's
	// op_get_currentstateid).
	opUsesCurSid
	// opSetsCurSid: the stateid the op returns becomes the current
	// stateid (knfsd's op_set_currentstateid); setCur does nothing for
	// other ops.
	opSetsCurSid
)

// compoundErrSlack is room kept after a modifying op when more ops follow,
// so that at least an error result fits: knfsd's COMPOUND_ERR_SLACK_SPACE
// (a failing SETATTR: op, status, empty bitmap).
const compoundErrSlack = 16

// Bounds of variable-length pieces of results.
const (
	bitmapMax     = 4 + 4*len(nfs4.Bitmap{}) // the widest attribute bitmap we send
	changeInfoLen = 4 + 8 + 8                // change_info4
	stateidLen    = 16
	verifierLen   = nfs4.VerifierSize
	opaqueMax     = 4 + nfs4.OpaqueLimit
	// idNameMax bounds a user or group name we send (an ACE's who, an
	// owner attribute): knfsd's IDMAP_NAMESZ.
	idNameMax = 4 + 128
	// lockDeniedMax is LOCK4denied: offset, length, type, lock_owner4.
	lockDeniedMax = 8 + 8 + 4 + 8 + opaqueMax
	// openDelegMax is open_delegation4 at its widest: a write delegation
	// (stateid, recall, nfs_space_limit4, nfsace4 with its who); the
	// widest open_none_delegation4 (WND4_CONTENTION and a bool) is smaller.
	openDelegMax = 4 + stateidLen + 4 + (4 + 16) + (4 + 4 + 4 + idNameMax)
	// secinfoMax: the flavor list (sec.go): AUTH_SYS, AUTH_NONE and the
	// three krb5 entries.
	secinfoMax = 4 + 8*4 + secinfoGSSMax
	// xattrValueMax is XATTR_SIZE_MAX, the largest value Linux stores.
	xattrValueMax = 64 << 10
)

// opTable is indexed by operation number. Ops this server does not
// implement have an entry with opNotsupp, so every number of NFSv4.1,
// NFSv4.2 and RFC 8276 has a name; numbers without an entry are
// NFS4ERR_OP_ILLEGAL.
var opTable = [nfs4.OpRemovexattr + 1]opInfo{
	nfs4.OpAccess: {name: "ACCESS", flags: opNeedFH | opInline | opByFD | opKeepsMemo, run: opAccess,
		rsize: fixed(8), args: fixedArgs(decodeAccess)},
	nfs4.OpClose: {name: "CLOSE", flags: opNeedFH | opModifies | opInline | opUsesCurSid | opMachAllow, run: opClose,
		rsize: fixed(stateidLen), args: fixedArgs(decodeClose)},
	nfs4.OpCommit: {name: "COMMIT", flags: opNeedFH | opModifies, run: opCommit,
		rsize: fixed(verifierLen), args: fixedArgs(decodeCommit)},
	nfs4.OpCreate: {name: "CREATE", flags: opNeedFH | opModifies | opChangesFS, run: opCreate,
		rsize: fixed(changeInfoLen + bitmapMax), args: argsOf(decodeCreate)},
	nfs4.OpDelegPurge: {name: "DELEGPURGE", run: opDelegPurge, rsize: fixed(0), args: fixedArgs(decodeClientidArgs)},
	nfs4.OpDelegReturn: {name: "DELEGRETURN", flags: opNeedFH | opModifies | opUsesCurSid | opMachAllow, run: opDelegReturn,
		rsize: fixed(0), args: fixedArgs(decodeStateidArgs)},
	nfs4.OpGetattr: {name: "GETATTR", flags: opNeedFH | opInline | opByFD | opKeepsMemo, run: opGetattr,
		rsize: getattrRsize, args: argsOf(decodeGetattr), scan: scanGetattr},
	nfs4.OpGetfh: {name: "GETFH", flags: opNeedFH | opInline | opUntimed | opKeepsMemo, run: opGetfh,
		rsize: fixed(4 + nfs4.FHSize), args: noArgs},
	nfs4.OpLink: {name: "LINK", flags: opNeedFH | opModifies | opChangesFS | opChangesFile, run: opLink,
		rsize: fixed(changeInfoLen), args: argsOf(decodeLink)},
	nfs4.OpLock: {name: "LOCK", flags: opNeedFH | opModifies | opUsesCurSid | opSetsCurSid, run: opLock,
		rsize: fixed(max(stateidLen, lockDeniedMax)), args: argsOf(decodeLock)},
	nfs4.OpLockt: {name: "LOCKT", flags: opNeedFH, run: opLockt,
		rsize: fixed(lockDeniedMax), args: argsOf(decodeLockt)},
	nfs4.OpLocku: {name: "LOCKU", flags: opNeedFH | opModifies | opUsesCurSid | opSetsCurSid | opMachAllow, run: opLocku,
		rsize: fixed(stateidLen), args: fixedArgs(decodeLocku)},
	nfs4.OpLookup: {name: "LOOKUP", flags: opNeedFH, run: opLookup, rsize: fixed(0),
		args: argsOf(decodeLookup), scan: scanLookup},
	nfs4.OpLookupp: {name: "LOOKUPP", flags: opNeedFH, run: opLookupp, rsize: fixed(0), args: noArgs},
	nfs4.OpNverify: {name: "NVERIFY", flags: opNeedFH, run: opNverify, rsize: fixed(0), args: argsOf(decodeVerify)},
	nfs4.OpOpen: {name: "OPEN", flags: opNeedFH | opModifies | opChangesFile | opSetsCurSid, run: opOpen,
		rsize: fixed(stateidLen + changeInfoLen + 4 + bitmapMax + openDelegMax), args: argsOf(decodeOpen)},
	nfs4.OpOpenattr:    {name: "OPENATTR", run: opNotsupp, rsize: fixed(0)},
	nfs4.OpOpenConfirm: {name: "OPEN_CONFIRM", run: opNotsupp, rsize: fixed(0)}, // NFSv4.0 only (RFC 8881 section 18: MUST NOT in 4.1)
	nfs4.OpOpenDowngrade: {name: "OPEN_DOWNGRADE", flags: opNeedFH | opModifies | opUsesCurSid | opSetsCurSid | opMachAllow, run: opOpenDowngrade,
		rsize: fixed(stateidLen), args: fixedArgs(decodeOpenDowngrade)},
	nfs4.OpPutfh: {name: "PUTFH", flags: opInline | opUntimed, run: opPutfh, rsize: fixed(0),
		args: argsOf(decodePutfh), scan: scanPutfh},
	nfs4.OpPutpubfh: {name: "PUTPUBFH", flags: opInline | opUntimed, run: opPutrootfh, rsize: fixed(0),
		args: noArgs, scan: scanRootfh},
	nfs4.OpPutrootfh: {name: "PUTROOTFH", flags: opInline | opUntimed, run: opPutrootfh, rsize: fixed(0),
		args: noArgs, scan: scanRootfh},
	nfs4.OpRead: {name: "READ", flags: opNeedFH | opInline | opByFD | opDataReply | opUsesCurSid, run: opRead,
		rsize: readRsize, args: fixedArgs(decodeRead)},
	nfs4.OpReaddir: {name: "READDIR", flags: opNeedFH, run: opReaddir,
		rsize: readdirRsize, args: argsOf(decodeReaddir)},
	nfs4.OpReadlink: {name: "READLINK", flags: opNeedFH, run: opReadlink,
		rsize: fixed(4 + nfs4.MaxPathLen), args: noArgs},
	nfs4.OpRemove: {name: "REMOVE", flags: opNeedFH | opModifies | opChangesFS | opChangesFile, run: opRemove,
		rsize: fixed(changeInfoLen), args: argsOf(decodeRemove)},
	nfs4.OpRename: {name: "RENAME", flags: opNeedFH | opModifies | opChangesFS | opChangesFile, run: opRename,
		rsize: fixed(2 * changeInfoLen), args: argsOf(decodeRename)},
	nfs4.OpRenew: {name: "RENEW", run: opNotsupp, rsize: fixed(0)}, // NFSv4.0 only
	nfs4.OpRestorefh: {name: "RESTOREFH", flags: opInline | opUntimed, run: opRestorefh, rsize: fixed(0),
		args: noArgs, scan: scanRestorefh},
	nfs4.OpSavefh: {name: "SAVEFH", flags: opNeedFH | opInline | opUntimed, run: opSavefh, rsize: fixed(0),
		args: noArgs, scan: scanSavefh},
	nfs4.OpSecinfo: {name: "SECINFO", flags: opNeedFH, run: opSecinfo,
		rsize: fixed(secinfoMax), args: argsOf(decodeSecinfo)},
	nfs4.OpSetattr:            {name: "SETATTR", flags: opModifies | opChangesFile | opUsesCurSid, run: opSetattr, rsize: fixed(bitmapMax)},
	nfs4.OpSetclientid:        {name: "SETCLIENTID", run: opNotsupp, rsize: fixed(0)},         // NFSv4.0 only
	nfs4.OpSetclientidConfirm: {name: "SETCLIENTID_CONFIRM", run: opNotsupp, rsize: fixed(0)}, // NFSv4.0 only
	nfs4.OpVerify: {name: "VERIFY", flags: opNeedFH, run: opVerify,
		rsize: fixed(0), args: argsOf(decodeVerify)},
	nfs4.OpWrite: {name: "WRITE", flags: opNeedFH | opModifies | opChangesFS | opUsesCurSid, run: opWrite,
		rsize: fixed(4 + 4 + verifierLen), args: argsOf(decodeWrite), dataAt: writeDataAt},
	// RELEASE_LOCKOWNER is NFSv4.0 only: RFC 8881 marks it MUST NOT
	// implement for 4.1, where FREE_STATEID and CLOSE do its work.
	nfs4.OpReleaseLockowner: {name: "RELEASE_LOCKOWNER", run: opNotsupp, rsize: fixed(0)},

	nfs4.OpBackchannelCtl: {name: "BACKCHANNEL_CTL", minor: 1, flags: opModifies, run: opBackchannelCtl, rsize: fixed(0)},
	nfs4.OpBindConnToSession: {name: "BIND_CONN_TO_SESSION", minor: 1, flags: opSessionless | opOnlyOp | opModifies | opMachEnforce, run: opBindConnToSession,
		rsize: fixed(nfs4.SessionIDSize + 4 + 4), args: fixedArgs(decodeBindConn)},
	// EXCHANGE_ID4resok: clientid, sequenceid, flags, state_protect4_r
	// (SP4_NONE, or SP4_MACH_CRED and its two bitmaps), server_owner4,
	// server_scope, one nfs_impl_id4.
	nfs4.OpExchangeID: {name: "EXCHANGE_ID", minor: 1, flags: opSessionless | opModifies | opMachEnforce, run: opExchangeID,
		rsize: fixed(8 + 4 + 4 + 4 + 2*bitmapMax + (8 + opaqueMax) + opaqueMax + 4 + (opaqueMax + opaqueMax + 12))},
	// CREATE_SESSION4resok: session id, sequence, flags, two channel_attrs4
	// (six counts and an rdma_ird array of at most one).
	nfs4.OpCreateSession: {name: "CREATE_SESSION", minor: 1, flags: opSessionless | opModifies | opMachEnforce, run: opCreateSession, rsize: fixed(nfs4.SessionIDSize + 4 + 4 + 2*(6*4+4+4))},
	nfs4.OpDestroySession: {name: "DESTROY_SESSION", minor: 1, flags: opSessionless | opModifies | opMachEnforce, run: opDestroySession,
		rsize: fixed(0), args: fixedArgs(decodeDestroySession)},
	nfs4.OpFreeStateid: {name: "FREE_STATEID", minor: 1, flags: opModifies | opUsesCurSid | opMachAllow, run: opFreeStateid,
		rsize: fixed(0), args: fixedArgs(decodeStateidArgs)},
	nfs4.OpGetDirDelegation: {name: "GET_DIR_DELEGATION", minor: 1, flags: opModifies, run: opNotsupp, rsize: fixed(0)},
	// The pNFS ops (op_layout.go) answer NFS4ERR_NOTSUPP unless the
	// metadata-server role is on (Config.DataServers); they check the
	// current filehandle themselves, so that with the role off they
	// answer exactly as before it existed.
	nfs4.OpGetdeviceinfo: {name: "GETDEVICEINFO", minor: 1, run: opGetdeviceinfo,
		rsize: fixed(4 + 4 + deviceAddrMax + bitmapMax), args: argsOf(decodeGetdeviceinfo)},
	nfs4.OpGetdevicelist: {name: "GETDEVICELIST", minor: 1, run: opGetdevicelist,
		rsize: getdevicelistRsize, args: fixedArgs(decodeGetdevicelist)},
	nfs4.OpLayoutcommit: {name: "LAYOUTCOMMIT", minor: 1, flags: opModifies | opChangesFile | opUsesCurSid, run: opLayoutcommit,
		rsize: fixed(4 + 8), args: argsOf(decodeLayoutcommit)},
	nfs4.OpLayoutget: {name: "LAYOUTGET", minor: 1, flags: opModifies | opUsesCurSid, run: opLayoutget,
		rsize: layoutgetRsize, args: fixedArgs(decodeLayoutget)},
	nfs4.OpLayoutreturn: {name: "LAYOUTRETURN", minor: 1, flags: opModifies | opUsesCurSid, run: opLayoutreturn,
		rsize: fixed(4 + stateidLen), args: argsOf(decodeLayoutreturn)},
	nfs4.OpSecinfoNoName: {name: "SECINFO_NO_NAME", minor: 1, flags: opNeedFH, run: opSecinfoNoName,
		rsize: fixed(secinfoMax), args: fixedArgs(decodeSecinfoNoName)},
	nfs4.OpSequence: {name: "SEQUENCE", minor: 1, flags: opFirstOnly | opInline | opUntimed, run: opSequence,
		rsize: fixed(nfs4.SessionIDSize + 5*4), args: fixedArgs(decodeSequence)},
	nfs4.OpSetSSV:      {name: "SET_SSV", minor: 1, flags: opModifies, run: opNotsupp, rsize: fixed(0)},
	nfs4.OpTestStateid: {name: "TEST_STATEID", minor: 1, flags: opMachAllow, run: opTestStateid, rsize: testStateidRsize},
	nfs4.OpWantDelegation: {name: "WANT_DELEGATION", minor: 1, flags: opNeedFH | opModifies, run: opWantDelegation,
		rsize: fixed(openDelegMax), args: argsOf(decodeWantDelegation)},
	nfs4.OpDestroyClientid: {name: "DESTROY_CLIENTID", minor: 1, flags: opSessionless | opModifies | opMachEnforce, run: opDestroyClientid,
		rsize: fixed(0), args: fixedArgs(decodeClientidArgs)},
	nfs4.OpReclaimComplete: {name: "RECLAIM_COMPLETE", minor: 1, flags: opModifies, run: opReclaimComplete,
		rsize: fixed(0), args: fixedArgs(decodeReclaimComplete)},

	nfs4.OpAllocate: {name: "ALLOCATE", minor: 2, flags: opNeedFH | opModifies | opChangesFS | opUsesCurSid, run: opAllocate,
		rsize: fixed(0), args: fixedArgs(decodeAllocate)},
	// COPY4res: write_response4 (the callback id of an asynchronous
	// copy, count, committed, verifier) and copy_requirements4; on
	// NFS4ERR_OFFLOAD_NO_REQS only the requirements.
	nfs4.OpCopy: {name: "COPY", minor: 2, flags: opNeedFH | opModifies | opChangesFS | opUsesCurSid, run: opCopy,
		rsize: fixed((4 + stateidLen) + 8 + 4 + verifierLen + 4 + 4), args: argsOf(decodeCopy)},
	nfs4.OpCopyNotify: {name: "COPY_NOTIFY", minor: 2, flags: opModifies, run: opNotsupp, rsize: fixed(0)},
	nfs4.OpDeallocate: {name: "DEALLOCATE", minor: 2, flags: opNeedFH | opModifies | opChangesFS | opUsesCurSid, run: opDeallocate,
		rsize: fixed(0), args: fixedArgs(decodeAllocate)},
	nfs4.OpIOAdvise: {name: "IO_ADVISE", minor: 2, run: opNotsupp, rsize: fixed(0)},
	nfs4.OpLayouterror: {name: "LAYOUTERROR", minor: 2, flags: opModifies, run: opLayouterror,
		rsize: fixed(0), args: argsOf(decodeLayouterror)},
	nfs4.OpLayoutstats: {name: "LAYOUTSTATS", minor: 2, run: opLayoutstats,
		rsize: fixed(0), args: argsOf(decodeLayoutstats)},
	nfs4.OpOffloadCancel: {name: "OFFLOAD_CANCEL", minor: 2, flags: opNeedFH | opModifies, run: opOffloadCancel,
		rsize: fixed(0), args: fixedArgs(decodeStateidArgs)},
	// OFFLOAD_STATUS4resok: count and an optional completion status.
	nfs4.OpOffloadStatus: {name: "OFFLOAD_STATUS", minor: 2, flags: opNeedFH, run: opOffloadStatus,
		rsize: fixed(8 + 4 + 4), args: fixedArgs(decodeStateidArgs)},
	nfs4.OpReadPlus: {name: "READ_PLUS", minor: 2, flags: opNeedFH | opInline | opByFD | opDataReply | opUsesCurSid, run: opReadPlus,
		rsize: readPlusRsize, args: fixedArgs(decodeRead), scan: scanReadPlus},
	nfs4.OpSeek: {name: "SEEK", minor: 2, flags: opNeedFH | opUsesCurSid, run: opSeek,
		rsize: fixed(4 + 8), args: fixedArgs(decodeSeek)},
	nfs4.OpWriteSame: {name: "WRITE_SAME", minor: 2, flags: opModifies | opChangesFS, run: opNotsupp, rsize: fixed(0)},
	nfs4.OpClone: {name: "CLONE", minor: 2, flags: opNeedFH | opModifies | opChangesFS | opUsesCurSid, run: opClone,
		rsize: fixed(0), args: fixedArgs(decodeCopyArgs)},

	// RFC 8276 extended attributes, an extension of NFSv4.2.
	nfs4.OpGetxattr: {name: "GETXATTR", minor: 2, flags: opNeedFH, run: opGetxattr,
		rsize: fixed(4 + xattrValueMax), args: checkedArgsOf(decodeGetxattr)},
	nfs4.OpSetxattr: {name: "SETXATTR", minor: 2, flags: opNeedFH | opModifies | opChangesFS | opChangesFile, run: opSetxattr,
		rsize: fixed(changeInfoLen), args: checkedArgsOf(decodeSetxattr)},
	nfs4.OpListxattrs: {name: "LISTXATTRS", minor: 2, flags: opNeedFH, run: opListxattrs,
		rsize: listxattrsRsize, args: checkedArgsOf(decodeListxattrs)},
	nfs4.OpRemovexattr: {name: "REMOVEXATTR", minor: 2, flags: opNeedFH | opModifies | opChangesFS | opChangesFile, run: opRemovexattr,
		rsize: fixed(changeInfoLen), args: checkedArgsOf(decodeRemovexattr)},
}

// lookupOp returns op's entry, or nil for a number that names no
// operation (NFS4ERR_OP_ILLEGAL).
func lookupOp(op uint32) *opInfo {
	if op >= uint32(len(opTable)) || opTable[op].run == nil {
		return nil
	}
	return &opTable[op]
}

// OpName is the operation's name as the RFCs spell it ("READ",
// "EXCHANGE_ID"), for logs and metrics labels; "ILLEGAL" for any number
// that names no operation. It never allocates.
func OpName(op uint32) string {
	if info := lookupOp(op); info != nil {
		return info.name
	}
	return "ILLEGAL"
}

func opNotsupp(*compound) nfs4.Status { return nfs4.ErrNotsupp }

// fixed is a reply-size estimate that does not depend on the arguments.
func fixed(n int) func(*compound) int {
	return func(*compound) int { return n }
}

// peekArgs returns a copy of the request decoder at the current op's
// arguments, for an estimate that needs them: the handler still decodes
// them itself from c.d.
func (c *compound) peekArgs() xdr.Decoder { return *c.d }

// readRsize is READ4resok: eof, then count bytes of data (at most the
// server's maximum), padded.
func readRsize(c *compound) int {
	d := c.peekArgs()
	return 4 + 4 + xdrLen(min(int(decodeRead(&d).count), c.s.cfg.MaxIO))
}

// readPlusRsize is READ_PLUS4resok: eof, the segment count, and the data
// with each segment's header; a hole segment (type, offset, length) is no
// bigger than a data segment's header plus padding.
func readPlusRsize(c *compound) int {
	d := c.peekArgs()
	return 4 + 4 + min(int(decodeRead(&d).count), c.s.cfg.MaxIO) + maxSegments*(4+8+8)
}

// readdirRsize is READDIR4resok, which the client bounds with maxcount
// (RFC 8881 section 18.23.3); the encoder also keeps it to the room left.
func readdirRsize(c *compound) int {
	d := c.peekArgs()
	return int(decodeReaddir(&d).maxcount)
}

// listxattrsRsize is LISTXATTRS4resok, bounded by lxa_maxcount (RFC 8276
// section 8.4.3.2): cookie, then names and eof within maxcount.
func listxattrsRsize(c *compound) int {
	d := c.peekArgs()
	a, _ := decodeListxattrs(&d)
	return 8 + int(a.maxcount)
}

// testStateidRsize is one status per stateid asked about.
func testStateidRsize(c *compound) int {
	d := c.peekArgs()
	return 4 + 4*min(int(d.Uint32()), maxTestStateids)
}

// getattrRsize bounds the fattr4 of a GETATTR: bitmap, length, and each
// attribute asked for that the server can return.
func getattrRsize(c *compound) int {
	d := c.peekArgs()
	return fattrBound(decodeGetattr(&d).attrs)
}

// fattrBound bounds an encoded fattr4 for the attributes in req.
func fattrBound(req nfs4.Bitmap) int {
	got := req.And(readableAttrs.Or(pnfsAttrs))
	n := bitmapMax + 4
	for w := range got {
		for b := 0; b < 32; b++ {
			if got[w]&(1<<b) != 0 {
				n += attrBound(w*32 + b)
			}
		}
	}
	return n
}

// attrBound bounds one encoded attribute. The fixed ones (numbers, times,
// fsid) take at most 16 bytes.
func attrBound(a int) int {
	switch a {
	case nfs4.AttrFilehandle:
		return 4 + nfs4.FHSize
	case nfs4.AttrSupportedAttrs, nfs4.AttrSuppattrExclcreat:
		return bitmapMax
	case nfs4.AttrOwner, nfs4.AttrOwnerGroup:
		return idNameMax
	}
	return 16
}

// xdrLen is n rounded up to XDR's 4-byte units.
func xdrLen(n int) int { return (n + 3) &^ 3 }

// argShape is an op's argument as its decoder reads it.
type argShape struct {
	// read decodes the argument and returns the decoder's verdict:
	// nfs4.OK, NFS4ERR_BADXDR, or an op's own decode check (SETXATTR's
	// option).
	read func(d *xdr.Decoder) nfs4.Status
	// size, when not 0, is the argument's length whatever its values
	// (fixedArgs): the quick scans skip that many bytes rather than
	// decode them.
	size int
}

// skip moves d past the argument, and reports whether the decoder
// accepted it (a decoder's own check may stop it midway).
func (a *argShape) skip(d *xdr.Decoder) bool {
	if a.size > 0 {
		d.Skip(a.size)
		return d.Err() == nil
	}
	return a.read(d) == nfs4.OK
}

// argsOf is the argShape of the decoder an op's handler uses.
func argsOf[A any](decode func(*xdr.Decoder) A) argShape {
	return argShape{read: func(d *xdr.Decoder) nfs4.Status {
		decode(d)
		if d.Err() != nil {
			return nfs4.ErrBadXDR
		}
		return nfs4.OK
	}}
}

// fixedArgs is argsOf for an argument of one length whatever its values
// (no opaque, array or union in it), measured once by decoding zeros.
// The hot ops' (SEQUENCE, READ...) are skipped in a single step in the
// quick scans; TestOpTableComplete checks the length holds for other
// values.
func fixedArgs[A any](decode func(*xdr.Decoder) A) argShape {
	a := argsOf(decode)
	var d xdr.Decoder
	d.Reset(make([]byte, 256))
	decode(&d)
	a.size = d.Offset()
	return a
}

// checkedArgsOf is argsOf for a decoder that checks what it reads and
// answers a status of its own (the xattr ops, as knfsd's decoders).
func checkedArgsOf[A any](decode func(*xdr.Decoder) (A, nfs4.Status)) argShape {
	return argShape{read: func(d *xdr.Decoder) nfs4.Status {
		_, s := decode(d)
		return s
	}}
}

// noArgs is the argShape of an op that has none.
var noArgs = argShape{read: func(*xdr.Decoder) nfs4.Status { return nfs4.OK }}
