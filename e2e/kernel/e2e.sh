#!/usr/bin/env bash
# `make e2e`: build the server, make a test tree, serve it on 127.0.0.1:PORT
# and have a real Linux 6.12 NFS client (in qemu) check it over 4.2 and 4.1.
#
# Environment: ENGINE (server --engine, default portable), E2E_VERS
# (default "4.2 4.1"), E2E_SERVER_ARGS (extra server flags), plus run.sh's.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=lib.sh
. e2e/kernel/lib.sh

ENGINE=${ENGINE:-portable}
read -r -a VERS <<<"${E2E_VERS:-4.2 4.1}"
WORK=${E2E_WORK:-$E2E_KDIR/.work}
export E2E_WORK=$WORK
mkdir -p "$WORK"
BIN=$WORK/nfsd-uring
EXPORT=$WORK/export
SLOG=$WORK/server.log

e2e_log "building ./cmd/nfsd-uring"
go build -o "$BIN" ./cmd/nfsd-uring || e2e_die "go build ./cmd/nfsd-uring failed"
e2e_log "creating test tree"
e2e/kernel/mktree.sh "$EXPORT" >&2
# Fetch/unpack the kernel before the server starts so its time doesn't count.
e2e_host_deps
e2e_kernel

SPID=
stop_server() {
	[[ -n $SPID ]] || return 0
	if kill -0 "$SPID" 2>/dev/null; then
		kill -TERM "$SPID" 2>/dev/null || true
		for _ in $(seq 1 50); do
			kill -0 "$SPID" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$SPID" 2>/dev/null || true
	fi
	wait "$SPID" 2>/dev/null || true
	SPID=
}
trap stop_server EXIT

PORT=
for attempt in 1 2 3; do
	PORT=$(e2e_free_port)
	e2e_log "starting: $BIN --export $EXPORT --listen 127.0.0.1:$PORT --engine $ENGINE ${E2E_SERVER_ARGS:-}"
	# shellcheck disable=SC2086
	"$BIN" --export "$EXPORT" --listen "127.0.0.1:$PORT" --engine "$ENGINE" ${E2E_SERVER_ARGS:-} >"$SLOG" 2>&1 &
	SPID=$!
	up=
	for _ in $(seq 1 100); do
		kill -0 "$SPID" 2>/dev/null || break
		if ss -Hltn "sport = :$PORT" 2>/dev/null | grep -q .; then
			up=1
			break
		fi
		sleep 0.1
	done
	[[ -n $up ]] && break
	echo "---- server log (attempt $attempt) ----" >&2
	tail -n 40 "$SLOG" >&2
	stop_server
	grep -qi 'address already in use' "$SLOG" || e2e_die "server did not start listening on 127.0.0.1:$PORT (log: $SLOG)"
done
[[ -n $up ]] || e2e_die "server did not start listening"
e2e_log "server pid $SPID listening on 127.0.0.1:$PORT (log: $SLOG)"

set +e
E2E_SERVER_LOG=$SLOG E2E_SERVER_PID=$SPID e2e/kernel/run.sh "$PORT" "$EXPORT" "${VERS[@]}"
rc=$?
set -e
alive=1
kill -0 "$SPID" 2>/dev/null || alive=
srv_status=
if [[ -z $alive ]]; then
	srv_status=0
	wait "$SPID" 2>/dev/null || srv_status=$?
	SPID=
fi
stop_server
if ((rc != 0)) || [[ -z $alive ]]; then
	echo "---- server log tail ($SLOG) ----" >&2
	tail -n 100 "$SLOG" >&2
	if [[ -z $alive ]]; then
		why="exit status $srv_status"
		((srv_status > 128)) && why+=" (killed by signal $((srv_status - 128)))"
		grep -q 'shutting down' "$SLOG" && why+="; it logged 'shutting down': something sent it SIGTERM/SIGINT"
		e2e_die "the server died during the test: $why"
	fi
	exit "$rc"
fi
e2e_log "server log: $SLOG ($(wc -l <"$SLOG") lines)"
