#!/usr/bin/env bash
# cores.sh: does adding event loops (--cores) cost CPU per operation?
#
# One io_uring server per value of $CORES runs at once, all exporting the
# same directory (same files, same page cache). For every --cores N other
# than 1 and every connection count C in $CONNS, one nfsbench call drives
# the --cores N server and the --cores 1 server alternately (--compare),
# $REPS times with the order swapped each time:
#   randread: $OPS random 4 KiB READs of a cached $SIZE file, depth $DEPTH.
# Prints ops/s, ops/s per core, server CPU µs per op and per op per core
# (µs/op divided by the loops: how much of one loop's time an op takes),
# medians, and the check of issue 10 goal 6: with 4 connections, --cores 2
# must not cost more server CPU per op than --cores 1.
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
RES=$WORK/results.jsonl
: >"$RES"
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

for rep in $(seq "$REPS"); do
	for n in $CORES; do
		[ "$n" != 1 ] || continue
		for conns in $CONNS; do
			a=$n b=1
			[ $((rep % 2)) = 1 ] || { a=1 b=$n; }
			j=$WORK/json/c$n-n$conns-r$rep.json
			log "rep $rep: --cores $a vs --cores $b, $conns connections"
			timeout 600 "$BIN/nfsbench" randread --server "127.0.0.1:${PORT[$a]}" --name "cores$a" --server-pid "${PID[$a]}" \
				--compare "127.0.0.1:${PORT[$b]}" --compare-name "cores$b" --compare-pid "${PID[$b]}" \
				--local-dir "$EXP" --compare-local-dir "$EXP" --size "$SIZE" --ops "$OPS" --conns "$conns" \
				--depth "$DEPTH" --stonewall 30s "${NOVERIFY[@]}" --no-progress --json "$j" >"$j.out" 2>&1 ||
				die "nfsbench failed: $(tail -3 "$j.out")"
			python3 - "$j" "$conns" "$rep" >>"$RES" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    r.update(cores=int(r["server"][5:]), conns=int(sys.argv[2]), rep=int(sys.argv[3]))
    print(json.dumps(r))
EOF
		done
	done
done

echo
echo "## cores.sh: io_uring engine, --cores $CORES (built from $BUILD_REV), randread 4 KiB cached, depth $DEPTH, medians of $REPS"
python3 - "$RES" <<'EOF'
import json, statistics as st, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in rows:
    if r.get("error"):
        print("ERROR:", r["server"], r["conns"], r["rep"], r["error"])
def med(cores, conns, f):
    v = [r.get(f) for r in rows if r["cores"] == cores and r["conns"] == conns and not r.get("error")]
    v = [x for x in v if x is not None]
    return st.median(v) if v else float("nan")
cores = sorted({r["cores"] for r in rows})
conns = sorted({r["conns"] for r in rows})
print("| --cores | conns | ops/s | ops/s per core | srv µs/op | srv µs/op per core | µs/op vs --cores 1 |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for c in conns:
    base = med(1, c, "server_cpu_us_per_op")
    for n in cores:
        ops, us = med(n, c, "ops_per_sec"), med(n, c, "server_cpu_us_per_op")
        print(f"| {n} | {c} | {ops:.0f} | {ops/n:.0f} | {us:.1f} | {us/n:.1f} | {us/base:.2f}x |")
print()
n2 = 2 if 2 in cores else max(cores)
c4 = 4 if 4 in conns else max(conns)
a, b = med(n2, c4, "server_cpu_us_per_op"), med(1, c4, "server_cpu_us_per_op")
ok = a <= b
print(f"goal 6: --cores {n2} with {c4} connections costs {a:.1f} µs/op vs {b:.1f} with --cores 1 "
      f"(ratio {a/b:.2f}x, target <= 1.00x): {'met' if ok else 'NOT met'}")
EOF
runtime
