package bench

import (
	"net"
	"strconv"
	"testing"
)

// TestNFS3Workloads: randread and ior-easy over NFSv3 (--vers 3) move
// and check every byte.
func TestNFS3Workloads(t *testing.T) {
	addr, _ := startServer(t)
	cfg := tinyConfig()
	cfg.Vers = 3
	res := run(t, cfg, &Target{Addr: addr, Export: "/"}, RandRead3)
	if len(res) != 1 || res[0].Ops != int64(cfg.Ops) || res[0].Bytes != int64(cfg.Ops)*blockSize {
		t.Fatalf("randread over v3: %+v", res)
	}
	res = run(t, cfg, &Target{Addr: addr, Export: "/"}, IOREasy3)
	want := int64(cfg.Conns) * ((cfg.Size + iorEasyXfer - 1) / iorEasyXfer) * iorEasyXfer
	if len(res) != 2 || res[0].Bytes != want || res[1].Bytes != want {
		t.Fatalf("ior-easy over v3: %d results, want %d bytes each: %+v", len(res), want, res)
	}
}

// TestNFS3IO500: ior-hard, mdtest-easy, mdtest-hard (and io500, their
// sequence with ior-easy) over NFSv3 move and check every byte and file.
func TestNFS3IO500(t *testing.T) {
	addr, _ := startServer(t)
	cfg := tinyConfig()
	cfg.Vers = 3
	res := run(t, cfg, &Target{Addr: addr, Export: "/"}, IO5003)
	if len(res) != 12 {
		t.Fatalf("io500 over v3: %d results", len(res))
	}
	files := int64(cfg.Files * cfg.Conns)
	hard := max(1, cfg.Size/iorHardXfer/int64(cfg.Conns)) * int64(cfg.Conns) * iorHardXfer
	for _, r := range res {
		switch r.Workload {
		case "ior-hard":
			if r.Bytes != hard {
				t.Errorf("ior-hard %s: %d bytes, want %d", r.Op, r.Bytes, hard)
			}
		case "mdtest-easy", "mdtest-hard":
			if r.Ops != files {
				t.Errorf("%s %s: %d ops, want %d", r.Workload, r.Op, r.Ops, files)
			}
			if r.Workload == "mdtest-hard" && r.Op != "remove" && r.Bytes != files*mdtestHardSize {
				t.Errorf("mdtest-hard %s: %d bytes", r.Op, r.Bytes)
			}
		}
	}
}

// TestNFS3ReadMatrix: READ of each layout over NFSv3, written over NFS and
// written locally (cached and uncached), every byte checked.
func TestNFS3ReadMatrix(t *testing.T) {
	addr, dir := startServer(t)
	cfg := tinyConfig()
	cfg.Vers = 3
	res := run(t, cfg, &Target{Addr: addr, Export: "/"}, ReadMatrix3)
	if len(res) != len(Layouts()) {
		t.Fatalf("readmatrix over v3 (remote): %d results", len(res))
	}
	cfg.Recreate = true
	res = append(res, run(t, cfg, &Target{Addr: addr, Export: "/", LocalDir: dir}, ReadMatrix3)...)
	if len(res) != 3*len(Layouts()) {
		t.Fatalf("readmatrix over v3: %d results", len(res))
	}
	for _, r := range res {
		if r.Bytes != cfg.Size || r.Op != "READ" {
			t.Errorf("%s %s %s: %d bytes", r.File, r.Op, cacheString(r.Cached), r.Bytes)
		}
	}
}

// TestNFS3MountPort: MOUNT over a connection of its own to --mount-port
// (here the same server's port, which serves MOUNT too).
func TestNFS3MountPort(t *testing.T) {
	addr, _ := startServer(t)
	_, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	cfg := tinyConfig()
	cfg.Vers = 3
	res := run(t, cfg, &Target{Addr: addr, Export: "/", MountPort: p}, RandRead3)
	if len(res) != 1 || res[0].Ops != int64(cfg.Ops) {
		t.Fatalf("randread over v3 with --mount-port: %+v", res)
	}
}
