package nfs

import (
	"testing"
	"time"
)

// TestReadPlusOnLoopWalksNothing (issue 21 finding 11): a READ_PLUS on an
// event loop never calls lseek. Server.Inline keeps on the loop only a
// READ_PLUS whose extents are cached; one handled there anyway with its
// range unknown (the cache went stale in between) answers DATA and leaves
// the walk to a goroutine, while the lseek it would have made is held up
// here: a synchronous one would hang the handler.
func TestReadPlusOnLoopWalksNothing(t *testing.T) {
	h := newHarness(t)
	h.session()
	var data [][2]int64 // 4 KiB of data every 512 KiB
	for off := int64(0); off < 16<<20; off += 512 << 10 {
		data = append(data, [2]int64{off, off + 4096})
	}
	h.sparse("sp", 16<<20, data)
	fh := h.lookupFH("sp")

	// The first READ_PLUS opens the file: a worker's, which walks its
	// extents and 4 MiB beyond (lookahead).
	h.readPlus(fh, 0, 1<<20)
	if h.inlineSaid {
		t.Fatal("the first READ_PLUS of a file with no descriptor open is inline")
	}
	// Within the walked range: inline, with its hole.
	h.inline = true
	_, segs, _ := h.readPlus(fh, 1<<20, 1<<20)
	if !h.inlineSaid || !hasHole(segs) {
		t.Fatalf("READ_PLUS of a walked range: inline %v, segments %v; want inline, with HOLEs", h.inlineSaid, segs)
	}

	// Beyond it: Inline says no. Handled on the loop all the same, it must
	// not seek: the seeks wait here until released.
	gate := make(chan struct{})
	seeks := make(chan struct{}, 1000)
	old := seeker
	seeker = func(fd int, off int64, whence int) (int64, error) {
		seeks <- struct{}{}
		<-gate
		return old(fd, off, whence)
	}
	defer func() { seeker = old }()
	done := make(chan []seg, 1)
	go func() {
		_, segs, _ := h.readPlus(fh, 10<<20, 1<<20)
		done <- segs
	}()
	select {
	case segs = <-done:
	case <-time.After(5 * time.Second):
		close(gate)
		t.Fatal("READ_PLUS on the loop waits for an lseek")
	}
	if h.inlineSaid {
		t.Error("READ_PLUS of an unwalked range is inline")
	}
	if len(segs) != 1 || segs[0].hole || segs[0].n != 1<<20 {
		t.Errorf("unwalked range on the loop: segments %v, want one 1 MiB DATA", segs)
	}
	select {
	case <-seeks: // walkLater's, on its goroutine
	case <-time.After(5 * time.Second):
		t.Fatal("no walk started for the unwalked range")
	}
	close(gate)
	n := h.nodeAt("sp")
	for deadline := time.Now().Add(5 * time.Second); n.extent.walking.Load(); {
		if time.Now().After(deadline) {
			t.Fatal("the walk did not end")
		}
		time.Sleep(time.Millisecond)
	}
	_, segs, _ = h.readPlus(fh, 10<<20, 1<<20)
	if !h.inlineSaid || !hasHole(segs) {
		t.Errorf("after the walk: inline %v, segments %v; want inline, with HOLEs", h.inlineSaid, segs)
	}
}

func hasHole(segs []seg) bool {
	for _, s := range segs {
		if s.hole {
			return true
		}
	}
	return false
}
