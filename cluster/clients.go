package cluster

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs"
)

// clientsKey holds the metadata server's client records: the bytes of
// nfs's clients file (the clients that may reclaim after a restart), so a
// standby that takes over reads the list the active server wrote.
const clientsKey = "clients"

// storeTimeout bounds one read or write of the client records.
const storeTimeout = 10 * time.Second

// ClientRecords returns an nfs.ClientRecordStore kept in the cluster. Until
// the cluster holds a list, Load returns the file at seed (the state
// directory's clients file of a server that ran without the cluster), so
// turning clustering on does not cost clients their reclaims; "" for none.
func (c *Cluster) ClientRecords(seed string) nfs.ClientRecordStore {
	return clientRecords{c: c, seed: seed}
}

type clientRecords struct {
	c    *Cluster
	seed string
}

func (r clientRecords) Load() ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	b, found, err := r.c.Get(ctx, clientsKey)
	if err != nil || found || r.seed == "" {
		return b, err
	}
	b, err = os.ReadFile(r.seed)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

func (r clientRecords) Save(data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	return r.c.Put(ctx, clientsKey, data)
}
