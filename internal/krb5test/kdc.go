// Package krb5test starts a throw-away MIT Kerberos KDC for tests: a
// realm in a temporary directory, principals with passwords or keytabs,
// krb5kdc on a free 127.0.0.1 port. Tests skip when the MIT packages
// (krb5-kdc, krb5-admin-server) are not installed.
package krb5test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Realm is the test realm's name.
const Realm = "NFSD-URING.TEST"

// KDC is a running test KDC.
type KDC struct {
	Dir      string
	Conf     string // krb5.conf path
	Port     int
	Realm    string
	env      []string
	t        testing.TB
	cmd      *exec.Cmd
	kadmin   string
	kdb5util string
}

func find(names ...string) string {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
		for _, d := range []string{"/usr/sbin", "/usr/bin", "/sbin"} {
			if p := filepath.Join(d, n); fileExists(p) {
				return p
			}
		}
	}
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start makes the realm and starts krb5kdc; it is stopped at the test's
// end. The test is skipped when krb5kdc, kdb5_util or kadmin.local is
// missing.
func Start(t testing.TB) *KDC {
	t.Helper()
	kdc := &KDC{t: t, Realm: Realm, Dir: t.TempDir()}
	krb5kdc := find("krb5kdc")
	kdc.kdb5util = find("kdb5_util")
	kdc.kadmin = find("kadmin.local")
	if krb5kdc == "" || kdc.kdb5util == "" || kdc.kadmin == "" {
		t.Skip("MIT Kerberos KDC not installed (apt: krb5-kdc krb5-admin-server): skipping")
	}
	var lastErr error
	for try := 0; try < 5; try++ {
		kdc.Port = freePort(t)
		kdc.writeConf()
		if try == 0 {
			kdc.run(kdc.kdb5util, "create", "-s", "-W", "-P", "masterpw", "-r", kdc.Realm)
		}
		cmd := exec.Command(krb5kdc, "-n", "-r", kdc.Realm)
		cmd.Env = kdc.env
		out, _ := os.Create(filepath.Join(kdc.Dir, "krb5kdc.out"))
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if kdc.waitUp() {
			kdc.cmd = cmd
			t.Cleanup(func() {
				cmd.Process.Kill()
				cmd.Wait()
			})
			return kdc
		}
		cmd.Process.Kill()
		cmd.Wait()
		b, _ := os.ReadFile(filepath.Join(kdc.Dir, "krb5kdc.out"))
		lastErr = fmt.Errorf("krb5kdc did not start: %s", b)
	}
	t.Fatal(lastErr)
	return nil
}

func (k *KDC) waitUp() bool {
	for i := 0; i < 100; i++ {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", k.Port), 100*time.Millisecond)
		if err == nil {
			c.Close()
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

func (k *KDC) writeConf() {
	k.Conf = filepath.Join(k.Dir, "krb5.conf")
	kdcConf := filepath.Join(k.Dir, "kdc.conf")
	conf := fmt.Sprintf(`[libdefaults]
	default_realm = %[1]s
	dns_lookup_realm = false
	dns_lookup_kdc = false
	rdns = false
	udp_preference_limit = 1
	default_tkt_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
	default_tgs_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
	permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
	default_ccache_name = FILE:%[3]s/ccache
	ignore_acceptor_hostname = true
	dns_canonicalize_hostname = false
[realms]
	%[1]s = {
		kdc = 127.0.0.1:%[2]d
	}
`, k.Realm, k.Port, k.Dir)
	kc := fmt.Sprintf(`[kdcdefaults]
	kdc_ports = %[2]d
	kdc_tcp_listen = 127.0.0.1:%[2]d
	kdc_listen = 127.0.0.1:%[2]d
	kdc_tcp_ports = %[2]d
[realms]
	%[1]s = {
		database_name = %[3]s/principal
		key_stash_file = %[3]s/stash
		acl_file = %[3]s/kadm5.acl
		supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
		max_life = 1h
	}
[logging]
	kdc = FILE:%[3]s/kdc.log
`, k.Realm, k.Port, k.Dir)
	os.WriteFile(k.Conf, []byte(conf), 0o644)
	os.WriteFile(kdcConf, []byte(kc), 0o644)
	os.WriteFile(filepath.Join(k.Dir, "kadm5.acl"), nil, 0o644)
	k.env = append(os.Environ(), "KRB5_CONFIG="+k.Conf, "KRB5_KDC_PROFILE="+kdcConf,
		"KRB5CCNAME=FILE:"+filepath.Join(k.Dir, "ccache"))
}

// Env is the environment MIT tools need to use this realm.
func (k *KDC) Env() []string { return k.env }

func (k *KDC) run(prog string, args ...string) {
	k.t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Env = k.env
	if out, err := cmd.CombinedOutput(); err != nil {
		k.t.Fatalf("%s %s: %v\n%s", prog, strings.Join(args, " "), err, out)
	}
}

// AddPassword adds principal (without realm) with a password.
func (k *KDC) AddPassword(principal, password string) {
	k.t.Helper()
	k.run(k.kadmin, "-r", k.Realm, "-q", fmt.Sprintf("addprinc -pw %s %s", password, principal))
}

// AddKeytab adds principal with a random key and returns a keytab file
// holding it.
func (k *KDC) AddKeytab(principal string) string {
	k.t.Helper()
	kt := filepath.Join(k.Dir, strings.ReplaceAll(principal, "/", "_")+".keytab")
	k.run(k.kadmin, "-r", k.Realm, "-q", "addprinc -randkey "+principal)
	k.run(k.kadmin, "-r", k.Realm, "-q", fmt.Sprintf("ktadd -k %s %s", kt, principal))
	return kt
}
