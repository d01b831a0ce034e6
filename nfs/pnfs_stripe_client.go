package nfs

import (
	"strconv"
	"strings"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Which clients get striped layouts. The Linux client before 6.18 takes
// one data server per mirror only: ff_layout_alloc_lseg
// (fs/nfs/flexfilelayout/flexfilelayout.c, 6.12) reads ffm_data_servers
// and fails the whole layout when it is not 1 ("FIXME: allow for
// striping?": ds_count != 1 goes to out_err_free with -EIO), and the I/O
// that asked for it ends in EIO rather than going through the MDS.
// Striping came in 6.18 (nfs4_ff_layout_calc_dss_id). So a striped layout goes only to
// a client whose EXCHANGE_ID implementation id (RFC 8881 section 18.35,
// eia_client_impl_id) says it is Linux 6.18 or later, or the project's
// own client (client/, which stripes); any other client gets
// NFS4ERR_LAYOUTUNAVAILABLE and does its I/O through the MDS, which maps
// it onto the stripes (pnfs.Pool). A client sending no implementation id
// gets no striped layout.

// implID is what the MDS keeps of a client's nfs_impl_id4.
type implID struct {
	domain, name string
}

// maxImplID bounds the bytes of nii_domain and nii_name kept.
const maxImplID = 256

// decodeImplID reads eia_client_impl_id<1>.
func decodeImplID(d *xdr.Decoder) implID {
	var id implID
	n := d.ArrayLen(1, 4)
	for i := 0; i < n; i++ {
		dom := d.Opaque(nfs4.OpaqueLimit)
		name := d.Opaque(nfs4.OpaqueLimit)
		d.Uint64() // nii_date
		d.Uint32()
		id.domain = string(dom[:min(len(dom), maxImplID)])
		id.name = string(name[:min(len(name), maxImplID)])
	}
	return id
}

// clientImplName begins the implementation id name the project's client
// sends (client.ImplName), with serverImplDomain as its domain.
const clientImplName = "nfsd-uring"

// takesStripes says whether the client can use a layout whose mirrors
// stripe over several data servers.
func (id implID) takesStripes() bool {
	if id.domain == serverImplDomain && strings.HasPrefix(id.name, clientImplName) {
		return true
	}
	// The Linux client's nii_name is "sysname release version machine"
	// (fs/nfs/nfs4xdr.c encode_exchange_id).
	f := strings.Fields(id.name)
	if len(f) < 2 || f[0] != "Linux" {
		return false
	}
	major, minor, ok := kernelVersion(f[1])
	return ok && (major > 6 || major == 6 && minor >= 18)
}

// kernelVersion reads "MAJOR.MINOR" from the front of a kernel release
// ("6.18.0-rc1", "6.12.7+deb13-amd64").
func kernelVersion(rel string) (major, minor int, ok bool) {
	a, rest, found := strings.Cut(rel, ".")
	if !found {
		return 0, 0, false
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	var err1, err2 error
	major, err1 = strconv.Atoi(a)
	minor, err2 = strconv.Atoi(rest[:end])
	return major, minor, err1 == nil && err2 == nil
}

// mayStripe says whether the client of the compound may be given l: any
// layout without striping, a striped one only to a client that takes
// it.
func (c *compound) mayStripe(l *FileLayout) bool {
	return !l.Striped() || c.sess != nil && c.sess.client != nil && c.sess.client.stripeOK.Load()
}

// setImplID notes what client id's EXCHANGE_ID said of its
// implementation.
func (t *stateTable) setImplID(id uint64, impl implID) {
	ok := impl.takesStripes()
	t.mu.Lock()
	defer t.mu.Unlock()
	if cl := t.clients[id]; cl != nil {
		cl.stripeOK.Store(ok)
	}
}

// rowUp says whether every data file of a mirror is on a data server in
// up.
func rowUp(row []DSFile, up map[DeviceID]bool) bool {
	for _, f := range row {
		if !up[f.Device] {
			return false
		}
	}
	return true
}
