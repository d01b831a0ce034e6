package nfs

import (
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// delegOfLocked finds the delegation sid names for the compound's client
// on the current file.
func (c *compound) delegOfLocked(sid nfs4.Stateid) (*openState, nfs4.Status) {
	sid, s := c.resolveSid(sid)
	if s != nfs4.OK {
		return nil, s
	}
	o, s := c.s.state.find(c.sess.client, sid)
	if s != nfs4.OK {
		return nil, s
	}
	if o.deleg == nil || !o.node.same(c.cfh) {
		return nil, nfs4.ErrBadStateid
	}
	return o, nfs4.OK
}

func opDelegReturn(c *compound) nfs4.Status {
	sid := decodeStateidArgs(c.d).stateid
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	t := c.s.state
	t.mu.Lock()
	defer t.mu.Unlock()
	o, s := c.delegOfLocked(sid)
	if s != nfs4.OK {
		return s
	}
	t.dropLocked(o)
	return nfs4.OK
}

// opDelegPurge: DELEGPURGE serves CLAIM_DELEGATE_PREV reclaims after a
// client restart, which this server does not offer (delegations do not
// survive a client's restart), so RFC 8881 section 18.5.3 has it answer
// NFS4ERR_NOTSUPP.
func opDelegPurge(c *compound) nfs4.Status {
	decodeClientidArgs(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	return nfs4.ErrNotsupp
}

// opWantDelegation asks for a delegation outside OPEN (RFC 8881 section
// 18.49): CLAIM_FH on a file the client has open, granted as OPEN would
// grant it; CLAIM_PREVIOUS is a reclaim, and there is no grace period.
// wantDelegationArgs is WANT_DELEGATION4args; a CLAIM_PREVIOUS's
// delegation type is read and not kept.
type wantDelegationArgs struct {
	want, claim uint32
}

func decodeWantDelegation(d *xdr.Decoder) wantDelegationArgs {
	a := wantDelegationArgs{want: d.Uint32(), claim: d.Uint32()}
	if a.claim == nfs4.ClaimPrevious {
		d.Uint32()
	}
	return a
}

func opWantDelegation(c *compound) nfs4.Status {
	a := decodeWantDelegation(c.d)
	want, claim := a.want, a.claim
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	switch claim {
	case nfs4.ClaimFH:
	case nfs4.ClaimPrevious:
		return nfs4.ErrNoGrace
	default:
		return nfs4.ErrInval
	}
	if openableMode(c.cfh.mode) != nfs4.OK {
		g := delegGrant{typ: nfs4.DelegateNoneExt, why: nfs4.WhyNoDelegNotSuppFile}
		if c.cfh.mode&unix.S_IFMT == unix.S_IFDIR {
			g.why = nfs4.WhyNoDelegIsDir
		}
		g.encode(c.e)
		return nfs4.OK
	}
	w := want & nfs4.ShareAccessWantMask
	if w == nfs4.ShareAccessWantNoPreference {
		w = nfs4.ShareAccessWantAnyDeleg
	}
	// The delegation is bounded by the access the client's opens have.
	var access uint32
	t := c.s.state
	t.mu.Lock()
	for _, o := range t.peekFileLocked(c.cfh).opens {
		if o.client == c.sess.client {
			access |= o.access.Load()
		}
	}
	t.mu.Unlock()
	if access == 0 {
		delegGrant{typ: nfs4.DelegateNoneExt, why: nfs4.WhyNoDelegResource}.encode(c.e)
		return nfs4.OK
	}
	if w == nfs4.ShareAccessWantWriteDeleg && access&nfs4.ShareAccessWrite == 0 {
		delegGrant{typ: nfs4.DelegateNoneExt, why: nfs4.WhyNoDelegNotSuppUpgrade}.encode(c.e)
		return nfs4.OK
	}
	c.grantDeleg(c.cfh, access, w).encode(c.e)
	return nfs4.OK
}
