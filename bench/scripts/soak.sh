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
awk -F, -v hwm="$HWM" '
	NR > 1 && $2 != "" { n++; t[n] = $1 + 0; k[n] = $2 + 0 }
	function mib(x) { return x / 1024 }
	# at(x): the first sample at or after x s (the last one if none)
	function at(x,   i) { for (i = 1; i <= n; i++) if (t[i] >= x) return i; return n }
	function mean(a, b,   i, s, c) { for (i = 1; i <= n; i++) if (t[i] >= a && t[i] < b) { s += k[i]; c++ }; return c ? s / c : -1 }
	END {
		if (n < 2) { print "too few samples"; exit }
		printf "samples: %d (every ~%.0f s)\n| point | t (s) | VmRSS MiB |\n|---|---:|---:|\n", n, t[2] - t[1]
		split("start 1_min 2_min 5_min 10_min end", name, " "); split("0 60 120 300 600 -1", when, " ")
		for (p = 1; p <= 6; p++) {
			if (when[p] > t[n]) continue
			i = when[p] < 0 ? n : at(when[p])
			label = name[p]; gsub(/_/, " ", label)
			printf "| %s | %.0f | %.1f |\n", label, t[i], mib(k[i])
		}
		pk = 1
		for (i = 2; i <= n; i++) if (k[i] > k[pk]) pk = i
		printf "| peak sample | %.0f | %.1f |\n| VmHWM (kernel'"'"'s peak) | - | %.1f |\n", t[pk], mib(k[pk]), mib(hwm)
		# growth after warm-up: mean of the second minute vs mean of the last minute
		if (t[n] >= 180) {
			m2 = mean(60, 120); ml = mean(t[n] - 60, t[n] + 1)
			printf "mean RSS 1-2 min %.1f MiB, last minute %.1f MiB: %+.1f %%\n", mib(m2), mib(ml), 100 * (ml - m2) / m2
		}
	}' "$WORK/rss.csv"
echo "samples: $WORK/rss.csv; server log: $WORK/server.log"
machine_note
runtime
