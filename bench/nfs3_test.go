package bench

import (
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
