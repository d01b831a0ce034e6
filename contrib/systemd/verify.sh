#!/usr/bin/env bash
# Checks contrib/systemd/nfsd-uring.service with systemd-analyze verify.
# The unit names /usr/local/bin/nfsd-uring, which verify wants to exist: the
# check builds the server and verifies a copy pointing at that build.
# verify only warns about unknown keys (exit 0), so any output fails too.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v systemd-analyze >/dev/null; then
	echo "systemd-analyze not found: unit not verified" >&2
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/nfsd-uring" ./cmd/nfsd-uring
sed "s#/usr/local/bin/nfsd-uring#$tmp/nfsd-uring#" contrib/systemd/nfsd-uring.service >"$tmp/nfsd-uring.service"
out=$(systemd-analyze verify "$tmp/nfsd-uring.service" 2>&1) || {
	echo "$out" >&2
	exit 1
}
if [ -n "$out" ]; then
	echo "systemd-analyze verify warned:" >&2
	echo "$out" >&2
	exit 1
fi
echo "contrib/systemd/nfsd-uring.service: systemd-analyze verify clean"
