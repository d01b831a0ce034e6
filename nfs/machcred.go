package nfs

import (
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// SP4_MACH_CRED state protection (RFC 8881 sections 2.10.8.3 and
// 18.35), as knfsd does it (fs/nfsd/nfs4state.c nfsd4_exchange_id,
// nfsd4_mach_creds_match; nfs4proc.c nfsd4_spo_must_allow; export.c
// check_nfsd_access):
//
//   - A client asks for it in EXCHANGE_ID, which must come over RPCSEC_GSS
//     with integrity or privacy (krb5i, krb5p); anything else, AUTH_SYS
//     and plain krb5 included, is NFS4ERR_INVAL (knfsd's
//     svc_rqst_integrity_protected). The principal it came with is the
//     client's machine credential from then on.
//   - spo_must_enforce is the ops the table marks opMachEnforce
//     (BIND_CONN_TO_SESSION, EXCHANGE_ID, CREATE_SESSION, DESTROY_SESSION,
//     DESTROY_CLIENTID), whatever the client asked: sent under another
//     principal they answer NFS4ERR_WRONG_CRED, as knfsd's do.
//   - spo_must_allow is what the client asked of the ops the table marks
//     opMachAllow (CLOSE, OPEN_DOWNGRADE, LOCKU, DELEGRETURN, TEST_STATEID,
//     FREE_STATEID). A COMPOUND that holds one of them, sent by the
//     machine principal over the client's session, is not refused
//     NFS4ERR_WRONGSEC by the export's sec= list (so a krb5i machine
//     credential can return the state of a user who mounted with krb5p
//     and whose ticket expired). These ops never checked which principal
//     owns the state (knfsd neither): the machine principal, mapped to the
//     anonymous ids for file access, may close any open of its client.

// The op table flags of SP4_MACH_CRED (after v40.go's).
const (
	// opMachEnforce: with SP4_MACH_CRED, only the client's machine
	// principal may send it (spo_must_enforce, knfsd's list).
	opMachEnforce = opSeqid << (1 + iota)
	// opMachAllow: with SP4_MACH_CRED, the machine principal may send it
	// for any of its client's state, whatever the export's sec= list
	// (spo_must_allow, knfsd's list).
	opMachAllow
)

// machCred is the machine credential of a client that asked SP4_MACH_CRED.
// It is set when the client record is made and never changes.
type machCred struct {
	principal string      // the Kerberos principal of its EXCHANGE_ID
	allow     nfs4.Bitmap // spo_must_allow as granted
}

// machEnforceOps and machAllowOps are the table's opMachEnforce and
// opMachAllow ops as bitmaps (filled in init, as the table refers to the
// handlers that read them).
var machEnforceOps, machAllowOps nfs4.Bitmap

func init() {
	for op := range opTable {
		f := opTable[op].flags
		if f&opMachEnforce != 0 {
			machEnforceOps.Set(op)
		}
		if f&opMachAllow != 0 {
			machAllowOps.Set(op)
		}
	}
}

// stateProtect is state_protect4_a as decoded.
type stateProtect struct {
	how   uint32
	allow nfs4.Bitmap // SP4_MACH_CRED's spo_must_allow
}

// machCredFor checks an EXCHANGE_ID's state protection against the
// caller: nil for SP4_NONE, the machine credential for SP4_MACH_CRED over
// RPCSEC_GSS with integrity or privacy, NFS4ERR_INVAL otherwise.
func machCredFor(sp stateProtect, caller Cred) (*machCred, nfs4.Status) {
	if sp.how != nfs4.SP4MachCred {
		return nil, nfs4.OK
	}
	if caller.Flavor != nfs4.AuthGSS || (caller.Service != gssSvcInteg && caller.Service != gssSvcPriv) {
		return nil, nfs4.ErrInval
	}
	if caller.Principal == "" {
		return nil, nfs4.ErrServerfault // knfsd: no principal to enforce
	}
	return &machCred{principal: caller.Principal, allow: sp.allow.And(machAllowOps)}, nfs4.OK
}

// encodeStateProtect writes state_protect4_r: SP4_NONE, or SP4_MACH_CRED
// with spo_must_enforce and spo_must_allow.
func encodeStateProtect(e *xdr.Encoder, m *machCred) {
	if m == nil {
		e.Uint32(nfs4.SP4None)
		return
	}
	e.Uint32(nfs4.SP4MachCred)
	machEnforceOps.Encode(e)
	m.allow.Encode(e)
}

// machMatch reports whether caller may send cl's opMachEnforce ops:
// always for a client without SP4_MACH_CRED, else only its machine
// principal (knfsd's nfsd4_mach_creds_match; the mechanism is always
// Kerberos 5 here).
func (cl *client) machMatch(caller Cred) bool {
	m := cl.mach
	return m == nil || (caller.Flavor == nfs4.AuthGSS && caller.Principal == m.principal)
}

// machAllowed reports whether the rest of the COMPOUND (after the current
// op's arguments) holds an op of the session client's spo_must_allow and
// the caller is that client's machine principal: then the export's sec=
// list does not apply (knfsd's nfsd4_spo_must_allow in check_nfsd_access).
// An op whose arguments cannot be skipped ends the scan.
func (c *compound) machAllowed() bool {
	if c.sess == nil || c.sess.client == nil {
		return false
	}
	cl := c.sess.client
	if cl.mach == nil || !cl.machMatch(c.caller) {
		return false
	}
	return holdsOp(c.d.Rest(), cl.mach.allow)
}

// holdsOp reports whether the COMPOUND ops in rest hold one of set,
// skipping the arguments of the others; an op whose arguments cannot be
// skipped ends the scan (false).
func holdsOp(rest []byte, set nfs4.Bitmap) bool {
	var d xdr.Decoder
	d.Reset(rest)
	for d.Remaining() >= 4 {
		op := d.Uint32()
		if op < uint32(32*len(set)) && set.Has(int(op)) {
			return true
		}
		info := lookupOp(op)
		if info == nil || info.args.read == nil || !info.args.skip(&d) {
			return false
		}
	}
	return false
}
