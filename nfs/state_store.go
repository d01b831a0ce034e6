package nfs

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// clientStore keeps, in the state directory, the clients that may reclaim
// state after a restart: their owner string and principal, as knfsd's
// nfsdcld does, and nothing else (RFC 8881 section 8.4.3: the server must
// remember which clients held state, so that after a restart it lets them
// reclaim and refuses reclaims from anyone else).
//
// The file is "clients": a header line, then one "PRINCIPAL HEXOWNER" line
// per client. It is rewritten whole (write to a temporary file, fsync,
// rename, fsync the directory), so a crash leaves the old list or the new
// one, never a mix. It changes only when a client sends RECLAIM_COMPLETE,
// when one is expired or destroyed, and when a grace period ends: rare
// enough that a whole rewrite costs nothing worth measuring.
type clientStore struct {
	dir string // "": nothing is kept (tests, and servers without a state directory)
	// ext, when set, keeps the list instead of dir (Config.ClientRecords).
	ext ClientRecordStore
	log *slog.Logger

	mu      sync.Mutex    // serialises writes
	written atomic.Uint64 // generation of the list last written
}

// clientRecord is one client that may reclaim: its co_ownerid and the
// principal (AUTH_SYS uid) that made its client record.
type clientRecord struct {
	owner     string
	principal uint32
}

const clientStoreHeader = "nfsd-uring clients 1"

// ClientRecordStore keeps the list of clients that may reclaim somewhere
// other than the state directory: a clustered metadata server keeps it in
// etcd (package cluster), so a standby taking over knows which clients may
// reclaim. The bytes are those of the clients file. Load returns nil when
// nothing was saved; Save replaces what was. Both may block (a network
// store); each is called with no lock of the server's held.
type ClientRecordStore interface {
	Load() ([]byte, error)
	Save(data []byte) error
}

func (cs *clientStore) path() string { return filepath.Join(cs.dir, "clients") }

// load reads the list a previous server instance left. A missing file is
// an empty list. A line that cannot be read is logged and skipped: one bad
// record costs that client its reclaim, not every client theirs (issue 21:
// a line the server itself wrote once stopped every later start). A file
// without the header is an error: it is not a list this server wrote, and
// starting without it would refuse every client's reclaim.
func (cs *clientStore) load() ([]clientRecord, error) {
	b, err := cs.read()
	if b == nil || err != nil {
		return nil, err
	}
	recs, bad, err := parseClientRecords(b)
	if err != nil {
		return nil, err
	}
	for _, n := range bad {
		cs.logger().Warn("state directory: clients file line is damaged and skipped: that client cannot reclaim its state", "file", cs.path(), "line", n)
	}
	return recs, nil
}

// read returns the stored list's bytes, nil if there is none.
func (cs *clientStore) read() ([]byte, error) {
	if cs.ext != nil {
		b, err := cs.ext.Load()
		if err != nil {
			return nil, fmt.Errorf("nfs: client records: %w", err)
		}
		return b, nil
	}
	if cs.dir == "" {
		return nil, nil
	}
	b, err := os.ReadFile(cs.path())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("nfs: state directory: %w", err)
	}
	return b, nil
}

func (cs *clientStore) logger() *slog.Logger {
	if cs.log == nil {
		return slog.Default()
	}
	return cs.log
}

// parseClientRecords reads a clients file: its records, and the numbers of
// the lines that hold none. Only a missing header is an error.
func parseClientRecords(b []byte) (recs []clientRecord, bad []int, err error) {
	header, rest, _ := bytes.Cut(b, []byte{'\n'})
	if string(header) != clientStoreHeader {
		return nil, nil, fmt.Errorf("nfs: state directory: clients file has no %q header (removing the file lets the server start, but then no client can reclaim its state)", clientStoreHeader)
	}
	for n := 2; len(rest) > 0; n++ {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte{'\n'})
		r, ok := parseClientRecord(line)
		if !ok {
			bad = append(bad, n)
			continue
		}
		recs = append(recs, r)
	}
	return recs, bad, nil
}

// parseClientRecord reads one "PRINCIPAL HEXOWNER" line.
func parseClientRecord(line []byte) (clientRecord, bool) {
	p, h, ok := bytes.Cut(line, []byte{' '})
	uid, err := strconv.ParseUint(string(p), 10, 32)
	owner, err2 := hex.DecodeString(string(h))
	r := clientRecord{owner: string(owner), principal: uint32(uid)}
	return r, ok && err == nil && err2 == nil && r.valid()
}

// valid reports whether r is a record the clients file can hold: an owner
// EXCHANGE_ID accepts (1 to NFS4_OPAQUE_LIMIT bytes, RFC 8881 section
// 18.35.1). formatClientRecords writes only these, so every line it writes
// parses back.
func (r clientRecord) valid() bool {
	return len(r.owner) > 0 && len(r.owner) <= nfs4.OpaqueLimit
}

// formatClientRecords is the clients file for recs, leaving out any record
// parseClientRecords would refuse.
func formatClientRecords(recs []clientRecord) []byte {
	slices.SortFunc(recs, func(a, b clientRecord) int {
		if c := strings.Compare(a.owner, b.owner); c != 0 {
			return c
		}
		return cmp.Compare(a.principal, b.principal)
	})
	var buf bytes.Buffer
	buf.WriteString(clientStoreHeader + "\n")
	for _, r := range recs {
		if r.valid() {
			fmt.Fprintf(&buf, "%d %s\n", r.principal, hex.EncodeToString([]byte(r.owner)))
		}
	}
	return buf.Bytes()
}

// save writes recs as generation gen, unless a later generation is on disk
// already (it then holds this change too).
func (cs *clientStore) save(gen uint64, recs []clientRecord) error {
	if cs.dir == "" && cs.ext == nil {
		cs.written.Store(gen)
		return nil
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.written.Load() >= gen {
		return nil
	}
	var err error
	if cs.ext != nil {
		err = cs.ext.Save(formatClientRecords(recs))
	} else {
		err = writeFileAtomic(cs.dir, "clients", formatClientRecords(recs))
	}
	if err != nil {
		return err
	}
	cs.written.Store(gen)
	return nil
}

// writeFileAtomic replaces dir/name by data: a temporary file written and
// fsynced, renamed over the old one, then the directory fsynced so the
// rename itself survives a crash.
func writeFileAtomic(dir, name string, data []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	p := filepath.Join(dir, name)
	tmp := p + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
