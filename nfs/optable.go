package nfs

import (
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// opInfo is what the server knows of one NFSv4 operation, as an entry of
// knfsd's nfsd4_ops (fs/nfsd/nfs4proc.c). Every cross-cutting question
// (may it come without SEQUENCE, may it run on the event loop, can its
// reply be kept, how big can that reply be) is answered here; nothing else
// lists operations.
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
	// skip skips the arguments, for the quick scans of inline.go; only
	// ops with a fixed-shape argument have one.
	skip func(d *xdr.Decoder)
}

type opFunc func(c *compound) uint32

type opFlags uint8

const (
	// opSessionless: may come without SEQUENCE, as the COMPOUND's only op
	// (RFC 8881 section 2.10.6.3; knfsd's ALLOWED_WITHOUT_FH|ALLOWED_AS_FIRST_OP).
	opSessionless opFlags = 1 << iota
	// opOnlyOp: may never follow SEQUENCE (NFS4ERR_NOT_ONLY_OP).
	opOnlyOp
	// opFirstOnly: only as the first op (SEQUENCE: NFS4ERR_SEQUENCE_POS elsewhere).
	opFirstOnly
	// opInline: never blocks for long (no path walk, open, fsync,
	// directory read or lseek: SEEK is not one, see planSegmentsLoop),
	// so a COMPOUND made only of such ops runs on the
	// event loop's own thread. CLOSE is the one modifying op among them:
	// it drops in-memory open state and makes no system call, and on a
	// worker it was half the hand-offs of every open-read-close (mdtest's
	// create and read phases, every file a client opens): BENCHMARKS.md,
	// goal 1, "CLOSE went to a worker".
	opInline
	// opModifies: changes state, so it must not run when its reply could
	// not be sent or kept (knfsd's OP_MODIFIES_SOMETHING): the reply-size
	// estimate is checked before it runs.
	opModifies
	// opDataReply: the result carries file data, which the slot cache
	// does not keep but reads again on a retransmit (slotcache.go). Such a
	// result is never cut back once planned.
	opDataReply
	// opUntimed: so cheap that reading the clock would cost as much as the
	// op; metrics count it and give its time to the op after it.
	opUntimed
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
	// secinfoMax: the flavor list, without RPCSEC_GSS entries.
	secinfoMax = 4 + 8*4
	// xattrValueMax is XATTR_SIZE_MAX, the largest value Linux stores.
	xattrValueMax = 64 << 10
)

// opTable is indexed by operation number. Ops this server does not
// implement have an entry with opNotsupp, so every number of NFSv4.1,
// NFSv4.2 and RFC 8276 has a name; numbers without an entry are
// NFS4ERR_OP_ILLEGAL.
var opTable = [nfs4.OpRemovexattr + 1]opInfo{
	nfs4.OpAccess:             {name: "ACCESS", flags: opInline, run: opAccess, rsize: fixed(8), skip: skipN(4)},
	nfs4.OpClose:              {name: "CLOSE", flags: opModifies | opInline, run: opClose, rsize: fixed(stateidLen), skip: skipN(4 + stateidLen)},
	nfs4.OpCommit:             {name: "COMMIT", flags: opModifies, run: opCommit, rsize: fixed(verifierLen)},
	nfs4.OpCreate:             {name: "CREATE", flags: opModifies, run: opCreate, rsize: fixed(changeInfoLen + bitmapMax)},
	nfs4.OpDelegPurge:         {name: "DELEGPURGE", run: opDelegPurge, rsize: fixed(0)},
	nfs4.OpDelegReturn:        {name: "DELEGRETURN", flags: opModifies, run: opDelegReturn, rsize: fixed(0)},
	nfs4.OpGetattr:            {name: "GETATTR", flags: opInline, run: opGetattr, rsize: getattrRsize, skip: skipBitmap},
	nfs4.OpGetfh:              {name: "GETFH", flags: opInline | opUntimed, run: opGetfh, rsize: fixed(4 + nfs4.FHSize), skip: skipN(0)},
	nfs4.OpLink:               {name: "LINK", flags: opModifies, run: opLink, rsize: fixed(changeInfoLen)},
	nfs4.OpLock:               {name: "LOCK", flags: opModifies, run: opLock, rsize: fixed(max(stateidLen, lockDeniedMax))},
	nfs4.OpLockt:              {name: "LOCKT", run: opLockt, rsize: fixed(lockDeniedMax)},
	nfs4.OpLocku:              {name: "LOCKU", flags: opModifies, run: opLocku, rsize: fixed(stateidLen)},
	nfs4.OpLookup:             {name: "LOOKUP", run: opLookup, rsize: fixed(0)},
	nfs4.OpLookupp:            {name: "LOOKUPP", run: opLookupp, rsize: fixed(0)},
	nfs4.OpNverify:            {name: "NVERIFY", run: opNverify, rsize: fixed(0)},
	nfs4.OpOpen:               {name: "OPEN", flags: opModifies, run: opOpen, rsize: fixed(stateidLen + changeInfoLen + 4 + bitmapMax + openDelegMax)},
	nfs4.OpOpenattr:           {name: "OPENATTR", run: opNotsupp, rsize: fixed(0)},
	nfs4.OpOpenConfirm:        {name: "OPEN_CONFIRM", run: opNotsupp, rsize: fixed(0)}, // NFSv4.0 only (RFC 8881 section 18: MUST NOT in 4.1)
	nfs4.OpOpenDowngrade:      {name: "OPEN_DOWNGRADE", flags: opModifies, run: opOpenDowngrade, rsize: fixed(stateidLen)},
	nfs4.OpPutfh:              {name: "PUTFH", flags: opInline | opUntimed, run: opPutfh, rsize: fixed(0), skip: skipFH},
	nfs4.OpPutpubfh:           {name: "PUTPUBFH", flags: opInline | opUntimed, run: opPutrootfh, rsize: fixed(0), skip: skipN(0)},
	nfs4.OpPutrootfh:          {name: "PUTROOTFH", flags: opInline | opUntimed, run: opPutrootfh, rsize: fixed(0), skip: skipN(0)},
	nfs4.OpRead:               {name: "READ", flags: opInline | opDataReply, run: opRead, rsize: readRsize, skip: skipN(stateidLen + 8 + 4)},
	nfs4.OpReaddir:            {name: "READDIR", run: opReaddir, rsize: readdirRsize},
	nfs4.OpReadlink:           {name: "READLINK", run: opReadlink, rsize: fixed(4 + nfs4.MaxPathLen)},
	nfs4.OpRemove:             {name: "REMOVE", flags: opModifies, run: opRemove, rsize: fixed(changeInfoLen)},
	nfs4.OpRename:             {name: "RENAME", flags: opModifies, run: opRename, rsize: fixed(2 * changeInfoLen)},
	nfs4.OpRenew:              {name: "RENEW", run: opNotsupp, rsize: fixed(0)}, // NFSv4.0 only
	nfs4.OpRestorefh:          {name: "RESTOREFH", flags: opInline | opUntimed, run: opRestorefh, rsize: fixed(0), skip: skipN(0)},
	nfs4.OpSavefh:             {name: "SAVEFH", flags: opInline | opUntimed, run: opSavefh, rsize: fixed(0), skip: skipN(0)},
	nfs4.OpSecinfo:            {name: "SECINFO", run: opSecinfo, rsize: fixed(secinfoMax)},
	nfs4.OpSetattr:            {name: "SETATTR", flags: opModifies, run: opSetattr, rsize: fixed(bitmapMax)},
	nfs4.OpSetclientid:        {name: "SETCLIENTID", run: opNotsupp, rsize: fixed(0)},         // NFSv4.0 only
	nfs4.OpSetclientidConfirm: {name: "SETCLIENTID_CONFIRM", run: opNotsupp, rsize: fixed(0)}, // NFSv4.0 only
	nfs4.OpVerify:             {name: "VERIFY", run: opVerify, rsize: fixed(0)},
	nfs4.OpWrite:              {name: "WRITE", flags: opModifies, run: opWrite, rsize: fixed(4 + 4 + verifierLen)},
	// RELEASE_LOCKOWNER is NFSv4.0 only: RFC 8881 marks it MUST NOT
	// implement for 4.1, where FREE_STATEID and CLOSE do its work.
	nfs4.OpReleaseLockowner: {name: "RELEASE_LOCKOWNER", run: opNotsupp, rsize: fixed(0)},

	nfs4.OpBackchannelCtl:    {name: "BACKCHANNEL_CTL", minor: 1, flags: opModifies, run: opBackchannelCtl, rsize: fixed(0)},
	nfs4.OpBindConnToSession: {name: "BIND_CONN_TO_SESSION", minor: 1, flags: opSessionless | opOnlyOp | opModifies, run: opBindConnToSession, rsize: fixed(nfs4.SessionIDSize + 4 + 4)},
	// EXCHANGE_ID4resok: clientid, sequenceid, flags, state_protect4_r
	// (SP4_NONE), server_owner4, server_scope, one nfs_impl_id4.
	nfs4.OpExchangeID: {name: "EXCHANGE_ID", minor: 1, flags: opSessionless | opModifies, run: opExchangeID,
		rsize: fixed(8 + 4 + 4 + 4 + (8 + opaqueMax) + opaqueMax + 4 + (opaqueMax + opaqueMax + 12))},
	// CREATE_SESSION4resok: session id, sequence, flags, two channel_attrs4
	// (six counts and an rdma_ird array of at most one).
	nfs4.OpCreateSession:    {name: "CREATE_SESSION", minor: 1, flags: opSessionless | opModifies, run: opCreateSession, rsize: fixed(nfs4.SessionIDSize + 4 + 4 + 2*(6*4+4+4))},
	nfs4.OpDestroySession:   {name: "DESTROY_SESSION", minor: 1, flags: opSessionless | opModifies, run: opDestroySession, rsize: fixed(0)},
	nfs4.OpFreeStateid:      {name: "FREE_STATEID", minor: 1, flags: opModifies, run: opFreeStateid, rsize: fixed(0)},
	nfs4.OpGetDirDelegation: {name: "GET_DIR_DELEGATION", minor: 1, flags: opModifies, run: opNotsupp, rsize: fixed(0)},
	nfs4.OpGetdeviceinfo:    {name: "GETDEVICEINFO", minor: 1, run: opNotsupp, rsize: fixed(0)},
	nfs4.OpGetdevicelist:    {name: "GETDEVICELIST", minor: 1, run: opNotsupp, rsize: fixed(0)},
	nfs4.OpLayoutcommit:     {name: "LAYOUTCOMMIT", minor: 1, flags: opModifies, run: opNotsupp, rsize: fixed(0)},
	nfs4.OpLayoutget:        {name: "LAYOUTGET", minor: 1, flags: opModifies, run: opNotsupp, rsize: fixed(0)},
	nfs4.OpLayoutreturn:     {name: "LAYOUTRETURN", minor: 1, flags: opModifies, run: opNotsupp, rsize: fixed(0)},
	nfs4.OpSecinfoNoName:    {name: "SECINFO_NO_NAME", minor: 1, run: opSecinfoNoName, rsize: fixed(secinfoMax)},
	nfs4.OpSequence:         {name: "SEQUENCE", minor: 1, flags: opFirstOnly | opInline | opUntimed, run: opSequence, rsize: fixed(nfs4.SessionIDSize + 5*4), skip: skipN(nfs4.SessionIDSize + 16)},
	nfs4.OpSetSSV:           {name: "SET_SSV", minor: 1, flags: opModifies, run: opNotsupp, rsize: fixed(0)},
	nfs4.OpTestStateid:      {name: "TEST_STATEID", minor: 1, run: opTestStateid, rsize: testStateidRsize},
	nfs4.OpWantDelegation:   {name: "WANT_DELEGATION", minor: 1, flags: opModifies, run: opWantDelegation, rsize: fixed(openDelegMax)},
	nfs4.OpDestroyClientid:  {name: "DESTROY_CLIENTID", minor: 1, flags: opSessionless | opModifies, run: opDestroyClientid, rsize: fixed(0)},
	nfs4.OpReclaimComplete:  {name: "RECLAIM_COMPLETE", minor: 1, flags: opModifies, run: opReclaimComplete, rsize: fixed(0)},

	nfs4.OpAllocate: {name: "ALLOCATE", minor: 2, flags: opModifies, run: opAllocate, rsize: fixed(0)},
	// COPY4res: write_response4 (the callback id of an asynchronous
	// copy, count, committed, verifier) and copy_requirements4; on
	// NFS4ERR_OFFLOAD_NO_REQS only the requirements.
	nfs4.OpCopy:          {name: "COPY", minor: 2, flags: opModifies, run: opCopy, rsize: fixed((4 + stateidLen) + 8 + 4 + verifierLen + 4 + 4)},
	nfs4.OpCopyNotify:    {name: "COPY_NOTIFY", minor: 2, flags: opModifies, run: opNotsupp, rsize: fixed(0)},
	nfs4.OpDeallocate:    {name: "DEALLOCATE", minor: 2, flags: opModifies, run: opDeallocate, rsize: fixed(0)},
	nfs4.OpIOAdvise:      {name: "IO_ADVISE", minor: 2, run: opNotsupp, rsize: fixed(0)},
	nfs4.OpLayouterror:   {name: "LAYOUTERROR", minor: 2, run: opNotsupp, rsize: fixed(0)},
	nfs4.OpLayoutstats:   {name: "LAYOUTSTATS", minor: 2, run: opNotsupp, rsize: fixed(0)},
	nfs4.OpOffloadCancel: {name: "OFFLOAD_CANCEL", minor: 2, flags: opModifies, run: opOffloadCancel, rsize: fixed(0)},
	// OFFLOAD_STATUS4resok: count and an optional completion status.
	nfs4.OpOffloadStatus: {name: "OFFLOAD_STATUS", minor: 2, run: opOffloadStatus, rsize: fixed(8 + 4 + 4)},
	nfs4.OpReadPlus:      {name: "READ_PLUS", minor: 2, flags: opInline | opDataReply, run: opReadPlus, rsize: readPlusRsize, skip: skipN(stateidLen + 8 + 4)},
	nfs4.OpSeek:          {name: "SEEK", minor: 2, run: opSeek, rsize: fixed(4 + 8), skip: skipN(stateidLen + 8 + 4)},
	nfs4.OpWriteSame:     {name: "WRITE_SAME", minor: 2, flags: opModifies, run: opNotsupp, rsize: fixed(0)},
	nfs4.OpClone:         {name: "CLONE", minor: 2, flags: opModifies, run: opClone, rsize: fixed(0)},

	// RFC 8276 extended attributes, an extension of NFSv4.2.
	nfs4.OpGetxattr:    {name: "GETXATTR", minor: 2, run: opGetxattr, rsize: fixed(4 + xattrValueMax)},
	nfs4.OpSetxattr:    {name: "SETXATTR", minor: 2, flags: opModifies, run: opSetxattr, rsize: fixed(changeInfoLen)},
	nfs4.OpListxattrs:  {name: "LISTXATTRS", minor: 2, run: opListxattrs, rsize: listxattrsRsize},
	nfs4.OpRemovexattr: {name: "REMOVEXATTR", minor: 2, flags: opModifies, run: opRemovexattr, rsize: fixed(changeInfoLen)},
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

func opNotsupp(*compound) uint32 { return nfs4.ErrNotsupp }

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
	d.Skip(stateidLen + 8)
	return 4 + 4 + xdrLen(min(int(d.Uint32()), c.s.cfg.MaxIO))
}

// readPlusRsize is READ_PLUS4resok: eof, the segment count, and the data
// with each segment's header; a hole segment (type, offset, length) is no
// bigger than a data segment's header plus padding.
func readPlusRsize(c *compound) int {
	d := c.peekArgs()
	d.Skip(stateidLen + 8)
	return 4 + 4 + min(int(d.Uint32()), c.s.cfg.MaxIO) + maxSegments*(4+8+8)
}

// readdirRsize is READDIR4resok, which the client bounds with maxcount
// (RFC 8881 section 18.23.3); the encoder also keeps it to the room left.
func readdirRsize(c *compound) int {
	d := c.peekArgs()
	d.Skip(8 + verifierLen + 4)
	return int(d.Uint32())
}

// listxattrsRsize is LISTXATTRS4resok, bounded by lxa_maxcount (RFC 8276
// section 8.4.3.2): cookie, then names and eof within maxcount.
func listxattrsRsize(c *compound) int {
	d := c.peekArgs()
	d.Skip(8)
	return 8 + int(d.Uint32())
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
	return fattrBound(nfs4.DecodeBitmap(&d))
}

// fattrBound bounds an encoded fattr4 for the attributes in req.
func fattrBound(req nfs4.Bitmap) int {
	got := req.And(readableAttrs)
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

func skipN(n int) func(d *xdr.Decoder) {
	return func(d *xdr.Decoder) { d.Skip(n) }
}

func skipFH(d *xdr.Decoder)     { d.Opaque(nfs4.FHSize) }
func skipBitmap(d *xdr.Decoder) { nfs4.DecodeBitmap(d) }
