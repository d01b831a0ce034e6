#!/usr/bin/env bash
# pnfs-scale.sh: does pNFS flexible files scale with data servers? (issue 23,
# "Done means" 4)
#
# Four nfsd-uring data servers (DS), each in a network namespace of its own
# behind a shaped link: a veth pair with a tbf qdisc of $RATE on both ends
# (writes leave the root namespace's end, reads the namespace's end). The
# metadata server (MDS: nfsd-uring --data-server ...) and nfsbench run in the
# root namespace; the MDS reaches the DSs, and nfsbench (told by layouts) the
# same addresses, through the shaped links. For N in $DS_COUNTS an MDS over
# the first N DSs serves one nfsbench ior-easy run ($CONNS files of $SIZE,
# one per connection, placed by the MDS across the DSs; write then read,
# --pnfs on: the data goes straight to the DSs). The baseline is nfsbench
# ior-easy against DS 1 itself, a plain nfsd-uring without pNFS behind one
# such link (--pnfs off).
#
# Why $RATE = 200 Mbit/s by default: the box has 2 CPUs for nfsbench, the MDS
# and four DSs together, and over a veth pair the sender's CPU also runs the
# receiver's TCP input (softirq on the sending side), so for writes the
# client pays for all four DSs' receive path. At 300 Mbit/s (37.5 MB/s a
# link, 150 MB/s for four) the 4-DS write reached only 2.7x one DS there
# (reads 3.5x) with the box's load average at 12 from other work; at 200
# Mbit/s (100 MB/s for four) the links, not the CPUs, set the pace: 3.6x
# write, 4.0x read. On a bigger machine set RATE=1gbit.
# The DSs export tmpfs directories, so that no disk is in the way either.
#
# Prints (nfsbench summarize, in Go): aggregate MB/s per N and for the
# baseline, the ratios to one DS, the per-DS share of the bytes, and the
# goal of issue 23: N DSs reach >= 0.8 x N of one DS's bandwidth.
#
#   sudo bash bench/scripts/pnfs-scale.sh
#   DS_COUNTS="1 2" SIZE=64M bash bench/scripts/pnfs-scale.sh   # quick
#
# Needs root (ip netns, tc, mount -t tmpfs). Env: RATE (200mbit),
# DS_COUNTS ("1 2 4"), CONNS (4; a multiple of the largest N keeps the
# placement even), SIZE (128M per file), DEPTH (8), REPS (1), DS_PORT
# (2049), BASE_PORT (31600, the MDS), NET (10.77: DS i is NET.i.2, the root
# end NET.i.1), WORK (/tmp/nfsd-uring-bench/pnfs-scale), NO_BUILD=1 to use
# bin/ as is, STRIPE_UNIT (e.g. 1m: the MDSs stripe each file over all their
# DSs with --stripe-unit, so even CONNS=1, one file, spreads over them;
# default none).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

RATE=${RATE:-200mbit}
DS_COUNTS=${DS_COUNTS:-1 2 4}
CONNS=${CONNS:-4}
SIZE=${SIZE:-128M}
DEPTH=${DEPTH:-8}
REPS=${REPS:-1}
DS_PORT=${DS_PORT:-2049}
BASE_PORT=${BASE_PORT:-31600}
NET=${NET:-10.77}
WORK=${WORK:-/tmp/nfsd-uring-bench/pnfs-scale}
STRIPE_UNIT=${STRIPE_UNIT:-}

[ "$(id -u)" = 0 ] || die "needs root: network namespaces, tc and tmpfs mounts"
command -v ip >/dev/null && command -v tc >/dev/null || die "needs ip and tc (iproute2)"

MAX_DS=0
for n in $DS_COUNTS; do [ "$n" -gt "$MAX_DS" ] && MAX_DS=$n; done
[ "$MAX_DS" -ge 1 ] || die "DS_COUNTS must name at least one data server count"

NETNS=()
TMPFS=()
net_down() {
	local ns d
	for ns in "${NETNS[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
	for d in "${TMPFS[@]}"; do umount "$d" 2>/dev/null || umount -l "$d" 2>/dev/null || true; done
	NETNS=()
	TMPFS=()
}
trap 'rc=$?; cleanup; net_down; exit $rc' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ds_up I: namespace pnfs-dsI, veth pdsI-h (root, NET.I.1) <-> pdsI-n
# (namespace, NET.I.2), tbf $RATE on both ends.
ds_up() {
	local i=$1 ns=pnfs-ds$1 h=pds$1-h n=pds$1-n
	ip netns del "$ns" 2>/dev/null || true
	ip link del "$h" 2>/dev/null || true
	ip netns add "$ns"
	NETNS+=("$ns")
	ip link add "$h" type veth peer name "$n"
	ip link set "$n" netns "$ns"
	ip addr add "$NET.$i.1/24" dev "$h"
	ip link set "$h" up
	ip -n "$ns" addr add "$NET.$i.2/24" dev "$n"
	ip -n "$ns" link set "$n" up
	ip -n "$ns" link set lo up
	# burst: room for a 64 KiB GSO segment and then some; latency bounds
	# the queue so that a link's backlog cannot hide behind the shaper.
	tc qdisc add dev "$h" root tbf rate "$RATE" burst 256kb latency 50ms
	tc -n "$ns" qdisc add dev "$n" root tbf rate "$RATE" burst 256kb latency 50ms
}

# wait_addr HOST PORT PID: wait (10 s at most) until HOST:PORT accepts
# connections; fail if PID died.
wait_addr() {
	local i
	for i in $(seq 100); do
		if (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; then return 0; fi
		kill -0 "$3" 2>/dev/null || die "process $3 ($1:$2) exited; see its log"
		sleep 0.1
	done
	die "nothing listens on $1:$2 after 10 s"
}

# start_ds I: nfsd-uring in namespace pnfs-dsI on NET.I.2:DS_PORT, exporting
# a tmpfs (no_root_squash, as --export gives: the MDS creates the data
# files as root).
start_ds() {
	local i=$1 dir=$WORK/ds$1 state
	mkdir -p "$dir"
	mount -t tmpfs -o size=4g tmpfs "$dir"
	TMPFS+=("$dir")
	state=$(mktemp -d "$WORK/ds$i-state.XXXXXX")
	ip netns exec "pnfs-ds$i" "$BIN/nfsd-uring" --listen "$NET.$i.2:$DS_PORT" --log-level warn \
		--export "$dir" --io-mode buffered --state-dir "$state" >"$WORK/ds$i.log" 2>&1 &
	local pid=$!
	BG_PIDS+=("$pid")
	wait_addr "$NET.$i.2" "$DS_PORT" "$pid"
	log "data server $i: pid $pid on $NET.$i.2:$DS_PORT behind $RATE"
}

# run_ior NAME PNFS ADDR TAG: one nfsbench ior-easy run, --json to
# $WORK/json/NAME.json.
run_ior() {
	local name=$1 pnfs=$2 addr=$3 tag=$4 j=$WORK/json/$1.json
	log "ior-easy: $name ($addr, --pnfs $pnfs, $CONNS x $SIZE)"
	timeout $((900 * REPS)) "$BIN/nfsbench" ior-easy --server "$addr" --export / --name "$name" --pnfs "$pnfs" \
		--conns "$CONNS" --depth "$DEPTH" --size "$SIZE" --repeat "$REPS" --tag "ds=$tag" \
		--no-progress --json "$j" >"$j.out" 2>&1 ||
		die "nfsbench failed: $(tail -5 "$j.out")"
	sed -n '/^pNFS data servers/,/^$/p' "$j.out" >&2
}

build
unmount_under "$WORK"
rm -rf "$WORK"
mkdir -p "$WORK/json"
machine_note

for i in $(seq "$MAX_DS"); do
	ds_up "$i"
	start_ds "$i"
done

run_ior base off "$NET.1.2:$DS_PORT" base

port=$BASE_PORT
for n in $DS_COUNTS; do
	flags=()
	for i in $(seq "$n"); do flags+=(--data-server "$NET.$i.2:$DS_PORT/pnfs-$n"); done
	[ -z "$STRIPE_UNIT" ] || flags+=(--stripe-unit "$STRIPE_UNIT")
	mkdir -p "$WORK/mds$n"
	start_server MDS_PID "$port" "$WORK/mds$n.log" --export "$WORK/mds$n" "${flags[@]}"
	run_ior "ds$n" on "127.0.0.1:$port" "$n"
	stop_pid "$MDS_PID"
	port=$((port + 1))
done

bw=()
direct=()
for n in $DS_COUNTS; do
	[ "$n" = 1 ] && continue
	lim=$(awk -v n="$n" 'BEGIN { printf "%.2f", 0.8 * n }')
	bw+=(--goal "$n DSs, write: mb_per_sec $n/1 >= $lim where op=write")
	bw+=(--goal "$n DSs, read: mb_per_sec $n/1 >= $lim where op=read")
	direct+=(--goal "$n DSs, all data straight to the DSs: ds_fraction $n >= 0.99")
	direct+=(--goal "$n DSs, every DS used: ds_count $n >= $n")
done

echo
echo "## pnfs-scale.sh: ior-easy, $CONNS x $SIZE, depth $DEPTH, links of $RATE (built from $BUILD_REV), medians of $REPS${STRIPE_UNIT:+, --stripe-unit $STRIPE_UNIT}"
echo "## sides: ds=N is an MDS over N data servers (--pnfs on); ds=base one plain nfsd-uring behind one link (--pnfs off)"
echo "### aggregate MB/s and ratios to one data server (goal: N DSs >= 0.8 x N)"
"$BIN/nfsbench" summarize --rows workload,op --side ds --base 1 --metrics mb_per_sec "${bw[@]}" "$WORK"/json/*.json
echo
echo "### where the bytes went: ds_count (data servers used), ds_fraction (of the bytes, straight to them), ds_balance (least/most used)"
"$BIN/nfsbench" summarize --rows workload,op --side ds --base 1 --metrics ds_count,ds_fraction,ds_balance "${direct[@]}" "$WORK"/json/*.json
runtime
