package exports

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Resolver resolves a hostname of an exports file to its addresses.
type Resolver func(ctx context.Context, host string) ([]netip.Addr, error)

// LookupHost is the Resolver ParseExports uses when given none: the
// system's resolver, 5 seconds at most per name.
func LookupHost(ctx context.Context, host string) ([]netip.Addr, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// ParseExports reads an exports(5) file:
//
//	/srv/data 10.0.0.0/8(rw,root_squash) 192.168.1.5(ro) *(ro,all_squash,anonuid=65534,anongid=65534)
//
// one export per line: an absolute path (in double quotes, or with \040
// for a space, when it has blanks), optionally -OPTIONS that every client
// of the line starts from, then client specs, each with its options in
// parentheses and no blank before them. A client spec is an address, a
// CIDR network (or address/netmask), * (every client) or a hostname,
// resolved now (and again at every reload). Options are exports(5)'s:
// rw/ro, root_squash/no_root_squash/all_squash, anonuid=, anongid=,
// secure/insecure, sync/async, fsid=, crossmnt, sec=sys;
// no_subtree_check, subtree_check, wdelay, no_wdelay, hide, secure_locks,
// insecure_locks, auth_nlm and no_auth_nlm are accepted and change
// nothing. Defaults are exports(5)'s: ro, root_squash, secure, sync. '#'
// starts a comment, a '\' at the end of a line continues it.
//
// Every bad line is reported, with its number, in the error; a file with
// any bad line gives no exports. ParseExports counts a hostname that does
// not resolve as a bad line; ReadExports, which the server uses, leaves
// out only that client spec.
func ParseExports(r io.Reader, resolve Resolver) ([]Export, error) {
	list, unresolved, err := ReadExports(r, resolve)
	if err != nil {
		return nil, err
	}
	if len(unresolved) > 0 {
		return nil, errors.Join(asErrors(unresolved)...)
	}
	return list, nil
}

// UnresolvedHost is a client spec ReadExports left out because its
// hostname did not resolve.
type UnresolvedHost struct {
	Line int    // the line of the export
	Path string // the export
	Host string
	Err  error // the resolver's
	// NoClientLeft: every client spec of the line was left out, so the
	// export itself is (a line without clients would mean "everyone").
	NoClientLeft bool
}

func (u UnresolvedHost) Error() string {
	s := fmt.Sprintf("line %d: %q: cannot resolve the hostname (%v): its client spec is left out", u.Line, u.Host, u.Err)
	if u.NoClientLeft {
		s += fmt.Sprintf("; %s has no client left and is not exported", u.Path)
	}
	return s
}

// ReadExports is ParseExports, except that a hostname that does not
// resolve drops only its own client spec (and the export, if no client is
// left), as `exportfs -ra` does: everything else in the file takes
// effect, so one stale name in DNS neither stops the server at start-up
// nor blocks a reload that tightens another export. The caller reports
// what was left out.
func ReadExports(r io.Reader, resolve Resolver) ([]Export, []UnresolvedHost, error) {
	if resolve == nil {
		resolve = LookupHost
	}
	var out []Export
	var errs []error
	var unresolved []UnresolvedHost
	seen := map[string]int{}
	lines, err := logicalLines(r)
	if err != nil {
		return nil, nil, err
	}
	for _, l := range lines {
		e, skipped, err := parseExportLine(l.text, resolve)
		if err == nil && seen[e.Path] > 0 {
			err = fmt.Errorf("%s is already exported on line %d (give all its clients on one line)", e.Path, seen[e.Path])
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", l.num, err))
			continue
		}
		if e.Path == "" {
			continue // blank or comment
		}
		seen[e.Path] = l.num
		for _, u := range skipped {
			u.Line, u.Path, u.NoClientLeft = l.num, e.Path, len(e.Clients) == 0
			unresolved = append(unresolved, u)
		}
		if len(e.Clients) == 0 {
			continue
		}
		e.Line = l.num
		out = append(out, e)
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	if len(out) == 0 && len(unresolved) > 0 {
		return nil, unresolved, fmt.Errorf("no export left: %w", errors.Join(asErrors(unresolved)...))
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("no export in the file")
	}
	return out, unresolved, nil
}

func asErrors(us []UnresolvedHost) []error {
	var out []error
	for _, u := range us {
		out = append(out, u)
	}
	return out
}

type logicalLine struct {
	num  int
	text string
}

// logicalLines joins lines continued with a trailing backslash; num is
// the number of the first.
func logicalLines(r io.Reader) ([]logicalLine, error) {
	var out []logicalLine
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n, start := 0, 0
	// One builder for the line being joined: appending to a string would
	// copy it once per continuation, quadratic in a long continued line.
	var b strings.Builder
	joining := false
	for sc.Scan() {
		n++
		t := sc.Text()
		if !joining {
			start = n
			b.Reset()
		}
		joining = strings.HasSuffix(t, `\`)
		b.WriteString(strings.TrimSuffix(t, `\`))
		if joining {
			b.WriteByte(' ')
			continue
		}
		out = append(out, logicalLine{num: start, text: b.String()})
	}
	if joining {
		out = append(out, logicalLine{num: start, text: b.String()})
	}
	return out, sc.Err()
}

// splitFields splits a line into blank-separated fields, honouring double
// quotes and octal escapes (\040) and dropping a '#' comment.
func splitFields(s string) ([]string, error) {
	var out []string
	var b strings.Builder
	in, quoted := false, false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quoted && ch == '"':
			quoted = false
		case ch == '"':
			quoted, in = true, true
		case !quoted && (ch == ' ' || ch == '\t' || ch == '\r'):
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		case !quoted && ch == '#' && !in:
			return out, nil
		case ch == '\\' && i+3 < len(s) && isOctal(s[i+1:i+4]):
			v, _ := strconv.ParseUint(s[i+1:i+4], 8, 8)
			b.WriteByte(byte(v))
			i += 3
			in = true
		default:
			b.WriteByte(ch)
			in = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unterminated quote")
	}
	if in {
		out = append(out, b.String())
	}
	return out, nil
}

func isOctal(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return s[0] <= '3'
}

// exportWide are the options that describe the export rather than a
// client: they must be the same for every client of a line.
type exportWide struct {
	fsid     string
	crossmnt bool
}

// parseExportLine parses one logical line; a blank line gives an Export
// with no Path. Client specs whose hostname does not resolve are left out
// of the Export and returned in skipped (with Host and Err set).
func parseExportLine(text string, resolve Resolver) (e Export, skipped []UnresolvedHost, err error) {
	f, err := splitFields(text)
	if err != nil || len(f) == 0 {
		return Export{}, nil, err
	}
	p := f[0]
	if !strings.HasPrefix(p, "/") {
		return Export{}, nil, fmt.Errorf("%q: the export must be an absolute path", p)
	}
	p = path.Clean(p)
	base, baseWide := DefaultClientOptions(), exportWide{}
	f = f[1:]
	if len(f) > 0 && strings.HasPrefix(f[0], "-") {
		if err := applyOptions(&base, &baseWide, f[0][1:]); err != nil {
			return Export{}, nil, err
		}
		f = f[1:]
	}
	if len(f) == 0 {
		return Export{}, nil, fmt.Errorf("%s: no client given (write *(ro) or *(rw) to export to every client)", p)
	}
	e = Export{Name: p, Path: p}
	var wide *exportWide
	type ranked struct {
		rule ClientRule
		rank int
	}
	var rules []ranked
	for _, tok := range f {
		spec, opts, hasOpts := strings.Cut(tok, "(")
		if spec == "" {
			return Export{}, nil, fmt.Errorf("%q: options without a client (is there a blank before '('?)", tok)
		}
		o, w := base, baseWide
		if hasOpts {
			if !strings.HasSuffix(opts, ")") || strings.Contains(opts[:len(opts)-1], "(") {
				return Export{}, nil, fmt.Errorf("%q: options must end with ')' (no blanks inside)", tok)
			}
			if err := applyOptions(&o, &w, opts[:len(opts)-1]); err != nil {
				return Export{}, nil, fmt.Errorf("%s: %w", spec, err)
			}
		}
		if wide == nil {
			wide = &w
		} else if *wide != w {
			return Export{}, nil, fmt.Errorf("%s: fsid= and crossmnt apply to the whole export: give every client of the line the same (or put them in -OPTIONS after the path)", spec)
		}
		r, rank, err := parseClientSpec(spec, resolve)
		var u *UnresolvedHost
		if errors.As(err, &u) {
			skipped = append(skipped, *u)
			continue
		}
		if err != nil {
			return Export{}, nil, err
		}
		r.Options = o
		rules = append(rules, ranked{r, rank})
	}
	// exports(5): a single host beats a network, which beats *,
	// whatever their order on the line; within a kind the first wins.
	slices.SortStableFunc(rules, func(a, b ranked) int { return cmp.Compare(a.rank, b.rank) })
	for _, r := range rules {
		e.Clients = append(e.Clients, r.rule)
	}
	e.FSID, e.CrossMnt = wide.fsid, wide.crossmnt
	return e, skipped, nil
}

// Client spec kinds, in exports(5)'s order of precedence.
const (
	rankHost = iota
	rankNet
	rankAny
)

// parseClientSpec parses a client spec; rank is its kind.
func parseClientSpec(spec string, resolve Resolver) (ClientRule, int, error) {
	r := ClientRule{Spec: spec}
	if spec == "*" {
		r.Any = true
		return r, rankAny, nil
	}
	if a, err := netip.ParseAddr(strings.Trim(spec, "[]")); err == nil {
		a = a.Unmap()
		r.Nets = []netip.Prefix{netip.PrefixFrom(a, a.BitLen())}
		return r, rankHost, nil
	}
	if strings.HasPrefix(spec, "@") || strings.ContainsAny(spec, "*?[") || strings.HasPrefix(spec, "gss/") {
		return r, 0, fmt.Errorf("%q: netgroups, wildcard names and gss/ specs are not supported (use addresses, networks, hostnames or *)", spec)
	}
	if addr, bits, ok := strings.Cut(spec, "/"); ok {
		p, err := parseNetwork(strings.Trim(addr, "[]"), bits)
		if err != nil {
			return r, 0, fmt.Errorf("%q: %w", spec, err)
		}
		r.Nets = []netip.Prefix{p}
		return r, rankNet, nil
	}
	if !validHostname(spec) {
		return r, 0, fmt.Errorf("%q: not an address, network or hostname", spec)
	}
	addrs, err := resolve(context.Background(), spec)
	if err == nil && len(addrs) == 0 {
		err = errors.New("no address")
	}
	if err != nil {
		return r, 0, &UnresolvedHost{Host: spec, Err: err}
	}
	for _, a := range addrs {
		a = a.Unmap()
		r.Nets = append(r.Nets, netip.PrefixFrom(a, a.BitLen()))
	}
	return r, rankHost, nil
}

// parseNetwork parses ADDR/BITS or ADDR/NETMASK (IPv4).
func parseNetwork(addr, bits string) (netip.Prefix, error) {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.Unmap()
	n, err := strconv.Atoi(bits)
	if err != nil {
		m, merr := netip.ParseAddr(bits)
		if merr != nil || !m.Is4() || !a.Is4() {
			return netip.Prefix{}, fmt.Errorf("bad prefix length or netmask %q", bits)
		}
		ones, size := net.IPMask(m.AsSlice()).Size()
		if size == 0 {
			return netip.Prefix{}, fmt.Errorf("netmask %q is not contiguous", bits)
		}
		n = ones
	}
	p, err := a.Prefix(n)
	if err != nil || n < 0 || n > a.BitLen() {
		return netip.Prefix{}, fmt.Errorf("bad prefix length %q", bits)
	}
	return p, nil
}

func validHostname(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// applyOptions applies a comma-separated option list; later options
// override earlier ones, as in exportfs.
func applyOptions(o *ClientOptions, w *exportWide, list string) error {
	if list == "" {
		return nil
	}
	for _, opt := range strings.Split(list, ",") {
		if err := applyOption(o, w, opt); err != nil {
			return err
		}
	}
	return nil
}

func applyOption(o *ClientOptions, w *exportWide, opt string) error {
	k, v, hasVal := strings.Cut(opt, "=")
	switch k {
	case "rw":
		o.ReadOnly = false
	case "ro":
		o.ReadOnly = true
	case "root_squash":
		o.Squash = RootSquash
	case "no_root_squash":
		o.Squash = NoRootSquash
	case "all_squash":
		o.Squash = AllSquash
	case "no_all_squash":
		if o.Squash == AllSquash {
			o.Squash = RootSquash
		}
	case "anonuid", "anongid":
		id, err := strconv.ParseUint(v, 10, 32)
		if err != nil || id == 0xFFFFFFFF {
			return fmt.Errorf("%s=%q: needs a numeric id below 4294967295", k, v)
		}
		if k == "anonuid" {
			o.AnonUID = uint32(id)
		} else {
			o.AnonGID = uint32(id)
		}
		return nil
	case "secure":
		o.Insecure = false
	case "insecure":
		o.Insecure = true
	case "sync":
		o.Async = false
	case "async":
		o.Async = true
	case "crossmnt":
		w.crossmnt = true
	case "fsid":
		switch {
		case v == "":
			return fmt.Errorf("fsid= needs a value")
		case v == "0" || v == "root":
			return fmt.Errorf("fsid=%s (the NFSv4 root) is not needed: the pseudo-root mirrors the exported paths", v)
		}
		w.fsid = v
		return nil
	case "xprtsec":
		x, err := parseXprtSec(v)
		o.XprtSec = x
		return err
	case "sec":
		l, err := ParseSec(v)
		if err != nil {
			return err
		}
		o.Sec = l
		return nil
	case "no_subtree_check", "subtree_check", "wdelay", "no_wdelay", "hide",
		"secure_locks", "insecure_locks", "auth_nlm", "no_auth_nlm":
		// Handles never lead outside the export (subtree_check's point),
		// writes are not delayed, there is no nested export to hide,
		// and there is no NLM.
	case "":
		return fmt.Errorf("empty option")
	default:
		return fmt.Errorf("unknown option %q", opt)
	}
	if hasVal {
		return fmt.Errorf("option %q takes no value", k)
	}
	return nil
}

// FormatExports writes list as an exports file with every option spelled
// out (what `nfsd-uring exports --check` prints); a hostname is followed
// by the addresses it resolved to.
func FormatExports(w io.Writer, list []Export) {
	for _, e := range list {
		fmt.Fprintf(w, "%s", escapeField(e.Path))
		if e.Clients == nil {
			fmt.Fprintf(w, " *(%s)", formatOptions(ShorthandOptions(), e))
		}
		for _, r := range e.Clients {
			fmt.Fprintf(w, " %s(%s)", escapeField(r.Spec), formatOptions(r.Options, e))
		}
		fmt.Fprintln(w)
		for _, r := range e.Clients {
			if !r.Any && len(r.Nets) > 0 && !strings.ContainsAny(r.Spec, ":/") && r.Nets[0].Addr().String() != r.Spec {
				fmt.Fprintf(w, "#   %s = %v\n", escapeField(r.Spec), r.Nets)
			}
		}
	}
}

// escapeField writes s so that splitFields reads it back as one field:
// blanks, control bytes, '#', '"' and '\\' become exports(5)'s octal
// escapes (\040 for a blank). strconv.Quote would not do: the parser knows
// no \n or \x escapes, and a path holding a newline (from \012) would
// print as two lines.
func escapeField(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch <= ' ' || ch == 0x7f || ch == '#' || ch == '"' || ch == '\\' {
			fmt.Fprintf(&b, "\\%03o", ch)
			continue
		}
		b.WriteByte(ch)
	}
	return b.String()
}

func formatOptions(o ClientOptions, e Export) string {
	var out []string
	out = append(out, map[bool]string{true: "ro", false: "rw"}[o.ReadOnly])
	out = append(out, [...]string{"root_squash", "no_root_squash", "all_squash"}[o.Squash])
	out = append(out, map[bool]string{true: "insecure", false: "secure"}[o.Insecure])
	out = append(out, map[bool]string{true: "async", false: "sync"}[o.Async])
	out = append(out, fmt.Sprintf("anonuid=%d", o.AnonUID), fmt.Sprintf("anongid=%d", o.AnonGID), "sec="+o.Sec.String())
	if o.XprtSec != 0 {
		out = append(out, "xprtsec="+o.XprtSec.String())
	}
	if e.FSID != "" {
		out = append(out, "fsid="+e.FSID)
	}
	if e.CrossMnt {
		out = append(out, "crossmnt")
	}
	return strings.Join(out, ",")
}
