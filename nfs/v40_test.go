package nfs

import "github.com/nfsd-uring/nfsd-uring/nfs/nfs4"

// v40OnlyOps are NFSv4.0's own ops: NFS4ERR_NOTSUPP in 4.1 and 4.2.
var v40OnlyOps = []uint32{nfs4.OpOpenConfirm, nfs4.OpRenew, nfs4.OpSetclientid,
	nfs4.OpSetclientidConfirm, nfs4.OpReleaseLockowner}
