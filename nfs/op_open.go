package nfs

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

type openArgs struct {
	access, deny uint32
	clientID     uint64
	owner        []byte
	create       bool
	createMode   uint32
	verf         [8]byte
	attrs        newAttrs
	attrStatus   nfs4.Status
	claim        uint32
	name         []byte
	delegSid     nfs4.Stateid // CLAIM_DELEGATE_CUR and CLAIM_DELEG_CUR_FH
}

// decodeOpen reads OPEN4args.
func decodeOpen(d *xdr.Decoder) openArgs {
	var a openArgs
	d.Uint32() // seqid: unused in 4.1
	a.access = d.Uint32()
	a.deny = d.Uint32()
	a.clientID = d.Uint64()
	a.owner = d.Opaque(nfs4.OpaqueLimit)
	if d.Uint32() == nfs4.OpenCreate {
		a.create = true
		a.createMode = d.Uint32()
		switch a.createMode {
		case nfs4.CreateUnchecked, nfs4.CreateGuarded:
			a.attrs, a.attrStatus = decodeNewAttrs(d)
		case nfs4.CreateExclusive:
			copy(a.verf[:], d.Fixed(8))
		case nfs4.CreateExclusive41:
			copy(a.verf[:], d.Fixed(8))
			a.attrs, a.attrStatus = decodeNewAttrs(d)
		default:
			d.Fail(xdr.ErrTooLong)
		}
	}
	a.claim = d.Uint32()
	switch a.claim {
	case nfs4.ClaimNull, nfs4.ClaimDelegatePrev:
		a.name = decodeName(d)
	case nfs4.ClaimPrevious:
		d.Uint32()
	case nfs4.ClaimDelegateCur:
		a.delegSid = nfs4.DecodeStateid(d)
		a.name = decodeName(d)
	case nfs4.ClaimDelegCurFH:
		a.delegSid = nfs4.DecodeStateid(d)
	case nfs4.ClaimFH, nfs4.ClaimDelegPrevFH:
	default:
		d.Fail(xdr.ErrTooLong)
	}
	return a
}

func opOpen(c *compound) nfs4.Status {
	a := decodeOpen(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	defer c.s.state.syncRecords() // after any courtesy client this open expired
	if s := c.s.state.openGrace(c.sess.client, a.claim); s != nfs4.OK {
		return s
	}
	access := a.access &^ (nfs4.ShareAccessWantMask | wantFlags)
	want := a.access & nfs4.ShareAccessWantMask
	if access == 0 || access > nfs4.ShareAccessBoth || a.deny > nfs4.ShareDenyBoth {
		return nfs4.ErrInval
	}
	if a.create && a.attrStatus != nfs4.OK {
		return a.attrStatus
	}
	if s := c.resolveNewAttrs(&a.attrs); a.create && s != nfs4.OK {
		return s
	}
	// DENY_READ keeps others from reading: knfsd's do_open_permission
	// asks NFSD_MAY_WRITE for it, so a read-only export refuses it and
	// only a caller who may write the file may take it (issue 21
	// finding 5: a reader could otherwise lock the owner out).
	denyRead := a.deny&nfs4.ShareDenyRead != 0
	if (a.create || access&nfs4.ShareAccessWrite != 0 || denyRead) && c.readOnlyFH() {
		return nfs4.ErrRofs
	}
	res := openResult{}
	target, s := c.openTarget(&a, &res)
	if s != nfs4.OK {
		return s
	}
	var st unix.Stat_t
	if s := c.s.statNode(target, &st); s != nfs4.OK {
		return s
	}
	if s := openableType(&st); s != nfs4.OK {
		return s
	}
	if s := c.openPermission(target, &st, access, a.deny, res.created); s != nfs4.OK {
		return s
	}
	if s := c.s.breakDelegs(c.sess.client, target, access&nfs4.ShareAccessWrite != 0 || a.deny&nfs4.ShareDenyRead != 0); s != nfs4.OK {
		return s
	}
	sid, s := c.s.state.open(c.sess.client, a, target, access)
	if s != nfs4.OK {
		return s
	}
	deleg := delegGrant{typ: nfs4.DelegateNone}
	if a.claim == nfs4.ClaimNull || a.claim == nfs4.ClaimFH {
		deleg = c.grantDeleg(target, access, want)
	}
	c.setFH(target)
	c.setCur(sid)
	e := c.e
	sid.Encode(e)
	changeInfo{res.before, res.after}.encode(e)
	e.Uint32(nfs4.OpenResultLocktype)
	res.attrset.Encode(e)
	deleg.encode(e)
	return nfs4.OK
}

// openResult carries what OPEN reports besides the stateid.
type openResult struct {
	before, after uint64 // directory change attribute around a create
	attrset       nfs4.Bitmap
	created       bool
}

// openTarget finds (or creates) the file an OPEN names.
func (c *compound) openTarget(a *openArgs, res *openResult) (*node, nfs4.Status) {
	switch a.claim {
	case nfs4.ClaimNull:
	case nfs4.ClaimFH:
		if a.create {
			return nil, nfs4.ErrInval
		}
		return c.cfh, nfs4.OK
	case nfs4.ClaimDelegCurFH:
		// The holder of a delegation being recalled turns the opens it
		// made locally into server opens (RFC 8881 section 10.2.1).
		if a.create {
			return nil, nfs4.ErrInval
		}
		return c.cfh, c.checkDelegClaim(a.delegSid, c.cfh)
	case nfs4.ClaimDelegateCur:
		if a.create {
			return nil, nfs4.ErrInval
		}
	case nfs4.ClaimPrevious:
		// A reclaim (openGrace allowed it): the current file is the one
		// the client had open before the restart.
		if a.create {
			return nil, nfs4.ErrInval
		}
		return c.cfh, nfs4.OK
	default:
		return nil, nfs4.ErrNotsupp
	}
	var st unix.Stat_t
	if s := c.needDir(&st); s != nfs4.OK {
		return nil, s
	}
	if s := c.mayLookup(c.cfh, &st); s != nfs4.OK {
		return nil, s
	}
	if s := checkName(a.name); s != nfs4.OK {
		return nil, s
	}
	if c.cfh.exp == nil {
		if a.create {
			return nil, nfs4.ErrRofs
		}
		return nil, nfs4.ErrIsdir
	}
	res.before = changeAttr(&st)
	res.after = res.before
	if !a.create {
		n, err := c.s.lookupChild(c.cfh, string(a.name), &st)
		if err != nil {
			return nil, errno(err)
		}
		if a.claim == nfs4.ClaimDelegateCur {
			return n, c.checkDelegClaim(a.delegSid, n)
		}
		return n, nfs4.OK
	}
	n, s := c.createFile(a, res)
	if s != nfs4.OK {
		return nil, s
	}
	if c.s.statNode(c.cfh, &st) == nfs4.OK {
		res.after = changeAttr(&st)
	}
	return n, nfs4.OK
}

// openPermission checks the caller may open the file as asked, and opens
// the descriptors the open will use. Write access and DENY_READ need
// write permission (knfsd's do_open_permission), the file's owner
// included unless the OPEN created the file.
func (c *compound) openPermission(n *node, st *unix.Stat_t, access, deny uint32, created bool) nfs4.Status {
	// Checked here for every OPEN, ACLs included (accessResult): a
	// descriptor cached from another caller's open is not checked by the
	// kernel again.
	if access&nfs4.ShareAccessRead != 0 && !created && c.cred.UID != st.Uid {
		if _, g := c.accessResult(n, st, nfs4.AccessRead); g == 0 {
			return nfs4.ErrAccess
		}
	}
	if (access&nfs4.ShareAccessWrite != 0 || deny&nfs4.ShareDenyRead != 0) && !created {
		if _, g := c.accessResult(n, st, nfs4.AccessModify); g == 0 {
			return nfs4.ErrAccess
		}
	}
	if access&nfs4.ShareAccessWrite != 0 {
		if _, err := n.writeFD(c.cred); err != nil {
			return errno(err)
		}
	}
	if _, err := n.readFD(); err != nil {
		return errno(err)
	}
	return nfs4.OK
}

func openableType(st *unix.Stat_t) nfs4.Status { return openableMode(st.Mode) }

// openableMode is openableType for file type bits.
func openableMode(mode uint32) nfs4.Status {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return nfs4.OK
	case unix.S_IFDIR:
		return nfs4.ErrIsdir
	case unix.S_IFLNK:
		return nfs4.ErrSymlink
	}
	return nfs4.ErrWrongType
}

// open records an open of n by the client's open owner, or upgrades an
// existing one, enforcing share reservations against other owners.
func (t *stateTable) open(cl *client, a openArgs, n *node, access uint32) (nfs4.Stateid, nfs4.Status) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// open_owner4's clientid is not checked: in NFSv4.1 the client is
	// the one the session belongs to (RFC 8881 section 18.11.3 says so
	// for LOCKT; knfsd overwrites it from the session for OPEN and LOCK
	// too, and the Linux client and pynfs send whatever they like there).
	key := openKey{owner: "o:" + string(a.owner), node: n}
	write := access&nfs4.ShareAccessWrite != 0 || a.deny&nfs4.ShareDenyRead != 0
	if t.delegConflictLocked(cl, n, write) {
		// A delegation granted since breakDelegs looked.
		return nfs4.Stateid{}, nfs4.ErrDelay
	}
	if t.shareConflictLocked(cl, n, key, access, a.deny) {
		return nfs4.Stateid{}, nfs4.ErrShareDenied
	}
	o := cl.opens[key]
	if t.ownShareConflictLocked(cl, n, key, access, a.deny) {
		return nfs4.Stateid{}, nfs4.ErrShareDenied
	}
	if o == nil {
		if len(cl.opens) >= t.s.cfg.MaxOpensPerClient {
			return nfs4.Stateid{}, nfs4.ErrResource
		}
		o = &openState{other: t.newOther(), client: cl, node: n, key: key}
		cl.opens[key] = o
		t.opens.put(o.other, o)
		f := t.fileLocked(n)
		f.opens = append(f.opens, o)
	}
	// Access before seqid: whoever sees the new seqid sees the access
	// that came with it (find and checkWrite read them without the lock).
	o.access.Or(access)
	t.setDenyLocked(o, o.deny|a.deny)
	o.modes.add(access, a.deny)
	return nfs4.Stateid{Seqid: o.seq.Add(1), Other: o.other}, nfs4.OK
}

// ownShareConflictLocked reports whether an OPEN by the owner of key
// conflicts with the owner's own opens of the file (on this node or
// through another export; knfsd has one stateid for them): RFC 7530
// section 16.16.5 and RFC 8881 section 18.16.4 make no exception for the
// same owner, and knfsd's nfs4_file_check_deny and nfs4_file_get_access
// count the caller's own stateid too. As in knfsd's nfs4_upgrade_open,
// an access value the owner's open already holds is not checked again
// against its deny, but a deny is always checked against the access
// held.
func (t *stateTable) ownShareConflictLocked(cl *client, n *node, key openKey, access, deny uint32) bool {
	var own []*openState
	held := false
	for _, s := range t.peekFileLocked(n).opens {
		if s.client == cl && s.key.owner == key.owner {
			own = append(own, s)
			held = held || s.modes.hasAccess(access)
		}
	}
	for _, s := range own {
		if deny&s.access.Load() != 0 || !held && s.deny&access != 0 {
			return true
		}
	}
	return false
}

// openStateLocked finds the open (not lock) state sid names on the
// current file. The caller holds the state lock.
func (c *compound) openStateLocked(sid nfs4.Stateid) (*openState, nfs4.Status) {
	sid, s := c.resolveSid(sid)
	if s != nfs4.OK {
		return nil, s
	}
	o, s := c.s.state.find(c.sess.client, sid)
	if s != nfs4.OK {
		return nil, s
	}
	if !o.node.same(c.cfh) || o.lock != nil || o.deleg != nil {
		return nil, nfs4.ErrBadStateid
	}
	return o, nfs4.OK
}

// closeArgs is CLOSE4args (RFC 8881 section 18.2.1); seqid is NFSv4.0's
// and ignored in 4.1 (section 18.2.3).
type closeArgs struct {
	seqid       uint32
	openStateid nfs4.Stateid
}

func decodeClose(d *xdr.Decoder) closeArgs {
	return closeArgs{seqid: d.Uint32(), openStateid: nfs4.DecodeStateid(d)}
}

func opClose(c *compound) nfs4.Status {
	a := decodeClose(c.d)
	sid := a.openStateid
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	t := c.s.state
	t.mu.Lock()
	defer t.mu.Unlock()
	o, s := c.openStateLocked(sid)
	if s != nfs4.OK {
		return s
	}
	if t.locksHeldLocked(o) {
		return nfs4.ErrLocksHeld
	}
	t.dropLocked(o)
	t.dropLockStatesLocked(o)
	t.closeLayoutsLocked(o) // state_layout.go: return on close
	nfs4.InvalidStateid.Encode(c.e)
	return nfs4.OK
}

// openDowngradeArgs is OPEN_DOWNGRADE4args (RFC 8881 section 18.18.1);
// seqid is NFSv4.0's and ignored in 4.1.
type openDowngradeArgs struct {
	openStateid nfs4.Stateid
	seqid       uint32
	shareAccess uint32
	shareDeny   uint32
}

func decodeOpenDowngrade(d *xdr.Decoder) openDowngradeArgs {
	return openDowngradeArgs{openStateid: nfs4.DecodeStateid(d), seqid: d.Uint32(),
		shareAccess: d.Uint32(), shareDeny: d.Uint32()}
}

func opOpenDowngrade(c *compound) nfs4.Status {
	a := decodeOpenDowngrade(c.d)
	sid := a.openStateid
	access := a.shareAccess &^ nfs4.ShareAccessWantMask
	deny := a.shareDeny
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	t := c.s.state
	t.mu.Lock()
	defer t.mu.Unlock()
	o, s := c.openStateLocked(sid)
	if s != nfs4.OK {
		return s
	}
	// Only to values an OPEN of this stateid granted (RFC 7530 section
	// 16.19.4; knfsd's test_access and test_deny), not merely to bits
	// within the access held: BOTH opened once does not allow READ.
	if access == 0 || !o.modes.hasAccess(access) || !o.modes.hasDeny(deny) {
		return nfs4.ErrInval
	}
	o.access.Store(access)
	t.setDenyLocked(o, deny)
	o.modes.downgrade(access, deny)
	out := nfs4.Stateid{Seqid: o.seq.Add(1), Other: o.other}
	c.setCur(out)
	out.Encode(c.e)
	return nfs4.OK
}

// maxTestStateids bounds the stateids one TEST_STATEID may ask about.
const maxTestStateids = 1024

func opTestStateid(c *compound) nfs4.Status {
	n := c.d.ArrayLen(maxTestStateids, 16)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	t := c.s.state
	c.e.Uint32(uint32(n))
	for i := 0; i < n; i++ {
		sid := nfs4.DecodeStateid(c.d)
		t.mu.Lock()
		s, isLayout := t.layoutStatusLocked(c.sess.client, sid)
		if !isLayout {
			_, s = t.find(c.sess.client, sid)
		}
		t.mu.Unlock()
		c.e.Uint32(uint32(s))
	}
	return nfs4.OK
}

func opFreeStateid(c *compound) nfs4.Status {
	sid := decodeStateidArgs(c.d).stateid
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	// The current stateid too (RFC 8881 section 16.2.3.1.2; pynfs CSID9
	// frees the one OPEN just set).
	sid, s := c.resolveSid(sid)
	if s != nfs4.OK {
		return s
	}
	t := c.s.state
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, isLayout := t.layoutStatusLocked(c.sess.client, sid); isLayout {
		// RFC 8881 section 18.38.3: a layout stateid goes with its last
		// LAYOUTRETURN; while it is known, layouts are held.
		if s == nfs4.OK {
			s = nfs4.ErrLocksHeld
		}
		return s
	}
	o, s := t.find(c.sess.client, sid)
	if s == nfs4.ErrDelegRevoked {
		// RFC 8881 section 8.2.4: freeing a revoked delegation's stateid
		// is how the client acknowledges the revocation.
		t.dropLocked(t.opens.get(sid.Other))
		return nfs4.OK
	}
	if s != nfs4.OK {
		return s
	}
	// An open stateid stays until CLOSE; a lock stateid goes once it holds
	// no lock.
	if o.lock == nil || o.lock.ranges > 0 {
		return nfs4.ErrLocksHeld
	}
	t.dropLocked(o)
	return nfs4.OK
}

// checkDelegClaim checks that sid is the compound's client's delegation
// on n, for an OPEN that claims it.
func (c *compound) checkDelegClaim(sid nfs4.Stateid, n *node) nfs4.Status {
	t := c.s.state
	t.mu.Lock()
	defer t.mu.Unlock()
	o, s := t.find(c.sess.client, sid)
	if s != nfs4.OK {
		return s
	}
	if o.deleg == nil || !o.node.same(n) {
		return nfs4.ErrBadStateid
	}
	return nfs4.OK
}

// createFile creates (or, for UNCHECKED, opens) a regular file for OPEN, as
// the caller.
func (c *compound) createFile(a *openArgs, res *openResult) (*node, nfs4.Status) {
	dir := c.cfh
	flags := unix.O_RDWR | unix.O_CREAT
	if a.createMode != nfs4.CreateUnchecked {
		flags |= unix.O_EXCL
	}
	mode := uint32(0o644)
	if a.attrs.mask.Has(nfs4.AttrMode) {
		mode = a.attrs.mode
	}
	dfd, err := dir.dirFD()
	if err != nil {
		if err == unix.ENOENT {
			err = unix.ESTALE
		}
		return nil, errno(err)
	}
	defer dir.unpin()
	// UNCHECKED tries an exclusive create first, so that it knows whether
	// the file is new: an existing file keeps its attributes.
	fd, err := dir.exp.createIn(c.cred, dfd, string(a.name), flags|unix.O_EXCL, mode)
	existed := false
	if err == unix.EEXIST && a.createMode == nfs4.CreateUnchecked {
		existed = true
		fd, err = dir.exp.createIn(c.cred, dfd, string(a.name), flags, mode)
	}
	exclusive := a.createMode == nfs4.CreateExclusive || a.createMode == nfs4.CreateExclusive41
	if err == unix.EEXIST && exclusive {
		return c.exclusiveRetry(dir, dfd, string(a.name), a.verf)
	}
	if err != nil {
		return nil, errno(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, errno(err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, openableType(&st)
	}
	n, err := c.s.nodeAt(dir, dfd, string(a.name), &st)
	if err != nil {
		unix.Close(fd)
		return nil, errno(err)
	}
	// Pinned while fd is used below: once adopted, the descriptor cache
	// may otherwise close it (and the number be reused by another open)
	// before applyAttrs and commitMeta are done with it.
	n.pin()
	defer n.unpin()
	// The descriptor opened by the create becomes the file's read-write
	// descriptor, so the OPEN that follows needs no second open.
	if !n.adoptWriteFD(fd) {
		defer unix.Close(fd)
	}
	res.created = !existed
	attrs := a.attrs
	if !res.created {
		// An UNCHECKED open of an existing file ignores the attributes,
		// but for a size of 0, which truncates it (RFC 7530 section
		// 16.16.5; knfsd's nfsd4_create_file sets op_truncate so).
		attrs = newAttrs{}
		if a.attrs.mask.Has(nfs4.AttrSize) && a.attrs.size == 0 {
			attrs.mask.Set(nfs4.AttrSize)
		}
	}
	if attrs.mask.Has(nfs4.AttrMode) && (st.Mode&0o7777 == attrs.mode || inheritsACL(dfd)) {
		attrs.mask[nfs4.AttrMode/32] &^= 1 << (nfs4.AttrMode % 32) // already right (no umask)
	}
	if exclusive {
		attrs.mask.Set(nfs4.AttrTimeAccessSet)
		attrs.mask.Set(nfs4.AttrTimeModifySet)
		attrs.atime, attrs.mtime = verfTimes(a.verf)
	}
	if res.created || attrs.mask.Has(nfs4.AttrSize) {
		err = asCaller(c.cred, func() error {
			var err error
			res.attrset, err = applyAttrs(fd, fd, &attrs)
			return err
		})
		if attrs.mask.Has(nfs4.AttrSize) {
			n.extent.changed()
		}
		if err != nil {
			return nil, errno(err)
		}
	}
	if res.created && a.attrs.mask.Has(nfs4.AttrMode) {
		res.attrset.Set(nfs4.AttrMode)
	}
	if res.created && c.s.mds != nil {
		c.s.makeLayout(n, fd, &st) // pnfs_mds.go: its data goes to the data servers
	}
	if res.created || attrs.mask.Has(nfs4.AttrSize) {
		if s := c.commitMeta(dfd, fd); s != nfs4.OK {
			return nil, s
		}
	}
	return n, nfs4.OK
}

// verfTimes stores an exclusive-create verifier in atime and mtime seconds,
// where a retransmitted create finds it.
func verfTimes(v [8]byte) (atime, mtime unix.Timespec) {
	return unix.Timespec{Sec: int64(binary.BigEndian.Uint32(v[:4]))},
		unix.Timespec{Sec: int64(binary.BigEndian.Uint32(v[4:]))}
}

// exclusiveRetry answers an exclusive create of a file that exists: fine if
// it carries the same verifier (a retransmit), else NFS4ERR_EXIST.
func (c *compound) exclusiveRetry(dir *node, dirfd int, name string, verf [8]byte) (*node, nfs4.Status) {
	var st unix.Stat_t
	n, err := c.s.lookupChildAt(dir, dirfd, name, &st)
	if err != nil {
		return nil, errno(err)
	}
	at, mt := verfTimes(verf)
	if st.Atim.Sec != at.Sec || st.Mtim.Sec != mt.Sec || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, nfs4.ErrExist
	}
	return n, nfs4.OK
}
