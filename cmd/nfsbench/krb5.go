package main

import (
	"flag"
	"fmt"
	"net"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/gss"
)

// krb5Flags are nfsbench's RPCSEC_GSS options.
type krb5Flags struct {
	sec, principal, keytab, password, conf, service string
}

func (k *krb5Flags) register(fs *flag.FlagSet) {
	fs.StringVar(&k.sec, "sec", "sys", "security flavour: sys (AUTH_SYS --uid/--gid), krb5, krb5i or krb5p (RPCSEC_GSS with Kerberos: a ticket for --service-principal from --principal's credentials; NFSv4 and --vers 3)")
	fs.StringVar(&k.principal, "principal", "", "with --sec krb5*: the client principal, user[@REALM] or nfs/host[@REALM]")
	fs.StringVar(&k.keytab, "keytab", "", "with --sec krb5*: keytab holding --principal's key (else --password)")
	fs.StringVar(&k.password, "password", "", "with --sec krb5*: --principal's password")
	fs.StringVar(&k.conf, "krb5-conf", "/etc/krb5.conf", "with --sec krb5*: krb5.conf naming the realm's KDC")
	fs.StringVar(&k.service, "service-principal", "", "with --sec krb5*: the server's principal (default nfs/HOST of --server)")
}

// config returns the client's Kerberos settings (nil for sys), logging
// in to the KDC.
func (k *krb5Flags) config(server string) (*client.Krb5, error) {
	switch k.sec {
	case "sys", "":
		return nil, nil
	case client.SecKrb5, client.SecKrb5i, client.SecKrb5p:
	default:
		return nil, fmt.Errorf("--sec %s: want sys, krb5, krb5i or krb5p", k.sec)
	}
	if k.principal == "" {
		return nil, fmt.Errorf("--sec %s needs --principal", k.sec)
	}
	spn := k.service
	if spn == "" {
		host, _, err := net.SplitHostPort(server)
		if err != nil {
			host = server
		}
		spn = "nfs/" + host
	}
	ini, err := gss.NewInitiator(gss.InitiatorConfig{Principal: k.principal, Password: k.password, Keytab: k.keytab, Krb5Conf: k.conf})
	if err != nil {
		return nil, err
	}
	return &client.Krb5{Initiator: ini, Service: spn, Sec: k.sec}, nil
}
