package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// TestNoDataServersNoEtcd: without --data-server the server starts as
// before: no pool, no etcd, nothing written under --state-dir.
func TestNoDataServersNoEtcd(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	role, err := setupDataServers(context.Background(), pnfsSettings{stateDir: dir}, log, nil)
	if err != nil || role.dataServers != nil || role.records != nil {
		t.Fatalf("setupDataServers: %+v %v", role, err)
	}
	role.close()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("state dir holds %v", ents)
	}
	if _, err := setupDataServers(context.Background(), pnfsSettings{stateDir: dir, cluster: "etcd://127.0.0.1:2379"}, log, nil); err == nil {
		t.Error("--cluster without --data-server accepted")
	}
}

// TestUnreachableDataServerStarts: a data server that does not answer
// leaves the pool out of service, but the server starts (embedded etcd
// under --state-dir).
func TestUnreachableDataServerStarts(t *testing.T) {
	dir := t.TempDir()
	var l dataServerList
	if err := l.Set("127.0.0.1:1/x"); err != nil {
		t.Fatal(err)
	}
	if err := l.Set("nohostport"); err == nil {
		t.Error("bad --data-server accepted")
	}
	role, err := setupDataServers(context.Background(), pnfsSettings{servers: l, stateDir: dir, dsPath: "/d"}, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer role.close()
	if role.records == nil {
		t.Error("no client record store with the role on")
	}
	if n := len(role.dataServers.Devices()); n != 0 {
		t.Errorf("%d devices in service", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "etcd")); err != nil {
		t.Errorf("no embedded etcd: %v", err)
	}
}
