package nfs

import "github.com/nfsd-uring/nfsd-uring/nfs/nfs4"

// Share reservations, byte-range locks and delegations belong to a file,
// not to the handle, node or export a request reached it through: knfsd
// keeps them on the struct nfs4_file it finds by inode. One directory
// exported twice (--export a=DIR --export b=DIR/sub) gives the files
// below DIR/sub two nodes each, one per export; a DENY_BOTH taken through
// one must hold through the other (issue 21 finding 7).

// fileID names a file on the host: its device and inode, and a hash of
// the kernel's handle of it (inode and generation, vfs_handle.go), so a
// file created with the inode number of a removed one that clients still
// hold state on (a delegation not yet returned, an open of the unlinked
// file) starts with no state: knfsd finds its nfs4_file by the inode
// itself, which a reused number does not share.
type fileID struct{ dev, ino, gen uint64 }

func (n *node) fileID() fileID { return fileID{n.dev, n.ino, n.fileGen()} }

// fileGen is the hash of the kernel handle in n's handle (FNV-1a), kept
// once computed (never 0 then). Two exports' nodes of one file share it;
// a node made for a reused inode number does not.
func (n *node) fileGen() uint64 {
	if g := n.gen.Load(); g != 0 {
		return g
	}
	kh := n.handle
	if len(kh) >= fhHeader-4+fhMACLen {
		kh = kh[fhHeader-4 : len(kh)-fhMACLen] // the kernel handle's type and bytes
	}
	h := uint64(14695981039346656037)
	for _, b := range kh {
		h ^= uint64(b)
		h *= 1099511628211
	}
	h |= 1
	n.gen.Store(h)
	return h
}

// fileState is the state held on one file. Guarded by stateTable.mu.
type fileState struct {
	opens  []*openState // open stateids: share reservations (RFC 8881 section 9.7)
	delegs []*openState // delegations granted on the file (state_deleg.go)
	locks  []lockRange  // byte-range locks (op_lock.go)
	// layouts are the pNFS layouts clients hold on the file
	// (state_layout.go): a removed file's data files stay until they
	// are returned.
	layouts []*layoutState
}

func (f *fileState) empty() bool {
	return len(f.opens) == 0 && len(f.delegs) == 0 && len(f.locks) == 0 && len(f.layouts) == 0
}

// noFileState stands for the state of a file that has none: what
// peekFileLocked returns, never written.
var noFileState fileState

// fileLocked returns the state of n's file, made on first use. The
// caller holds stateTable.mu and calls tidyFileLocked if it may have
// left it empty.
func (t *stateTable) fileLocked(n *node) *fileState {
	id := n.fileID()
	f := t.files[id]
	if f == nil {
		f = &fileState{}
		t.files[id] = f
	}
	return f
}

// peekFileLocked returns the state of n's file for reading: a file with
// none gets noFileState, which must not be changed. The caller holds
// stateTable.mu.
func (t *stateTable) peekFileLocked(n *node) *fileState {
	if f := t.files[n.fileID()]; f != nil {
		return f
	}
	return &noFileState
}

// tidyFileLocked forgets the state of n's file once nothing is left in
// it, so that the table holds only files with state.
func (t *stateTable) tidyFileLocked(n *node) {
	id := n.fileID()
	if f := t.files[id]; f != nil && f.empty() {
		delete(t.files, id)
	}
	t.nlmChangedLocked() // a blocked NLM lock may be free now (nlm.go)
}

// specialDenied reports whether an I/O with a special stateid (anonymous
// or bypass), which stands for no open, is refused by the share
// reservations on n's file: a write by any open's DENY_WRITE, a read by
// any DENY_READ. knfsd's check_special_stateids answers nfserr_locked
// from nfs4_share_conflict then; RFC 8881 section 9.1.4.3 asks that such
// I/O honour share reservations.
func (t *stateTable) specialDenied(n *node, deny uint32) bool {
	if t.denying.Load() == 0 {
		return false // no open denies anything (Linux clients never do): no lock
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, o := range t.peekFileLocked(n).opens {
		if o.deny&deny != 0 {
			return true
		}
	}
	return false
}

// setDenyLocked sets the share deny of open o, keeping count of the opens
// that deny something (stateTable.denying). The caller holds
// stateTable.mu.
func (t *stateTable) setDenyLocked(o *openState, deny uint32) {
	switch {
	case o.deny == 0 && deny != 0:
		t.denying.Add(1)
	case o.deny != 0 && deny == 0:
		t.denying.Add(-1)
	}
	o.deny = deny
}

// shareModes records which share_access and share_deny values (not bits:
// READ, WRITE and BOTH are three values) an open stateid was granted by
// its OPENs, as knfsd's st_access_bmap and st_deny_bmap do: bit v of the
// low nibble for access value v, bit v of the high nibble for deny value
// v (DENY_NONE included). OPEN_DOWNGRADE may only go to values in it
// (RFC 7530 section 16.19.4: the union of some of the owner's OPENs).
// Guarded by stateTable.mu.
type shareModes uint8

func (m shareModes) hasAccess(access uint32) bool {
	return access <= nfs4.ShareAccessBoth && m&(1<<access) != 0
}

func (m shareModes) hasDeny(deny uint32) bool {
	return deny <= nfs4.ShareDenyBoth && m&(1<<(4+deny)) != 0
}

// add records an OPEN's access and deny (both already checked to be at
// most BOTH).
func (m *shareModes) add(access, deny uint32) {
	*m |= 1<<(access&3) | 1<<(4+(deny&3))
}

// downgrade keeps only the values an OPEN_DOWNGRADE to access and deny
// leaves allowed, those within them (knfsd's nfs4_stateid_downgrade and
// reset_union_bmap_deny): after a downgrade to READ, neither WRITE nor
// BOTH may be downgraded to again until an OPEN grants them.
func (m *shareModes) downgrade(access, deny uint32) {
	for v := uint32(0); v < 4; v++ {
		if v&access != v {
			*m &^= 1 << v
		}
		if v&deny != v {
			*m &^= 1 << (4 + v)
		}
	}
}
