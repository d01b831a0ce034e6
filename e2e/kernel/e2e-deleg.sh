#!/usr/bin/env bash
# The kernel e2e's delegation phase (run by e2e.sh last): a server with
# --delegations grants the Linux client a read delegation and recalls it
# when a second client opens the file for writing. Per NFS version the
# guest (guest-deleg.sh) keeps deleg-vV.txt open for reading and says
# DELEG_HELD V; the host then runs delegclient (a second NFS client, the
# in-repo client package), whose OPEN for writing must be served within
# 30 s: the server recalls the delegation (CB_RECALL), answers
# NFS4ERR_DELAY until the guest returns it, then grants the open. The
# host client writes new content and the host drops deleg-done-vV in the
# export; the guest must then read the new content and count a
# DELEGRETURN in mountstats. The server log (--log-level debug) must show
# a grant and a recall per version. run.sh's verdict (e2e/kernel/verdict)
# judges: the guest's records, open-ok-vV (the host client's open
# succeeded), the server log.
#
# Environment: E2E_DELEG_BIN (server binary; built if unset), ENGINE,
# E2E_SERVER_ARGS, E2E_WORK, E2E_DELEG_VERS (default "4.2 4.1"), plus
# run.sh's.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=lib.sh
. e2e/kernel/lib.sh

ENGINE=${ENGINE:-portable}
read -r -a VERS <<<"${E2E_DELEG_VERS:-4.2 4.1}"
WORK=${E2E_WORK:-$E2E_KDIR/.work}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
DWORK=$WORK/deleg
SLOG=$DWORK/server.log
HLOG=$DWORK/host.log
rm -rf "$DWORK"
mkdir -p "$DWORK/export" "$DWORK/state"

if [[ -z ${E2E_DELEG_BIN:-} ]]; then
	E2E_DELEG_BIN=$DWORK/nfsd-uring
	go build -o "$E2E_DELEG_BIN" ./cmd/nfsd-uring || e2e_die "go build ./cmd/nfsd-uring failed"
fi
CLIENT=$DWORK/delegclient
go build -o "$CLIENT" ./e2e/kernel/delegclient || e2e_die "go build ./e2e/kernel/delegclient failed"
for v in "${VERS[@]}"; do
	echo "before v$v" >"$DWORK/export/deleg-v$v.txt"
done
e2e_host_deps
e2e_kernel
WPID=
stop_all() {
	[[ -z $WPID ]] || kill "$WPID" 2>/dev/null || true
	e2e_stop_server
}
trap stop_all EXIT
# shellcheck disable=SC2086
e2e_start_server "$E2E_DELEG_BIN" "$SLOG" --export "$DWORK/export" --engine "$ENGINE" --state-dir "$DWORK/state" --delegations --log-level debug ${E2E_SERVER_ARGS:-}
PORT=$E2E_PORT

# watch: each time the guest says DELEG_HELD V, open its file for writing
# with the second client, then drop the marker.
watch() {
	local v
	for v in "${VERS[@]}"; do
		until tr -d '\r' 2>/dev/null <"$DWORK/results.txt" | grep -qxF "DELEG_HELD $v"; do sleep 0.2; done
		echo "$(date +%T) v$v: the guest holds the file open; opening it for writing" >>"$HLOG"
		if "$CLIENT" -addr "127.0.0.1:$PORT" -path "/deleg-v$v.txt" -data "written by the host client v$v" -timeout 30s >>"$HLOG" 2>&1; then
			: >"$DWORK/open-ok-v$v"
		fi
		: >"$DWORK/export/deleg-done-v$v"
		echo "$(date +%T) v$v: marker written" >>"$HLOG"
	done
}
: >"$DWORK/results.txt"
: >"$HLOG"
watch &
WPID=$!

set +e
E2E_WORK=$DWORK E2E_SERVER_LOG=$SLOG E2E_SERVER_PID=$E2E_SPID e2e/kernel/run.sh --deleg "$PORT" "$DWORK/export" "${VERS[@]}"
rc=$?
kill "$WPID" 2>/dev/null
wait "$WPID" 2>/dev/null
WPID=
e2e_server_verdict "$SLOG" "$rc"
rc=$?
set -e

exit "$rc"
