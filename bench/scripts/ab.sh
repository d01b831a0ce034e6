#!/usr/bin/env bash
# ab.sh: one nfsd-uring build (or flag set) against another, alternately, on
# the workloads where the event loop and the worker hand-off show:
#   randread: random 4 KiB READs of a cached file, $CONNS connections,
#             depth 16, against --cores 1 and --cores 2 servers of each side;
#   mdtest-easy: its phases (create, stat, read, list, remove), 4
#             connections, depth 8, $FILES files per connection.
# Every pair runs in nfsbench --compare calls, the order swapped each
# repetition (randread: one call, --repeat $REPS; mdtest-easy: a call per
# repetition, each in a fresh directory); each side's export is on its own
# fresh ext4 (lib.sh fresh_fs) so that creates do not inherit the other
# side's deleted inodes. Prints
# medians per side and new/old ratios of ops/s and server CPU per op.
#
#   OLD=/tmp/old-bin bash bench/scripts/ab.sh          # a build of another commit
#   OLD_FLAGS=--held-wait=false bash bench/scripts/ab.sh   # one build, a flag off
#
# Env: OLD, NEW (directories holding nfsd-uring; default bin/, built unless
# NO_BUILD=1), OLD_FLAGS, NEW_FLAGS, REPS (4), OPS (100000), FILES (4000),
# CONNS (4), BASE_PORT (31600), WORK (/tmp/nfsd-uring-bench/ab).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
install_traps

REPS=${REPS:-4}
OPS=${OPS:-100000}
FILES=${FILES:-4000}
CONNS=${CONNS:-4}
BASE_PORT=${BASE_PORT:-31600}
WORK=${WORK:-/tmp/nfsd-uring-bench/ab}
OLD_FLAGS=${OLD_FLAGS:-}
NEW_FLAGS=${NEW_FLAGS:-}

build
OLD=${OLD:-$BIN}
NEW=${NEW:-$BIN}
rm -rf "$WORK"
mkdir -p "$WORK/json"
for d in old new; do fresh_fs "$WORK/$d"; done
trap 'cleanup; unmount_fresh' EXIT
machine_note

declare -A PID PORT
i=0
for side in old new; do
	dir=$OLD flags=$OLD_FLAGS
	[ "$side" = old ] || { dir=$NEW; flags=$NEW_FLAGS; }
	for cores in 1 2; do
		name=$side$cores
		PORT[$name]=$((BASE_PORT + i))
		# shellcheck disable=SC2086 # flags are words
		BIN=$dir start_server "PID[$name]" "${PORT[$name]}" "$WORK/$name.log" --export "$WORK/$side" --cores "$cores" $flags
		i=$((i + 1))
	done
done

# pair A B WORKLOAD JSON [nfsbench options]: A against B in one call
# (A and B are SIDE+CORES, e.g. old1; results name the side, tagged cores).
pair() {
	local a=$1 b=$2 wl=$3 j=$4
	shift 4
	"$BIN/nfsbench" "$wl" --server "127.0.0.1:${PORT[$a]}" --name "${a%?}" --server-pid "${PID[$a]}" \
		--compare "127.0.0.1:${PORT[$b]}" --compare-name "${b%?}" --compare-pid "${PID[$b]}" \
		--tag "cores=${a: -1}" --no-progress --json "$j" "$@" >"$j.out" 2>&1 || die "nfsbench failed: $(tail -3 "$j.out")"
}

# randread: the $REPS repetitions, order swapped each time, are nfsbench's
# (--repeat).
for cores in 1 2; do
	log "randread old$cores vs new$cores, $REPS repetitions"
	pair "old$cores" "new$cores" randread "$WORK/json/rr$cores.json" --local-dir "$WORK/old" --compare-local-dir "$WORK/new" \
		--size 256M --ops "$OPS" --conns "$CONNS" --depth 16 --no-verify --repeat "$REPS"
done
# mdtest-easy: a call per repetition, each in a directory of its own
# (nfsbench --repeat would reuse --dir), the order swapped each time.
for rep in $(seq "$REPS"); do
	a=old1 b=new1
	[ $((rep % 2)) = 1 ] || { a=new1 b=old1; }
	log "rep $rep: mdtest-easy $a vs $b"
	pair "$a" "$b" mdtest-easy "$WORK/json/md-$rep.json" --dir "md$rep" --files "$FILES" --conns 4 --depth 8
done

echo
echo "## ab.sh: old ($OLD $OLD_FLAGS) vs new ($NEW $NEW_FLAGS), medians of $REPS, alternating"
"$BIN/nfsbench" summarize --rows workload,op,cores --base old --metrics ops_per_sec,server_cpu_us_per_op "$WORK"/json/*.json
runtime
