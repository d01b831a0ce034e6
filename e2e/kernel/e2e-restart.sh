#!/usr/bin/env bash
# The kernel e2e's restart phase (run by e2e.sh after the others): a POSIX
# lock survives a server crash. Per NFS version, a guest process holds a
# write lock (guest-restart.sh) and says HOLDING V; the host then kills the
# server with SIGKILL and starts it again on the same port and state
# directory, and drops a marker file. The client must reclaim its open and
# lock in the grace period (OPEN CLAIM_PREVIOUS, LOCK reclaim): afterwards
# another guest process's conflicting lock is refused, the holder's unlock
# works, and then the lock is free. The server runs with short lease and
# grace times (15 s) so a run stays short; the grace period ends early
# once the guest's RECLAIM_COMPLETE came. The verdict (run.sh, then
# e2e/kernel/verdict) also requires the server log to show one client per
# restart that reclaimed an open and a lock.
#
# Environment: E2E_RESTART_BIN (server binary; built if unset), ENGINE,
# E2E_SERVER_ARGS, E2E_WORK, E2E_RESTART_VERS (default "4.2 4.1"), plus
# run.sh's.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=lib.sh
. e2e/kernel/lib.sh

ENGINE=${ENGINE:-portable}
read -r -a VERS <<<"${E2E_RESTART_VERS:-4.2 4.1}"
WORK=${E2E_WORK:-$E2E_KDIR/.work}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
RWORK=$WORK/restart
SLOG=$RWORK/server.log
rm -rf "$RWORK"
mkdir -p "$RWORK/export" "$RWORK/state"

if [[ -z ${E2E_RESTART_BIN:-} ]]; then
	E2E_RESTART_BIN=$RWORK/nfsd-uring
	go build -o "$E2E_RESTART_BIN" ./cmd/nfsd-uring || e2e_die "go build ./cmd/nfsd-uring failed"
fi
e2e_host_deps
e2e_kernel
# shellcheck disable=SC2206
# --delegations=false: a Linux client holding a delegation keeps its POSIX
# locks to itself (nfs4 _nfs4_proc_setlk: "cache locks!"), and this phase is
# about the server reclaiming a lock it holds; the delegation phase covers
# delegations.
ARGS=(--export "$RWORK/export" --engine "$ENGINE" --state-dir "$RWORK/state" --lease-time 15 --grace 15 --delegations=false ${E2E_SERVER_ARGS:-})
e2e_start_server "$E2E_RESTART_BIN" "$SLOG" "${ARGS[@]}"
echo "$E2E_SPID" >"$RWORK/server.pid"
PORT=$E2E_PORT

# restart_server V: SIGKILL the server, start it again on the same port.
restart_server() {
	local v=$1
	echo "---- $(date +%T) v$v ----" >>"$SLOG"
	e2e_kill_restart "$RWORK/server.pid" "$SLOG" "$E2E_RESTART_BIN" "$PORT" "${ARGS[@]}" ||
		echo "$(date +%T) v$v: the restarted server does not listen on $PORT" >>"$RWORK/host.log"
	: >"$RWORK/export/restarted-v$v"
	echo "$(date +%T) v$v: server restarted (pid $(cat "$RWORK/server.pid")), marker written" >>"$RWORK/host.log"
}

# watch: restart the server each time the guest says HOLDING V.
watch() {
	local v
	for v in "${VERS[@]}"; do
		until tr -d '\r' 2>/dev/null <"$RWORK/results.txt" | grep -qxF "HOLDING $v"; do sleep 0.2; done
		restart_server "$v"
	done
}
stop_all() {
	[[ -z ${WPID:-} ]] || kill "$WPID" 2>/dev/null || true
	local pid
	pid=$(cat "$RWORK/server.pid" 2>/dev/null || true)
	[[ -z $pid ]] || kill -KILL "$pid" 2>/dev/null || true
}
trap stop_all EXIT
: >"$RWORK/results.txt"
watch &
WPID=$!

set +e
# No E2E_SERVER_PID: the server is meant to die here.
E2E_WORK=$RWORK E2E_SERVER_LOG=$SLOG e2e/kernel/run.sh --restart "$PORT" "$RWORK/export" "${VERS[@]}"
rc=$?
set -e
kill "$WPID" 2>/dev/null || true
wait "$WPID" 2>/dev/null || true
WPID=

pid=$(cat "$RWORK/server.pid")
if ! kill -0 "$pid" 2>/dev/null; then
	echo "[e2e] FAIL: restart phase: the (restarted) server is not running at the end" >&2
	rc=1
fi
kill -TERM "$pid" 2>/dev/null || true
exit "$rc"
