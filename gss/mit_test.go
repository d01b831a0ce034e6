package gss

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/internal/krb5test"
)

// gss-sample token flags (MIT src/appl/gss-sample/gss-misc.h).
const (
	sampleNoop        = 1
	sampleContext     = 2
	sampleData        = 4
	sampleMIC         = 8
	sampleContextNext = 16
	sampleWrapped     = 32
	sampleEncrypted   = 64
	sampleSendMIC     = 128
)

func sampleRecv(r *bufio.Reader) (byte, []byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(h[1:]))
	_, err := io.ReadFull(r, b)
	return h[0], b, err
}

func sampleSend(w io.Writer, flags byte, b []byte) error {
	h := []byte{flags, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(h[1:], uint32(len(b)))
	_, err := w.Write(append(h, b...))
	return err
}

// TestKrb5InteropMIT runs MIT's gss-client (krb5-gss-samples) against our
// acceptor speaking the gss-sample protocol: MIT's AP-REQ with mutual
// authentication (our AP-REP), MIT's sealed Wrap token (our Unwrap), and
// our MIC, which MIT verifies.
func TestKrb5InteropMIT(t *testing.T) {
	client, err := exec.LookPath("gss-client")
	if err != nil {
		t.Skip("gss-client not installed (apt: krb5-gss-samples): skipping")
	}
	kinit, err := exec.LookPath("kinit")
	if err != nil {
		t.Skip("kinit not installed (apt: krb5-user): skipping")
	}
	kdc := krb5test.Start(t)
	kdc.AddPassword("alice", "alicepw")
	kt := kdc.AddKeytab("nfs/nfs-server.test")
	tab, err := LoadKeytab(kt)
	if err != nil {
		t.Fatal(err)
	}
	acc := NewAcceptor(tab)
	cmd := exec.Command(kinit, "alice")
	cmd.Env = kdc.Env()
	cmd.Stdin = strings.NewReader("alicepw\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kinit: %v %s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, args := range [][]string{{}, {"-nx"}} {
		type result struct {
			msg, initiator string
			err            error
		}
		done := make(chan result, 1)
		go func() {
			var res result
			defer func() { done <- res }()
			c, err := l.Accept()
			if err != nil {
				res.err = err
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			r := bufio.NewReader(c)
			var ctx *Context
			for {
				f, b, err := sampleRecv(r)
				if err != nil {
					res.err = err
					return
				}
				switch {
				case f&sampleContext != 0:
					var out []byte
					ctx, out, err = acc.Accept(b)
					if err != nil {
						res.err = err
						return
					}
					res.initiator = ctx.Initiator
					if out != nil {
						sampleSend(c, sampleContext, out)
					}
				case f&sampleData != 0:
					msg := b
					if f&sampleWrapped != 0 {
						var sealed bool
						msg, sealed, err = ctx.Unwrap(b)
						if err != nil {
							res.err = err
							return
						}
						if sealed != (f&sampleEncrypted != 0) {
							res.err = io.ErrUnexpectedEOF
							return
						}
					}
					res.msg = string(msg)
					if f&sampleSendMIC != 0 {
						sampleSend(c, sampleMIC, ctx.MIC(msg))
					}
				case f&sampleNoop != 0 && f&sampleContextNext == 0:
					return
				}
			}
		}()
		port := l.Addr().(*net.TCPAddr).Port
		argv := append([]string{"-port", itoa(port)}, args...)
		argv = append(argv, "127.0.0.1", "nfs@nfs-server.test", "hello from MIT")
		cmd := exec.Command(client, argv...)
		cmd.Env = kdc.Env()
		out, err := cmd.CombinedOutput()
		res := <-done
		if err != nil || res.err != nil {
			t.Fatalf("gss-client %v: %v %v\n%s", args, err, res.err, out)
		}
		if res.msg != "hello from MIT" || res.initiator != "alice@"+krb5test.Realm {
			t.Fatalf("got %q from %q", res.msg, res.initiator)
		}
		if !strings.Contains(string(out), "Signature verified") {
			t.Fatalf("MIT did not verify our MIC:\n%s", out)
		}
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
