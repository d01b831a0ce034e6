package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/nfsd-uring/nfsd-uring/gss"
)

// defaultKeytab is where --keytab looks when not given.
const defaultKeytab = "/etc/krb5.keytab"

// loadGSS reads the keytab for RPCSEC_GSS: tickets for its nfs/
// principals (nfs/HOST@REALM) are accepted. A missing default keytab
// leaves Kerberos off (one log line); a keytab named with --keytab must
// load.
func loadGSS(path string, explicit bool, log *slog.Logger) (*gss.Acceptor, error) {
	if path == "" {
		return nil, nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && !explicit {
		log.Info("RPCSEC_GSS (Kerberos) off: no keytab", "keytab", path)
		return nil, nil
	}
	kt, err := gss.LoadKeytab(path)
	if err != nil {
		if !explicit {
			log.Warn("RPCSEC_GSS (Kerberos) off: keytab unreadable", "keytab", path, "err", err)
			return nil, nil
		}
		return nil, fmt.Errorf("--keytab: %w", err)
	}
	acc := gss.NewAcceptor(kt)
	acc.Service = "nfs"
	log.Info("RPCSEC_GSS (Kerberos) on", "keytab", path, "service", "nfs/HOST")
	return acc, nil
}

// flagGiven reports whether the named flag was on the command line.
func flagGiven(name string) (given bool) {
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
