#!/usr/bin/env bash
# Smoke test of the harness without an NFS server: a throw-away TCP listener
# on 127.0.0.1 answers the guest's connection to 10.0.2.100:2049 (through
# guestfwd) with a greeting. Proves kernel boot, module loading, the NIC and
# the guestfwd path.   Usage: probe.sh [PORT]
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_host_deps
PORT=${1:-$(e2e_free_port)}
(
	# One nc per connection (run.sh's liveness check uses one too).
	for _ in $(seq 1 20); do
		echo "hello-from-host-127.0.0.1:$PORT" | timeout 120 nc -l -N 127.0.0.1 "$PORT" >/dev/null 2>&1 || true
	done
) &
LPID=$!
trap 'kill "$LPID" 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do
	ss -Hltn "sport = :$PORT" | grep -q . && break
	sleep 0.1
done
"$(dirname "$0")/run.sh" --probe "$PORT"
