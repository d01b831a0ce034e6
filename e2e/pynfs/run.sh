#!/usr/bin/env bash
# `make pynfs`: the NFSv4.1 conformance suite pynfs against nfsd-uring, on
# each engine, each run against its own server (free 127.0.0.1 port, fresh
# empty export and state directory). See README.md, "Conformance".
#
# Environment:
#   PYNFS_SUITE     4.1 (default) or 4.0: pynfs' nfs4.1 or nfs4.0 suite; 4.0's
#                   results go to bin/pynfs-40 and are held to
#                   e2e/pynfs/baseline-pass-40.txt
#   PYNFS_SRC       pynfs source tree (default ../shared/pynfs from the repo
#                   root); it is copied and built in a temporary directory
#   PYNFS_ENGINES   engines to run (default "portable uring")
#   PYNFS_TESTS     test codes or flags for testserver.py (default "all")
#   PYNFS_PARALLEL  1 (default): the engines' runs go side by side; most of
#                   a run is the suite waiting (leases, delays), not CPU
#   PYNFS_MIN_PCT   least share of the tests run that must pass (default 95)
#   PYNFS_BASELINE  tests that must pass (default e2e/pynfs/baseline-pass.txt)
#   PYNFS_OUT       where results go (default bin/pynfs): ENGINE.json (pynfs'
#                   JSON), ENGINE.log (its output), ENGINE-server.log
#   PYNFS_TIMEOUT   seconds one engine's run may take (default 1800)
#   PYNFS_SERVER_ARGS extra nfsd-uring flags (delegations are on by default,
#                   and pynfs tests them; --delegations=false turns them off)
#   PYNFS_PORT      first port to serve on (the engines take it and the
#                   ones after); default: free ports the system picks
#   PYNFS_PNFS      1: each server is a pNFS flexible-files metadata server
#                   over a data server of its own (another nfsd-uring,
#                   portable engine, on a free port); pynfs's layout tests
#                   are flagged flex, layoutstats, layoutreturn and pnfs
#
# Exit status: 0 when every engine's run met PYNFS_MIN_PCT and passed every
# baseline test, 1 otherwise, 2 when it could not run at all.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

SUITE=${PYNFS_SUITE:-4.1}
case $SUITE in
4.1) SUFFIX= ;;
4.0) SUFFIX=-40 ;;
*)
	echo "[pynfs] PYNFS_SUITE must be 4.1 or 4.0" >&2
	exit 2
	;;
esac
# pynfs' 4.0 suite makes a client record (SETCLIENTID) for nearly every
# test and has no DESTROY_CLIENTID to drop it: hundreds of clients from
# 127.0.0.1 within one lease, most holding opens. The server's default
# share of client records per address (--max-clients-per-addr) would
# answer them NFS4ERR_DELAY, and the suite retries forever.
SUITE_ARGS=
[[ $SUITE != 4.0 ]] || SUITE_ARGS="--max-clients 16384"
SRC=${PYNFS_SRC:-../shared/pynfs}
read -r -a ENGINES <<<"${PYNFS_ENGINES:-portable uring}"
read -r -a TESTS <<<"${PYNFS_TESTS:-all}"
PARALLEL=${PYNFS_PARALLEL:-1}
MIN_PCT=${PYNFS_MIN_PCT:-95}
BASELINE=${PYNFS_BASELINE:-e2e/pynfs/baseline-pass$SUFFIX.txt}
OUT=${PYNFS_OUT:-bin/pynfs$SUFFIX}
TIMEOUT=${PYNFS_TIMEOUT:-1800}
PORT=${PYNFS_PORT:-}
# The suite needs ply; /usr/bin/python3 is the system one that has it
# (another python3 earlier in PATH may not).
PY=/usr/bin/python3

log() { echo "[pynfs] $*" >&2; }
die() {
	log "$*"
	exit 2
}

[[ -d $SRC/nfs$SUITE ]] || die "no pynfs at $SRC (set PYNFS_SRC)"
[[ -x $PY ]] || die "$PY missing"
$PY -c 'import ply' 2>/dev/null || die "$PY lacks ply (apt-get install python3-ply)"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

WORK=$(mktemp -d /tmp/pynfs.XXXXXX)
PIDS=()
# cleanup ends what this script started: the runs, and their servers by
# the pids they recorded.
cleanup() {
	local p
	for p in "${PIDS[@]}" $(cat "$WORK"/*/server.pid "$WORK"/*/ds.pid 2>/dev/null); do
		kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

log "building pynfs from $SRC in $WORK"
cp -r "$SRC" "$WORK/pynfs"
chmod -R u+w "$WORK/pynfs"
# A copy that lost pynfs' symbolic links (nfs4.0 shares nfs4.1's xdrdef,
# testmod.py, use_local.py...) has each as a file holding the link's
# target: make them links again.
find "$WORK/pynfs" -type f -size -200c -print0 | while IFS= read -r -d '' f; do
	target=$(head -c 200 "$f")
	if [[ $target == ../* && $target != *$'\n'* && -e $(dirname "$f")/$target ]]; then
		ln -sfn "$target" "$f.link" && mv -f "$f.link" "$f"
	fi
done
(cd "$WORK/pynfs" && PATH=/usr/bin:$PATH $PY setup.py build >"$WORK/build.log" 2>&1) ||
	{
		tail -20 "$WORK/build.log" >&2
		die "pynfs build failed"
	}
log "building ./cmd/nfsd-uring"
go build -o "$WORK/nfsd-uring" ./cmd/nfsd-uring || die "go build failed"

# freePort prints a TCP port free on 127.0.0.1 now.
freePort() {
	$PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# portFree reports whether 127.0.0.1:$1 can be bound now.
portFree() {
	$PY -c 'import socket,sys; s=socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2>/dev/null
}

# waitPort waits until server $2 listens on 127.0.0.1:$1 (10 s at most;
# 30 s for a metadata server, which starts its embedded etcd first).
waitPort() {
	local i tries=100
	[[ ${PYNFS_PNFS:-0} != 1 ]] || tries=300
	for ((i = 0; i < tries; i++)); do
		kill -0 "$2" 2>/dev/null || return 1
		if $PY -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1" 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# startDS starts the data server of engine $1's metadata server: an
# nfsd-uring exporting its own directory (no client rules: no squashing,
# so the MDS may create and chown the data files and clients write them
# as the layouts' synthetic owners); its port goes to ds.port, its pid
# beside the MDS's, so cleanup ends it.
startDS() {
	local dir=$WORK/$1 port pid
	mkdir -p "$dir/ds-export" "$dir/ds-state"
	port=$(freePort)
	"$WORK/nfsd-uring" --export "$dir/ds-export" --listen "127.0.0.1:$port" \
		--state-dir "$dir/ds-state" --engine portable >"$OUT/$1-ds.log" 2>&1 &
	pid=$!
	echo "$pid" >"$dir/ds.pid"
	echo "$port" >"$dir/ds.port"
	if ! waitPort "$port" "$pid"; then
		log "$1: data server did not start (see $OUT/$1-ds.log)"
		return 1
	fi
}

# runEngine runs the suite against a server on engine $1, port $2 (a free
# one when empty); its result is $OUT/$1.json.
runEngine() {
	local engine=$1 port=$2 dir=$WORK/$1 spid rc=0
	mkdir -p "$dir/export" "$dir/state"
	rm -f "$OUT/$engine.json" # no result is better than an old one
	[[ -n $port ]] || port=$(freePort)
	if ! portFree "$port"; then
		log "$engine: port $port is in use"
		return 1
	fi
	local dsargs=()
	if [[ ${PYNFS_PNFS:-0} == 1 ]]; then
		startDS "$engine" || return 1
		dsargs=(--data-server "127.0.0.1:$(cat "$dir/ds.port")")
	fi
	"$WORK/nfsd-uring" --export "$dir/export" --listen "127.0.0.1:$port" \
		--state-dir "$dir/state" --engine "$engine" "${dsargs[@]}" $SUITE_ARGS ${PYNFS_SERVER_ARGS:-} >"$OUT/$engine-server.log" 2>&1 &
	spid=$!
	echo "$spid" >"$dir/server.pid"
	if ! waitPort "$port" "$spid"; then
		log "$engine: server did not start (see $OUT/$engine-server.log)"
		kill "$spid" 2>/dev/null || true
		rm -f "$dir/server.pid"
		return 1
	fi
	log "$engine: server on 127.0.0.1:$port, running NFSv$SUITE ${TESTS[*]}"
	(cd "$WORK/pynfs/nfs$SUITE" && PATH=/usr/bin:$PATH timeout "$TIMEOUT" $PY ./testserver.py \
		"127.0.0.1:$port/" --maketree --rundeps --json="$OUT/$engine.json" "${TESTS[@]}") \
		>"$OUT/$engine.log" 2>&1 || rc=$?
	if ! kill -0 "$spid" 2>/dev/null; then
		log "$engine: the server exited during the run (see $OUT/$engine-server.log)"
		touch "$dir/server-died"
	fi
	kill "$spid" $(cat "$dir/ds.pid" 2>/dev/null) 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
	rm -f "$dir/server.pid"
	((rc != 124)) || log "$engine: suite timed out after ${TIMEOUT}s"
	return 0
}

# enginePort prints the port for the $1-th engine.
enginePort() {
	[[ -z $PORT ]] || echo $((PORT + $1))
}

if [[ $PARALLEL == 1 ]]; then
	for i in "${!ENGINES[@]}"; do
		runEngine "${ENGINES[$i]}" "$(enginePort "$i")" &
		PIDS+=($!)
	done
	for p in "${PIDS[@]}"; do
		wait "$p" || true
	done
	PIDS=()
else
	for i in "${!ENGINES[@]}"; do
		runEngine "${ENGINES[$i]}" "$(enginePort "$i")" || true
	done
fi

# A chosen subset is held to the baseline only for the tests it ran.
SUBSET=
[[ ${TESTS[*]} == all ]] || SUBSET=--subset
rc=0
for engine in "${ENGINES[@]}"; do
	if grep -q "could not clean testdir" "$OUT/$engine.log" 2>/dev/null; then
		log "$engine: $(grep -A1 'could not clean testdir' "$OUT/$engine.log" | tail -1)"
	fi
	[[ ! -e $WORK/$engine/server-died ]] || rc=1
	$PY e2e/pynfs/verdict.py --engine "$engine" --min-pct "$MIN_PCT" $SUBSET \
		--baseline "$ROOT/$BASELINE" "$OUT/$engine.json" || rc=1
done
exit "$rc"
