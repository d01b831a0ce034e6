package gss

import (
	"testing"

	"github.com/jcmturner/gokrb5/v8/types"
)

func benchWrap(b *testing.B, size int, seal bool) {
	acc, ini := pairB(b)
	msg := make([]byte, size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		w, err := acc.Wrap(msg, seal)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := ini.Unwrap(w); err != nil {
			b.Fatal(err)
		}
	}
}

func pairB(b *testing.B) (*Tokens, *Tokens) {
	t := &testing.T{}
	_ = t
	kv := make([]byte, 32)
	k1, _ := NewKey(typesKey(18, kv))
	k2, _ := NewKey(typesKey(18, kv))
	return &Tokens{Key: k1, Acceptor: true}, &Tokens{Key: k2}
}

func BenchmarkGSSWrapSealed4K(b *testing.B) { benchWrap(b, 4096, true) }
func BenchmarkGSSWrapSealed1M(b *testing.B) { benchWrap(b, 1<<20, true) }
func BenchmarkGSSWrapInteg1M(b *testing.B)  { benchWrap(b, 1<<20, false) }
func BenchmarkGSSMIC4K(b *testing.B) {
	acc, ini := pairB(b)
	msg := make([]byte, 4096)
	b.ReportAllocs()
	for b.Loop() {
		if err := ini.VerifyMIC(acc.MIC(msg), msg); err != nil {
			b.Fatal(err)
		}
	}
}

func typesKey(et int32, kv []byte) types.EncryptionKey {
	return types.EncryptionKey{KeyType: et, KeyValue: kv}
}
