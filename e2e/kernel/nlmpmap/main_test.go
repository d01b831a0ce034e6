package main

import (
	"encoding/binary"
	"testing"
)

func call(prog, vers, proc uint32, args ...uint32) []byte {
	w := []uint32{7, 0, 2, prog, vers, proc, 0, 0, 0, 0}
	w = append(w, args...)
	var b []byte
	for _, v := range w {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b
}

func words(t *testing.T, b []byte) []uint32 {
	t.Helper()
	if len(b)%4 != 0 {
		t.Fatalf("reply of %d bytes", len(b))
	}
	var w []uint32
	for i := 0; i < len(b); i += 4 {
		w = append(w, binary.BigEndian.Uint32(b[i:]))
	}
	return w
}

func TestAnswer(t *testing.T) {
	table := maps{}
	if err := table.Set("100021:4:6=2049"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		msg  []byte
		want []uint32
	}{
		{call(100000, 2, 3, 100021, 4, 6, 0), []uint32{7, 1, 0, 0, 0, 0, 2049}},
		{call(100000, 2, 3, 100021, 4, 17, 0), []uint32{7, 1, 0, 0, 0, 0, 0}},
		{call(100000, 2, 0), []uint32{7, 1, 0, 0, 0, 0}},
		{call(100000, 2, 4), []uint32{7, 1, 0, 0, 0, 3}},
		{call(100000, 3, 3), []uint32{7, 1, 0, 0, 0, 2, 2, 2}},
		{call(100003, 3, 0), []uint32{7, 1, 0, 0, 0, 1}},
	} {
		rep, err := answer(tc.msg, table)
		if err != nil {
			t.Fatal(err)
		}
		if got := words(t, rep); len(got) != len(tc.want) || func() bool {
			for i := range got {
				if got[i] != tc.want[i] {
					return true
				}
			}
			return false
		}() {
			t.Errorf("reply %v, want %v", got, tc.want)
		}
	}
	// Truncated calls are errors, never panics.
	full := call(100000, 2, 3, 100021, 4, 6, 0)
	for n := range len(full) - 4 {
		if _, err := answer(full[:n], table); err == nil && n < len(full)-4 {
			t.Errorf("truncated call of %d bytes answered", n)
		}
	}
	if err := table.Set("bad"); err == nil {
		t.Error("bad -map accepted")
	}
}

// FuzzAnswer: any bytes give a reply or an error, never a panic.
func FuzzAnswer(f *testing.F) {
	f.Add(call(100000, 2, 3, 100021, 4, 6, 0))
	f.Add(call(100000, 2, 0))
	f.Add([]byte{0, 0, 0, 1})
	table := maps{{100021, 4, 6}: 2049}
	f.Fuzz(func(t *testing.T, b []byte) {
		rep, err := answer(b, table)
		if err == nil && (len(rep) < 24 || len(rep)%4 != 0) {
			t.Fatalf("reply of %d bytes", len(rep))
		}
	})
}
