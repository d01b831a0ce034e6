# shellcheck shell=bash
# Stage stripe of the pNFS phase (sourced by e2e-pnfs.sh when
# E2E_PNFS_STAGES names it, before dsfail, both data servers alive): an MDS
# with --stripe-unit 1m over both data servers (each file's data striped
# over the nfsd-uring and the Ganesha data server). The Linux 6.12 client
# cannot use a striped layout (ff_layout_alloc_lseg,
# fs/nfs/flexfilelayout/flexfilelayout.c, fails a mirror of more than one
# data server), so the MDS must refuse it one (NFS4ERR_LAYOUTUNAVAILABLE,
# the client's EXCHANGE_ID implementation id says 6.12) and serve its
# READs and WRITEs itself, onto the stripes. The guest writes the 8 files
# of stage write and reads them back after drop_caches; the host requires
# every byte right, LAYOUTGET refused with LAYOUTUNAVAILABLE and none
# granted, the MDS's proxied bytes counted, and the files larger than a
# stripe unit with data on both data servers.
mkdir -p "$PW"/{mds3,mds3-state,ds1/m3,ganesha/export/m3}
mds_args "$PW/mds3" "$PW/mds3-state" m3 --stripe-unit 1m
MDS3_ARGS=("${MARGS[@]}") MDS3_MPORT=$MPORT
start_mds "$PW/mds3.log" "${MDS3_ARGS[@]}"
MDS3_PID=$SPID MDS3_PORT=$SPORT
log "MDS 3 (--stripe-unit 1m) pid $MDS3_PID on 127.0.0.1:$MDS3_PORT"
PORTS_ALL="$MDS3_PORT $DS1_PORT $G_PORT"
run_stage stripe "$MDS3_PORT" "$MDS3_PID" "$PW/mds3.log" "${VERS[@]}"
R4=$PW/stripe/results.txt
res_of "$R4" | grep '^PW ' >"$PW/written-stripe.txt" || true
check_readback "$PW/written-stripe.txt" "$R4" "stripe (after drop_caches, I/O through the MDS)" "${VERS[@]}"
scrape "$MDS3_MPORT" "$PW/stripe/mds3.metrics"
M=$PW/stripe/mds3.metrics
# metric NAME: a counter of the scrape (with or without a prefix).
metric() { awk -v m="$1" '$1 !~ /^#/ && ($1 == m || $1 ~ ("_" m "$")) {n += $NF} END {print n + 0}' "$M"; }
pw=$(metric pnfs_proxy_written_bytes_total) pr=$(metric pnfs_proxy_read_bytes_total)
lgok=$(ops "$M" LAYOUTGET NFS4_OK)
# (The metrics name NFS4ERR_LAYOUTUNAVAILABLE by its number, 10059.)
lgun=$(errs "$M" LAYOUTGET | tr ' ' '\n' | awk -F= '$1=="NFS4ERR_LAYOUTUNAVAILABLE" || $1=="NFS4ERR_10059" {n += $2} END {print n + 0}')
log "stripe: MDS 3 counted LAYOUTGET ok=$lgok (errors: $(errs "$M" LAYOUTGET)), proxied bytes written $pw read $pr"
((lgok == 0)) || fail "stripe: MDS 3 granted $lgok layouts to the 6.12 client (striped layouts make it fail with EIO)"
((lgun > 0)) || fail "stripe: MDS 3 never answered LAYOUTGET with NFS4ERR_LAYOUTUNAVAILABLE"
((pw > 0)) || fail "stripe: MDS 3 proxied no written bytes to the data servers"
# Each file has a data file on both data servers (the stripes); those of
# the files of more than one stripe unit hold data on both.
for d in "ds1:$PW/ds1/m3" "ganesha:$PW/ganesha/export/m3"; do
	n=$(find "${d#*:}" -type f | wc -l)
	b=$(find "${d#*:}" -type f -printf '%s %b\n' | awk '{s+=$2*512} END{print s+0}')
	log "stripe: ${d%%:*} holds $n data files, $b bytes allocated"
	((n >= 8 * ${#VERS[@]})) || fail "stripe: ${d%%:*} holds $n data files, want one per file written ($((8 * ${#VERS[@]})))"
	((b >= 4 << 20)) || fail "stripe: ${d%%:*} has only $b bytes of data allocated: the stripes were not written to it"
done
stop_pid "$MDS3_PID"
MDS3_PID=
