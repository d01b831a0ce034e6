package verdict

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// A Manifest is a listing of a tree, one entry per line (see the package
// comment), from the guest (records "TAG KEY LINE") or a host file.
type Manifest struct {
	Name    string // what it shows, for messages
	Entries []Entry
}

// An Entry is one line of a manifest; Line is the record it came from.
type Entry struct {
	Kind, Path, Text string
	Line             Record
}

// key tells entries apart: a path has one entry of each kind at most ("T"
// follows "F" for the same path).
func (e Entry) key() string { return e.Path + "\x00" + e.Kind }

// Last is the entry's last word: a regular file's sha256.
func (e Entry) Last() string {
	f := strings.Fields(e.Text)
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}

// Field is the entry's i-th word (0: the kind), "" past the end.
func (e Entry) Field(i int) string {
	f := strings.Fields(e.Text)
	if i < len(f) {
		return f[i]
	}
	return ""
}

// guestManifest is the manifest in the records "TAG KEY LINE".
func guestManifest(name string, rs Records, tag, key string) Manifest {
	m := Manifest{Name: name}
	for _, r := range rs.Keyed(tag, key) {
		m.add(r.After(1), r)
	}
	return m
}

// hostManifest reads a manifest file of the run directory; a missing file
// is an empty listing.
func hostManifest(name, dir, file string) (Manifest, error) {
	rs, err := readRecords(filepath.Join(dir, file))
	m := Manifest{Name: name}
	for _, r := range rs {
		m.add(r.Text, r)
	}
	return m, err
}

func (m *Manifest) add(text string, r Record) {
	f := strings.Fields(text)
	if len(f) < 2 {
		return
	}
	m.Entries = append(m.Entries, Entry{Kind: f[0], Path: f[1], Text: text, Line: r})
}

// Find is the entry of this kind at this path.
func (m Manifest) Find(kind, path string) (Entry, bool) {
	for _, e := range m.Entries {
		if e.Kind == kind && e.Path == path {
			return e, true
		}
	}
	return Entry{}, false
}

// Count is how many entries there are of this kind ("" for all).
func (m Manifest) Count(kind string) int {
	n := 0
	for _, e := range m.Entries {
		if kind == "" || e.Kind == kind {
			n++
		}
	}
	return n
}

// maxDiff is how many differing entries a failure lists.
const maxDiff = 20

// Diff lists how got differs from want, an entry per line: "-" what want
// has and got lacks or has otherwise, "+" what got has instead; each
// quotes its line. Nothing when they are equal.
func Diff(want, got Manifest) []string {
	w, g := byKey(want), byKey(got)
	keys := make([]string, 0, len(w)+len(g))
	for k := range w {
		keys = append(keys, k)
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		we, inW := w[k]
		ge, inG := g[k]
		if inW && inG && we.Text == ge.Text {
			continue
		}
		if inW {
			out = append(out, "- "+we.Line.String())
		}
		if inG {
			out = append(out, "+ "+ge.Line.String())
		}
	}
	return out
}

func byKey(m Manifest) map[string]Entry {
	out := make(map[string]Entry, len(m.Entries))
	for _, e := range m.Entries {
		out[e.key()] = e
	}
	return out
}

// diffText is a failure's account of a Diff: the first maxDiff lines.
func diffText(want, got Manifest, d []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (-) vs %s (+):", want.Name, got.Name)
	for i, l := range d {
		if i == maxDiff {
			fmt.Fprintf(&b, "\n  ... %d more", len(d)-maxDiff)
			break
		}
		b.WriteString("\n  " + l)
	}
	return b.String()
}
