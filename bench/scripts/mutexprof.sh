#!/bin/bash
# mutexprof.sh: issue 10 goal 5, no shared lock on the per-op hot path.
# Starts nfsd-uring with --profile mutex (every contention event recorded),
# runs nfsbench randread with 16 connections (one session each) against
# it, stops it and prints the top of the mutex profile, for each engine
# (portable; uring with --cores 2). The nfs package should not appear.
#
#   bash bench/scripts/mutexprof.sh          # ~1 min here
#   ENGINES=uring CONNS=32 bash bench/scripts/mutexprof.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
install_traps

ENGINES=${ENGINES:-portable uring}
CONNS=${CONNS:-16}
OPS=${OPS:-400000}
DEPTH=${DEPTH:-4}
BASE_PORT=${BASE_PORT:-31500}
WORK=${WORK:-/tmp/nfsd-uring-bench/mutexprof}

build
rm -rf "$WORK"
machine_note
port=$BASE_PORT
for eng in $ENGINES; do
	dir=$WORK/$eng
	mkdir -p "$dir/export" "$dir/state"
	extra=()
	[ "$eng" != uring ] || extra=(--cores 2)
	# --profile writes mutex.pprof into the server's working directory.
	cd "$dir"
	start_server SRV_PID "$port" "$dir/server.log" --export "$dir/export" --engine "$eng" "${extra[@]}" --profile mutex
	cd - >/dev/null
	timeout 600 "$BIN/nfsbench" randread --server "127.0.0.1:$port" --server-pid "$SRV_PID" --local-dir "$dir/export" \
		--size 64M --ops "$OPS" --conns "$CONNS" --depth "$DEPTH" --no-verify --no-progress >"$dir/bench.out" 2>&1 ||
		die "nfsbench failed: $(tail -3 "$dir/bench.out")"
	kill -INT "$SRV_PID" # not stop_pid's TERM: the profile is written on the way out
	wait "$SRV_PID" 2>/dev/null || true
	[ -s "$dir/mutex.pprof" ] || die "no mutex profile in $dir (see $dir/server.log)"
	echo
	echo "## --engine $eng ${extra[*]}: randread 4 KiB, $CONNS connections, depth $DEPTH"
	grep -E "server|READ" "$dir/bench.out" | head -2
	go tool pprof -top -cum "$BIN/nfsd-uring" "$dir/mutex.pprof" 2>/dev/null | sed -n '/^Showing/,$p' | head -16
	echo "nfs package, the frames with the most delay (none: no lock of it contended):"
	go tool pprof -top -cum -nodefraction=0 "$BIN/nfsd-uring" "$dir/mutex.pprof" 2>/dev/null |
		grep 'nfsd-uring/nfs\.' | grep -v 'Server).compound\|compound).run\|compound).exec' | head -4 || true
	port=$((port + 1))
done
runtime
