package gss

import (
	"time"

	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"
)

// FakeTicket makes a service ticket for sname ("nfs/host") to client
// cname ("alice"), both in realm, encrypted with kt's key for the service,
// as a KDC would: for tests without a KDC. etype is the session key's.
func FakeTicket(kt *keytab.Keytab, cname, sname, realm string, etype int32) (messages.Ticket, types.EncryptionKey, error) {
	cn, _ := types.ParseSPNString(cname)
	sn, _ := types.ParseSPNString(sname)
	now := time.Now().UTC()
	return messages.NewTicket(cn, realm, sn, realm, types.NewKrbFlags(), kt, etype, 1,
		now, now, now.Add(time.Hour), now.Add(time.Hour))
}

// FakeKeytab is a keytab with a key for principal in realm derived from
// password, for tests.
func FakeKeytab(principal, realm, password string, etype int32) (*keytab.Keytab, error) {
	kt := keytab.New()
	if err := kt.AddEntry(principal, realm, password, time.Now(), 1, etype); err != nil {
		return nil, err
	}
	return kt, nil
}
