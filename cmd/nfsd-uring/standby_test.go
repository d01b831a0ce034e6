package main

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/metrics"
)

// TestStandbyFlags: --standby needs an external --cluster and a TTL of at
// least 2 seconds; without --standby nothing happens.
func TestStandbyFlags(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	defer func(on bool, ttl int) { *standbyOn, *standbyTTL = on, ttl }(*standbyOn, *standbyTTL)
	*standbyOn = false
	if sb, err := standbyWait(&pnfsSettings{}, ":0", log, metrics.New()); sb != nil || err != nil {
		t.Fatalf("without --standby: %v %v", sb, err)
	}
	var sb *standby
	sb.close() // nil-safe, as main.go calls it
	if sb.takeover() != nil || sb.lost() != nil {
		t.Fatal("a nil standby gives a takeover")
	}
	*standbyOn = true
	for _, c := range []struct {
		cluster string
		ttl     int
		want    string
	}{
		{"", 5, "needs --cluster"},
		{"etcd://127.0.0.1:1", 1, "at least 2"},
		{"http://127.0.0.1:1", 5, "etcd://"},
	} {
		*standbyTTL = c.ttl
		_, err := standbyWait(&pnfsSettings{cluster: c.cluster}, ":0", log, metrics.New())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--cluster %q --standby-ttl %d: %v, want %q", c.cluster, c.ttl, err, c.want)
		}
	}
}
