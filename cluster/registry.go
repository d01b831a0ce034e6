package cluster

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/pnfs"
)

// Keys of the flexfiles role, under Prefix.
const (
	dsKey      = "ds/"          // ds/<hex device id> -> pnfs.ServerRecord as JSON
	idCountKey = "synthetic-id" // the next synthetic id not yet reserved, in decimal
	filesKey   = "files/"       // files/<hex device id>/<data file name> -> pnfs.FileState as JSON
	orphansKey = "orphans/"     // orphans/<data file name> -> nfs.FileLayout as JSON
)

var _ pnfs.Registry = (*Cluster)(nil)

// PutServer implements pnfs.Registry.
func (c *Cluster) PutServer(ctx context.Context, id nfs.DeviceID, r pnfs.ServerRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return c.Put(ctx, dsKey+hex.EncodeToString(id[:]), b)
}

// Servers returns the data-server registry by hex device id.
func (c *Cluster) Servers(ctx context.Context) (map[string]pnfs.ServerRecord, error) {
	kvs, err := c.List(ctx, dsKey)
	if err != nil {
		return nil, err
	}
	out := make(map[string]pnfs.ServerRecord, len(kvs))
	for k, v := range kvs {
		var r pnfs.ServerRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return nil, fmt.Errorf("cluster: %s: %w", k, err)
		}
		out[k[len(dsKey):]] = r
	}
	return out, nil
}

// ReserveIDs implements pnfs.Registry: a compare-and-swap on the counter,
// retried while another metadata server moves it, so no two callers (nor
// two runs of one server) get the same block.
func (c *Cluster) ReserveIDs(ctx context.Context, n uint32) (uint32, error) {
	key := Prefix + idCountKey
	span := uint64(pnfs.LastSyntheticID-pnfs.FirstSyntheticID) + 1
	if n == 0 || uint64(n) > span {
		return 0, fmt.Errorf("cluster: cannot reserve %d ids", n)
	}
	for {
		r, err := c.cli.Get(ctx, key)
		if err != nil {
			return 0, err
		}
		first := uint64(pnfs.FirstSyntheticID)
		var cmp clientv3.Cmp
		if len(r.Kvs) == 0 {
			cmp = clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
		} else {
			if first, err = strconv.ParseUint(string(r.Kvs[0].Value), 10, 64); err != nil {
				return 0, fmt.Errorf("cluster: %s: %w", idCountKey, err)
			}
			cmp = clientv3.Compare(clientv3.ModRevision(key), "=", r.Kvs[0].ModRevision)
		}
		if first < uint64(pnfs.FirstSyntheticID) || first+uint64(n) > uint64(pnfs.LastSyntheticID)+1 {
			first = uint64(pnfs.FirstSyntheticID) // the range is used up: wrap
		}
		next := strconv.FormatUint(first+uint64(n), 10)
		t, err := c.cli.Txn(ctx).If(cmp).Then(clientv3.OpPut(key, next)).Commit()
		if err != nil {
			return 0, err
		}
		if t.Succeeded {
			return uint32(first), nil
		}
	}
}

// PutFileState implements pnfs.Registry.
func (c *Cluster) PutFileState(ctx context.Context, id nfs.DeviceID, name string, st *pnfs.FileState) error {
	key := filesKey + hex.EncodeToString(id[:]) + "/" + name
	if st == nil {
		return c.Delete(ctx, key)
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return c.Put(ctx, key, b)
}

// FileStates implements pnfs.Registry.
func (c *Cluster) FileStates(ctx context.Context) (map[nfs.DeviceID]map[string]pnfs.FileState, error) {
	kvs, err := c.List(ctx, filesKey)
	if err != nil {
		return nil, err
	}
	out := make(map[nfs.DeviceID]map[string]pnfs.FileState)
	for k, v := range kvs {
		h, name, ok := strings.Cut(k[len(filesKey):], "/")
		var id nfs.DeviceID
		if b, err := hex.DecodeString(h); !ok || err != nil || len(b) != len(id) {
			return nil, fmt.Errorf("cluster: bad key %q", k)
		}
		hex.Decode(id[:], []byte(h))
		var st pnfs.FileState
		if err := json.Unmarshal(v, &st); err != nil {
			return nil, fmt.Errorf("cluster: %s: %w", k, err)
		}
		if out[id] == nil {
			out[id] = make(map[string]pnfs.FileState)
		}
		out[id][name] = st
	}
	return out, nil
}

// PutOrphan implements pnfs.Registry.
func (c *Cluster) PutOrphan(ctx context.Context, name string, l *nfs.FileLayout) error {
	if l == nil {
		return c.Delete(ctx, orphansKey+name)
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return c.Put(ctx, orphansKey+name, b)
}

// Orphans implements pnfs.Registry.
func (c *Cluster) Orphans(ctx context.Context) ([]nfs.FileLayout, error) {
	kvs, err := c.List(ctx, orphansKey)
	if err != nil {
		return nil, err
	}
	out := make([]nfs.FileLayout, 0, len(kvs))
	for k, v := range kvs {
		var l nfs.FileLayout
		if err := json.Unmarshal(v, &l); err != nil {
			return nil, fmt.Errorf("cluster: %s: %w", k, err)
		}
		out = append(out, l)
	}
	return out, nil
}
