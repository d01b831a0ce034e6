#!/usr/bin/env bash
# splice.sh (issue 10 goal 3): a cached 1 MiB READ against iperf3 on
# loopback, alternately in one run, $REPS times (medians).
#
#   iperf3   iperf3 -c 127.0.0.1 -R -n $SIZE: the iperf3 server sends; its
#            CPU per GiB sent as iperf3 reports it (remote_total)
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

# run_iperf3 REP: one -R run; nfsbench summarize reads its -J report as a
# result of server "iperf3" (server CPU: the sender's, as iperf3 measures
# its own process).
run_iperf3() {
	iperf3 -c 127.0.0.1 -p "$IPORT" -R -n "$SIZE" -J >"$WORK/json/iperf3-$1.json"
}

run_nfs() {
	local name=$1 rep=$2 j=$WORK/json/$1-$2.json
	"$BIN/nfsbench" readmatrix --server "${ADDR[$name]}" --name "$name" --server-pid "${SPID[$name]}" \
		--local-dir "$WORK/export" --layouts data --size "$SIZE" --cache cached --read-ops READ,READ_PLUS \
		--conns 1 --depth 16 --rsize 1M --no-verify --tag "rep=$rep" --no-progress --json "$j" >"$WORK/json/$name-$rep.out" 2>&1 ||
		die "nfsbench $name failed: $(tail -3 "$WORK/json/$name-$rep.out")"
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
	# The perf runs are not part of the medians.
	rm -f "$WORK"/json/*-perf.json
fi

echo
echo "## splice.sh (built from $BUILD_REV): cached $SIZE, 1 MiB READ, 1 conn depth 16, vs iperf3 -R, medians of $REPS"
machine_note
# Goal 3: MB/s at least 0.9x iperf3's, server CPU per GiB no more than
# iperf3's sender (medians).
"$BIN/nfsbench" summarize --rows op --base iperf3 --metrics mb_per_sec,server_cpu_seconds_per_gib,client_cpu_seconds_per_gib --runs \
	--goal "goal 3, MB/s vs iperf3: mb_per_sec ${NAMES[0]}/@iperf3 >= 0.9 where op=READ" \
	--goal "goal 3, server CPU per GiB vs iperf3: server_cpu_seconds_per_gib ${NAMES[0]}/@iperf3 <= 1 where op=READ" \
	"$WORK"/json/*.json | tee "$WORK/summary.md"
runtime
