#!/usr/bin/env bash
# engines.sh: io_uring engine vs portable engine, side by side in one run.
#
# Both servers export the same directory (same files, same page cache) and
# are driven by the same nfsbench client, alternately (--compare; which one
# goes first alternates between repetitions). For each server --cores in
# $CORES and each client connection count in $CONNS, $REPS times:
#   - readmatrix, layout `data`, cached: sequential READ (and READ_PLUS) at
#     rsize 1 MiB of a $SIZE file: MB/s, server CPU s/GiB
#   - randread: $OPS random 4 KiB READs: ops/s, server CPU µs/op
# plus iperf3 over 127.0.0.1 (one stream, 5 s), $REPS times interleaved.
# Prints medians, ratios uring/portable and the targets met or not.
#
#   bash bench/scripts/engines.sh              # make bench runs this
#   REPS=1 CONNS="4" CORES="1" bash bench/scripts/engines.sh   # quick
#
# Env: REPS (5), CORES ("1 2"), CONNS ("1 4 16"), SIZE (1G), OPS (100000),
# DEPTH (16), VERIFY (0: --no-verify, like iperf3 the client does not look
# at the bytes; 1: check every byte), BASE_PORT (31100), WORK
# (/tmp/nfsd-uring-bench/engines), NO_BUILD=1 to use bin/ as is.
#
# The portable engine has no event loops: --cores is passed to it but it
# ignores the flag (it runs a goroutine per connection on GOMAXPROCS = all
# CPUs, as does the uring engine's worker pool).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
install_traps

REPS=${REPS:-5}
CORES=${CORES:-1 2}
CONNS=${CONNS:-1 4 16}
SIZE=${SIZE:-1G}
OPS=${OPS:-100000}
DEPTH=${DEPTH:-16}
VERIFY=${VERIFY:-0}
BASE_PORT=${BASE_PORT:-31100}
WORK=${WORK:-/tmp/nfsd-uring-bench/engines}
UPORT=$BASE_PORT PPORT=$((BASE_PORT + 1)) IPORT=$((BASE_PORT + 2))

command -v iperf3 >/dev/null || die "iperf3 missing: apt-get install -y iperf3"
build
rm -rf "$WORK"
mkdir -p "$WORK/export" "$WORK/json"
EXP=$WORK/export
NOVERIFY=()
[ "$VERIFY" = 1 ] || NOVERIFY=(--no-verify)
machine_note

# iperf3_once N: one 5 s single-stream run; its -J report is read by
# nfsbench summarize as a result of server "iperf3".
iperf3_once() {
	port_free "$IPORT" || die "127.0.0.1:$IPORT in use"
	iperf3 -s -1 -p "$IPORT" -B 127.0.0.1 >"$WORK/iperf3-server.log" 2>&1 &
	local ipid=$!
	BG_PIDS+=("$ipid")
	wait_listen "$IPORT" "$ipid"
	timeout 30 iperf3 -c 127.0.0.1 -p "$IPORT" -t 5 -J >"$WORK/json/iperf3-$1.json"
	stop_pid "$ipid"
	log "iperf3 run $1 done"
}

# nb WORKLOAD CORES CONNS REP FIRST: one nfsbench run, both servers
# alternately, FIRST (uring|portable) first; results tagged cores, conns
# and rep.
nb() {
	local wl=$1 cores=$2 conns=$3 rep=$4 first=$5 a b
	local U=(127.0.0.1:$UPORT uring "$UPID") P=(127.0.0.1:$PPORT portable "$PPID_")
	if [ "$first" = uring ]; then a=("${U[@]}") b=("${P[@]}"); else a=("${P[@]}") b=("${U[@]}"); fi
	local extra=() j="$WORK/json/$wl-c$cores-n$conns-r$rep.json"
	case $wl in
	readmatrix) extra=(--layouts data --cache cached) ;;
	randread) extra=(--ops "$OPS" --stonewall 20s) ;;
	esac
	local cmd=("$BIN/nfsbench" "$wl" --server "${a[0]}" --name "${a[1]}" --server-pid "${a[2]}" --local-dir "$EXP"
		--compare "${b[0]}" --compare-name "${b[1]}" --compare-pid "${b[2]}" --compare-local-dir "$EXP"
		--size "$SIZE" --conns "$conns" --depth "$DEPTH" "${extra[@]}" "${NOVERIFY[@]}"
		--tag "cores=$cores" --tag "conns=$conns" --tag "rep=$rep" --no-progress --json "$j")
	echo "${cmd[*]}" >>"$WORK/commands.txt"
	timeout 300 "${cmd[@]}" >"$WORK/json/$wl-c$cores-n$conns-r$rep.out" 2>&1 ||
		die "nfsbench failed: $(grep -E 'ERROR|nfsbench:' "$WORK/json/$wl-c$cores-n$conns-r$rep.out" | head -3)"
}

irun=0
for cores in $CORES; do
	log "servers with --cores $cores"
	start_server UPID "$UPORT" "$WORK/uring-c$cores.log" --export "$EXP" --engine uring --cores "$cores"
	start_server PPID_ "$PPORT" "$WORK/portable-c$cores.log" --export "$EXP" --engine portable --cores "$cores"
	grep -i 'portable\|uring' "$WORK/uring-c$cores.log" | grep -iv 'mount with' | head -2 >&2 || true
	for rep in $(seq "$REPS"); do
		if [ "$irun" -lt "$REPS" ]; then
			irun=$((irun + 1))
			iperf3_once "$irun"
		fi
		first=uring
		[ $((rep % 2)) = 1 ] || first=portable
		for conns in $CONNS; do
			log "cores $cores conns $conns rep $rep ($first first): readmatrix, randread"
			nb readmatrix "$cores" "$conns" "$rep" "$first"
			nb randread "$cores" "$conns" "$rep" "$first"
		done
	done
	stop_pid "$UPID"
	stop_pid "$PPID_"
done

echo
echo "## engines.sh: uring vs portable (built from $BUILD_REV), medians of $REPS, size $SIZE, depth $DEPTH, randread $OPS ops, verify=$VERIFY"
J=("$WORK"/json/*.json)
SUM=("$BIN/nfsbench" summarize --base portable)
echo
echo "### iperf3 127.0.0.1, 1 stream, 5 s (its own CPU per GiB: client = sender, server = receiver)"
echo
"${SUM[@]}" --where server=iperf3 --rows op --metrics mb_per_sec,client_cpu_seconds_per_gib,server_cpu_seconds_per_gib --runs "${J[@]}"
echo
echo "### 1 MiB sequential READ and READ_PLUS, cached \`data\` file (readmatrix); targets: every --cores/conns cell must pass"
echo
"${SUM[@]}" --where workload=readmatrix --rows cores,conns,op --metrics mb_per_sec,server_cpu_seconds_per_gib,client_cpu_seconds_per_gib --runs \
	--goal "uring no more server CPU per GiB on 1 MiB READ than portable: server_cpu_seconds_per_gib uring/portable <= 1 where op=READ" \
	--goal "uring 1 MiB cached READ at least 80 % of iperf3: mb_per_sec uring/@iperf3 >= 0.8 where op=READ" \
	--goal "uring server CPU at most 0.5 s per GiB on 1 MiB READ: server_cpu_seconds_per_gib uring <= 0.5 where op=READ" \
	"${J[@]}"
echo
echo "### 4 KiB random READ (randread)"
echo
"${SUM[@]}" --where workload=randread --rows cores,conns --metrics ops_per_sec,server_cpu_us_per_op,latency_us.p99 \
	--goal "uring at least 1.3x less server CPU per 4 KiB READ than portable: server_cpu_us_per_op portable/uring >= 1.3" \
	--goal "uring server CPU at most 15 µs per 4 KiB READ: server_cpu_us_per_op uring <= 15" \
	"${J[@]}"
echo
echo "commands: $WORK/commands.txt; raw results: $WORK/json/"
machine_note
runtime
