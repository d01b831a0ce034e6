package bench

import (
	"bytes"
	"encoding/binary"
	"net"
	"sync"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// replyConn answers the first call with one canned reply record, then
// ends (io.EOF): later calls fail.
type replyConn struct {
	net.Conn
	r       *bytes.Reader
	written chan struct{} // closed by the first Write
	once    sync.Once
}

func newReplyConn(rec []byte) *replyConn {
	return &replyConn{r: bytes.NewReader(rec), written: make(chan struct{})}
}

// Read gives the reply only once the call is written, so that the call
// is waiting for it.
func (c *replyConn) Read(p []byte) (int, error) {
	<-c.written
	return c.r.Read(p)
}

func (c *replyConn) Write(p []byte) (int, error) {
	c.once.Do(func() { close(c.written) })
	return len(p), nil
}

func (c *replyConn) Close() error { return nil }

// FuzzNFS3Reply: any bytes after an accepted reply header, decoded by each
// of the v3 client's procedures, give a result or an error, never a panic.
func FuzzNFS3Reply(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1})
	f.Add(bytes.Repeat([]byte{0, 0, 0, 1}, 40))
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Fuzz(func(t *testing.T, body []byte) {
		for proc := range 6 {
			e := xdr.NewEncoder(64)
			e.Uint32(0)
			e.Uint32(1) // xid of the first call
			e.Uint32(1) // REPLY
			e.Uint32(0) // MSG_ACCEPTED
			e.Uint32(0) // AUTH_NONE verifier
			e.Uint32(0)
			e.Uint32(0) // SUCCESS
			rec := append(e.AppendTo(nil), body...)
			binary.BigEndian.PutUint32(rec, xdr.RecordMark(len(rec)-4))
			c := newConn3(newReplyConn(rec), 0, 0, 0)
			fh := []byte{1, 2, 3, 4}
			buf := make([]byte, 8192)
			switch proc {
			case 0:
				c.lookup(fh, "f")
			case 1:
				c.getattr(fh)
			case 2:
				c.read(fh, 0, buf)
			case 3:
				c.write(fh, 0, buf[:100])
			case 4:
				c.create(fh, "f", len(body)%2 == 0)
			case 5:
				c.mount("/")
			}
			c.rpc.Close()
		}
	})
}

// TestRead3Placed: a READ3 reply's data, after attributes, is found by
// locateRead3 and read into the caller's buffer.
func TestRead3Placed(t *testing.T) {
	e := xdr.NewEncoder(256)
	e.Uint32(0)
	for _, w := range []uint32{1, 1, 0, 0, 0, 0, 0} { // xid 1, REPLY, accepted, AUTH_NONE, SUCCESS, NFS3_OK
		e.Uint32(w)
	}
	e.Bool(true)
	e.Fixed(make([]byte, 84)) // fattr3
	e.Uint32(5)
	e.Bool(true)
	e.Opaque([]byte("hello"))
	rec := e.AppendTo(nil)
	binary.BigEndian.PutUint32(rec, xdr.RecordMark(len(rec)-4))
	start, n, ok := locateRead3(rec[4:])
	if !ok || n != 5 || start != len(rec)-4-8 {
		t.Fatalf("locateRead3 = %d, %d, %v; want %d, 5, true", start, n, ok, len(rec)-4-8)
	}
	c := newConn3(newReplyConn(rec), 0, 0, 0)
	defer c.rpc.Close()
	buf := make([]byte, 16)
	got, err := c.read([]byte{1}, 0, buf)
	if err != nil || string(buf[:got]) != "hello" {
		t.Fatalf("read = %q, %v", buf[:got], err)
	}
	failed := append([]byte(nil), rec[4:]...)
	failed[27] = 70 // NFS3ERR_STALE
	if _, _, ok := locateRead3(failed); ok {
		t.Fatal("located the data of a failed READ")
	}
}
