package prom

import (
	"testing"

	"github.com/nfsd-uring/nfsd-uring/metrics"
)

func TestProcedures(t *testing.T) {
	set := metrics.New()
	set.CountProc(100003, 3, 6, "NFS3_OK")
	set.CountProc(100003, 3, 6, "NFS3_OK")
	set.CountProc(100003, 3, 1, "NFS3ERR_STALE")
	set.CountProc(100005, 3, 1, "MNT3_OK")
	set.CountProc(100003, 3, 99, "PROC_UNAVAIL")
	text := scrape(t, Handler(NewCollector(set, "v", "r"), false))
	for series, want := range map[string]float64{
		`nfsd_uring_procedures_total{proc="READ",program="nfs",status="NFS3_OK",version="3"}`:          2,
		`nfsd_uring_procedures_total{proc="GETATTR",program="nfs",status="NFS3ERR_STALE",version="3"}`: 1,
		`nfsd_uring_procedures_total{proc="MNT",program="mount",status="MNT3_OK",version="3"}`:         1,
		`nfsd_uring_procedures_total{proc="99",program="nfs",status="PROC_UNAVAIL",version="3"}`:       1,
	} {
		if got := value(t, text, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}
