#!/usr/bin/env bash
# cores.sh: does adding event loops (--cores) cost CPU per operation?
#
# One io_uring server per value of $CORES runs at once, all exporting the
# same directory (same files, same page cache). For every --cores N other
# than 1 and every connection count C in $CONNS, one nfsbench call drives
# the --cores N server and the --cores 1 server alternately (--compare),
# $REPS times with the order swapped each time (nfsbench --repeat; its
# --json tags each run rep=K):
#   randread: $OPS random 4 KiB READs of a cached $SIZE file, depth $DEPTH.
# Prints medians of ops/s and server CPU µs per op per --cores value, their
# ratios to --cores 1 (nfsbench summarize), and the check of issue 10
# goal 6: with 4 connections, --cores 2 must not cost more server CPU per
# op than --cores 1.
#
#   bash bench/scripts/cores.sh
#   REPS=1 CONNS="4" bash bench/scripts/cores.sh      # quick
#
# Env: REPS (3), CORES ("1 2"), CONNS ("1 2 4"), SIZE (256M), OPS (60000),
# DEPTH (16), BASE_PORT (31400), WORK (/tmp/nfsd-uring-bench/cores),
# NO_BUILD=1 to use bin/ as is, VERIFY (0).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
install_traps

REPS=${REPS:-3}
CORES=${CORES:-1 2}
CONNS=${CONNS:-1 2 4}
SIZE=${SIZE:-256M}
OPS=${OPS:-60000}
DEPTH=${DEPTH:-16}
VERIFY=${VERIFY:-0}
BASE_PORT=${BASE_PORT:-31400}
WORK=${WORK:-/tmp/nfsd-uring-bench/cores}

build
rm -rf "$WORK"
mkdir -p "$WORK/export" "$WORK/json" "$WORK/state"
EXP=$WORK/export
NOVERIFY=()
[ "$VERIFY" = 1 ] || NOVERIFY=(--no-verify)
machine_note

declare -A PID PORT
i=0
for n in $CORES; do
	PORT[$n]=$((BASE_PORT + i))
	start_server "PID[$n]" "${PORT[$n]}" "$WORK/uring-c$n.log" --export "$EXP" --engine uring --cores "$n" --state-dir "$WORK/state"
	i=$((i + 1))
done
[ -n "${PID[1]:-}" ] || die "CORES must include 1 (the baseline)"

for n in $CORES; do
	[ "$n" != 1 ] || continue
	for conns in $CONNS; do
		j=$WORK/json/c$n-n$conns.json
		log "--cores $n vs --cores 1, $conns connections, $REPS repetitions"
		timeout $((600 * REPS)) "$BIN/nfsbench" randread --server "127.0.0.1:${PORT[$n]}" --name "cores$n" --server-pid "${PID[$n]}" \
			--compare "127.0.0.1:${PORT[1]}" --compare-name "cores1" --compare-pid "${PID[1]}" \
			--local-dir "$EXP" --compare-local-dir "$EXP" --size "$SIZE" --ops "$OPS" --conns "$conns" \
			--depth "$DEPTH" --stonewall 30s "${NOVERIFY[@]}" --tag "conns=$conns" --repeat "$REPS" \
			--no-progress --json "$j" >"$j.out" 2>&1 ||
			die "nfsbench failed: $(tail -3 "$j.out")"
	done
done

echo
echo "## cores.sh: io_uring engine, --cores $CORES (built from $BUILD_REV), randread 4 KiB cached, depth $DEPTH, medians of $REPS"
"$BIN/nfsbench" summarize --rows conns --base cores1 --metrics ops_per_sec,server_cpu_us_per_op \
	--goal "goal 6 (--cores 2, 4 connections: no more server CPU per op than --cores 1): server_cpu_us_per_op cores2/cores1 <= 1 where conns=4" \
	"$WORK"/json/*.json
runtime
