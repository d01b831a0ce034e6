package verdict

import (
	"reflect"
	"testing"
)

func manifestOf(name string, lines ...string) Manifest {
	m := Manifest{Name: name}
	for i, l := range lines {
		m.add(l, Record{File: name, N: i + 1, Text: l})
	}
	return m
}

// TestDiff: entries are matched by path and kind (F and T of one path are
// two entries); each difference quotes the line on each side.
func TestDiff(t *testing.T) {
	want := manifestOf("w",
		"D ./d 755 0:0",
		"F ./d/f 3 644 1 0:0 aaa",
		"F ./t-x 1 644 1 0:0 bbb",
		"T ./t-x 981173106",
		"L ./l -> d/f")
	if d := Diff(want, want); d != nil {
		t.Errorf("Diff(m, m) = %q", d)
	}
	got := manifestOf("g",
		"D ./d 755 0:0",
		"F ./d/f 3 600 1 0:0 aaa",
		"F ./t-x 1 644 1 0:0 bbb",
		"T ./t-x 981173107",
		"O ./extra")
	wantDiff := []string{
		"- w:2: F ./d/f 3 644 1 0:0 aaa",
		"+ g:2: F ./d/f 3 600 1 0:0 aaa",
		"+ g:5: O ./extra",
		"- w:5: L ./l -> d/f",
		"- w:4: T ./t-x 981173106",
		"+ g:4: T ./t-x 981173107",
	}
	if d := Diff(want, got); !reflect.DeepEqual(d, wantDiff) {
		t.Errorf("Diff =\n%q\nwant\n%q", d, wantDiff)
	}
}
