#!/usr/bin/env bash
# Boot a Debian 6.12 kernel in qemu (TCG) and exercise an NFS server running
# on the host's 127.0.0.1:PORT with the kernel's own NFS client.
#
#   run.sh PORT EXPORT_DIR [VERS...]      default VERS: 4.2 4.1
#   run.sh --probe PORT                   boot + TCP round trip only
#   run.sh --fs PORT FSX_DIR VERS         e2e-fs.sh's filesystem phase: the
#                                         guest runs guest-fs.sh
#                                         (E2E_FS_EXPORTS: NAME:PATH,...)
#   run.sh --exports PORT DIR VERS        e2e-exports.sh's phase (guest-exports.sh)
#   run.sh --restart PORT EXPORT_DIR VERS...  e2e-restart.sh's phase: the
#                                         guest runs guest-restart.sh; the
#                                         caller restarts the server
#   run.sh --deleg PORT EXPORT_DIR VERS...    e2e-deleg.sh's phase: the guest
#                                         runs guest-deleg.sh; the caller runs
#                                         the second client
#   run.sh --pnfs PORT EXPORT_DIR VERS...     e2e-pnfs.sh's phase: the guest
#                                         runs guest-pnfs.sh (stage
#                                         E2E_PNFS_STAGE); the caller runs the
#                                         data servers and judges the rest
#
# For each version the guest mounts SERVER:/ (vers=V), runs ls -lR, hashes
# every file with sha256sum and dumps /proc/self/mountstats; for 4.2 the
# reads must be READ_PLUS, error-free, with no fallback to READ.
#
# run.sh boots the guest and records; it does not judge. The guest's
# records land in WORK/results.txt; the host's (the phase, the versions,
# qemu's exit status, what it sees on the export) in WORK/host.txt, its
# listings in WORK/*.manifest. Then the verdict, a Go test, compares them
# and lists every failure with the line it failed on:
#   go test -count=1 -v -run '^TestVerdict$' ./e2e/kernel/verdict -args -dir WORK
# (e2e_verdict in lib.sh; the record formats: e2e/kernel/verdict/doc.go).
#
# The guest reaches the server only as 10.0.2.100:2049, which qemu's
# restricted user-mode network forwards (guestfwd, one `nc 127.0.0.1 PORT`
# per guest connection) to 127.0.0.1:PORT. Nothing else is reachable.
#
# Environment:
#   E2E_TIMEOUT  seconds before qemu is killed (default 300; a pass takes ~80)
#   E2E_WORK     where logs go (default e2e/kernel/.work)
#   E2E_MEM      guest memory in MiB (default 1024)
#   E2E_SMP      guest vCPUs (default 1)
#   E2E_CACHE    download/unpack cache (default e2e/kernel/.cache)
#   E2E_RW       write checks after the read checks (default 1; see below)
#   E2E_PUNCH E2E_ALLOCATE E2E_COPY E2E_CLONE E2E_LOCKS
#                optional write steps (fallocate punch-hole / DEALLOCATE,
#                fallocate / ALLOCATE, copy_file_range / COPY, FICLONE /
#                CLONE, POSIX locks / LOCK, LOCKT, LOCKU); default 1 each
#   E2E_SERVER_LOG  the server's log (the verdict reads WORK/server.log:
#                   copied there if it is elsewhere)
#   E2E_SERVER_PID  the server's pid: the guest is stopped if it goes away
#   E2E_GUESTFWD  more guest addresses to forward, "IP:PORT=HOSTPORT ..."
#                 (each one more guestfwd rule to `nc 127.0.0.1 HOSTPORT`;
#                 the pNFS phase's data servers), also captured in nfs.pcap
#   E2E_GUEST_ARGS  more words for the guest's kernel command line
#   E2E_PCAP_SNAPLEN  bytes kept of each packet in nfs.pcap (default 512)
#
# Write checks (E2E_RW=1), per version V, after the read checks: the guest
# does every write-side operation both in a tmpfs mirror and in
# EXPORT/rw/vV over NFS (guest-rw.sh), syncs, drops its caches and prints
# both trees; mirror == NFS read-back == the host's view of EXPORT/rw/vV.
# Then the reverse: the guest holds EXPORT/rw/host/vV/chg.bin open and says
# READY V; the host rewrites / renames / removes / creates files there and
# drops a marker; the guest must see the new contents.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

# MODE: the guest's e2e_mode and the verdict's PHASE. restart and deleg:
# the caller drives the host side (restarts the server, runs the second
# client).
MODE=nfs
case ${1:-} in
--probe | --fs | --exports | --restart | --deleg | --pnfs)
	MODE=${1#--}
	shift
	;;
esac
PORT=${1:?usage: run.sh PORT EXPORT_DIR [VERS...] | run.sh --probe PORT}
shift
EXPORT=
if [[ $MODE != probe ]]; then
	EXPORT=${1:?usage: run.sh PORT EXPORT_DIR [VERS...]}
	shift
	[[ -d $EXPORT ]] || e2e_die "export dir $EXPORT does not exist"
fi
VERS=("$@")
((${#VERS[@]})) || VERS=(4.2 4.1)
for v in "${VERS[@]}"; do
	[[ $v =~ ^(3|4\.[0-2])$ ]] || e2e_die "unsupported NFS version '$v' (want 3, 4.0, 4.1 or 4.2)"
done
[[ $PORT =~ ^[0-9]+$ ]] || e2e_die "bad port '$PORT'"

TIMEOUT=${E2E_TIMEOUT:-300}
((TIMEOUT >= 60)) || e2e_die "E2E_TIMEOUT must be at least 60 seconds"
WORK=${E2E_WORK:-$E2E_KDIR/.work}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
CONSOLE=$WORK/console.log
RESULTS=$WORK/results.txt
HOSTREC=$WORK/host.txt
rm -f "$CONSOLE" "$RESULTS" "$HOSTREC" "$WORK/verdict.txt"

e2e_host_deps
e2e_kernel
e2e_log "kernel $E2E_KVER"
INITRD=$WORK/initramfs.cpio.gz
e2e_initramfs "$INITRD"
e2e_log "initramfs $(du -h "$INITRD" | cut -f1), $(zcat "$INITRD" | cpio -it --quiet 2>/dev/null | grep -c "^modules/.*\.ko$") modules"

if [[ $MODE == nfs ]]; then
	e2e_log "hashing host tree $EXPORT"
	e2e_manifest "$EXPORT" >"$WORK/host.manifest"
	e2e_log "host tree: $(wc -l <"$WORK/host.manifest") entries"
fi
# Fail fast if nothing listens: guestfwd would just hand the guest a closed
# connection and the mount would spin until its timeout.
(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null || e2e_die "nothing listens on 127.0.0.1:$PORT"

umask 022
START_EPOCH=$(date +%s)
RW=
rw_flags=off
if [[ $MODE == nfs && ${E2E_RW:-1} == 1 ]]; then
	RW=1
	rw_flags=on
	[[ ${E2E_PUNCH:-1} == 1 ]] && rw_flags+=,punch
	[[ ${E2E_ALLOCATE:-1} == 1 ]] && rw_flags+=,alloc
	[[ ${E2E_COPY:-1} == 1 ]] && rw_flags+=,copy
	[[ ${E2E_CLONE:-1} == 1 ]] && rw_flags+=,clone
	[[ ${E2E_LOCKS:-1} == 1 ]] && rw_flags+=,locks
	e2e_log "write checks on ($rw_flags): preparing $EXPORT/rw"
	rm -rf "$EXPORT/rw" "$WORK"/rw-*.manifest "$WORK"/rw-*.diff "$WORK/host-changes.log"
	mkdir -p "$EXPORT/rw/host"
	for v in "${VERS[@]}"; do
		d=$EXPORT/rw/host/v$v
		mkdir -p "$d/sub"
		head -c 100000 /dev/urandom >"$d/chg.bin"
		printf 'old repl %s\n' "$v" >"$d/repl.txt"
		printf 'keep\n' >"$d/keep.txt"
		printf 'gone\n' >"$d/gone.txt"
		printf 'renamed\n' >"$d/ren-old.txt"
		printf 'sub\n' >"$d/sub/s.txt"
		printf 'grow\n' >"$d/grow.txt"
		e2e_rw_manifest "$d" >"$WORK/rw-host-before-$v.manifest"
	done
	sync
fi

# The host's records for the verdict (see e2e/kernel/verdict/doc.go).
{
	echo "PHASE $MODE"
	echo "VERS ${VERS[*]}"
	echo "RWFLAGS $rw_flags"
	[[ $MODE != fs ]] || echo "FSEXPORTS ${E2E_FS_EXPORTS:-}"
	[[ $MODE != pnfs ]] || echo "PNFSSTAGE ${E2E_PNFS_STAGE:-write}"
	echo "START $START_EPOCH"
} >"$HOSTREC"

# rw_host_change V: what the host does to EXPORT/rw/host/vV once the guest
# says READY V (the guest has chg.bin open and cached).
rw_host_change() {
	local v=$1 d=$EXPORT/rw/host/v$1
	# Same inode, same size, new data: only the change attribute (and
	# mtime) tell the guest that its cached pages are stale.
	head -c 100000 /dev/urandom >"$d/chg.bin"
	printf 'more\n' >>"$d/grow.txt" # append: size change
	printf 'new repl %s\n' "$v" >"$d/repl.tmp"
	mv -f "$d/repl.tmp" "$d/repl.txt" # atomic replace: new inode
	rm -f "$d/gone.txt"
	mv "$d/ren-old.txt" "$d/ren-new.txt"
	printf 'fresh\n' >"$d/sub/fresh.txt"
	chmod 600 "$d/keep.txt"
	mkdir "$d/newdir"
	sync
	e2e_rw_manifest "$d" >"$WORK/rw-host-after-$v.manifest"
	: >"$EXPORT/rw/host/go-v$v"
}

# The host side of the reverse check: runs during the boot, polls the
# results port for READY V.
rw_watch() {
	local v i
	for v in "${VERS[@]}"; do
		for ((i = 0; ; i++)); do
			tr -d '\r' <"$RESULTS" 2>/dev/null | grep -qxF "READY $v" && break
			sleep 0.2
		done
		rw_host_change "$v"
		echo "$(date +%T) v$v: host changed $EXPORT/rw/host/v$v and wrote rw/host/go-v$v" >>"$WORK/host-changes.log"
	done
}

vers_csv=$(IFS=,; echo "${VERS[*]}")
phase_args=
[[ $MODE != fs ]] || phase_args=" e2e_fs=${E2E_FS_EXPORTS:-}"
[[ $MODE != exports ]] || phase_args=" e2e_ex=${E2E_EX_DIR:-}"
[[ $MODE != pnfs ]] || phase_args=" e2e_pnfs=${E2E_PNFS_STAGE:-write}"
phase_args+=${E2E_GUEST_ARGS:+ $E2E_GUEST_ARGS}
# One more guestfwd rule per E2E_GUESTFWD entry (the pNFS data servers).
netdev="user,id=n0,restrict=on,net=10.0.2.0/24,guestfwd=tcp:10.0.2.100:2049-cmd:nc 127.0.0.1 $PORT"
pcap_filter="tcp port $PORT"
for fw in ${E2E_GUESTFWD:-}; do
	[[ $fw =~ ^(10\.0\.2\.[0-9]+:[0-9]+)=([0-9]+)$ ]] || e2e_die "bad E2E_GUESTFWD entry '$fw' (want 10.0.2.N:PORT=HOSTPORT)"
	netdev+=",guestfwd=tcp:${BASH_REMATCH[1]}-cmd:nc 127.0.0.1 ${BASH_REMATCH[2]}"
	pcap_filter+=" or tcp port ${BASH_REMATCH[2]}"
done
QEMU=(
	qemu-system-x86_64
	-nodefaults -no-user-config -no-reboot
	-machine pc -accel tcg -cpu max
	-m "${E2E_MEM:-1024}" -smp "${E2E_SMP:-1}"
	-display none
	-kernel "$E2E_VMLINUZ" -initrd "$INITRD"
	-append "console=ttyS0 panic=-1 quiet loglevel=4 e2e_mode=$MODE e2e_vers=$vers_csv e2e_rw=$rw_flags$phase_args e2e_deadline=$((TIMEOUT - 20))"
	-netdev "$netdev"
	-device virtio-net-pci,netdev=n0
	-serial stdio
	-serial "file:$RESULTS"
	-pidfile "$WORK/qemu.pid"
)
printf '[e2e] qemu command line:\n ' >&2
printf ' %q' timeout -k 10 "$TIMEOUT" "${QEMU[@]}" >&2
printf '\n' >&2

# A snaplen-limited capture of the NFS traffic on lo (headers and ops, not
# file data), handy for post-mortems: open it with wireshark / tshark.
PCAP=$WORK/nfs.pcap
TPID=
rm -f "$PCAP"
if [[ $MODE != probe && ${E2E_PCAP:-1} == 1 ]] && command -v tcpdump >/dev/null; then
	tcpdump -i lo -n -s "${E2E_PCAP_SNAPLEN:-512}" -U -w "$PCAP" "$pcap_filter" >"$WORK/tcpdump.log" 2>&1 &
	TPID=$!
	for _ in $(seq 1 30); do
		grep -q listening "$WORK/tcpdump.log" 2>/dev/null && break
		sleep 0.1
	done
fi
stop_pcap() {
	[[ -n $TPID ]] || return 0
	kill -INT "$TPID" 2>/dev/null || true
	wait "$TPID" 2>/dev/null || true
	TPID=
}
WPID=
stop_watch() {
	[[ -n $WPID ]] || return 0
	kill "$WPID" 2>/dev/null || true
	wait "$WPID" 2>/dev/null || true
	WPID=
}
# If the server dies (E2E_SERVER_PID, from e2e.sh), stop the guest rather
# than let it spin on a dead mount until the timeout.
MPID=
stop_mon() {
	[[ -n $MPID ]] || return 0
	kill "$MPID" 2>/dev/null || true
	wait "$MPID" 2>/dev/null || true
	MPID=
}
trap 'stop_pcap; stop_watch; stop_mon' EXIT
rm -f "$WORK/qemu.pid" "$WORK/server-died"
: >"$RESULTS"
if [[ -n $RW ]]; then
	rw_watch &
	WPID=$!
fi
if [[ -n ${E2E_SERVER_PID:-} ]]; then
	(
		while kill -0 "$E2E_SERVER_PID" 2>/dev/null; do sleep 1; done
		date +%T >"$WORK/server-died"
		e2e_log "the server (pid $E2E_SERVER_PID) is gone: stopping the guest in 3 s"
		sleep 3
		[[ -s $WORK/qemu.pid ]] && kill "$(cat "$WORK/qemu.pid")" 2>/dev/null
	) &
	MPID=$!
fi

start=$SECONDS
set +e
timeout -k 10 "$TIMEOUT" "${QEMU[@]}" </dev/null 2>&1 | tee "$CONSOLE"
qrc=${PIPESTATUS[0]}
set -e
elapsed=$((SECONDS - start))
stop_pcap
stop_watch
stop_mon
e2e_log "qemu exited rc=$qrc after ${elapsed}s; console: $CONSOLE; results: $RESULTS"

# What the guest printed is in $RESULTS; what the host saw goes to
# $HOSTREC, in the same record format, and the host's listings to
# *.manifest. The verdict (e2e/kernel/verdict, Go) judges them all.

# rw_facts V: the host's view of the write checks' rw/vV: its listing, the
# punched hole and the data past EOF (SEEK_HOLE/SEEK_DATA), the xattrs set
# over NFS and now.txt's mtime.
rw_facts() {
	local v=$1 d=$EXPORT/rw/v$1 q
	if [[ -d $d ]]; then
		e2e_rw_manifest "$d" >"$WORK/rw-host-$v.manifest"
	else
		: >"$WORK/rw-host-$v.manifest"
	fi
	if [[ -f $d/punched.bin ]]; then
		for q in "0 hole" "1048576 data"; do
			# shellcheck disable=SC2086
			echo "HSEEK $v punched.bin $q $("$E2E_FSHELPER" seek "$d/punched.bin" $q 2>&1 | tr '\n' ' ')"
		done
	fi
	echo "HSEEK $v past-eof.bin 0 data $("$E2E_FSHELPER" seek "$d/past-eof.bin" 0 data 2>&1 | tr '\n' ' ')"
	if [[ -f $d/xattr.txt ]]; then
		echo "HXATTR $v xattr.txt user.e2e $("$E2E_FSHELPER" getxattr "$d/xattr.txt" user.e2e 2>&1 | tr '\n' ' ')"
		echo "HXATTRS $v xattr.txt $("$E2E_FSHELPER" listxattr "$d/xattr.txt" 2>&1 | grep '^user\.' | tr '\n' ' ')"
	fi
	[[ ! -f $d/now.txt ]] || echo "HMTIME $v now.txt $(stat -c %Y "$d/now.txt")"
}

# fs_facts: the filesystem phase's host listings after the run: what each
# export must show (outer: A1 alone, through the bind mount under-outer;
# cross: with B2 at proj) and B1, which nothing may have changed.
fs_facts() {
	local e n dir
	for e in ${E2E_FS_EXPORTS//,/ }; do
		n=${e%%:*}
		dir=$EXPORT/$n
		[[ $n != outer ]] || dir=$EXPORT/under-outer
		e2e_rw_manifest "$dir" >"$WORK/host-after-$n.manifest"
	done
	e2e_rw_manifest "$EXPORT/outer/proj" >"$WORK/host-after-b1.manifest"
}

# pcap_errors: the NFS calls that failed, from the capture (needs tshark);
# LOOKUP -> NFS4ERR_NOENT (every create does one) and LOCK ->
# NFS4ERR_DENIED (the lock test provokes it) are left out.
pcap_errors() {
	[[ -s $PCAP ]] || return 0
	if ! command -v tshark >/dev/null; then
		echo "(apt-get install tshark to list the failing NFS calls from $PCAP here)" >&2
		return 0
	fi
	local flt='rpc.msgtyp == 1 && nfs.nfsstat4 > 0 && !(nfs.main_opcode == 15 && nfs.nfsstat4 == 2) && !(nfs.main_opcode == 12 && nfs.nfsstat4 == 10010)' xids
	xids=$(tshark -r "$PCAP" -d "tcp.port==$PORT,rpc" -Y "$flt" -T fields -e rpc.xid 2>/dev/null | head -n 20 | paste -sd, -)
	if [[ -z $xids ]]; then
		echo "---- $PCAP: no failed NFS call besides LOOKUP/NOENT ----" >&2
		return 0
	fi
	tshark -r "$PCAP" -d "tcp.port==$PORT,rpc" -Y "rpc.xid in {$xids}" -T fields -E separator=' ' \
		-e frame.number -e rpc.xid -e _ws.col.Info -e nfs.nfs_ftype4 -e nfs.name -e nfs.pathname.component 2>/dev/null >"$WORK/nfs-errors.txt" || true
	echo "---- failed NFS calls in $PCAP (first 20: frame, xid, call/reply, ftype, names; $WORK/nfs-errors.txt; details: tshark -r $PCAP -d tcp.port==$PORT,rpc -O nfs -Y frame.number==N) ----" >&2
	cut -c1-220 "$WORK/nfs-errors.txt" >&2
}

{
	echo "QEMU $qrc $elapsed $TIMEOUT"
	[[ ! -s $WORK/server-died ]] || echo "SERVERDIED $(cat "$WORK/server-died")"
	sync
	case $MODE in
	nfs) if [[ -n $RW ]]; then for v in "${VERS[@]}"; do rw_facts "$v"; done; fi ;;
	fs) fs_facts ;;
	exports) e2e_rw_manifest "$EXPORT" >"$WORK/host-after.manifest" ;;
	esac
	echo "NOW $(date +%s)"
} >>"$HOSTREC"
if [[ -n ${E2E_SERVER_LOG:-} && -f $E2E_SERVER_LOG && ! $E2E_SERVER_LOG -ef $WORK/server.log ]]; then
	cp "$E2E_SERVER_LOG" "$WORK/server.log"
fi

what="NFS ${VERS[*]}"
case $MODE in
probe) what="probe (boot + guestfwd)" ;;
fs) what="filesystem phase (mounts inside exports, a full filesystem), NFS ${VERS[*]}" ;;
restart) what="restart phase (a POSIX lock held across a server kill -9 + restart), NFS ${VERS[*]}" ;;
deleg) what="delegation phase (a read delegation recalled for another client's write open), NFS ${VERS[*]}" ;;
exports) what="exports phase (ro, root_squash, a hidden export), NFS ${VERS[*]}" ;;
pnfs) what="pNFS phase, stage ${E2E_PNFS_STAGE:-write} (flexible-files layouts), NFS ${VERS[*]}" ;;
esac
if ! e2e_verdict "$WORK"; then
	[[ $MODE == probe ]] || pcap_errors
	{
		echo
		echo "================ e2e (kernel client): $what FAILED ================"
		echo "  the failures: the verdict's FAIL lines above (also in $WORK/verdict.txt)"
		echo "  console log: $CONSOLE"
		echo "  results:     $RESULTS (guest), $HOSTREC (host)"
		[[ -s $PCAP ]] && echo "  packets:     $PCAP (snaplen 512)"
		echo "============================================================"
	} >&2
	exit 1
fi
echo "================ e2e (kernel client) PASSED: $what in ${elapsed}s ================"
