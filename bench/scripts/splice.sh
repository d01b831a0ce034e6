#!/usr/bin/env bash
# splice.sh (issue 10 goal 3): a cached 1 MiB READ against iperf3 on
# loopback, alternately in one run, $REPS times (medians).
#
#   iperf3   iperf3 -c 127.0.0.1 -R -n $SIZE: the iperf3 server sends; its
#            CPU (utime+stime from /proc, 10 ms ticks) per GiB sent
#   <name>   nfsd-uring --engine uring $FLAGS_<n> serving a page-cached $SIZE
#            file to nfsbench readmatrix (1 connection, depth 16, rsize 1 MiB,
#            READ and READ_PLUS, --no-verify: iperf3's client checks nothing
#            either, and on 2 CPUs the client's check would set the pace)
#
# cli s/GiB is the load generator's CPU per GiB (iperf3's own figure for its
# client; nfsbench's): on a machine where client and server share the CPUs
# it bounds the throughput.
# Servers: VARIANTS="name:words name:words ...", words comma-separated:
# --flags for nfsd-uring, VAR=value for its environment. Default "copy:"
# (the engine as it is). The splice prototype measured in BENCHMARKS.md
# (issue 10 goal 3) was dropped; to measure it again, build its commit
# (6babe2e, in this branch's history: git worktree add /tmp/proto 6babe2e,
# go build -o /tmp/proto/bin/ ./cmd/nfsd-uring ./cmd/nfsbench there) and
# run BIN=/tmp/proto/bin NO_BUILD=1 with
# VARIANTS="copy:--splice-reads=off splice:--splice-reads=on sync:--splice-reads=on,NFSD_SPLICE_SYNC=1"
# (sync: the same splices as plain system calls on the loop's thread).
# Env: WORK (/tmp/nfsd-uring-bench/splice), BASE_PORT (31600), SIZE (4G: at 1G
# the 10 ms ticks and shared CPUs swing the figures by 2x),
# REPS (5), VARIANTS, NO_BUILD=1, PERF=1 (perf record -g each nfsd-uring for
# one extra run: $WORK/perf-<name>.txt).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
install_traps

WORK=${WORK:-/tmp/nfsd-uring-bench/splice}
BASE_PORT=${BASE_PORT:-31600}
SIZE=${SIZE:-4G}
REPS=${REPS:-5}
VARIANTS=${VARIANTS:-"copy:"}
command -v iperf3 >/dev/null || die "iperf3 missing: apt-get install -y iperf3"
build
rm -rf "$WORK"
mkdir -p "$WORK/export" "$WORK/json"
RES=$WORK/results.jsonl
: >"$RES"
machine_note

IPORT=$BASE_PORT
port_free "$IPORT" || die "127.0.0.1:$IPORT is already in use (set BASE_PORT)"
iperf3 -s -B 127.0.0.1 -p "$IPORT" >"$WORK/iperf3-server.log" 2>&1 &
IPID=$!
BG_PIDS+=("$IPID")
wait_listen "$IPORT" "$IPID"

declare -A SPID ADDR
NAMES=()
port=$((BASE_PORT + 1))
for v in $VARIANTS; do
	name=${v%%:*}
	flags=${v#*:}
	# Comma-separated words: --flags for nfsd-uring, VAR=value for its environment.
	args=() envs=()
	for w in ${flags//,/ }; do
		if [[ $w == -* ]]; then args+=("$w"); else envs+=("$w"); fi
	done
	SERVER_ENV="${envs[*]}" start_server "SPID[$name]" "$port" "$WORK/$name.log" --export "$WORK/export" --engine uring "${args[@]}"
	ADDR[$name]=127.0.0.1:$port
	NAMES+=("$name")
	port=$((port + 1))
done

# cpu_ticks PID: utime+stime of PID in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run_iperf3() {
	local rep=$1 t0 t1 j=$WORK/json/iperf3-$rep.json
	t0=$(cpu_ticks "$IPID")
	iperf3 -c 127.0.0.1 -p "$IPORT" -R -n "$SIZE" -J >"$j"
	t1=$(cpu_ticks "$IPID")
	python3 - "$j" "$((t1 - t0))" "$(getconf CLK_TCK)" >>"$RES" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
s = j["end"]["sum_received"]
cpu = int(sys.argv[2]) / int(sys.argv[3])
gib = s["bytes"] / 2**30
cli = j["end"]["cpu_utilization_percent"]["host_total"] / 100 * s["seconds"]
print(json.dumps({"server": "iperf3", "op": "TCP", "mb_per_sec": s["bytes"] / s["seconds"] / 1e6,
                  "server_cpu_seconds_per_gib": cpu / gib, "client_cpu_seconds_per_gib": cli / gib}))
EOF
}

run_nfs() {
	local name=$1 rep=$2 j=$WORK/json/$1-$2.json
	"$BIN/nfsbench" readmatrix --server "${ADDR[$name]}" --name "$name" --server-pid "${SPID[$name]}" \
		--local-dir "$WORK/export" --layouts data --size "$SIZE" --cache cached --read-ops READ,READ_PLUS \
		--conns 1 --depth 16 --rsize 1M --no-verify --no-progress --json "$j" >"$WORK/json/$name-$rep.out" 2>&1 ||
		die "nfsbench $name failed: $(tail -3 "$WORK/json/$name-$rep.out")"
	sed "s/^{/{\"rep\": \"$rep\", /" "$j" >>"$RES"
}

for rep in $(seq "$REPS"); do
	log "rep $rep"
	# Alternate the order so neither side always runs right after the other.
	order=(iperf3 "${NAMES[@]}")
	[ $((rep % 2)) = 1 ] || order=("${NAMES[@]}" iperf3)
	for s in "${order[@]}"; do
		if [ "$s" = iperf3 ]; then run_iperf3 "$rep"; else run_nfs "$s" "$rep"; fi
	done
done

if [ "${PERF:-0}" = 1 ]; then
	for name in "${NAMES[@]}"; do
		perf record -g -o "$WORK/perf-$name.data" -p "${SPID[$name]}" >/dev/null 2>&1 &
		ppid=$!
		sleep 0.5
		run_nfs "$name" perf
		kill -INT "$ppid"
		wait "$ppid" || true
		perf report -i "$WORK/perf-$name.data" --no-children --percent-limit 1.5 --stdio 2>/dev/null |
			grep -v '^$' | head -120 >"$WORK/perf-$name.txt" || true
		log "perf profile of $name: $WORK/perf-$name.txt"
	done
	# The perf rows are not part of the medians.
	grep -v '"rep": "perf"' "$RES" >"$RES.tmp" || true
	mv "$RES.tmp" "$RES"
fi

echo
echo "## splice.sh (built from $BUILD_REV): cached $SIZE, 1 MiB READ, 1 conn depth 16, vs iperf3 -R, medians of $REPS"
machine_note
python3 - "$RES" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
cells = {}
for r in rows:
    cells.setdefault((r["server"], r.get("op", "")), []).append(r)
for r in rows:
    if "client_cpu_seconds_per_gib" not in r:
        r["client_cpu_seconds_per_gib"] = r["client_cpu_seconds"] / (r["bytes"] / 2**30)
med = lambda rs, k: statistics.median(r[k] for r in rs)
ip = cells[("iperf3", "TCP")]
ip_mb, ip_cpu = med(ip, "mb_per_sec"), med(ip, "server_cpu_seconds_per_gib")
print(f"{'server':>8} {'op':>10} {'MB/s':>8} {'srv s/GiB':>10} {'cli s/GiB':>10} {'MB/s vs iperf3':>15} {'s/GiB vs iperf3':>16}  goal 3")
for (srv, op), rs in cells.items():
    mb, cpu = med(rs, "mb_per_sec"), med(rs, "server_cpu_seconds_per_gib")
    all_cpu = " ".join(f"{r['server_cpu_seconds_per_gib']:.3f}" for r in rs)
    verdict = ""
    if srv != "iperf3":
        verdict = "met" if mb >= 0.9 * ip_mb and cpu <= ip_cpu else "NOT met"
    cli = med(rs, "client_cpu_seconds_per_gib")
    print(f"{srv:>8} {op:>10} {mb:8.0f} {cpu:10.3f} {cli:10.3f} {mb / ip_mb:15.2f}x {cpu / ip_cpu:15.2f}x  {verdict}   (s/GiB: {all_cpu})")
EOF
runtime
