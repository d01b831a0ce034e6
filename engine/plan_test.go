package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

func TestPlanRead(t *testing.T) {
	al := dioAlign{mem: 512, off: 4096}
	rd := func(off int64, n, direct int) nfs.Read { return nfs.NewRead(3, direct, off, n) }
	buf := func(off int64, n int) ioPlan { return ioPlan{FD: 3, Off: off, Len: n} }
	dio := func(off int64, n, skip int) ioPlan { return ioPlan{Direct: true, FD: 4, Off: off, Len: n, Skip: skip} }
	tests := []struct {
		name string
		rd   nfs.Read
		mode dioMode
		al   dioAlign
		cold bool
		want ioPlan
	}{
		{"off mode", rd(0, 1<<20, 4), dioOff, al, true, buf(0, 1<<20)},
		{"no direct fd", rd(0, 1<<20, -1), dioOn, al, true, buf(0, 1<<20)},
		{"no alignment info", rd(0, 1<<20, 4), dioOn, dioAlign{}, true, buf(0, 1<<20)},
		{"memory alignment beyond a page", rd(0, 1<<20, 4), dioOn, dioAlign{mem: 8192, off: 4096}, true, buf(0, 1<<20)},
		{"aligned large", rd(8192, 1<<20, 4), dioOn, al, false, dio(8192, 1<<20, 0)},
		{"aligned small", rd(4096, 4096, 4), dioOn, al, false, dio(4096, 4096, 0)},
		{"misaligned small", rd(100, 4096, 4), dioOn, al, true, buf(100, 4096)},
		{"misaligned just under 32K", rd(4096, 32<<10-1, 4), dioOn, al, true, buf(4096, 32<<10-1)},
		{"misaligned 32K widened", rd(100, 32<<10, 4), dioOn, al, false, dio(0, 36864, 100)},
		{"misaligned large widened", rd(5000, 1<<20, 4), dioOn, al, false, dio(4096, 1<<20+4096, 904)},
		{"empty", rd(0, 0, 4), dioOn, al, true, buf(0, 0)},
		{"auto hot large", rd(0, 1<<20, 4), dioAuto, al, false, buf(0, 1<<20)},
		{"auto hot small", rd(0, 4096, 4), dioAuto, al, false, buf(0, 4096)},
		{"auto cold large", rd(0, 1<<20, 4), dioAuto, al, true, dio(0, 1<<20, 0)},
		{"auto cold small aligned", rd(8192, 4096, 4), dioAuto, al, true, dio(8192, 4096, 0)},
		{"auto cold misaligned small", rd(100, 4096, 4), dioAuto, al, true, buf(100, 4096)},
		{"auto cold misaligned large widened", rd(5000, 1<<20, 4), dioAuto, al, true, dio(4096, 1<<20+4096, 904)},
		{"auto cold, O_DIRECT refused", rd(0, 1<<20, -1), dioAuto, al, true, buf(0, 1<<20)},
	}
	for _, tc := range tests {
		p := newReadPolicy(tc.mode)
		p.files.Store(3, &fileInfo{al: tc.al})
		probed := false
		p.cold = func(fd int, off int64, n int) bool {
			probed = true
			if fd != 3 || off != tc.rd.Off || n != tc.rd.Len {
				t.Errorf("%s: probed fd %d %d@%d", tc.name, fd, n, off)
			}
			return tc.cold
		}
		if got := p.plan(&tc.rd); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
		if probed && tc.mode != dioAuto {
			t.Errorf("%s: mode %v asked where the bytes are", tc.name, tc.mode)
		}
	}
}

// TestUncached: cachestat tells a file dropped from the page cache (cold:
// O_DIRECT) from one just read (hot: buffered), and dirty data is never
// read around with O_DIRECT.
func TestUncached(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "cold")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())
	data := bytes.Repeat([]byte{7}, 1<<20)
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if uncached(fd, 0, len(data)) {
		t.Fatal("dirty data reported cold")
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	if !uncached(fd, 0, len(data)) {
		if noCachestat.Load() {
			t.Skip("no cachestat(2) here")
		}
		var cs unix.Cachestat_t
		unix.Cachestat(uint(fd), &unix.CachestatRange{Len: 1 << 20}, &cs, 0)
		t.Skipf("page cache kept the file after DONTNEED (%+v): tmpfs?", cs)
	}
	if _, err := unix.Pread(fd, make([]byte, len(data)), 0); err != nil {
		t.Fatal(err)
	}
	if uncached(fd, 0, len(data)) {
		t.Fatal("file just read reported cold")
	}
}

func TestParseDIO(t *testing.T) {
	for s, want := range map[string]dioMode{"": dioAuto, "auto": dioAuto, "on": dioOn, "off": dioOff} {
		if got, err := parseDIO(s); err != nil || got != want {
			t.Errorf("parseDIO(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := parseDIO("yes"); err == nil {
		t.Error("parseDIO(yes) accepted")
	}
}

// TestAssembler feeds record-marked streams cut at every possible point.
func TestAssembler(t *testing.T) {
	recs := [][]byte{[]byte("abcdefgh"), {}, bytes.Repeat([]byte{7}, 300), []byte("xyz1")}
	var stream []byte
	stream = append(stream, fragments(recs[0], 3, 1)...)
	stream = append(stream, fragments(recs[1])...)
	stream = append(stream, fragments(recs[2], 100, 100)...)
	stream = append(stream, fragments(recs[3])...)
	for cut := 1; cut <= len(stream); cut++ {
		a := assembler{max: 1000, pool: &recPool}
		var got [][]byte
		emit := func(r record) { got = append(got, append([]byte{}, r.bytes()...)) }
		for p := stream; len(p) > 0; {
			n := min(cut, len(p))
			if err := a.feed(p[:n], emit); err != nil {
				t.Fatal(err)
			}
			p = p[n:]
		}
		if len(got) != len(recs) {
			t.Fatalf("cut %d: %d records, want %d", cut, len(got), len(recs))
		}
		for i := range recs {
			if !bytes.Equal(got[i], recs[i]) {
				t.Fatalf("cut %d: record %d = %q", cut, i, got[i])
			}
		}
	}
}

func TestAssemblerLimit(t *testing.T) {
	a := assembler{max: 100, pool: &recPool}
	emit := func(record) { t.Fatal("record emitted") }
	// Two fragments that fit alone but not together.
	s := binary.BigEndian.AppendUint32(nil, 60)
	s = append(s, make([]byte, 60)...)
	s = binary.BigEndian.AppendUint32(s, 1<<31|60)
	if err := a.feed(s, emit); !errors.Is(err, xdr.ErrRecordTooBig) {
		t.Fatalf("got %v, want ErrRecordTooBig", err)
	}
}

// TestConsume walks a reply's iovecs forward by short sends, and hands
// what is left of a send that covered it to the next reply.
func TestConsume(t *testing.T) {
	r := &ureq{}
	r.parts = [][]byte{[]byte("head"), {}, []byte("data"), []byte("pad")}
	steps := []struct {
		n, left int
		next    string
	}{{2, 0, "ad"}, {2, 0, "data"}, {5, 0, "ad"}, {7, 5, ""}}
	for _, s := range steps {
		if left := r.consume(s.n); left != s.left {
			t.Fatalf("consume(%d) left %d, want %d", s.n, left, s.left)
		}
		if s.next != "" && string(r.parts[0]) != s.next {
			t.Fatalf("consume(%d): next %q, want %q", s.n, r.parts[0], s.next)
		}
	}
	if len(r.parts) != 0 {
		t.Fatalf("%d parts left", len(r.parts))
	}
}

// TestAssemblerPlacesWritePayload: a large record is laid out so that the
// byte the placement names sits on a page boundary, whatever the cut.
func TestAssemblerPlacesWritePayload(t *testing.T) {
	body := make([]byte, 100<<10)
	for i := range body {
		body[i] = byte(i * 7)
	}
	stream := append(binary.BigEndian.AppendUint32(nil, 1<<31|uint32(len(body))), body...)
	for _, cut := range []int{600, 4096, 65536, len(stream)} {
		a := assembler{max: 1 << 20, pool: &recPool, place: func(head []byte) int { return 333 }}
		var got record
		emit := func(r record) { got = r }
		for p := stream; len(p) > 0; {
			n := min(cut, len(p))
			if err := a.feed(p[:n], emit); err != nil {
				t.Fatal(err)
			}
			p = p[n:]
		}
		b := got.bytes()
		if !bytes.Equal(b, body) {
			t.Fatalf("cut %d: record differs", cut)
		}
		if addr := uintptr(unsafe.Pointer(&b[333])); addr%pageSize != 0 {
			t.Fatalf("cut %d: byte 333 at %#x, not page aligned", cut, addr)
		}
		recPool.put(got.buf)
	}
}

// TestAssemblerDirect: records that arrive whole in a chunk go to direct
// uncopied when it takes them; the rest, and records cut across chunks,
// come out of emit as before.
func TestAssemblerDirect(t *testing.T) {
	recs := [][]byte{[]byte("d-one"), []byte("copy-me"), []byte("d-two"), bytes.Repeat([]byte("d"), 3000)}
	var stream []byte
	for _, r := range recs {
		stream = append(stream, fragments(r)...)
	}
	for _, cut := range []int{1, 7, 100, len(stream)} {
		var direct, emitted [][]byte
		a := assembler{max: 1 << 20, pool: &recPool, direct: func(rec []byte) bool {
			if rec[0] != 'd' {
				return false
			}
			direct = append(direct, append([]byte{}, rec...))
			return true
		}}
		for p := stream; len(p) > 0; {
			n := min(cut, len(p))
			if err := a.feed(p[:n], func(r record) { emitted = append(emitted, append([]byte{}, r.bytes()...)) }); err != nil {
				t.Fatal(err)
			}
			p = p[n:]
		}
		if len(direct)+len(emitted) != len(recs) {
			t.Fatalf("cut %d: %d direct + %d emitted records, want %d", cut, len(direct), len(emitted), len(recs))
		}
		if cut == len(stream) && (len(direct) != 3 || string(emitted[0]) != "copy-me") {
			t.Fatalf("whole stream: direct %q, emitted %q", direct, emitted)
		}
	}
}

// TestProbeSampling: a file found hot is probed again only every
// hotSkip+1 reads; once a probe finds it cold, every read is probed (and
// goes O_DIRECT) until it is hot again.
func TestProbeSampling(t *testing.T) {
	p := newReadPolicy(dioAuto)
	p.files.Store(3, &fileInfo{al: dioAlign{mem: 512, off: 4096}})
	probes, cold := 0, false
	p.cold = func(int, int64, int) bool { probes++; return cold }
	rd := nfs.NewRead(3, 4, 0, 4096)
	for range hotSkip + 2 {
		if p.plan(&rd).Direct {
			t.Fatal("hot file read O_DIRECT")
		}
	}
	if probes != 2 {
		t.Fatalf("%d probes for %d hot reads, want 2", probes, hotSkip+2)
	}
	cold, probes = true, 0
	direct := 0
	for range 3 * (hotSkip + 1) {
		if p.plan(&rd).Direct {
			direct++
		}
	}
	if want := 3*(hotSkip+1) - hotSkip; direct != want || probes != want {
		t.Fatalf("file gone cold: %d direct reads, %d probes, want %d", direct, probes, want)
	}
}
