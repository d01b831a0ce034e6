#!/usr/bin/env bash
# soak.sh: does the server's RSS stay flat under a long mixed load?
#
# One nfsd-uring (--engine uring) on 127.0.0.1:$BASE_PORT; nfsbench loops
# io500 (ior-easy/ior-hard writes and reads, mdtest creates, stats, reads,
# removes), readmatrix (READ and READ_PLUS of data, hole and mixed files,
# uncached and cached) and randread (4 KiB READ) with small sizes for
# $DURATION seconds, while VmRSS of the server is sampled every
# $INTERVAL s from /proc/PID/status. Prints the RSS curve summary (start,
# 1, 5, 10 min, peak, VmHWM) and writes the samples to $WORK/rss.csv.
#
#   bash bench/scripts/soak.sh                 # 10 minutes (make soak)
#   DURATION=60 bash bench/scripts/soak.sh     # a quick check
#
# Env: DURATION (s, default 600), INTERVAL (s, 5), BASE_PORT (31200),
# WORK (/tmp/nfsd-uring-bench/soak), ENGINE (uring), CORES (1),
# NO_BUILD=1 to use bin/ as is.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
install_traps

DURATION=${DURATION:-600}
INTERVAL=${INTERVAL:-5}
BASE_PORT=${BASE_PORT:-31200}
WORK=${WORK:-/tmp/nfsd-uring-bench/soak}
ENGINE=${ENGINE:-uring}
CORES=${CORES:-1}
PORT=$BASE_PORT

build
rm -rf "$WORK"
mkdir -p "$WORK/export"
machine_note
start_server SPID "$PORT" "$WORK/server.log" --export "$WORK/export" --engine "$ENGINE" --cores "$CORES"

T0=$(date +%s%N)
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$SPID/status"; }
echo "t_s,rss_kib" >"$WORK/rss.csv"
sampler() {
	local ds
	while kill -0 "$SPID" 2>/dev/null; do
		ds=$((($(date +%s%N) - T0) / 100000000)) # tenths of a second
		printf '%d.%d,%s\n' $((ds / 10)) $((ds % 10)) "$(rss)" >>"$WORK/rss.csv"
		sleep "$INTERVAL"
	done
}
sampler &
BG_PIDS+=("$!")

NB=("$BIN/nfsbench")
COMMON=(--server "127.0.0.1:$PORT" --server-pid "$SPID" --no-progress)
iter=0 fails=0
end=$(($(date +%s) + DURATION))
log "mixed load for $DURATION s against pid $SPID"
while [ "$(date +%s)" -lt "$end" ]; do
	iter=$((iter + 1))
	for w in io500 readmatrix randread; do
		[ "$(date +%s)" -lt "$end" ] || break
		case $w in
		io500) args=(io500 --dir "io500" --size 32M --files 200 --conns 2 --depth 8 --stonewall 5s) ;;
		readmatrix) args=(readmatrix --dir "rm" --local-dir "$WORK/export" --layouts data,hole,mixed-8d,mixed-32h --size 32M --conns 2 --depth 8) ;;
		randread) args=(randread --dir "rm" --local-dir "$WORK/export" --size 32M --ops 20000 --conns 4 --depth 16 --stonewall 5s) ;;
		esac
		if ! timeout 120 "${NB[@]}" "${args[@]}" "${COMMON[@]}" >"$WORK/last-$w.out" 2>&1; then
			fails=$((fails + 1))
			log "iteration $iter: nfsbench $w failed:"
			grep -E 'ERROR|error|nfsbench:' "$WORK/last-$w.out" | head -5 >&2 || tail -5 "$WORK/last-$w.out" >&2
			cp "$WORK/last-$w.out" "$WORK/fail-$iter-$w.out"
		fi
	done
done
sleep "$INTERVAL"
HWM=$(awk '/^VmHWM:/ {print $2}' "/proc/$SPID/status")
kill -0 "$SPID" 2>/dev/null || die "server died during the soak; see $WORK/server.log"

echo
echo "soak: nfsd-uring built from $BUILD_REV, engine $ENGINE, --cores $CORES, $DURATION s, $iter load iterations (io500 + readmatrix + randread), $fails nfsbench failures"
python3 - "$WORK/rss.csv" "$HWM" <<'EOF'
import csv, sys
rows = [(float(r["t_s"]), int(r["rss_kib"])) for r in csv.DictReader(open(sys.argv[1])) if r["rss_kib"]]
hwm = int(sys.argv[2])
mib = lambda k: k / 1024
def at(t):
    # the first sample at or after t (the last one if none)
    for s, k in rows:
        if s >= t:
            return s, k
    return rows[-1]
print(f"samples: {len(rows)} (every ~{rows[1][0]-rows[0][0]:.0f} s)")
print("| point | t (s) | VmRSS MiB |")
print("|---|---:|---:|")
for name, t in [("start", 0), ("1 min", 60), ("2 min", 120), ("5 min", 300), ("10 min", 600), ("end", 1e9)]:
    if t > rows[-1][0] and t != 1e9:
        continue
    s, k = at(t)
    print(f"| {name} | {s:.0f} | {mib(k):.1f} |")
pk = max(rows, key=lambda r: r[1])
print(f"| peak sample | {pk[0]:.0f} | {mib(pk[1]):.1f} |")
print(f"| VmHWM (kernel's peak) | - | {mib(hwm):.1f} |")
# growth after warm-up: mean of the second minute vs mean of the last minute
end = rows[-1][0]
def mean(a, b):
    v = [k for s, k in rows if a <= s < b]
    return sum(v) / len(v) if v else float("nan")
if end >= 180:
    m2, ml = mean(60, 120), mean(end - 60, end + 1)
    print(f"mean RSS 1-2 min {mib(m2):.1f} MiB, last minute {mib(ml):.1f} MiB: {100*(ml-m2)/m2:+.1f} %")
EOF
echo "samples: $WORK/rss.csv; server log: $WORK/server.log"
machine_note
runtime
