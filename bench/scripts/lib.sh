# Helpers sourced by bench/scripts/*.sh (bash, set -euo pipefail there).
#
# Servers are started in the background on 127.0.0.1 only; every pid
# started here is recorded in BG_PIDS and killed by cleanup() on exit
# (install it with install_traps).

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${BIN:-$ROOT/bin}
BG_PIDS=()
BUILD_REV="bin/ as found (NO_BUILD=1)"
SCRIPT_T0=$(date +%s)

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

cleanup() {
	local rc=$? p
	for p in "${BG_PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${BG_PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	BG_PIDS=()
	return $rc
}

# install_traps: cleanup on every exit; INT/TERM exit (running cleanup)
# instead of resuming the script.
install_traps() {
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# runtime prints the script's wall-clock runtime (call at the end).
runtime() {
	local s=$(($(date +%s) - SCRIPT_T0))
	echo "runtime: ${s} s ($((s / 60)) min $((s % 60)) s)"
}

# build bin/nfsd-uring and bin/nfsbench unless NO_BUILD=1.
build() {
	if [ "${NO_BUILD:-0}" = 1 ]; then
		[ -x "$BIN/nfsd-uring" ] && [ -x "$BIN/nfsbench" ] || die "NO_BUILD=1 but $BIN/nfsd-uring or $BIN/nfsbench missing"
		return
	fi
	BUILD_REV="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet 2>/dev/null || echo ' + uncommitted changes')"
	log "building $BIN/nfsd-uring and $BIN/nfsbench ($BUILD_REV)"
	(cd "$ROOT" && go build -o "$BIN/nfsd-uring" ./cmd/nfsd-uring && go build -o "$BIN/nfsbench" ./cmd/nfsbench)
}

# port_free PORT: true when nothing listens on 127.0.0.1:PORT.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# wait_port PORT PID: wait (10 s at most) until PORT accepts connections;
# fail if PID died.
wait_port() {
	local i
	for i in $(seq 100); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		kill -0 "$2" 2>/dev/null || die "process $2 (port $1) exited; see its log"
		sleep 0.1
	done
	die "nothing listens on 127.0.0.1:$1 after 10 s"
}

# wait_listen PORT PID: like wait_port but without connecting (for
# one-shot servers such as iperf3 -s -1): polls ss for a listening socket.
wait_listen() {
	local i
	for i in $(seq 100); do
		if [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; then return 0; fi
		kill -0 "$2" 2>/dev/null || die "process $2 (port $1) exited; see its log"
		sleep 0.1
	done
	die "nothing listens on 127.0.0.1:$1 after 10 s"
}

# start_server VAR PORT LOGFILE [nfsd-uring flags...]: start nfsd-uring on
# 127.0.0.1:PORT in the background, record its pid in BG_PIDS and in VAR.
# Env SERVER_ENV (e.g. "GOMAXPROCS=1") is passed to the server.
start_server() {
	local var=$1 port=$2 logf=$3
	shift 3
	port_free "$port" || die "127.0.0.1:$port is already in use (set BASE_PORT)"
	# A fresh state directory per run: with the system's, clients recorded
	# by an earlier run would start the server in a grace period.
	local state
	state=$(mktemp -d "${TMPDIR:-/tmp}/nfsd-uring-state.XXXXXX")
	env ${SERVER_ENV:-} "$BIN/nfsd-uring" --listen "127.0.0.1:$port" --log-level warn --state-dir "$state" "$@" >"$logf" 2>&1 &
	local pid=$!
	BG_PIDS+=("$pid")
	wait_port "$port" "$pid"
	printf -v "$var" '%s' "$pid"
	log "server pid $pid on 127.0.0.1:$port: $*"
}

# stop_pid PID: kill one pid we started and forget it.
stop_pid() {
	local p=$1 keep=() q
	kill "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || true
	for q in "${BG_PIDS[@]}"; do [ "$q" = "$p" ] || keep+=("$q"); done
	BG_PIDS=("${keep[@]}")
}

# machine_note prints the load on this machine (other people's processes
# share the 2 CPUs: their CPU time is noise in every number here).
machine_note() {
	echo "loadavg: $(cut -d' ' -f1-3 /proc/loadavg); top processes by CPU:"
	ps -eo pid,pcpu,etime,comm --sort=-pcpu | sed -n '2,6p' | sed 's/^/    /'
}

# fresh_fs DIR [SIZE]: mount a new, empty ext4 filesystem at DIR (a sparse
# image on a loop device doing direct I/O, so an "uncached" read is not
# served from the image file's page cache). Every server of a comparison
# then starts on the same kind of filesystem, and none pays for inodes an
# earlier run deleted: ext4's allocator skips recently deleted inodes
# (find_inode_bit -> recently_deleted was 15 % of a create-phase profile
# taken right after a run, and made creates 5-8x slower for both servers).
# Without root or the tools, DIR stays a plain directory. unmount_fresh
# undoes every fresh_fs.
FRESH_MOUNTS=()
fresh_fs() {
	local dir=$1 size=${2:-16G} img=$1.img dev
	mkdir -p "$dir"
	if [ "$(id -u)" != 0 ] || ! command -v mkfs.ext4 >/dev/null || ! command -v losetup >/dev/null; then
		log "fresh_fs: $dir stays a plain directory (needs root, mkfs.ext4, losetup)"
		return 0
	fi
	rm -f "$img"
	truncate -s "$size" "$img"
	mkfs.ext4 -q -F -i 65536 -E lazy_itable_init=0,lazy_journal_init=0 "$img" >/dev/null 2>&1 ||
		{ log "fresh_fs: mkfs.ext4 failed, $dir stays a plain directory"; rm -f "$img"; return 0; }
	if ! dev=$(losetup -f --show --direct-io=on "$img" 2>/dev/null) || ! mount "$dev" "$dir"; then
		[ -z "${dev:-}" ] || losetup -d "$dev" 2>/dev/null || true
		log "fresh_fs: no loop device, $dir stays a plain directory"
		rm -f "$img"
		return 0
	fi
	FRESH_MOUNTS+=("$dir")
}

# unmount_fresh unmounts (and detaches, removing the images of) every
# fresh_fs filesystem; call it after the servers using them stopped.
unmount_fresh() {
	local d
	for d in "${FRESH_MOUNTS[@]}"; do
		umount -d "$d" 2>/dev/null || umount -l -d "$d" 2>/dev/null || true
		rm -f "$d.img"
	done
	FRESH_MOUNTS=()
}

# unmount_under DIR: unmount whatever an earlier, interrupted run left
# mounted below DIR (before rm -rf DIR).
unmount_under() {
	local m
	for m in $(awk -v p="$1/" 'index($2, p) == 1 {print $2}' /proc/mounts | sort -r); do
		umount -d "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
}
