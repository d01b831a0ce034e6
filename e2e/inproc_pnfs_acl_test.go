package e2e

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// An ACL change by another client recalls the layout first, as a mode
// change does (RFC 8435 section 15: the data servers do not check the
// ACL, so a layout must not outlive a change of who may use the file).
func TestPNFSClientRecallOnACL(t *testing.T) {
	cl := startPNFSCluster(t, 1, 1)
	c := dialMDS(t, cl.mds)
	other := dialMDS(t, cl.mds)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	root, _ := c.RootFH(ctx)
	p := client.NewPNFS(c, client.PNFSOptions{RetryAfter: time.Millisecond})
	defer p.Close()
	f, err := c.OpenCreate(ctx, root, "acl", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	pf := p.Open(f, client.IOModeRW)
	pnfsWrite(t, ctx, pf, pnfsBytes(100000), nfs4.Unstable4)
	aces := []client.ACE{
		{Type: client.ACEAllowed, Who: "OWNER@", Mask: client.ACEReadData | client.ACEWriteData | client.ACEAppendData},
		{Type: client.ACEAllowed, Who: "1000", Mask: client.ACEReadData},
		{Type: client.ACEAllowed, Who: "GROUP@"},
		{Type: client.ACEAllowed, Who: "EVERYONE@"},
	}
	if err := other.SetACL(ctx, f.FH, aces); err != nil {
		if client.IsStatus(err, nfs4.ErrAttrnotsupp) {
			t.Skip("no POSIX ACLs on the export")
		}
		t.Fatal(err)
	}
	if c.LayoutRecalls() == 0 {
		t.Fatal("no CB_LAYOUTRECALL before the ACL change")
	}
	got, err := other.GetACL(ctx, f.FH)
	if err != nil || len(got) == 0 {
		t.Fatalf("ACL after SETATTR: %v %v", got, err)
	}
	time.Sleep(5 * time.Millisecond)
	data := pnfsBytes(70000)
	pnfsWrite(t, ctx, pf, data, nfs4.FileSync4)
	if back := pnfsRead(t, ctx, pf, len(data)); !bytes.Equal(back, data) {
		t.Fatal("read back after the recall differs")
	}
	if err := pf.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
