package verdict

import "fmt"

// pnfs is one stage (one guest boot) of the pNFS phase (e2e-pnfs.sh,
// guest-pnfs.sh): the guest finished the stage for each version, and every
// file it wrote in this boot read back, after drop_caches, with the size
// and sha256 it wrote. What needs more than one boot or the servers' files
// (the data on the data servers and not on the MDS, the read-back after
// the MDS's restart, the layouts and error reports in the capture) is
// judged by e2e-pnfs.sh.
func (r *run) pnfs() error {
	stage := r.host.Value("PNFSSTAGE")
	if stage == "" {
		return fmt.Errorf("%s/host.txt: no PNFSSTAGE record", r.dir)
	}
	for _, v := range r.vers {
		if !r.guest.Has("PNFS " + stage + " " + v + " ok") {
			r.fail("pnfs %s v%s: no 'PNFS %s %s ok' from the guest (see results.txt, console.log)", stage, v, stage, v)
		}
		read := map[string]Record{}
		for _, pr := range r.guest.Keyed("PR", v) {
			read[pr.Field(2)] = pr
		}
		wrote := r.guest.Keyed("PW", v)
		bad := 0
		for _, pw := range wrote {
			pr, ok := read[pw.Field(2)]
			switch {
			case !ok:
				r.fail("pnfs %s v%s: %s was written but not read back\n  %s", stage, v, pw.Field(2), pw)
				bad++
			case pr.After(2) != pw.After(2):
				r.fail("pnfs %s v%s: %s read back as %q, written as %q\n  %s\n  %s", stage, v, pw.Field(2), pr.After(2), pw.After(2), pw, pr)
				bad++
			}
		}
		if len(wrote) > 0 && bad == 0 {
			r.info("pnfs %s v%s: %d files read back after drop_caches with the size and sha256 written", stage, v, len(wrote))
		}
	}
	return nil
}
