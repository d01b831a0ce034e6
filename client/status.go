package client

import (
	"errors"
	"fmt"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// StatusError is a non-OK nfsstat4 returned by operation Op.
type StatusError struct {
	Op     uint32
	Status nfs4.Status
}

func (e *StatusError) Error() string {
	return OpName(e.Op) + ": " + StatusName(e.Status)
}

// IsStatus reports whether err is a *StatusError with the given status.
func IsStatus(err error, status nfs4.Status) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Status == status
}

// StatusName returns the RFC name of an nfsstat4, e.g. "NFS4ERR_DELAY".
func StatusName(s nfs4.Status) string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("NFS4ERR_%d", s)
}

// OpName returns the RFC name of an operation, e.g. "READ_PLUS".
func OpName(op uint32) string {
	if n, ok := opNames[op]; ok {
		return n
	}
	return fmt.Sprintf("OP_%d", op)
}

var statusNames = map[nfs4.Status]string{
	nfs4.OK: "NFS4_OK", nfs4.ErrPerm: "NFS4ERR_PERM", nfs4.ErrNoent: "NFS4ERR_NOENT",
	nfs4.ErrIO: "NFS4ERR_IO", nfs4.ErrNxio: "NFS4ERR_NXIO", nfs4.ErrAccess: "NFS4ERR_ACCESS",
	nfs4.ErrExist: "NFS4ERR_EXIST", nfs4.ErrXdev: "NFS4ERR_XDEV", nfs4.ErrNotdir: "NFS4ERR_NOTDIR",
	nfs4.ErrIsdir: "NFS4ERR_ISDIR", nfs4.ErrInval: "NFS4ERR_INVAL", nfs4.ErrFbig: "NFS4ERR_FBIG",
	nfs4.ErrNospc: "NFS4ERR_NOSPC", nfs4.ErrRofs: "NFS4ERR_ROFS", nfs4.ErrMlink: "NFS4ERR_MLINK",
	nfs4.ErrNametoolong: "NFS4ERR_NAMETOOLONG", nfs4.ErrNotempty: "NFS4ERR_NOTEMPTY",
	nfs4.ErrDquot: "NFS4ERR_DQUOT", nfs4.ErrStale: "NFS4ERR_STALE", nfs4.ErrBadhandle: "NFS4ERR_BADHANDLE",
	nfs4.ErrBadCookie: "NFS4ERR_BAD_COOKIE", nfs4.ErrNotsupp: "NFS4ERR_NOTSUPP",
	nfs4.ErrToosmall: "NFS4ERR_TOOSMALL", nfs4.ErrServerfault: "NFS4ERR_SERVERFAULT",
	nfs4.ErrBadtype: "NFS4ERR_BADTYPE", nfs4.ErrDelay: "NFS4ERR_DELAY", nfs4.ErrSame: "NFS4ERR_SAME",
	nfs4.ErrDenied: "NFS4ERR_DENIED", nfs4.ErrExpired: "NFS4ERR_EXPIRED", nfs4.ErrLocked: "NFS4ERR_LOCKED",
	nfs4.ErrGrace: "NFS4ERR_GRACE", nfs4.ErrFhexpired: "NFS4ERR_FHEXPIRED",
	nfs4.ErrShareDenied: "NFS4ERR_SHARE_DENIED", nfs4.ErrWrongsec: "NFS4ERR_WRONGSEC",
	nfs4.ErrClidInuse: "NFS4ERR_CLID_INUSE", nfs4.ErrResource: "NFS4ERR_RESOURCE",
	nfs4.ErrMoved: "NFS4ERR_MOVED", nfs4.ErrNofilehandle: "NFS4ERR_NOFILEHANDLE",
	nfs4.ErrMinorVersMismatch: "NFS4ERR_MINOR_VERS_MISMATCH", nfs4.ErrStaleClientid: "NFS4ERR_STALE_CLIENTID",
	nfs4.ErrStaleStateid: "NFS4ERR_STALE_STATEID", nfs4.ErrOldStateid: "NFS4ERR_OLD_STATEID",
	nfs4.ErrBadStateid: "NFS4ERR_BAD_STATEID", nfs4.ErrBadSeqid: "NFS4ERR_BAD_SEQID",
	nfs4.ErrNotSame: "NFS4ERR_NOT_SAME", nfs4.ErrLockRange: "NFS4ERR_LOCK_RANGE",
	nfs4.ErrSymlink: "NFS4ERR_SYMLINK", nfs4.ErrRestorefh: "NFS4ERR_RESTOREFH",
	nfs4.ErrAttrnotsupp: "NFS4ERR_ATTRNOTSUPP", nfs4.ErrNoGrace: "NFS4ERR_NO_GRACE",
	nfs4.ErrBadXDR: "NFS4ERR_BADXDR", nfs4.ErrLocksHeld: "NFS4ERR_LOCKS_HELD",
	nfs4.ErrOpenmode: "NFS4ERR_OPENMODE", nfs4.ErrBadowner: "NFS4ERR_BADOWNER",
	nfs4.ErrBadchar: "NFS4ERR_BADCHAR", nfs4.ErrBadname: "NFS4ERR_BADNAME",
	nfs4.ErrBadRange: "NFS4ERR_BAD_RANGE", nfs4.ErrLockNotsupp: "NFS4ERR_LOCK_NOTSUPP",
	nfs4.ErrOpIllegal: "NFS4ERR_OP_ILLEGAL", nfs4.ErrDeadlock: "NFS4ERR_DEADLOCK",
	nfs4.ErrFileOpen: "NFS4ERR_FILE_OPEN", nfs4.ErrAdminRevoked: "NFS4ERR_ADMIN_REVOKED",
	nfs4.ErrBadsession: "NFS4ERR_BADSESSION", nfs4.ErrBadslot: "NFS4ERR_BADSLOT",
	nfs4.ErrCompleteAlready: "NFS4ERR_COMPLETE_ALREADY", nfs4.ErrConnNotBound: "NFS4ERR_CONN_NOT_BOUND_TO_SESSION",
	nfs4.ErrSeqMisordered: "NFS4ERR_SEQ_MISORDERED", nfs4.ErrSequencePos: "NFS4ERR_SEQUENCE_POS",
	nfs4.ErrReqTooBig: "NFS4ERR_REQ_TOO_BIG", nfs4.ErrRepTooBig: "NFS4ERR_REP_TOO_BIG",
	nfs4.ErrRepTooBigToCache: "NFS4ERR_REP_TOO_BIG_TO_CACHE", nfs4.ErrRetryUncachedRep: "NFS4ERR_RETRY_UNCACHED_REP",
	nfs4.ErrTooManyOps: "NFS4ERR_TOO_MANY_OPS", nfs4.ErrOpNotInSession: "NFS4ERR_OP_NOT_IN_SESSION",
	nfs4.ErrClientidBusy: "NFS4ERR_CLIENTID_BUSY", nfs4.ErrSeqFalseRetry: "NFS4ERR_SEQ_FALSE_RETRY",
	nfs4.ErrBadHighSlot: "NFS4ERR_BAD_HIGH_SLOT", nfs4.ErrDeadsession: "NFS4ERR_DEADSESSION",
	nfs4.ErrNotOnlyOp: "NFS4ERR_NOT_ONLY_OP", nfs4.ErrWrongCred: "NFS4ERR_WRONG_CRED",
	nfs4.ErrWrongType: "NFS4ERR_WRONG_TYPE", nfs4.ErrUnionNotsupp: "NFS4ERR_UNION_NOTSUPP",
	nfs4.ErrOffloadNoReqs: "NFS4ERR_OFFLOAD_NO_REQS",
	nfs4.ErrNoxattr:       "NFS4ERR_NOXATTR", nfs4.ErrXattr2big: "NFS4ERR_XATTR2BIG",
}

var opNames = map[uint32]string{
	nfs4.OpAccess: "ACCESS", nfs4.OpClose: "CLOSE", nfs4.OpCommit: "COMMIT", nfs4.OpCreate: "CREATE",
	nfs4.OpDelegReturn: "DELEGRETURN", nfs4.OpGetattr: "GETATTR", nfs4.OpGetfh: "GETFH",
	nfs4.OpLink: "LINK", nfs4.OpLock: "LOCK", nfs4.OpLockt: "LOCKT", nfs4.OpLocku: "LOCKU",
	nfs4.OpLookup: "LOOKUP", nfs4.OpLookupp: "LOOKUPP", nfs4.OpNverify: "NVERIFY", nfs4.OpOpen: "OPEN",
	nfs4.OpOpenDowngrade: "OPEN_DOWNGRADE", nfs4.OpPutfh: "PUTFH", nfs4.OpPutpubfh: "PUTPUBFH",
	nfs4.OpPutrootfh: "PUTROOTFH", nfs4.OpRead: "READ", nfs4.OpReaddir: "READDIR",
	nfs4.OpReadlink: "READLINK", nfs4.OpRemove: "REMOVE", nfs4.OpRename: "RENAME",
	nfs4.OpRestorefh: "RESTOREFH", nfs4.OpSavefh: "SAVEFH", nfs4.OpSecinfo: "SECINFO",
	nfs4.OpSetattr: "SETATTR", nfs4.OpVerify: "VERIFY", nfs4.OpWrite: "WRITE",
	nfs4.OpExchangeID: "EXCHANGE_ID", nfs4.OpCreateSession: "CREATE_SESSION",
	nfs4.OpDestroySession: "DESTROY_SESSION", nfs4.OpFreeStateid: "FREE_STATEID",
	nfs4.OpSecinfoNoName: "SECINFO_NO_NAME", nfs4.OpSequence: "SEQUENCE",
	nfs4.OpTestStateid: "TEST_STATEID", nfs4.OpDestroyClientid: "DESTROY_CLIENTID",
	nfs4.OpReclaimComplete: "RECLAIM_COMPLETE", nfs4.OpAllocate: "ALLOCATE",
	nfs4.OpDeallocate: "DEALLOCATE", nfs4.OpReadPlus: "READ_PLUS", nfs4.OpSeek: "SEEK",
	nfs4.OpGetxattr: "GETXATTR", nfs4.OpSetxattr: "SETXATTR", nfs4.OpListxattrs: "LISTXATTRS",
	nfs4.OpRemovexattr: "REMOVEXATTR", nfs4.OpCopy: "COPY", nfs4.OpClone: "CLONE",
	nfs4.OpOffloadStatus: "OFFLOAD_STATUS", nfs4.OpOffloadCancel: "OFFLOAD_CANCEL",
	nfs4.OpIllegal: "ILLEGAL",
}
