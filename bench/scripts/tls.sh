#!/usr/bin/env bash
# tls.sh (issue 24): RPC-with-TLS against plaintext on one nfsd-uring, in
# the same run: nfsbench --compare-tls runs each workload over a plaintext
# connection and over a TLS connection (AUTH_TLS probe, TLS 1.3), the order
# swapped each repetition (--repeat $REPS); each side has an export of its
# own (/plain, /tls) on the same filesystem.
#
#   READ    readmatrix, a page-cached $SIZE file, 1 MiB READ, 1 conn depth 16
#   WRITE   ior-easy's write phase, $SIZE, 1 MiB WRITE, 1 conn depth 16
#   4K      randread, 4 KiB READs of a cached $SIZE file, $OPS of them
#
# Prints medians of MB/s, server CPU per GiB and per op, and latency, with
# tls/plaintext ratios. Whether the server used kernel TLS or its
# user-space fallback is in its log ($WORK/server.log: the "RPC-with-TLS
# offered" line says ktls=on|unavailable) and printed below.
#
#   REPS=3 SIZE=256M OPS=20000 bash bench/scripts/tls.sh
#
# Env: REPS (3), SIZE (1G), OPS (100000), ENGINE (uring), FLAGS (more
# nfsd-uring flags, e.g. --tls-no-ktls), BASE_PORT (31700), WORK
# (/tmp/nfsd-uring-bench/tls), NO_BUILD=1. Needs openssl (certificates).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
install_traps

REPS=${REPS:-3}
SIZE=${SIZE:-1G}
OPS=${OPS:-100000}
ENGINE=${ENGINE:-uring}
FLAGS=${FLAGS:-}
BASE_PORT=${BASE_PORT:-31700}
WORK=${WORK:-/tmp/nfsd-uring-bench/tls}
command -v openssl >/dev/null || die "openssl missing"
build
rm -rf "$WORK"
mkdir -p "$WORK/plain" "$WORK/tls" "$WORK/json" "$WORK/certs"
machine_note

# A throw-away CA and a server certificate for 127.0.0.1.
C=$WORK/certs
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=bench-ca \
	-keyout "$C/ca.key" -out "$C/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
	-keyout "$C/server.key" -out "$C/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$C/ext"
openssl x509 -req -in "$C/server.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" -CAcreateserial -days 2 \
	-extfile "$C/ext" -out "$C/server.pem" 2>/dev/null

PORT=$BASE_PORT
# shellcheck disable=SC2086 # FLAGS are words
start_server SPID "$PORT" "$WORK/server.log" --export "plain=$WORK/plain" --export "tls=$WORK/tls" --engine "$ENGINE" \
	--tls-cert "$C/server.pem" --tls-key "$C/server.key" --log-level info $FLAGS

bench() {
	local wl=$1 j=$WORK/json/$2.json
	shift 2
	"$BIN/nfsbench" "$wl" --server "127.0.0.1:$PORT" --server-pid "$SPID" --export /plain --local-dir "$WORK/plain" \
		--compare-export /tls --compare-local-dir "$WORK/tls" \
		--compare-tls --tls-ca "$C/ca.pem" --repeat "$REPS" --no-progress --json "$j" "$@" >"$j.out" 2>&1 ||
		die "nfsbench $wl failed: $(tail -3 "$j.out")"
}

log "READ: readmatrix cached, $SIZE, $REPS repetitions"
bench readmatrix read --layouts data --size "$SIZE" --cache cached --read-ops READ --conns 1 --depth 16 --rsize 1M --no-verify
log "WRITE: ior-easy, $SIZE, $REPS repetitions"
bench ior-easy write --size "$SIZE" --conns 1 --depth 16 --rsize 1M --no-verify
log "4 KiB randread, $OPS ops, $REPS repetitions"
bench randread rand --size "$SIZE" --ops "$OPS" --conns 1 --depth 16 --rsize 4K --no-verify

echo
echo "## tls.sh (built from $BUILD_REV): plaintext vs RPC-with-TLS, $ENGINE engine, $SIZE, medians of $REPS"
grep -h "RPC-with-TLS offered\|kernel TLS unavailable" "$WORK/server.log" | sed 's/^/    server: /' || true
machine_note
"$BIN/nfsbench" summarize --rows workload,op --base plaintext \
	--metrics mb_per_sec,ops_per_sec,server_cpu_seconds_per_gib,server_cpu_us_per_op,latency_us.p50,latency_us.p99 \
	"$WORK"/json/*.json | tee "$WORK/summary.md"
runtime
