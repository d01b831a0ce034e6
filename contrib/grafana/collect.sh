#!/usr/bin/env bash
# Records a scrape series for docs/metrics.png: starts nfsd-uring with
# --metrics, runs a mixed nfsbench load (READ_PLUS over sparse files, 4 KiB
# random reads, large writes), and saves /metrics every second as
# OUT/<unix ms>.prom. Then: go run ./contrib/grafana/render OUT docs/metrics.png
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-/tmp/nfsd-uring-scrapes}
PORT=${PORT:-22049}
MPORT=${MPORT:-29249}
ENGINE=${ENGINE:-uring}
WORK=$(mktemp -d)
mkdir -p "$OUT" "$WORK/export"
go build -o "$WORK/nfsd-uring" ./cmd/nfsd-uring
go build -o "$WORK/nfsbench" ./cmd/nfsbench
"$WORK/nfsd-uring" --export "$WORK/export" --listen "127.0.0.1:$PORT" --state-dir "$WORK/state" \
	--engine "$ENGINE" --cores 2 --metrics "127.0.0.1:$MPORT" >"$WORK/server.log" 2>&1 &
SPID=$!
scrape() {
	while kill -0 "$SPID" 2>/dev/null; do
		curl -sf "http://127.0.0.1:$MPORT/metrics" >"$OUT/.tmp" && mv "$OUT/.tmp" "$OUT/$(date +%s%3N).prom" || true
		sleep 1
	done
}
sleep 1
scrape &
SCRAPER=$!
trap 'kill $SPID $SCRAPER 2>/dev/null; rm -rf "$WORK"' EXIT
NB=("$WORK/nfsbench")
COMMON=(--server "127.0.0.1:$PORT" --no-progress)
sleep 3
for round in 1 2; do
	"${NB[@]}" readmatrix --dir rm --local-dir "$WORK/export" --layouts data,hole,mixed-8d,mixed-32h --size 64M --conns 2 --depth 8 "${COMMON[@]}"
	sleep 2
	"${NB[@]}" randread --dir rm --local-dir "$WORK/export" --size 64M --ops 400000 --conns 4 --depth 16 --stonewall 15s "${COMMON[@]}"
	sleep 2
	"${NB[@]}" ior-easy --dir "ior$round" --size 256M --rsize 1M --conns 2 --depth 8 --stonewall 10s "${COMMON[@]}"
	sleep 3
done
echo "scrapes in $OUT: $(ls "$OUT" | wc -l)"
