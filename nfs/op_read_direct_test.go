package nfs

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// nodeOf returns the server's node for inode ino.
func (h *harness) nodeOf(ino uint64) *node {
	h.t.Helper()
	h.s.files.mu.RLock()
	defer h.s.files.mu.RUnlock()
	for _, n := range h.s.files.nodes.all() {
		if n.ino == ino {
			return n
		}
	}
	h.t.Fatalf("no node for inode %d", ino)
	return nil
}

// TestReadOpensNoDirectFD: a large READ no longer opens an O_DIRECT
// descriptor on the nfs side (the engine asks for one through
// Read.DirectFD only when it decides to go direct), and DirectFD then
// opens it through the node and reads the same bytes.
func TestReadOpensNoDirectFD(t *testing.T) {
	h := newHarness(t)
	h.session()
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	h.write("big", data)
	fh := h.lookupFH("big")
	var st unix.Stat_t
	if err := unix.Stat(h.dir+"/big", &st); err != nil {
		t.Fatal(err)
	}

	rep := NewReply()
	e := xdr.NewEncoder(256)
	h.xid++
	callHeaderAs(e, h.xid, nfs4.ProgramNFS, 4, nfs4.ProcCompound, h.uid)
	e.String("tag")
	e.Uint32(1)
	e.Uint32(3)
	h.sequence(e)
	e.Uint32(nfs4.OpPutfh)
	e.Opaque(fh)
	e.Uint32(nfs4.OpRead)
	nfs4.AnonStateid.Encode(e)
	e.Uint64(0)
	e.Uint32(1 << 20)
	h.s.Handle(h.conn, e.AppendTo(nil), rep)
	defer rep.Reset()
	if len(rep.Reads) != 1 || rep.Reads[0].Len != 1<<20 {
		t.Fatalf("reads %+v", rep.Reads)
	}
	n := h.nodeOf(st.Ino)
	n.mu.Lock()
	direct := n.direct
	n.mu.Unlock()
	if direct != -1 {
		t.Fatalf("READ opened an O_DIRECT descriptor (%d) before the engine asked", direct)
	}
	dfd := rep.Reads[0].DirectFD()
	if dfd < 0 {
		t.Skip("filesystem refuses O_DIRECT")
	}
	if again := rep.Reads[0].DirectFD(); again != dfd {
		t.Fatalf("DirectFD not cached: %d then %d", dfd, again)
	}
	buf, err := unix.Mmap(-1, 0, 1<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(buf)
	if got, err := unix.Pread(dfd, buf, 0); err != nil || !bytes.Equal(buf[:got], data) {
		t.Fatalf("O_DIRECT read: %d bytes, err %v", got, err)
	}
}

// TestNewReadDirect: tools' reads carry their own O_DIRECT descriptor.
func TestNewReadDirect(t *testing.T) {
	if rd := NewRead(3, 7, 0, 10); rd.DirectFD() != 7 {
		t.Fatalf("DirectFD %d", rd.DirectFD())
	}
	if rd := NewRead(3, -1, 0, 10); rd.DirectFD() != -1 {
		t.Fatalf("DirectFD %d", rd.DirectFD())
	}
}
