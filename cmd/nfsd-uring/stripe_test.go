package main

import (
	"context"
	"log/slog"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"0": 0, "4096": 4096, "64k": 64 << 10, "1m": 1 << 20, "1MiB": 1 << 20, "2G": 2 << 30} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "k", "1x", "-1", "1mm", "99999999999999"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}

// TestStripeNeedsDataServers: --stripe-unit without --data-server is a
// mistake, not silently ignored.
func TestStripeNeedsDataServers(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, s := range []pnfsSettings{{stripeUnit: 1 << 20}, {stripeWidth: 2}} {
		s.stateDir = t.TempDir()
		if _, err := setupDataServers(context.Background(), s, log, nil); err == nil {
			t.Errorf("%+v without --data-server accepted", s)
		}
	}
}
