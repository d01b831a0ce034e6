#!/usr/bin/env bash
# writes.sh: write I/O modes side by side in one run.
#
# Four nfsd-uring servers (--engine $ENGINE), each on its own export
# directory on the same disk: --io-mode direct, dontcache, buffered, and
# direct with --split-writes=false. For each of $REPS repetitions, the
# same nfsbench client runs ior-hard (one shared file, 47008-byte
# transfers) and ior-easy (a file per connection, 2 MiB transfers), write
# phase then read phase, against each server in turn; the order of the
# servers rotates between repetitions. `sync` (untimed) between runs, so
# one mode's dirty pages are not written back during the next one.
# Prints medians of MB/s and server CPU s/GiB, ratios vs buffered.
#
#   bash bench/scripts/writes.sh
#   REPS=1 SIZE=64M bash bench/scripts/writes.sh   # quick
#
# Before the servers start, a raw-disk baseline with dd on the same
# filesystem (1 GiB, 1 MiB blocks: O_DIRECT write, buffered write +
# fdatasync, O_DIRECT read), so the modes can be read against the disk.
#
# Small writes (what --io-mode direct does with writes under 32 KiB):
#   RSIZE=16K MODES="dontcache buffered" bash bench/scripts/writes.sh
#
# Env: REPS (3), SIZE (512M: per connection for ior-easy, the shared file
# for ior-hard), HARD_SIZE ($SIZE), CONNS (4), DEPTH (8), STONEWALL (20s:
# bound on each phase), RSIZE (1M: WRITE/READ size, ior-hard's 47008-byte
# transfers are cut into pieces of at most RSIZE), MODES (direct dontcache
# buffered direct-nosplit), ENGINE (uring), BASE_PORT (31300), WORK
# (/tmp/nfsd-uring-bench/writes), DISK_BASELINE (1; 0 skips dd),
# NO_BUILD=1 to use bin/ as is.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
install_traps

REPS=${REPS:-3}
SIZE=${SIZE:-512M}
HARD_SIZE=${HARD_SIZE:-$SIZE}
CONNS=${CONNS:-4}
DEPTH=${DEPTH:-8}
STONEWALL=${STONEWALL:-20s}
RSIZE=${RSIZE:-1M}
ENGINE=${ENGINE:-uring}
BASE_PORT=${BASE_PORT:-31300}
WORK=${WORK:-/tmp/nfsd-uring-bench/writes}

build
rm -rf "$WORK"
mkdir -p "$WORK/json"
machine_note
echo "disk under $WORK: $(df --output=source "$WORK" | tail -1) $(lsblk -ndo NAME,ROTA,MODEL,SIZE "$(df --output=source "$WORK" | tail -1)" 2>/dev/null || true)"

# dd_rate ARGS...: MB/s from dd's summary line.
dd_rate() { LC_ALL=C timeout 120 dd "$@" 2>&1 | awk '/copied/ {print $(NF-1), $NF}'; }
if [ "${DISK_BASELINE:-1}" = 1 ]; then
	f=$WORK/dd.tmp
	echo "disk baseline (dd, 1 GiB, bs=1M):"
	echo "  O_DIRECT write:            $(dd_rate if=/dev/zero of="$f" bs=1M count=1024 oflag=direct conv=fdatasync)"
	rm -f "$f"
	sync
	echo "  buffered write + fdatasync: $(dd_rate if=/dev/zero of="$f" bs=1M count=1024 conv=fdatasync)"
	echo "  O_DIRECT read:             $(dd_rate if="$f" of=/dev/null bs=1M iflag=direct)"
	rm -f "$f"
	sync
fi

read -ra MODES <<<"${MODES:-direct dontcache buffered direct-nosplit}"
declare -A PID PORT
i=0
for m in "${MODES[@]}"; do
	mkdir -p "$WORK/$m"
	PORT[$m]=$((BASE_PORT + i))
	flags=(--io-mode "${m%-nosplit}")
	[ "$m" != direct-nosplit ] || flags+=(--split-writes=false)
	start_server "PID[$m]" "${PORT[$m]}" "$WORK/$m.log" --export "$WORK/$m" --engine "$ENGINE" "${flags[@]}"
	i=$((i + 1))
done

for rep in $(seq "$REPS"); do
	r=$(((rep - 1) % ${#MODES[@]}))
	order=("${MODES[@]:$r}" "${MODES[@]:0:$r}")
	for wl in ior-hard ior-easy; do
		for m in "${order[@]}"; do
			sz=$SIZE
			[ "$wl" != ior-hard ] || sz=$HARD_SIZE
			j="$WORK/json/$wl-$m-r$rep.json"
			cmd=("$BIN/nfsbench" "$wl" --server "127.0.0.1:${PORT[$m]}" --name "$m" --server-pid "${PID[$m]}"
				--dir "w$rep" --size "$sz" --rsize "$RSIZE" --conns "$CONNS" --depth "$DEPTH" --stonewall "$STONEWALL" --tag "rep=$rep" --no-progress --json "$j")
			echo "${cmd[*]}" >>"$WORK/commands.txt"
			log "rep $rep $wl $m"
			timeout 300 "${cmd[@]}" >"${j%.json}.out" 2>&1 ||
				die "nfsbench failed: $(grep -E 'ERROR|nfsbench:' "${j%.json}.out" | head -3)"
			rm -rf "$WORK/$m/w$rep"
			sync
		done
	done
done

echo
echo "## writes.sh: --io-mode side by side, engine $ENGINE (built from $BUILD_REV), medians of $REPS, $CONNS conns, depth $DEPTH, ior-easy $SIZE per conn, ior-hard $HARD_SIZE shared, rsize $RSIZE, stonewall $STONEWALL"
# Each server is named by its mode; ratios are to buffered.
"$BIN/nfsbench" summarize --rows workload,op --base buffered --metrics mb_per_sec,server_cpu_seconds_per_gib --runs "$WORK"/json/*.json
echo
echo "commands: $WORK/commands.txt; raw results: $WORK/json/"
machine_note
runtime
