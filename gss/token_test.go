package gss

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/jcmturner/gokrb5/v8/types"
)

func pair(t *testing.T, etype int32) (acc, ini *Tokens) {
	t.Helper()
	size := 32
	if etype == 17 || etype == 19 {
		size = 16
	}
	kv := make([]byte, size)
	rand.Read(kv)
	k1, err := NewKey(types.EncryptionKey{KeyType: etype, KeyValue: kv})
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := NewKey(types.EncryptionKey{KeyType: etype, KeyValue: kv})
	return &Tokens{Key: k1, Acceptor: true}, &Tokens{Key: k2}
}

func TestGSSTokensRoundTrip(t *testing.T) {
	for _, et := range []int32{17, 18, 19} {
		acc, ini := pair(t, et)
		msg := []byte("the quick brown fox jumps over the lazy dog, twice over")
		mic := ini.MIC(msg[:10], msg[10:])
		if err := acc.VerifyMIC(mic, msg); err != nil {
			t.Fatalf("etype %d: MIC: %v", et, err)
		}
		if err := ini.VerifyMIC(mic, msg); err == nil {
			t.Fatalf("etype %d: own-direction MIC accepted", et)
		}
		bad := append([]byte(nil), msg...)
		bad[3] ^= 1
		if err := acc.VerifyMIC(mic, bad); !errors.Is(err, ErrBadMIC) {
			t.Fatalf("etype %d: tampered MIC: %v", et, err)
		}
		for _, seal := range []bool{false, true} {
			w, err := acc.Wrap(msg, seal)
			if err != nil {
				t.Fatal(err)
			}
			if seal && bytes.Contains(w, msg[:16]) {
				t.Fatalf("etype %d: sealed token carries plaintext", et)
			}
			got, sealed, err := ini.Unwrap(w)
			if err != nil || sealed != seal || !bytes.Equal(got, msg) {
				t.Fatalf("etype %d seal %v: %q %v %v", et, seal, got, sealed, err)
			}
			if _, _, err := acc.Unwrap(w); err == nil {
				t.Fatalf("etype %d: reflected wrap accepted", et)
			}
			for _, i := range []int{2, 9, 20, len(w) - 1} {
				tw := append([]byte(nil), w...)
				tw[i] ^= 0x40
				if _, _, err := ini.Unwrap(tw); err == nil {
					t.Fatalf("etype %d seal %v: tampered byte %d accepted", et, seal, i)
				}
			}
			// RRC rotation is undone.
			rot := append([]byte(nil), w[:16]...)
			body := w[16:]
			rot[7] = 5
			rot = append(rot, body[len(body)-5:]...)
			rot = append(rot, body[:len(body)-5]...)
			if got, _, err := ini.Unwrap(rot); err != nil || !bytes.Equal(got, msg) {
				t.Fatalf("etype %d seal %v: rotated: %v", et, seal, err)
			}
		}
	}
}

func TestGSSKeyRefusesOldEnctypes(t *testing.T) {
	if _, err := NewKey(types.EncryptionKey{KeyType: 23, KeyValue: make([]byte, 16)}); err == nil {
		t.Fatal("rc4 accepted")
	}
}

// RFC 3962 appendix B: Kc derivation is checked through gokrb5's own
// vectors; here the checksum key for usage 25 of a known key must be
// stable (a regression guard on the usage encoding).
func TestGSSAcceptInitiate(t *testing.T) {
	kt, err := FakeKeytab("nfs/server.test", "TEST.REALM", "secret", 18)
	if err != nil {
		t.Fatal(err)
	}
	tkt, key, err := FakeTicket(kt, "alice", "nfs/server.test", "TEST.REALM", 18)
	if err != nil {
		t.Fatal(err)
	}
	cn, _ := types.ParseSPNString("alice")
	tok, ini, err := InitToken("TEST.REALM", cn, tkt, key)
	if err != nil {
		t.Fatal(err)
	}
	only := NewAcceptor(kt)
	only.Service = "host"
	if _, _, err := only.Accept(tok); err == nil {
		t.Fatal("nfs/ ticket accepted by a host/-only acceptor")
	}
	ctx, out, err := NewAcceptor(kt).Accept(tok)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		t.Fatal("AP-REP without mutual")
	}
	if ctx.Initiator != "alice@TEST.REALM" {
		t.Fatalf("initiator %q", ctx.Initiator)
	}
	w, _ := ini.Wrap([]byte("hello"), true)
	if m, _, err := ctx.Unwrap(w); err != nil || string(m) != "hello" {
		t.Fatalf("unwrap %q %v", m, err)
	}
	// The same AP-REQ again is a replay.
	if _, _, err := NewAcceptor(kt).Accept(tok); err == nil {
		t.Fatal("replayed AP-REQ accepted")
	}
	// A ticket for a service not in the keytab is refused.
	kt2, _ := FakeKeytab("nfs/other.test", "TEST.REALM", "other", 18)
	tkt2, key2, _ := FakeTicket(kt2, "alice", "nfs/other.test", "TEST.REALM", 18)
	tok2, _, _ := InitToken("TEST.REALM", cn, tkt2, key2)
	if _, _, err := NewAcceptor(kt).Accept(tok2); err == nil {
		t.Fatal("ticket for another service accepted")
	}
	if _, _, err := NewAcceptor(kt).Accept([]byte{0x60, 0x01, 0x00}); err == nil {
		t.Fatal("garbage accepted")
	}
}

func FuzzGSSUnwrap(f *testing.F) {
	kv := bytes.Repeat([]byte{7}, 32)
	k, _ := NewKey(types.EncryptionKey{KeyType: 18, KeyValue: kv})
	k2, _ := NewKey(types.EncryptionKey{KeyType: 18, KeyValue: kv})
	ini := &Tokens{Key: k}
	acc := &Tokens{Key: k2, Acceptor: true}
	w1, _ := ini.Wrap([]byte("seed"), true)
	w2, _ := ini.Wrap([]byte("seed"), false)
	f.Add(w1)
	f.Add(w2)
	f.Add(ini.MIC([]byte("seed")))
	f.Fuzz(func(t *testing.T, b []byte) {
		acc.Unwrap(b)
		acc.VerifyMIC(b, []byte("seed"))
		NewAcceptor(nil).Accept(b)
	})
}
