package e2e

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// TestOneHostCannotLockOthersOut is issue 21 finding 2 over TCP: one host
// (127.0.0.2) mounts as many clients as it can and another (127.0.0.4)
// streams EXCHANGE_IDs it never confirms; a client from a third address
// (127.0.0.3) must still get a client id and a session within a second.
// Before, the first host filled the client table (and the reply cache
// budget) and the newcomer got NFS4ERR_DELAY.
func TestOneHostCannotLockOthersOut(t *testing.T) {
	dir := t.TempDir()
	// A 64-record table: one address may fill its quiet half, 32
	// records. A reply cache budget of 8 MiB: one address may spend half,
	// then its sessions get one slot each.
	addr, _ := serve(t, testEngine(), nfs.Config{Exports: []nfs.Export{{Path: dir}}, MaxClients: 64, ReplyCacheMemory: 8 << 20}, engine.Options{})
	ctx := ctxT(t)

	var ok, delayed int
	for range 40 {
		c, err := client.Dial(ctx, addr, client.Options{LocalAddr: "127.0.0.2:0"})
		switch {
		case err == nil:
			ok++
			defer c.Close()
		case status(err) == nfs4.ErrDelay:
			delayed++
		default:
			t.Fatalf("mount from 127.0.0.2: %v", err)
		}
	}
	if ok != 32 || delayed != 8 {
		t.Fatalf("127.0.0.2 got %d clients and %d DELAYs, want half the table, 32", ok, delayed)
	}

	nc, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 4)}}).DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	flood := client.Connect(nc, client.Options{})
	defer flood.Close()
	for i := range 300 {
		r, err := flood.RawCompound(ctx, 2, func(e *xdr.Encoder) int {
			client.EncodeExchangeID(e, [8]byte{1}, fmt.Sprintf("flood-%d", i), nfs4.ExchgIDUseNonPNFS)
			return 1
		})
		if err != nil || r.Status != nfs4.OK {
			t.Fatalf("unconfirmed EXCHANGE_ID %d from 127.0.0.4: %v", i, err)
		}
	}

	start := time.Now()
	c, err := client.Dial(ctx, addr, client.Options{LocalAddr: "127.0.0.3:0"})
	if err != nil {
		t.Fatalf("mount from 127.0.0.3 beside them: %v", err)
	}
	defer c.Close()
	if d := time.Since(start); d > time.Second {
		t.Fatalf("mount from 127.0.0.3 took %v", d)
	}
	if _, err := c.LookupPath(ctx, "/"); err != nil {
		t.Fatalf("LOOKUP from 127.0.0.3: %v", err)
	}
}
