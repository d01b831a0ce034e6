package nfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// fhMarker in fuzzed arguments stands for the opaque file handle of a
// real file (handles are signed with a key of each server).
var fhMarker = []byte{0xfe, 'F', 'H', 0xfe}

// lockFuzzServer is one server for a fuzz run: NLM and NSM calls must
// never panic and always get a well-formed record, whatever their
// arguments, over state the earlier inputs left.
func lockFuzzServer(f *testing.F) (*Server, []byte) {
	dir := f.TempDir()
	// A directory (nodeOfPath finds those): NLM locks it as a file.
	if err := os.Mkdir(filepath.Join(dir, "f"), 0o755); err != nil {
		f.Fatal(err)
	}
	s, err := NewServer(Config{Exports: []Export{{Path: dir}}, StateDir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(s.Close)
	n, err := s.nodeOfPath(s.table().exports[0], "f")
	if err != nil {
		f.Fatal(err)
	}
	return s, bytes.Clone(n.handle)
}

func fuzzLockCall(t *testing.T, s *Server, fh []byte, prog, vers, proc uint32, args []byte) {
	if i := bytes.Index(args, fhMarker); i >= 0 {
		e := xdr.NewEncoder(64)
		e.Opaque(fh)
		args = append(append(append([]byte(nil), args[:i]...), e.Header()...), args[i+len(fhMarker):]...)
	}
	e := xdr.NewEncoder(256)
	callHeader(e, 7, prog, vers, proc)
	rec := append(e.AppendTo(nil), args...)
	rep := NewReply()
	// An address-less caller: callbacks fail at once instead of going
	// to a real rpcbind.
	s.Handle(NewConn("test"), rec, rep)
	if rep.Drop {
		t.Fatal("call dropped")
	}
	s.Complete(rep)
	var out []byte
	for _, b := range rep.Iovecs() {
		out = append(out, b...)
	}
	rep.Reset()
	mark := uint32(out[0])<<24 | uint32(out[1])<<16 | uint32(out[2])<<8 | uint32(out[3])
	if last, n := xdr.ParseMark(mark); !last || n != len(out)-4 {
		t.Fatalf("bad record mark %#x for %d bytes", mark, len(out)-4)
	}
	d := xdr.NewDecoder(out[4:])
	if d.Uint32() != 7 || d.Uint32() != nfs4.MsgReply || d.Uint32() != nfs4.MsgAccepted {
		t.Fatalf("bad reply %x", out)
	}
}

func nlmSeed(build func(e *xdr.Encoder)) []byte {
	e := xdr.NewEncoder(256)
	build(e)
	return e.AppendTo(nil)
}

func seedLock(e *xdr.Encoder, name string, svid int32, off, length uint64) {
	e.String(name)
	e.Fixed(fhMarker)
	e.Opaque([]byte("oh"))
	e.Int32(svid)
	e.Uint64(off)
	e.Uint64(length)
}

// FuzzNLM: NLM4 calls with fuzzed procedure and arguments.
func FuzzNLM(f *testing.F) {
	f.Add(uint32(nlmProcLock), nlmSeed(func(e *xdr.Encoder) {
		e.Opaque([]byte("c"))
		e.Bool(true)
		e.Bool(true)
		seedLock(e, "h", 1, 0, 10)
		e.Bool(false)
		e.Int32(1)
	}))
	f.Add(uint32(nlmProcTest), nlmSeed(func(e *xdr.Encoder) {
		e.Opaque([]byte("c"))
		e.Bool(true)
		seedLock(e, "h2", 2, 5, 0)
	}))
	f.Add(uint32(nlmProcUnlock), nlmSeed(func(e *xdr.Encoder) {
		e.Opaque(nil)
		seedLock(e, "h", 1, 0, 0)
	}))
	f.Add(uint32(nlmProcCancelMsg), nlmSeed(func(e *xdr.Encoder) {
		e.Opaque(nil)
		e.Bool(true)
		e.Bool(false)
		seedLock(e, "h", 1, 0, 0)
	}))
	f.Add(uint32(nlmProcShare), nlmSeed(func(e *xdr.Encoder) {
		e.Opaque(nil)
		e.String("h")
		e.Fixed(fhMarker)
		e.Opaque([]byte("oh"))
		e.Uint32(3)
		e.Uint32(3)
		e.Bool(false)
	}))
	f.Add(uint32(nlmProcFreeAll), nlmSeed(func(e *xdr.Encoder) { e.String("h"); e.Int32(3) }))
	f.Add(uint32(nlmProcGrantRes), nlmSeed(func(e *xdr.Encoder) { e.Opaque(make([]byte, 8)); e.Uint32(0) }))
	f.Add(uint32(nlmProcNMLock), []byte{0, 0, 0, 200})
	s, fh := lockFuzzServer(f)
	f.Fuzz(func(t *testing.T, proc uint32, args []byte) {
		fuzzLockCall(t, s, fh, NLMProgram, NLMVersion, proc%32, args)
	})
}

// FuzzNSM: NSM calls with fuzzed procedure and arguments.
func FuzzNSM(f *testing.F) {
	f.Add(uint32(nsmProcMon), nlmSeed(func(e *xdr.Encoder) {
		e.String("peer")
		e.String("me")
		e.Uint32(NLMProgram)
		e.Uint32(NLMVersion)
		e.Uint32(16)
		e.Fixed(make([]byte, nsmPrivSize))
	}))
	f.Add(uint32(nsmProcNotify), nlmSeed(func(e *xdr.Encoder) { e.String("h"); e.Int32(3) }))
	f.Add(uint32(nsmProcStat), nlmSeed(func(e *xdr.Encoder) { e.String("h") }))
	f.Add(uint32(nsmProcUnmonAll), nlmSeed(func(e *xdr.Encoder) {
		e.String("me")
		e.Uint32(1)
		e.Uint32(2)
		e.Uint32(3)
	}))
	s, fh := lockFuzzServer(f)
	f.Fuzz(func(t *testing.T, proc uint32, args []byte) {
		fuzzLockCall(t, s, fh, NSMProgram, NSMVersion, proc%8, args)
	})
}

// FuzzNLMHostsFile: the hosts file parser takes any text without
// panicking.
func FuzzNLMHostsFile(f *testing.F) {
	f.Add([]byte("state 3\nhost 127.0.0.1 \"a\"\n"))
	f.Add([]byte("host ::1 \"\\x00\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parseHostsFile(data)
	})
}
