package nfs

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// The probe of a new back channel is CB_NULL: an RPC CALL of procedure 0
// of the client's callback program, version 1, with the callback
// security and no arguments (pynfs CSESS20 checks the program, CSESS21
// the version). An accepted, successful reply marks the channel up; no
// reply marks it down.
func TestCBNullProbe(t *testing.T) {
	const prog = 0x40000004
	for _, answer := range []bool{true, false} {
		c := NewConn("127.0.0.1:1")
		sent := make(chan []byte, 1)
		c.SetSender(func(rec [][]byte) error {
			b := bytes.Join(rec, nil)
			sent <- b
			if answer {
				// xid, REPLY, MSG_ACCEPTED, verifier AUTH_NONE, SUCCESS
				rep := binary.BigEndian.AppendUint32(nil, binary.BigEndian.Uint32(b[4:]))
				rep = append(rep, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
				go c.deliver(rep)
			}
			return nil
		})
		sess := &session{client: &client{}}
		sess.initBack(1, prog, cbSec{flavor: nfs4.AuthNone}, true)
		sess.bindBack(c)
		b := <-sent
		want := []uint32{0x80000000 | 40, 0 /* xid */, nfs4.MsgCall, nfs4.RPCVersion, prog, nfs4.CBVersion, nfs4.CBProcNull,
			nfs4.AuthNone, 0, nfs4.AuthNone, 0}
		if len(b) != 4*len(want) {
			t.Fatalf("CB_NULL record is %d bytes, want %d: %x", len(b), 4*len(want), b)
		}
		for i, w := range want {
			if got := binary.BigEndian.Uint32(b[4*i:]); i != 1 && got != w {
				t.Errorf("CB_NULL word %d = %#x, want %#x", i, got, w)
			}
		}
		if !answer {
			// Not waiting out cbProbeTimeout: the state stays pending,
			// and an OPEN would grant nothing meanwhile.
			if sess.cbUp(10*time.Millisecond) || sess.cb.probe.Load() != probePending {
				t.Fatalf("unanswered probe: up %v, state %d", sess.cbUp(0), sess.cb.probe.Load())
			}
			continue
		}
		if !sess.cbUp(5 * time.Second) {
			t.Fatalf("answered probe: state %d, want up", sess.cb.probe.Load())
		}
		if sess.seqStatus()&nfs4.SeqStatusCBPathDown != 0 {
			t.Fatal("SEQ4_STATUS_CB_PATH_DOWN with the back channel up")
		}
	}
}
