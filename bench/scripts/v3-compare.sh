#!/usr/bin/env bash
# v3-compare.sh (make bench-v3-compare): NFSv3, nfsd-uring (--engine uring)
# vs NFS-Ganesha 4.3 (bench/peer/ganesha.sh with GANESHA_V3=1: MOUNT on its
# own port, rpcbind started if none runs), one nfsbench --vers 3 --compare
# call per workload, every byte checked:
#   1. randread 4 KiB READ ($OPS ops of a 64 MiB file, --conns 2 --depth 4)
#   2. io500 --size $IO500_SIZE --files $FILES --conns 2 --depth 4
#   3. readmatrix data,hole,$MIXED READ uncached and cached ($RM_SIZE)
# Server CPU per GiB and per op comes from each server's pid. Output and
# --json files go to $WORK (default /tmp/nfsd-uring-bench/v3); the
# commands are in $WORK/commands.txt. Env: BASE_PORT (31600), OPS (100000),
# IO500_SIZE (256M), FILES (5000), RM_SIZE (256M), MIXED (mixed-16h), NICE
# (10: the benchmark runs under nice -n NICE), REPEAT (3: --repeat of
# randread and readmatrix, medians shown; io500 runs once).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
WORK=${WORK:-/tmp/nfsd-uring-bench/v3}
BASE_PORT=${BASE_PORT:-31600}
OPS=${OPS:-100000} IO500_SIZE=${IO500_SIZE:-256M} FILES=${FILES:-5000} RM_SIZE=${RM_SIZE:-256M} MIXED=${MIXED:-mixed-16h}
NICE=${NICE:-10} REPEAT=${REPEAT:-3}
UPORT=$BASE_PORT GPORT=$((BASE_PORT + 2))
export GANESHA_RUN=$WORK/ganesha-run GANESHA_V3=1

command -v ganesha.nfsd >/dev/null || die "ganesha.nfsd missing: apt-get install -y nfs-ganesha nfs-ganesha-vfs"
build
bash "$ROOT/bench/peer/ganesha.sh" stop >/dev/null 2>&1 || true
rm -rf "$WORK"
mkdir -p "$WORK"/{uring,ganesha,json}
install_traps
start_server UPID "$UPORT" "$WORK/uring.log" --export "$WORK/uring" --engine uring
bash "$ROOT/bench/peer/ganesha.sh" start "$WORK/ganesha" "$GPORT" >&2
GPID=$(cat "$GANESHA_RUN/ganesha.pid")
trap 'bash "$ROOT/bench/peer/ganesha.sh" stop >/dev/null 2>&1 || true; cleanup' EXIT
machine_note

nb() {
	local tag=$1 wl=$2
	shift 2
	local cmd=(nice -n "$NICE" "$BIN/nfsbench" "$wl" --vers 3
		--server "127.0.0.1:$UPORT" --name uring --server-pid "$UPID" --export / --local-dir "$WORK/uring"
		--compare "127.0.0.1:$GPORT" --compare-name ganesha --compare-pid "$GPID"
		--compare-export "$WORK/ganesha" --compare-mount-port $((GPORT + 1)) --compare-local-dir "$WORK/ganesha"
		--no-progress --json "$WORK/json/$tag.json" "$@")
	echo "${cmd[*]}" >>"$WORK/commands.txt"
	log "$tag: ${cmd[*]}"
	timeout 1200 "${cmd[@]}" 2>&1 | tee "$WORK/json/$tag.out" || log "$tag: nfsbench failed (see $WORK/json/$tag.out)"
}

nb randread randread --size 64M --ops "$OPS" --conns 2 --depth 4 --repeat "$REPEAT"
nb io500 io500 --size "$IO500_SIZE" --files "$FILES" --conns 2 --depth 4 --stonewall 30s
nb readmatrix readmatrix --size "$RM_SIZE" --layouts "data,hole,$MIXED" --cache uncached,cached --conns 2 --depth 4 --repeat "$REPEAT"
runtime
