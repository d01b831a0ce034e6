# shellcheck shell=bash
# Shared helpers for the real-kernel-client e2e harness. Sourced, not run.
#
# Everything downloaded or unpacked lives under $E2E_CACHE (default
# e2e/kernel/.cache, ignored by git) so that reruns need no network.

E2E_KDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_CACHE=${E2E_CACHE:-$E2E_KDIR/.cache}
# The Debian meta package whose dependency names the real kernel image.
E2E_KPKG=${E2E_KPKG:-linux-image-6.12-amd64}

e2e_log() { printf '[e2e %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
# e2e_hlog: e2e_log, and the line with its time in $HLOG, the phase's
# host log (the NLM, Kerberos, TLS and pNFS phases' `log`).
e2e_hlog() {
	e2e_log "$*"
	echo "$(date +%T) $*" >>"$HLOG"
}

# e2e_server_bin GIVEN OUT: prints GIVEN (a server binary the caller
# names) or, when empty, builds ./cmd/nfsd-uring at OUT and prints OUT.
e2e_server_bin() {
	if [[ -n $1 ]]; then
		echo "$1"
		return
	fi
	go build -o "$2" ./cmd/nfsd-uring >&2 || e2e_die "go build ./cmd/nfsd-uring failed"
	echo "$2"
}

e2e_die() {
	printf '\n[e2e] FAIL: %s\n' "$*" >&2
	exit 1
}

_e2e_apt_updated=
e2e_apt_update() {
	[[ -n $_e2e_apt_updated ]] && return 0
	e2e_log "apt-get update"
	apt-get update -q >/dev/null || e2e_die "apt-get update failed"
	_e2e_apt_updated=1
}

# e2e_need_pkgs PKG... : install the Debian packages that are missing.
e2e_need_pkgs() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	((${#missing[@]})) || return 0
	[[ $(id -u) == 0 ]] || e2e_die "missing host packages (${missing[*]}) and not root to install them"
	e2e_apt_update
	e2e_log "apt-get install ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
		e2e_die "apt-get install ${missing[*]} failed"
}

e2e_host_deps() {
	# qemu-system-x86: the VM; busybox-static: the guest userland;
	# netcat-openbsd: guestfwd's per-connection relay to 127.0.0.1;
	# cpio: initramfs; kmod: depmod; xz-utils: module decompression;
	# tcpdump: a pcap of the NFS traffic for post-mortems.
	e2e_need_pkgs qemu-system-x86 busybox-static netcat-openbsd cpio kmod xz-utils tcpdump
}

# e2e_kernel: make sure the kernel is unpacked under the cache; sets
# E2E_KROOT (unpacked root), E2E_KVER (uname -r), E2E_VMLINUZ.
e2e_kernel() {
	local root=$E2E_CACHE/kernel stamp=$E2E_CACHE/kernel/.unpacked
	if [[ ! -f $stamp || -n ${E2E_KERNEL_REFRESH:-} ]]; then
		local dl=$E2E_CACHE/debs real deb
		mkdir -p "$dl"
		# The meta package only depends on the versioned image package.
		real=$(apt-cache depends "$E2E_KPKG" 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
		if [[ -z $real ]]; then
			e2e_apt_update
			real=$(apt-cache depends "$E2E_KPKG" 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
		fi
		[[ -n $real ]] || e2e_die "cannot resolve the image package behind $E2E_KPKG"
		deb=$(ls "$dl"/"${real}"_*.deb 2>/dev/null | head -n1 || true)
		if [[ -z $deb ]]; then
			e2e_log "apt-get download $real"
			(cd "$dl" && apt-get download -q -o APT::Sandbox::User=root "$real" >/dev/null) ||
				e2e_die "apt-get download $real failed"
			deb=$(ls "$dl"/"${real}"_*.deb | head -n1)
		fi
		e2e_log "unpacking $(basename "$deb")"
		rm -rf "$root"
		mkdir -p "$root"
		dpkg-deb -x "$deb" "$root" || e2e_die "dpkg-deb -x $deb failed"
		local kver
		kver=$(ls "$root/lib/modules" | head -n1)
		depmod -b "$root" "$kver" || e2e_die "depmod failed"
		echo "$kver" >"$stamp"
	fi
	E2E_KROOT=$root
	E2E_KVER=$(cat "$stamp")
	E2E_VMLINUZ=$root/boot/vmlinuz-$E2E_KVER
	[[ -f $E2E_VMLINUZ ]] || e2e_die "no $E2E_VMLINUZ (remove $E2E_CACHE/kernel and retry)"
	grep -q '^CONFIG_NFS_V4_2_READ_PLUS=y' "$root/boot/config-$E2E_KVER" ||
		e2e_die "kernel $E2E_KVER lacks CONFIG_NFS_V4_2_READ_PLUS=y"
}

# Modules the guest needs, top-level names; dependencies come from modules.dep.
# nfs_layout_flexfiles: the pNFS phase's layout driver. The client asks for
# it with request_module("nfs-layouttype4-4") at the first layout (fs/nfs/
# pnfs.c find_pnfs_driver), which needs modprobe and a module tree the
# initramfs does not have, so it is loaded up front like the others; so is
# nfsv3 (vers=3 mounts: "NFS: Version unavailable" without it).
E2E_MODULES=(virtio_net nfsv4 nfs_layout_flexfiles nfsv3)

# E2E_TLS_MODULES: the tls module and the AEADs its records need (gcm(aes),
# its ghash, the AES-NI and CLMUL versions where the CPU has them,
# chacha20poly1305), for e2e_stage_modules --optional (some are built in).
E2E_TLS_MODULES=(gf128mul crypto_null geniv seqiv ghash-generic gcm cryptd crypto_simd aesni-intel
	ghash-clmulni-intel libchacha chacha_generic libpoly1305 poly1305_generic chacha20poly1305 tls)

# e2e_stage_modules DIR [--optional] MODULE...: the guest kernel's MODULEs,
# each after the modules it depends on (modules.dep lists the deepest
# last), decompressed into DIR, and DIR/order, the order to insmod them in
# (the guest has no modprobe). A module modules.dep lacks fails the run, or
# with --optional is taken as built in.
e2e_stage_modules() {
	local dir=$1 optional=0 mdir line f i m name
	shift
	[[ ${1:-} != --optional ]] || { optional=1; shift; }
	mdir=$E2E_KROOT/lib/modules/$E2E_KVER
	local -a order=() parts
	local -A seen=()
	for m in "$@"; do
		line=$(grep -E "/${m}\.ko(\.xz|\.zst|\.gz)?:" "$mdir/modules.dep" | head -n1) || true
		if [[ -z $line ]]; then
			((optional)) || e2e_die "module $m not in $mdir/modules.dep"
			e2e_log "no module $m (built in?)"
			continue
		fi
		read -r -a parts <<<"${line/:/ }"
		for ((i = ${#parts[@]} - 1; i >= 1; i--)); do
			f=${parts[i]}
			[[ -n ${seen[$f]:-} ]] || { seen[$f]=1; order+=("$f"); }
		done
		f=${parts[0]}
		[[ -n ${seen[$f]:-} ]] || { seen[$f]=1; order+=("$f"); }
	done
	mkdir -p "$dir"
	: >"$dir/order"
	for f in "${order[@]}"; do
		name=${f##*/}
		name=${name%.xz}
		name=${name%.zst}
		name=${name%.gz}
		case $f in
		*.xz) xz -dc "$mdir/$f" >"$dir/$name" ;;
		*.zst) zstd -qdc "$mdir/$f" >"$dir/$name" ;;
		*.gz) gzip -dc "$mdir/$f" >"$dir/$name" ;;
		*) cp "$mdir/$f" "$dir/$name" ;;
		esac
		echo "$name" >>"$dir/order"
	done
}

# e2e_initramfs OUT: build a gzip'd newc initramfs with static busybox, the
# guest init script and the decompressed modules (in load order).
e2e_initramfs() {
	local out=$1 stage
	stage=$(mktemp -d "${TMPDIR:-/tmp}/e2e-initramfs.XXXXXX")
	# mktemp -d makes it 0700, and it becomes the guest's /: non-root
	# users (the write checks run some steps as uid 1000/1001) need x.
	chmod 755 "$stage"
	mkdir -p "$stage"/{bin,sbin,dev,proc,sys,mnt,tmp,modules}
	# PID 1 needs /dev/console before devtmpfs is mounted.
	mknod -m 600 "$stage/dev/console" c 5 1 || e2e_die "mknod /dev/console failed (run as root)"
	mknod -m 666 "$stage/dev/null" c 1 3
	cp /bin/busybox "$stage/bin/busybox"
	[[ $(LC_ALL=C ldd /bin/busybox 2>&1 || true) == *"not a dynamic"* ]] ||
		e2e_die "/bin/busybox is not static (install busybox-static)"
	cp "$E2E_KDIR/guest-init.sh" "$stage/init"
	chmod 755 "$stage/init"
	cp "$E2E_KDIR/guest-lib.sh" "$stage/guest-lib.sh"
	cp "$E2E_KDIR/guest-rw.sh" "$stage/guest-rw.sh"
	cp "$E2E_KDIR/guest-fs.sh" "$stage/guest-fs.sh"
	cp "$E2E_KDIR/guest-restart.sh" "$stage/guest-restart.sh"
	cp "$E2E_KDIR/guest-deleg.sh" "$stage/guest-deleg.sh"
	cp "$E2E_KDIR/guest-exports.sh" "$stage/guest-exports.sh"
	cp "$E2E_KDIR/guest-pnfs.sh" "$stage/guest-pnfs.sh"
	e2e_fshelper
	cp "$E2E_FSHELPER" "$stage/bin/fshelper"
	e2e_acltools "$stage"
	e2e_stage_modules "$stage/modules" "${E2E_MODULES[@]}"
	(cd "$stage" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0) | gzip -1 >"$out" ||
		e2e_die "initramfs build failed"
	rm -rf "$stage"
}

# e2e_acltools STAGE: nfs4_getfacl and nfs4_setfacl (Debian nfs4-acl-tools;
# they need only libc) for the guest's ACL step, when the host has them.
e2e_acltools() {
	local stage=$1 b
	for b in nfs4_getfacl nfs4_setfacl; do
		command -v "$b" >/dev/null || return 0
	done
	for b in nfs4_getfacl nfs4_setfacl; do
		e2e_stage_bin "$stage" "$(command -v "$b")" "/bin/$b"
	done
}

# e2e_stage_bin STAGE SRC [DEST]: the host's program SRC at STAGE/DEST
# (default: SRC's path) with every library ldd names, under the same
# paths (copied, not linked): the guest runs the host's Debian binaries.
e2e_stage_bin() {
	local stage=$1 src=$2 dest=${3:-$2} l
	[[ -x $src ]] || e2e_die "no $src on the host"
	mkdir -p "$stage$(dirname "$dest")"
	cp -L "$src" "$stage$dest"
	for l in $(ldd "$src" | awk '/=> \//{print $3} /^[ \t]*\//{print $1}'); do
		mkdir -p "$stage$(dirname "$l")"
		cp -L "$l" "$stage$l"
	done
}

# e2e_stage_netdb STAGE: the files libtirpc and getservbyname read
# (netconfig, services, protocols, and rpc when there is one).
e2e_stage_netdb() {
	local stage=$1 f
	mkdir -p "$stage/etc"
	[[ ! -f /etc/rpc ]] || cp /etc/rpc "$stage/etc/rpc"
	for f in netconfig services protocols; do
		cp "/etc/$f" "$stage/etc/$f" || e2e_die "no /etc/$f on the host (libtirpc-common, netbase)"
	done
}

# e2e_fshelper: build fshelper (static: it runs in the guest and on the
# host); sets E2E_FSHELPER.
e2e_fshelper() {
	E2E_FSHELPER=${E2E_WORK:-$E2E_KDIR/.work}/fshelper
	mkdir -p "$(dirname "$E2E_FSHELPER")"
	(cd "$E2E_KDIR" && CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -ldflags='-s -w' -o "$E2E_FSHELPER" ./fshelper) ||
		e2e_die "go build e2e/kernel/fshelper failed"
}

# e2e_manifest DIR: one line per entry below DIR, sorted by path:
#   D ./path | F ./path SHA256 | L ./path -> TARGET | O ./path
# The guest init prints exactly the same format for the mounted tree.
# ./rw (the write checks' area) is left out.
e2e_manifest() {
	(
		cd "$1" || exit 1
		find . -mindepth 1 | grep -v -e '^\./rw$' -e '^\./rw/' | LC_ALL=C sort | while IFS= read -r p; do
			if [[ -L $p ]]; then
				echo "L $p -> $(readlink "$p")"
			elif [[ -d $p ]]; then
				echo "D $p"
			elif [[ -f $p ]]; then
				echo "F $p $(sha256sum <"$p" | cut -d' ' -f1)"
			else
				echo "O $p"
			fi
		done
	)
}

# e2e_rw_manifest DIR: the write checks' listing, the same as rw_manifest
# in guest-rw.sh prints in the guest:
#   D ./p MODE UID:GID | F ./p SIZE MODE NLINK UID:GID SHA256 | L ./p -> T
#   P ./p MODE UID:GID (fifo) | C ./p MAJ:MIN MODE UID:GID | O ./p
#   T ./p MTIME        (extra line for names starting with t-)
e2e_rw_manifest() {
	(
		cd "$1" || exit 1
		find . -mindepth 1 | LC_ALL=C sort | while IFS= read -r p; do
			if [[ -L $p ]]; then
				echo "L $p -> $(readlink "$p")"
			elif [[ -d $p ]]; then
				echo "D $p $(stat -c '%a %u:%g' "$p")"
			elif [[ -f $p ]]; then
				echo "F $p $(stat -c '%s %a %h %u:%g' "$p") $(sha256sum <"$p" | cut -d' ' -f1)"
			elif [[ -p $p ]]; then
				echo "P $p $(stat -c '%a %u:%g' "$p")"
			elif [[ -c $p ]]; then
				echo "C $p $(stat -c '%t:%T %a %u:%g' "$p")"
			else
				echo "O $p"
			fi
			case ${p##*/} in t-*) echo "T $p $(stat -c '%Y' "$p")" ;; esac
		done
	)
}

# e2e_verdict DIR: judge the run recorded in DIR (results.txt, host.txt,
# the manifests): the Go test in e2e/kernel/verdict prints what passed and
# every failure with the line it failed on, writes DIR/verdict.txt, and
# fails if anything did.
e2e_verdict() {
	local dir
	dir=$(cd "$1" && pwd)
	(cd "$E2E_KDIR/../.." && go test -count=1 -v -run '^TestVerdict$' ./e2e/kernel/verdict -args -dir "$dir") >&2
}

# e2e_free_port: a TCP port on 127.0.0.1 nobody listens on right now.
e2e_free_port() {
	local p i
	for ((i = 0; i < 200; i++)); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			if ! ss -Hltn "sport = :$p" 2>/dev/null | grep -q .; then
				echo "$p"
				return 0
			fi
		fi
	done
	e2e_die "no free port found"
}

# e2e_start_server BIN LOG ARGS...: start BIN --listen 127.0.0.1:PORT ARGS
# in the background and wait until it listens (retrying on another port if
# the one picked was taken meanwhile); sets E2E_SPID and E2E_PORT. Dies with
# the server's log if it does not come up.
E2E_SPID=
E2E_PORT=
e2e_start_server() {
	local bin=$1 log=$2 attempt up
	shift 2
	for attempt in 1 2 3; do
		E2E_PORT=$(e2e_free_port)
		e2e_log "starting: $bin --listen 127.0.0.1:$E2E_PORT $*"
		"$bin" --listen "127.0.0.1:$E2E_PORT" "$@" >"$log" 2>&1 &
		E2E_SPID=$!
		up=
		for _ in $(seq 1 100); do
			kill -0 "$E2E_SPID" 2>/dev/null || break
			if ss -Hltn "sport = :$E2E_PORT" 2>/dev/null | grep -q .; then
				up=1
				break
			fi
			sleep 0.1
		done
		[[ -n $up ]] && break
		echo "---- server log (attempt $attempt) ----" >&2
		tail -n 40 "$log" >&2
		e2e_stop_server
		grep -qi 'address already in use' "$log" || e2e_die "server did not start listening on 127.0.0.1:$E2E_PORT (log: $log)"
	done
	[[ -n $up ]] || e2e_die "server did not start listening"
	e2e_log "server pid $E2E_SPID listening on 127.0.0.1:$E2E_PORT (log: $log)"
}

# e2e_stop_server: SIGTERM the server started by e2e_start_server, SIGKILL
# after 5 s.
e2e_stop_server() {
	[[ -n $E2E_SPID ]] || return 0
	if kill -0 "$E2E_SPID" 2>/dev/null; then
		kill -TERM "$E2E_SPID" 2>/dev/null || true
		for _ in $(seq 1 50); do
			kill -0 "$E2E_SPID" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$E2E_SPID" 2>/dev/null || true
	fi
	wait "$E2E_SPID" 2>/dev/null || true
	E2E_SPID=
}

# e2e_server_verdict LOG RC: after run.sh returned RC, stop the server and
# return non-zero if run.sh failed or the server died during the run (with
# its log tail and why it died).
e2e_server_verdict() {
	local log=$1 rc=$2 alive=1 status=0 why
	kill -0 "$E2E_SPID" 2>/dev/null || alive=
	if [[ -z $alive ]]; then
		wait "$E2E_SPID" 2>/dev/null || status=$?
		E2E_SPID=
	fi
	e2e_stop_server
	if ((rc == 0)) && [[ -n $alive ]]; then
		e2e_log "server log: $log ($(wc -l <"$log") lines)"
		return 0
	fi
	echo "---- server log tail ($log) ----" >&2
	tail -n 100 "$log" >&2
	if [[ -z $alive ]]; then
		why="exit status $status"
		((status > 128)) && why+=" (killed by signal $((status - 128)))"
		grep -q 'shutting down' "$log" && why+="; it logged 'shutting down': something sent it SIGTERM/SIGINT"
		printf '\n[e2e] FAIL: the server died during the test: %s\n' "$why" >&2
	fi
	((rc != 0)) || rc=1
	return "$rc"
}

# e2e_qemu NETDEV APPEND RESULTS CONSOLE [PIDFILE [SHOW]]: boots the guest
# (TCG, $E2E_VMLINUZ with the initramfs $INITRD, one virtio NIC on NETDEV,
# kernel command line "console=ttyS0 panic=-1 quiet loglevel=4 APPEND")
# under `timeout $TIMEOUT`; its console goes to CONSOLE and to stdout (only
# the lines matching the regex SHOW, to stderr, when given), its second
# serial port (the guest's result records) to RESULTS. Sets qrc (124 on
# timeout) and elapsed (seconds).
e2e_qemu() {
	local netdev=$1 append=$2 results=$3 console=$4 pidfile=${5:-} show=${6:-}
	local cmd=(
		qemu-system-x86_64
		-nodefaults -no-user-config -no-reboot
		-machine pc -accel tcg -cpu max
		-m "${E2E_MEM:-1024}" -smp "${E2E_SMP:-1}"
		-display none
		-kernel "$E2E_VMLINUZ" -initrd "$INITRD"
		-append "console=ttyS0 panic=-1 quiet loglevel=4 $append"
		-netdev "$netdev"
		-device virtio-net-pci,netdev=n0
		-serial stdio
		-serial "file:$results"
	)
	[[ -z $pidfile ]] || cmd+=(-pidfile "$pidfile")
	printf '[e2e] qemu command line:\n ' >&2
	printf ' %q' timeout -k 10 "$TIMEOUT" "${cmd[@]}" >&2
	printf '\n' >&2
	local start=$SECONDS
	set +e
	if [[ -n $show ]]; then
		timeout -k 10 "$TIMEOUT" "${cmd[@]}" </dev/null 2>&1 | tee "$console" | grep --line-buffered -E "$show" >&2
	else
		timeout -k 10 "$TIMEOUT" "${cmd[@]}" </dev/null 2>&1 | tee "$console"
	fi
	qrc=${PIPESTATUS[0]}
	set -e
	elapsed=$((SECONDS - start))
}

# e2e_kill_restart PIDFILE SLOG BIN PORT [ARGS...]: kills the server whose
# pid PIDFILE holds with SIGKILL, waits for it to go, and starts BIN again on
# 127.0.0.1:PORT with ARGS (its log appended to SLOG, after a marker line),
# writing the new pid to PIDFILE; fails when it does not listen within 10 s.
e2e_kill_restart() {
	local pidfile=$1 slog=$2 bin=$3 port=$4 pid
	shift 4
	pid=$(cat "$pidfile")
	kill -KILL "$pid" 2>/dev/null || true
	while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
	echo "---- $(date +%T): killed with SIGKILL, restarting ----" >>"$slog"
	"$bin" --listen "127.0.0.1:$port" "$@" >>"$slog" 2>&1 &
	echo $! >"$pidfile"
	for _ in $(seq 1 100); do
		ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

# e2e_pcap FILE SNAPLEN FILTER: captures FILTER on lo into FILE in the
# background (its log beside it, FILE.log) and sets TPID ("" when tcpdump is
# missing or E2E_PCAP=0).
e2e_pcap() {
	TPID=
	[[ ${E2E_PCAP:-1} == 1 ]] && command -v tcpdump >/dev/null || return 0
	tcpdump -i lo -n -s "$2" -U --immediate-mode -w "$1" "$3" >"$1.log" 2>&1 &
	TPID=$!
	sleep 0.5
}
