#!/usr/bin/env bash
# `make e2e`: build the server, make a test tree, serve it on 127.0.0.1:PORT
# and have a real Linux 6.12 NFS client (in qemu) check it over 4.2, 4.1 and 4.0.
#
# Then e2e-fs.sh (E2E_FS=0 skips it): ext4 images mounted inside the export
# and a full filesystem, served by a second server run; e2e-restart.sh
# (E2E_RESTART=0 skips it): a POSIX lock held across a server kill -9 +
# restart; then e2e-exports.sh (E2E_EXPORTS=0 skips it): an exports file
# with ro, root_squash and an export the guest may not see; then
# e2e-deleg.sh (E2E_DELEG=0 skips it): a server with --delegations grants
# the guest a read delegation and recalls it for a second (host) client's
# OPEN for writing; last e2e-pnfs.sh (E2E_PNFS=0 skips it): the server as a
# pNFS flexible-files metadata server over an nfsd-uring and an
# NFS-Ganesha data server. Each phase runs alone too: e2e/kernel/e2e-deleg.sh.
#
# Environment: ENGINE (server --engine, default portable), E2E_VERS
# (default "4.2 4.1 4.0 3"), E2E_SERVER_ARGS (extra server flags), plus run.sh's.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=lib.sh
. e2e/kernel/lib.sh

ENGINE=${ENGINE:-portable}
read -r -a VERS <<<"${E2E_VERS:-4.2 4.1 4.0 3}"
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

trap e2e_stop_server EXIT
# A state directory of this run's own: a list of clients left by another
# run would start the server in a grace period.
rm -rf "$WORK/state"
# shellcheck disable=SC2086
e2e_start_server "$BIN" "$SLOG" --export "$EXPORT" --engine "$ENGINE" --state-dir "$WORK/state" ${E2E_SERVER_ARGS:-}

set +e
E2E_SERVER_LOG=$SLOG E2E_SERVER_PID=$E2E_SPID e2e/kernel/run.sh "$E2E_PORT" "$EXPORT" "${VERS[@]}"
rc=$?
e2e_server_verdict "$SLOG" "$rc"
rc=$?
set -e

# Second phase: filesystems mounted inside an export, and a full one.
fs_rc=0
if [[ ${E2E_FS:-1} == 1 ]]; then
	E2E_FS_BIN=$BIN e2e/kernel/e2e-fs.sh || fs_rc=$?
else
	e2e_log "filesystem phase SKIPPED (E2E_FS=0)"
fi
# Third phase: a lock held across a server crash and restart.
restart_rc=0
if [[ ${E2E_RESTART:-1} == 1 ]]; then
	E2E_RESTART_BIN=$BIN e2e/kernel/e2e-restart.sh || restart_rc=$?
else
	e2e_log "restart phase SKIPPED (E2E_RESTART=0)"
fi
# Fourth phase: an exports file (ro, root_squash, an export for another address).
ex_rc=0
if [[ ${E2E_EXPORTS:-1} == 1 ]]; then
	E2E_EX_BIN=$BIN e2e/kernel/e2e-exports.sh || ex_rc=$?
else
	e2e_log "exports phase SKIPPED (E2E_EXPORTS=0)"
fi
# Fifth phase: a delegation recalled for another client's conflicting open.
deleg_rc=0
if [[ ${E2E_DELEG:-1} == 1 ]]; then
	E2E_DELEG_BIN=$BIN e2e/kernel/e2e-deleg.sh || deleg_rc=$?
else
	e2e_log "delegation phase SKIPPED (E2E_DELEG=0)"
fi
# Sixth phase: pNFS flexible files (an MDS and two data servers).
pnfs_rc=0
if [[ ${E2E_PNFS:-1} == 1 ]]; then
	E2E_PNFS_BIN=$BIN e2e/kernel/e2e-pnfs.sh || pnfs_rc=$?
else
	e2e_log "pNFS phase SKIPPED (E2E_PNFS=0)"
fi
if ((rc != 0 || fs_rc != 0 || restart_rc != 0 || ex_rc != 0 || deleg_rc != 0 || pnfs_rc != 0)); then
	((rc == 0)) || echo "[e2e] the main phase (one export: reads, writes, host-side changes) FAILED" >&2
	((fs_rc == 0)) || echo "[e2e] the filesystem phase (e2e-fs.sh: mounts inside the export, a full filesystem) FAILED" >&2
	((restart_rc == 0)) || echo "[e2e] the restart phase (e2e-restart.sh: a lock across a server kill -9 + restart) FAILED" >&2
	((ex_rc == 0)) || echo "[e2e] the exports phase (e2e-exports.sh: --exports with ro, root_squash, a hidden export) FAILED" >&2
	((deleg_rc == 0)) || echo "[e2e] the delegation phase (e2e-deleg.sh: a read delegation recalled for a second client's write open) FAILED" >&2
	((pnfs_rc == 0)) || echo "[e2e] the pNFS phase (e2e-pnfs.sh: flexible-files layouts over an nfsd-uring and an NFS-Ganesha data server, MDS kill -9, a data server killed) FAILED" >&2
	exit 1
fi
