package verdict

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A Record is one line of a records file: where it is, and its text.
type Record struct {
	File string // base name: results.txt, host.txt, x.manifest
	N    int    // line number, from 1
	Text string
}

// String is how a failure quotes the line it failed on.
func (r Record) String() string {
	return fmt.Sprintf("%s:%d: %s", r.File, r.N, r.Text)
}

// Tag is the first word.
func (r Record) Tag() string {
	tag, _, _ := strings.Cut(r.Text, " ")
	return tag
}

// Field is the i-th word after the tag (from 1), "" past the end.
func (r Record) Field(i int) string {
	f := strings.Fields(r.Text)
	if i < len(f) {
		return f[i]
	}
	return ""
}

// After is the text after the tag and n more words (single spaces, as the
// guest prints them), with the spaces at its ends trimmed.
func (r Record) After(n int) string {
	parts := strings.SplitN(r.Text, " ", n+2)
	if len(parts) < n+2 {
		return ""
	}
	return strings.TrimSpace(parts[n+1])
}

// Records is a file of records, in order.
type Records []Record

// readRecords reads path; a missing file is no records. The serial port may
// add CRs.
func readRecords(path string) (Records, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rs Records
	name := filepath.Base(path)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		rs = append(rs, Record{File: name, N: n, Text: strings.TrimRight(sc.Text(), "\r")})
	}
	return rs, sc.Err()
}

// Tagged is every record with this tag.
func (rs Records) Tagged(tag string) Records {
	var out Records
	for _, r := range rs {
		if r.Tag() == tag {
			out = append(out, r)
		}
	}
	return out
}

// Keyed is every record "TAG KEY ...": the records of one NFS version or
// one export.
func (rs Records) Keyed(tag, key string) Records {
	var out Records
	for _, r := range rs.Tagged(tag) {
		if r.Field(1) == key {
			out = append(out, r)
		}
	}
	return out
}

// First is the first record "TAG KEY ..." (key "" matches any).
func (rs Records) First(tag, key string) (Record, bool) {
	for _, r := range rs.Tagged(tag) {
		if key == "" || r.Field(1) == key {
			return r, true
		}
	}
	return Record{}, false
}

// Last is the last record "TAG KEY ...".
func (rs Records) Last(tag, key string) (Record, bool) {
	k := rs.Keyed(tag, key)
	if len(k) == 0 {
		return Record{}, false
	}
	return k[len(k)-1], true
}

// Has reports whether a line is exactly text (trailing spaces ignored).
func (rs Records) Has(text string) bool {
	for _, r := range rs {
		if strings.TrimRight(r.Text, " ") == text {
			return true
		}
	}
	return false
}

// Value is the text after "TAG" in the first record with that tag.
func (rs Records) Value(tag string) string {
	r, ok := rs.First(tag, "")
	if !ok {
		return ""
	}
	return r.After(0)
}
