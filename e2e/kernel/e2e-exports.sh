#!/usr/bin/env bash
# The kernel e2e's exports phase (run by e2e.sh after the others): the
# server runs with --exports FILE:
#
#   DIR/ro      127.0.0.1(ro,insecure)
#   DIR/sq      127.0.0.1(rw,insecure)          root_squash, the default
#   DIR/hidden  192.0.2.1(rw)                   another address only
#
# The guest reaches the server through qemu's guestfwd (`nc 127.0.0.1
# PORT`), so the server sees 127.0.0.1 with an ephemeral source port:
# hence insecure. The guest (guest-exports.sh, as root) mounts DIR/ro and
# DIR/sq by path: every change on ro must fail with EROFS, files root makes
# on sq must belong to 65534:65534 and a root-owned 0644 / 0600 file must
# stay closed to it; DIR/hidden must not mount and the pseudo directory DIR
# must list ro and sq only. run.sh's verdict (e2e/kernel/verdict) judges.
#
# Environment: E2E_EX_BIN (server binary; built if unset), ENGINE,
# E2E_SERVER_ARGS, E2E_WORK, E2E_EX_VERS (one NFS version, 3, 4.1 or 4.2, default 4.2),
# plus run.sh's.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=lib.sh
. e2e/kernel/lib.sh

ENGINE=${ENGINE:-portable}
VERS=${E2E_EX_VERS:-4.2}
[[ $VERS =~ ^(3|4\.[12])$ ]] || e2e_die "E2E_EX_VERS must be one version, 3, 4.1 or 4.2 (got '$VERS')"
WORK=${E2E_WORK:-$E2E_KDIR/.work}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
XWORK=$WORK/exports
DIR=$XWORK/x
SLOG=$XWORK/server.log
[[ $(id -u) == 0 ]] || {
	echo "[e2e] exports phase SKIPPED: not root (root_squash needs a server that can act as other users)" >&2
	exit 0
}
trap e2e_stop_server EXIT
rm -rf "$XWORK"
mkdir -p "$DIR/ro" "$DIR/sq" "$DIR/hidden"
printf 'read-only data' >"$DIR/ro/ro.txt"
chmod 644 "$DIR/ro/ro.txt"
chmod 777 "$DIR/sq"
printf "root's" >"$DIR/sq/rootfile"
chmod 644 "$DIR/sq/rootfile"
printf 'secret' >"$DIR/sq/secret"
chmod 600 "$DIR/sq/secret"
printf 'hidden' >"$DIR/hidden/h.txt"
cat >"$XWORK/exports" <<EOT
# e2e exports phase
$DIR/ro      127.0.0.1(ro,insecure)
$DIR/sq      127.0.0.1(rw,insecure)
$DIR/hidden  192.0.2.1(rw)
EOT

if [[ -z ${E2E_EX_BIN:-} ]]; then
	E2E_EX_BIN=$XWORK/nfsd-uring
	go build -o "$E2E_EX_BIN" ./cmd/nfsd-uring || e2e_die "go build ./cmd/nfsd-uring failed"
fi
"$E2E_EX_BIN" exports --check "$XWORK/exports" >&2 || e2e_die "exports --check refused the phase's exports file"
# shellcheck disable=SC2086
e2e_start_server "$E2E_EX_BIN" "$SLOG" --exports "$XWORK/exports" --engine "$ENGINE" --state-dir "$XWORK/state" ${E2E_SERVER_ARGS:-}

set +e
E2E_WORK=$XWORK E2E_EX_DIR=$DIR E2E_SERVER_LOG=$SLOG E2E_SERVER_PID=$E2E_SPID \
	e2e/kernel/run.sh --exports "$E2E_PORT" "$DIR" "$VERS"
rc=$?
set -e
e2e_server_verdict "$SLOG" "$rc"
