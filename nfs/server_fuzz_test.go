package nfs

import (
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// FuzzHandle feeds arbitrary records to a server with a live session: it
// must never panic, and whatever it answers must be a well-formed record.
func FuzzHandle(f *testing.F) {
	seed := func(build func(e *xdr.Encoder)) []byte {
		e := xdr.NewEncoder(256)
		callHeader(e, 1, nfs4.ProgramNFS, 4, nfs4.ProcCompound)
		build(e)
		return e.AppendTo(nil)
	}
	f.Add(seed(func(e *xdr.Encoder) {
		e.String("")
		e.Uint32(2)
		e.Uint32(1)
		e.Uint32(nfs4.OpPutrootfh)
	}))
	f.Add(seed(func(e *xdr.Encoder) {
		e.String("t")
		e.Uint32(1)
		e.Uint32(1)
		e.Uint32(nfs4.OpExchangeID)
		e.Fixed([]byte("12345678"))
		e.String("o")
		e.Uint32(0)
		e.Uint32(1)
		e.Uint32(0)
		e.Uint32(0)
		e.Uint32(0)
	}))
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2})
	f.Fuzz(func(t *testing.T, rec []byte) {
		h := newHarness(t)
		h.session()
		h.write("f", []byte("hello"))
		// Seed the session into the record when it has room, so fuzzed
		// COMPOUNDs get past SEQUENCE sometimes.
		for i := 0; i+16 <= len(rec); i += 97 {
			if rec[i] == 0x53 {
				copy(rec[i:], h.sess[:])
			}
		}
		h.record(rec)
	})
}
