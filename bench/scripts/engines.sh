#!/usr/bin/env bash
# engines.sh: io_uring engine vs portable engine, side by side in one run.
#
# Both servers export the same directory (same files, same page cache) and
# are driven by the same nfsbench client, alternately (--compare; which one
# goes first alternates between repetitions). For each server --cores in
# $CORES and each client connection count in $CONNS, $REPS times:
#   - readmatrix, layout `data`, cached: sequential READ (and READ_PLUS) at
#     rsize 1 MiB of a $SIZE file: MB/s, server CPU s/GiB
#   - randread: $OPS random 4 KiB READs: ops/s, server CPU µs/op
# plus iperf3 over 127.0.0.1 (one stream, 5 s), $REPS times interleaved.
# Prints medians, ratios uring/portable and the targets met or not.
#
#   bash bench/scripts/engines.sh              # make bench runs this
#   REPS=1 CONNS="4" CORES="1" bash bench/scripts/engines.sh   # quick
#
# Env: REPS (5), CORES ("1 2"), CONNS ("1 4 16"), SIZE (1G), OPS (100000),
# DEPTH (16), VERIFY (0: --no-verify, like iperf3 the client does not look
# at the bytes; 1: check every byte), BASE_PORT (31100), WORK
# (/tmp/nfsd-uring-bench/engines), NO_BUILD=1 to use bin/ as is.
#
# The portable engine has no event loops: --cores is passed to it but it
# ignores the flag (it runs a goroutine per connection on GOMAXPROCS = all
# CPUs, as does the uring engine's worker pool).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
install_traps

REPS=${REPS:-5}
CORES=${CORES:-1 2}
CONNS=${CONNS:-1 4 16}
SIZE=${SIZE:-1G}
OPS=${OPS:-100000}
DEPTH=${DEPTH:-16}
VERIFY=${VERIFY:-0}
BASE_PORT=${BASE_PORT:-31100}
WORK=${WORK:-/tmp/nfsd-uring-bench/engines}
UPORT=$BASE_PORT PPORT=$((BASE_PORT + 1)) IPORT=$((BASE_PORT + 2))

command -v iperf3 >/dev/null || die "iperf3 missing: apt-get install -y iperf3"
build
rm -rf "$WORK"
mkdir -p "$WORK/export" "$WORK/json"
EXP=$WORK/export
RES=$WORK/results.jsonl
: >"$RES"
NOVERIFY=()
[ "$VERIFY" = 1 ] || NOVERIFY=(--no-verify)
machine_note

# iperf3_once N: one 5 s single-stream run, bits/s appended to $RES.
iperf3_once() {
	port_free "$IPORT" || die "127.0.0.1:$IPORT in use"
	iperf3 -s -1 -p "$IPORT" -B 127.0.0.1 >"$WORK/iperf3-server.log" 2>&1 &
	local ipid=$!
	BG_PIDS+=("$ipid")
	wait_listen "$IPORT" "$ipid"
	timeout 30 iperf3 -c 127.0.0.1 -p "$IPORT" -t 5 -J >"$WORK/json/iperf3-$1.json"
	stop_pid "$ipid"
	python3 - "$WORK/json/iperf3-$1.json" >>"$RES" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
e = j["end"]
bps = e["sum_received"]["bits_per_second"]
gib = e["sum_received"]["bytes"] / 2**30
cpu = e.get("cpu_utilization_percent", {})
# iperf3's own CPU (sender = client here, receiver = server), s per GiB
per = lambda pct: pct / 100 * e["sum_received"]["seconds"] / gib if gib else float("nan")
print(json.dumps({"kind": "iperf3", "mb_per_sec": bps / 8 / 1e6,
                  "sender_s_per_gib": per(cpu.get("host_total", float("nan"))),
                  "receiver_s_per_gib": per(cpu.get("remote_total", float("nan")))}))
EOF
	log "iperf3 run $1: $(tail -1 "$RES")"
}

# nb WORKLOAD CORES CONNS REP FIRST: one nfsbench run, both servers
# alternately, FIRST (uring|portable) first; results tagged into $RES.
nb() {
	local wl=$1 cores=$2 conns=$3 rep=$4 first=$5 a b
	local U=(127.0.0.1:$UPORT uring "$UPID") P=(127.0.0.1:$PPORT portable "$PPID_")
	if [ "$first" = uring ]; then a=("${U[@]}") b=("${P[@]}"); else a=("${P[@]}") b=("${U[@]}"); fi
	local extra=() j="$WORK/json/$wl-c$cores-n$conns-r$rep.json"
	case $wl in
	readmatrix) extra=(--layouts data --cache cached) ;;
	randread) extra=(--ops "$OPS" --stonewall 20s) ;;
	esac
	local cmd=("$BIN/nfsbench" "$wl" --server "${a[0]}" --name "${a[1]}" --server-pid "${a[2]}" --local-dir "$EXP"
		--compare "${b[0]}" --compare-name "${b[1]}" --compare-pid "${b[2]}" --compare-local-dir "$EXP"
		--size "$SIZE" --conns "$conns" --depth "$DEPTH" "${extra[@]}" "${NOVERIFY[@]}" --no-progress --json "$j")
	echo "${cmd[*]}" >>"$WORK/commands.txt"
	timeout 300 "${cmd[@]}" >"$WORK/json/$wl-c$cores-n$conns-r$rep.out" 2>&1 ||
		die "nfsbench failed: $(grep -E 'ERROR|nfsbench:' "$WORK/json/$wl-c$cores-n$conns-r$rep.out" | head -3)"
	python3 - "$j" "$cores" "$conns" "$rep" >>"$RES" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    r.update(kind="nfs", cores=int(sys.argv[2]), conns=int(sys.argv[3]), rep=int(sys.argv[4]))
    print(json.dumps(r))
EOF
}

irun=0
for cores in $CORES; do
	log "servers with --cores $cores"
	start_server UPID "$UPORT" "$WORK/uring-c$cores.log" --export "$EXP" --engine uring --cores "$cores"
	start_server PPID_ "$PPORT" "$WORK/portable-c$cores.log" --export "$EXP" --engine portable --cores "$cores"
	grep -i 'portable\|uring' "$WORK/uring-c$cores.log" | grep -iv 'mount with' | head -2 >&2 || true
	for rep in $(seq "$REPS"); do
		if [ "$irun" -lt "$REPS" ]; then
			irun=$((irun + 1))
			iperf3_once "$irun"
		fi
		first=uring
		[ $((rep % 2)) = 1 ] || first=portable
		for conns in $CONNS; do
			log "cores $cores conns $conns rep $rep ($first first): readmatrix, randread"
			nb readmatrix "$cores" "$conns" "$rep" "$first"
			nb randread "$cores" "$conns" "$rep" "$first"
		done
	done
	stop_pid "$UPID"
	stop_pid "$PPID_"
done

echo
echo "## engines.sh: uring vs portable (built from $BUILD_REV), medians of $REPS, size $SIZE, depth $DEPTH, randread $OPS ops, verify=$VERIFY"
python3 - "$RES" <<'EOF'
import json, statistics as st, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ip = [r["mb_per_sec"] for r in rows if r["kind"] == "iperf3"]
ipm = st.median(ip)
nfs = [r for r in rows if r["kind"] == "nfs"]
errs = [r for r in nfs if r.get("error")]
for r in errs:
    print("ERROR:", r["server"], r["workload"], r["op"], r["cores"], r["conns"], r["rep"], r["error"])
def med(server, wl, op, cores, conns, field):
    v = [r.get(field) for r in nfs if r["server"] == server and r["workload"] == wl and r["op"] == op
         and r["cores"] == cores and r["conns"] == conns and not r.get("error")]
    v = [x for x in v if x is not None]
    return st.median(v) if v else float("nan")
keys = sorted({(r["cores"], r["conns"]) for r in nfs})
ips = st.median([r["sender_s_per_gib"] for r in rows if r["kind"] == "iperf3"])
ipr = st.median([r["receiver_s_per_gib"] for r in rows if r["kind"] == "iperf3"])
print(f"\niperf3 127.0.0.1, 1 stream, 5 s: median {ipm:.0f} MB/s (runs: {', '.join(f'{x:.0f}' for x in ip)}); "
      f"iperf3's own CPU per GiB: sender {ips:.2f} s, receiver {ipr:.2f} s\n")
print("### 1 MiB sequential READ, cached `data` file (readmatrix)\n")
print("| --cores | conns | uring MB/s | portable MB/s | MB/s u/p | uring srv s/GiB | portable srv s/GiB | s/GiB u/p | uring % of iperf3 | portable % of iperf3 | READ_PLUS MB/s u / p | client CPU s/GiB u / p | uring MB/s min-max |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
R = {}
def seqrows(s, c, n):
    return [r for r in nfs if r["server"] == s and r["workload"] == "readmatrix" and r["op"] == "READ"
            and r["cores"] == c and r["conns"] == n and not r.get("error")]
cli = lambda s, c, n: st.median([r["client_cpu_seconds"] / (r["bytes"] / 2**30) for r in seqrows(s, c, n)])
def rng(c, n):
    v = [r["mb_per_sec"] for r in seqrows("uring", c, n)]
    return f"{min(v):.0f}-{max(v):.0f}"
for c, n in keys:
    g = lambda s, f, op="READ": med(s, "readmatrix", op, c, n, f)
    um, pm = g("uring", "mb_per_sec"), g("portable", "mb_per_sec")
    ug, pg = g("uring", "server_cpu_seconds_per_gib"), g("portable", "server_cpu_seconds_per_gib")
    R[c, n, "seq"] = (um, pm, ug, pg)
    print(f"| {c} | {n} | {um:.0f} | {pm:.0f} | {um/pm:.2f}x | {ug:.2f} | {pg:.2f} | {ug/pg:.2f}x | {100*um/ipm:.0f} % | {100*pm/ipm:.0f} % | {g('uring','mb_per_sec','READ_PLUS'):.0f} / {g('portable','mb_per_sec','READ_PLUS'):.0f} | {cli('uring', c, n):.2f} / {cli('portable', c, n):.2f} | {rng(c, n)} |")
print("\n### 4 KiB random READ (randread)\n")
print("| --cores | conns | uring ops/s | portable ops/s | ops/s u/p | uring srv µs/op | portable srv µs/op | µs/op u/p | p99 µs u / p |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for c, n in keys:
    g = lambda s, f: med(s, "randread", "READ 4KiB", c, n, f)
    uo, po = g("uring", "ops_per_sec"), g("portable", "ops_per_sec")
    uu, pu = g("uring", "server_cpu_us_per_op"), g("portable", "server_cpu_us_per_op")
    p99 = lambda s: st.median([r["latency_us"]["p99"] for r in nfs if r["server"] == s and r["workload"] == "randread"
                               and r["cores"] == c and r["conns"] == n and r.get("latency_us")] or [float("nan")])
    R[c, n, "rnd"] = (uo, po, uu, pu)
    print(f"| {c} | {n} | {uo:.0f} | {po:.0f} | {uo/po:.2f}x | {uu:.1f} | {pu:.1f} | {uu/pu:.2f}x | {p99('uring'):.0f} / {p99('portable'):.0f} |")

print("\n### Targets (every --cores/conns cell must pass; medians)\n")
def verdict(name, cells):
    ok = [c for c in cells if c[1]]
    bad = [c for c in cells if not c[1]]
    state = "MET" if not bad else ("NOT MET" if not ok else f"NOT MET ({len(ok)}/{len(cells)} cells pass)")
    print(f"- {name}: **{state}** — " + "; ".join(f"{k}: {v}" for k, _, v in cells))
lab = lambda c, n: f"c{c}/n{n}"
verdict("uring ≥1.3x less server CPU per 4 KiB READ than portable (portable/uring ≥ 1.3)",
        [(lab(c, n), R[c, n, "rnd"][3] / R[c, n, "rnd"][2] >= 1.3, f"{R[c, n, 'rnd'][3] / R[c, n, 'rnd'][2]:.2f}x") for c, n in keys])
verdict("uring no more server CPU per GiB on 1 MiB READ than portable (u/p ≤ 1.0)",
        [(lab(c, n), R[c, n, "seq"][2] <= R[c, n, "seq"][3], f"{R[c, n, 'seq'][2] / R[c, n, 'seq'][3]:.2f}x") for c, n in keys])
verdict("uring 1 MiB cached READ ≥ 80 % of iperf3",
        [(lab(c, n), R[c, n, "seq"][0] >= 0.8 * ipm, f"{100 * R[c, n, 'seq'][0] / ipm:.0f} %") for c, n in keys])
verdict("uring server CPU ≤ 0.5 s per GiB on 1 MiB READ",
        [(lab(c, n), R[c, n, "seq"][2] <= 0.5, f"{R[c, n, 'seq'][2]:.2f}") for c, n in keys])
verdict("uring server CPU ≤ 15 µs per 4 KiB READ",
        [(lab(c, n), R[c, n, "rnd"][2] <= 15, f"{R[c, n, 'rnd'][2]:.1f}") for c, n in keys])
best = max(R[c, n, "seq"][0] for c, n in keys)
print(f"\nbest uring 1 MiB READ cell: {best:.0f} MB/s = {100*best/ipm:.0f} % of iperf3 {ipm:.0f} MB/s")
EOF
echo
echo "commands: $WORK/commands.txt; raw results: $RES, $WORK/json/"
machine_note
runtime
