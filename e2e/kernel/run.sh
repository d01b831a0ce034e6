#!/usr/bin/env bash
# Boot a Debian 6.12 kernel in qemu (TCG) and exercise an NFS server running
# on the host's 127.0.0.1:PORT with the kernel's own NFS client.
#
#   run.sh PORT EXPORT_DIR [VERS...]      default VERS: 4.2 4.1
#   run.sh --probe PORT                   boot + TCP round trip only
#   run.sh --fs PORT FSX_DIR VERS         e2e-fs.sh's filesystem phase: the
#                                         guest runs guest-fs.sh, fs-check.sh
#                                         judges (E2E_FS_EXPORTS: NAME:PATH,...)
#   run.sh --restart PORT EXPORT_DIR VERS...  e2e-restart.sh's phase: the
#                                         guest runs guest-restart.sh; the
#                                         caller restarts the server and judges
#   run.sh --deleg PORT EXPORT_DIR VERS...    e2e-deleg.sh's phase: the guest
#                                         runs guest-deleg.sh; the caller runs
#                                         the second client and judges
#   run.sh --pnfs PORT EXPORT_DIR VERS...     e2e-pnfs.sh's phase: the guest
#                                         runs guest-pnfs.sh (stage
#                                         E2E_PNFS_STAGE); the caller judges
#
# For each version the guest mounts SERVER:/ (vers=V), runs ls -lR, hashes
# every file with sha256sum and dumps /proc/self/mountstats. The host compares
# the guest's listing + hashes with EXPORT_DIR's and, for 4.2, requires a
# non-zero, error-free READ_PLUS counter (and no fallback to READ).
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
#   E2E_SERVER_LOG  the server's log, quoted on write-step failures
#   E2E_SERVER_PID  the server's pid: the guest is stopped if it goes away
#   E2E_PCAP_SNAPLEN  bytes kept of each packet in nfs.pcap (default 512)
#   E2E_GUEST_ARGS  more words for the guest's kernel command line
#   E2E_GUESTFWD  more guest addresses to forward, "IP:PORT=HOSTPORT ..."
#                 (each one more guestfwd rule to `nc 127.0.0.1 HOSTPORT`;
#                 the pNFS phase's data servers), also captured in nfs.pcap
#
# Write checks (E2E_RW=1), per version V, after the read checks: the guest
# does every write-side operation both in a tmpfs mirror and in
# EXPORT/rw/vV over NFS (guest-rw.sh), syncs, drops its caches and prints
# both trees; the host requires mirror == NFS read-back == its own view of
# EXPORT/rw/vV (sizes, modes, owners, link counts, symlink targets, sha256,
# chosen mtimes), the punched hole to exist (SEEK_HOLE, on the host and via
# NFS SEEK on 4.2), and no errors on WRITE/COMMIT/SETATTR/READ_PLUS... in
# mountstats. Then the reverse: the guest holds EXPORT/rw/host/vV/chg.bin
# open and says READY V; the host rewrites / renames / removes / creates
# files there and drops a marker; the guest must see the new contents (first
# through close-to-open revalidation, then after drop_caches).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

PROBE=
FS=
RESTART=
DELEG=
PNFS=
EXP=
if [[ ${1:-} == --restart ]]; then
	RESTART=1
	shift
elif [[ ${1:-} == --deleg ]]; then
	# The delegation phase (e2e-deleg.sh): like --restart, the caller
	# drives the host side and judges.
	RESTART=1
	DELEG=1
	shift
elif [[ ${1:-} == --pnfs ]]; then
	# The pNFS phase (e2e-pnfs.sh): like --restart, the caller drives the
	# host side (data servers, MDS restart) and judges.
	RESTART=1
	PNFS=1
	shift
elif [[ ${1:-} == --probe ]]; then
	PROBE=1
	shift
elif [[ ${1:-} == --fs ]]; then
	FS=1
	shift
elif [[ ${1:-} == --exports ]]; then
	# The exports phase (e2e-exports.sh): like --fs, no main-phase checks.
	FS=1
	EXP=1
	shift
fi
PORT=${1:?usage: run.sh PORT EXPORT_DIR [VERS...] | run.sh --probe PORT}
shift
EXPORT=
if [[ -z $PROBE ]]; then
	EXPORT=${1:?usage: run.sh PORT EXPORT_DIR [VERS...]}
	shift
	[[ -d $EXPORT ]] || e2e_die "export dir $EXPORT does not exist"
fi
VERS=("$@")
((${#VERS[@]})) || VERS=(4.2 4.1)
for v in "${VERS[@]}"; do
	[[ $v =~ ^4\.[0-2]$ ]] || e2e_die "unsupported NFS version '$v' (want 4.0, 4.1 or 4.2)"
done
[[ $PORT =~ ^[0-9]+$ ]] || e2e_die "bad port '$PORT'"

TIMEOUT=${E2E_TIMEOUT:-300}
((TIMEOUT >= 60)) || e2e_die "E2E_TIMEOUT must be at least 60 seconds"
WORK=${E2E_WORK:-$E2E_KDIR/.work}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
CONSOLE=$WORK/console.log
RESULTS=$WORK/results.txt
rm -f "$CONSOLE" "$RESULTS"

e2e_host_deps
e2e_kernel
e2e_log "kernel $E2E_KVER"
INITRD=$WORK/initramfs.cpio.gz
e2e_initramfs "$INITRD"
e2e_log "initramfs $(du -h "$INITRD" | cut -f1), $(zcat "$INITRD" | cpio -it --quiet 2>/dev/null | grep -c "^modules/.*\.ko$") modules"

if [[ -n $EXP ]]; then
	MODE=exports
elif [[ -n $FS ]]; then
	MODE=fs
elif [[ -n $DELEG ]]; then
	MODE=deleg
elif [[ -n $PNFS ]]; then
	MODE=pnfs
elif [[ -n $RESTART ]]; then
	MODE=restart
elif [[ -z $PROBE ]]; then
	e2e_log "hashing host tree $EXPORT"
	e2e_manifest "$EXPORT" >"$WORK/host.manifest"
	e2e_log "host tree: $(wc -l <"$WORK/host.manifest") entries"
	MODE=nfs
else
	MODE=probe
fi
# Fail fast if nothing listens: guestfwd would just hand the guest a closed
# connection and the mount would spin until its timeout.
(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null || e2e_die "nothing listens on 127.0.0.1:$PORT"

umask 022
START_EPOCH=$(date +%s)
RW=
rw_flags=off
if [[ -z $PROBE && -z $FS && -z $RESTART && ${E2E_RW:-1} == 1 ]]; then
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
# One more guestfwd rule per E2E_GUESTFWD entry (the pNFS data servers).
netdev="user,id=n0,restrict=on,net=10.0.2.0/24,guestfwd=tcp:10.0.2.100:2049-cmd:nc 127.0.0.1 $PORT"
pcap_ports=$PORT
for fw in ${E2E_GUESTFWD:-}; do
	[[ $fw =~ ^(10\.0\.2\.[0-9]+:[0-9]+)=([0-9]+)$ ]] || e2e_die "bad E2E_GUESTFWD entry '$fw' (want 10.0.2.N:PORT=HOSTPORT)"
	netdev+=",guestfwd=tcp:${BASH_REMATCH[1]}-cmd:nc 127.0.0.1 ${BASH_REMATCH[2]}"
	pcap_ports+=" ${BASH_REMATCH[2]}"
done
pcap_filter=
for p in $pcap_ports; do pcap_filter+="${pcap_filter:+ or }tcp port $p"; done
QEMU=(
	qemu-system-x86_64
	-nodefaults -no-user-config -no-reboot
	-machine pc -accel tcg -cpu max
	-m "${E2E_MEM:-1024}" -smp "${E2E_SMP:-1}"
	-display none
	-kernel "$E2E_VMLINUZ" -initrd "$INITRD"
	-append "console=ttyS0 panic=-1 quiet loglevel=4 e2e_mode=$MODE e2e_vers=$vers_csv e2e_rw=$rw_flags${FS:+ e2e_fs=${E2E_FS_EXPORTS:-}}${EXP:+ e2e_ex=${E2E_EX_DIR:-}}${PNFS:+ e2e_pnfs=${E2E_PNFS_STAGE:-write}} e2e_deadline=$((TIMEOUT - 20))${E2E_GUEST_ARGS:+ $E2E_GUEST_ARGS}"
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
if [[ -z $PROBE && ${E2E_PCAP:-1} == 1 ]] && command -v tcpdump >/dev/null; then
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

fails=()
fail() {
	fails+=("$*")
	printf '[e2e] FAIL: %s\n' "$*" >&2
}
[[ -f $RESULTS ]] || touch "$RESULTS"
# The serial port may add CRs.
sed -i 's/\r$//' "$RESULTS"

if [[ -s $WORK/server-died ]]; then
	fail "THE SERVER DIED during the test at $(cat "$WORK/server-died") (guest stopped; see the server log)"
elif ((qrc == 124 || qrc == 137)); then
	fail "TIMEOUT: qemu killed after ${TIMEOUT}s (guest hung; see the console above / $CONSOLE)"
elif ((qrc != 0)); then
	fail "qemu exited with status $qrc"
fi
grep -qx DONE "$RESULTS" || fail "guest did not finish (no DONE record)"
while IFS= read -r l; do fail "guest: ${l#ERR }"; done < <(grep '^ERR ' "$RESULTS" || true)

if [[ -n $PROBE ]]; then
	reply=$(sed -n 's/^PROBE //p' "$RESULTS")
	if [[ -n $reply ]]; then
		e2e_log "probe: guest got '$reply' from the host through guestfwd"
	else
		fail "probe: guest got no reply from 127.0.0.1:$PORT via 10.0.2.100:2049"
	fi
fi

# rw_fail V STEP TEXT: a failed write check, with the server's complaints.
SERVER_LOG=${E2E_SERVER_LOG:-}
rw_fail() {
	fail "v$1: WRITE CHECK '$2' FAILED: $3"
	rw_failed=1
}

# rw_diff NAME A B WHAT: fail unless manifests A and B are identical.
rw_diff() {
	local v=$1 name=$2 a=$3 b=$4 what=$5 out=$WORK/rw-$2-$1.diff
	if ! diff -u "$a" "$b" >"$out"; then
		echo "---- v$v $what ($out) ----" >&2
		head -n 40 "$out" >&2
		rw_fail "$v" "$name" "$what: $(grep -c '^[-+][A-Z] ' "$out") lines differ (full diff: $out)"
		return 1
	fi
	return 0
}

# rw_check V: the write checks' verdict for version V (after qemu exited).
rw_check() {
	local v=$1 l name side rest d=$EXPORT/rw/v$1 got want
	if ! grep -qxF "RWDONE $v" "$RESULTS"; then
		rw_fail "$v" "(all)" "the guest did not finish the write checks (last step started: $(sed -n "s/^STEP $v //p" "$RESULTS" | tail -n1))"
	fi
	while read -r _ _ name side rest; do
		if [[ $side == mirror ]]; then
			rw_fail "$v" "$name" "the tmpfs mirror step failed (harness bug, not the server): $rest"
		else
			rw_fail "$v" "$name" "guest: $rest"
		fi
	done < <(grep "^WERR $v " "$RESULTS" || true)
	while read -r _ _ name rest; do e2e_log "v$v: write step $name SKIPPED ($rest)"; done < <(grep "^SKIP $v " "$RESULTS" || true)
	while read -r _ _ name rest; do e2e_log "v$v: $name: $rest"; done < <(grep "^INFO $v " "$RESULTS" || true)

	# Past here: verdicts on what the guest finished (a guest that stopped
	# early has already been reported, its leftovers would only add noise).
	if ! grep -qxF "RWLISTED $v" "$RESULTS"; then
		return 0
	fi
	sync
	sed -n "s/^RM $v //p" "$RESULTS" >"$WORK/rw-mirror-$v.manifest"
	sed -n "s/^RW $v //p" "$RESULTS" >"$WORK/rw-guest-$v.manifest"
	if [[ -d $d ]]; then
		e2e_rw_manifest "$d" >"$WORK/rw-host-$v.manifest"
	else
		: >"$WORK/rw-host-$v.manifest"
	fi
	if [[ ! -s $WORK/rw-mirror-$v.manifest ]]; then
		rw_fail "$v" "(all)" "no mirror listing from the guest"
	else
		local ok=1
		rw_diff "$v" readback "$WORK/rw-mirror-$v.manifest" "$WORK/rw-guest-$v.manifest" \
			"expected (guest tmpfs mirror) vs guest NFS read-back after drop_caches" || ok=
		rw_diff "$v" on-disk "$WORK/rw-mirror-$v.manifest" "$WORK/rw-host-$v.manifest" \
			"expected (guest tmpfs mirror) vs host's view of $d" || ok=
		[[ -z $ok ]] || e2e_log "v$v: write checks: $(grep -c . "$WORK/rw-host-$v.manifest") entries identical in the guest's mirror, the NFS read-back and on the host ($(grep -c '^F ' "$WORK/rw-host-$v.manifest") files, sha256 + size + mode + nlink + owner)"
	fi

	# The punched hole, on the host (SEEK_HOLE/SEEK_DATA on the export).
	if [[ $v == 4.2 && ${E2E_PUNCH:-1} == 1 && -f $d/punched.bin ]]; then
		got=$("$E2E_FSHELPER" seek "$d/punched.bin" 0 hole 2>&1 || true)/$("$E2E_FSHELPER" seek "$d/punched.bin" 1048576 data 2>&1 || true)
		if [[ $got == 1048576/2097152 ]]; then
			e2e_log "v$v: host SEEK_HOLE/SEEK_DATA on punched.bin: hole [1048576, 2097152) as punched"
		else
			rw_fail "$v" punch-hole "host lseek(SEEK_HOLE from 0)/lseek(SEEK_DATA from 1 MiB) on $d/punched.bin = $got, want 1048576/2097152 (the DEALLOCATE did not free the blocks)"
		fi
	fi
	got=$("$E2E_FSHELPER" seek "$d/past-eof.bin" 0 data 2>&1 || true)
	[[ $got == 1228800 ]] || rw_fail "$v" write-past-eof "host lseek(SEEK_DATA from 0) on past-eof.bin = $got, want 1228800 (the write past EOF filled the gap?)"
	# Through NFS SEEK (4.2 only; 4.1 has no SEEK and the client fakes it).
	if [[ $v == 4.2 ]]; then
		while read -r _ _ f off how res; do
			case "$f $off $how" in
			"punched.bin 0 hole") want=1048576 ;;
			"punched.bin 1048576 data") want=2097152 ;;
			"punched.bin 2097152 hole") want=4194304 ;;
			"past-eof.bin 0 data") want=1228800 ;;
			*) continue ;;
			esac
			[[ $res == "$want" ]] || rw_fail "$v" "seek-$how" "guest lseek(SEEK_${how^^} from $off) on $f over NFS = $res, want $want"
		done < <(grep "^SEEK $v " "$RESULTS" || true)
	fi
	# User xattrs set over NFS (4.2, RFC 8276), as the export has them.
	if [[ $v == 4.2 && -f $d/xattr.txt ]]; then
		got=$("$E2E_FSHELPER" getxattr "$d/xattr.txt" user.e2e 2>&1 || true)
		local names
		names=$("$E2E_FSHELPER" listxattr "$d/xattr.txt" 2>&1 | grep '^user\.' | tr '\n' ' ' || true)
		if [[ $got == hello-xattr && $names == "user.e2e " ]]; then
			e2e_log "v$v: xattrs: the export has user.e2e=hello-xattr and nothing else under user. (set, replaced, removed over NFS)"
		else
			rw_fail "$v" xattr "host view of $d/xattr.txt: user.e2e='$got', user names '$names'; want user.e2e=hello-xattr only"
		fi
	fi
	# touch without a date: SETATTR time_modify = SET_TO_SERVER_TIME.
	if [[ -f $d/now.txt ]]; then
		got=$(stat -c %Y "$d/now.txt")
		if ((got < START_EPOCH - 2 || got > $(date +%s) + 2)); then
			rw_fail "$v" touch-now "mtime of now.txt is $got ($(date -d "@$got" '+%F %T')), want between the run's start $START_EPOCH and now"
		fi
	fi
	# mountstats after the workload.
	local op n e st2=$WORK/rw-stat2-$v.txt
	# errors: STAT2's, less those made by the expected refusals (STATU1 - STATU0).
	awk -v v="$v" '$2==v && $1=="STATU0" {u0[$3]=$5} $2==v && $1=="STATU1" {u1[$3]=$5}
		$1=="STAT2" && $2==v {ops[++n]=$3; cnt[$3]=$4; err[$3]=$5}
		END {for (i=1; i<=n; i++) {o=ops[i]; print o, cnt[o], err[o]-(u1[o]-u0[o])}}' "$RESULTS" >"$st2"
	local summary=
	while read -r op n e; do
		case $op in
		WRITE | COMMIT | SETATTR | READ | READ_PLUS | CREATE | RENAME | LINK | REMOVE | ALLOCATE | DEALLOCATE | COPY | CLONE | LOCK | LOCKT | LOCKU | SEEK)
			((n == 0)) || summary+=" $op=$n${e:+/$e}"
			;;
		esac
		case $op in
		WRITE | COMMIT | SETATTR | READ | READ_PLUS | LINK | RENAME | ALLOCATE | DEALLOCATE | COPY | LOCKU | CLOSE)
			((e == 0)) || rw_fail "$v" "mountstats-$op" "$e of $n $op calls failed (guest /proc/self/mountstats; the expected refusals by uid 1000/1001 not counted)"
			;;
		esac
	done <"$st2"
	e2e_log "v$v: mountstats after the writes (ops/errors):$summary"
	n=$(awk '$1=="WRITE"{print $2}' "$st2")
	((${n:-0} > 0)) || rw_fail "$v" mountstats-WRITE "the client sent no WRITE at all"
	if [[ $v == 4.2 ]]; then
		n=$(awk '$1=="READ"{print $2}' "$st2")
		((${n:-0} == 0)) || rw_fail "$v" mountstats-READ "the client fell back to READ ($n) during the write checks"
	fi

	# Reverse: host changes, guest sees them.
	grep -qxF "RWDONE $v" "$RESULTS" || return 0
	sed -n "s/^HB $v //p" "$RESULTS" >"$WORK/rw-hostdir-guest-before-$v.manifest"
	sed -n "s/^HA $v //p" "$RESULTS" >"$WORK/rw-hostdir-guest-after-$v.manifest"
	rw_diff "$v" reverse-before "$WORK/rw-host-before-$v.manifest" "$WORK/rw-hostdir-guest-before-$v.manifest" \
		"host-written files before the change vs the guest's view" || true
	if [[ ! -f $WORK/rw-host-after-$v.manifest ]]; then
		rw_fail "$v" reverse "the host never saw READY $v, so it changed nothing"
	else
		if rw_diff "$v" reverse-after "$WORK/rw-host-after-$v.manifest" "$WORK/rw-hostdir-guest-after-$v.manifest" \
			"host-changed files vs the guest's view after drop_caches"; then
			e2e_log "v$v: reverse: the guest sees the host's same-size rewrite of an open+cached file, append, replace by rename, rename, remove, create, chmod, mkdir"
		fi
		for f in chg.bin repl.txt grow.txt; do
			want=$(awk -v f="./$f" '$1=="F" && $2==f {print $NF}' "$WORK/rw-host-after-$v.manifest")
			got=$(awk -v v="$v" -v f="$f" '$1=="HC" && $2==v && $3==f {print $4}' "$RESULTS")
			if [[ $got != "$want" ]]; then
				local old
				old=$(awk -v f="./$f" '$1=="F" && $2==f {print $NF}' "$WORK/rw-host-before-$v.manifest")
				if [[ $got == "$old" ]]; then
					rw_fail "$v" reverse-cto "re-opening $f (still cached in the guest) gave the OLD content after the host changed it: close-to-open revalidation missed the change (change attribute / size / mtime not updated?)"
				else
					rw_fail "$v" reverse-cto "re-opening $f after the host changed it: sha256 ${got:-none}, want $want"
				fi
			fi
		done
	fi
}

# rw_server_log: the server's warnings/errors, for failed write checks.
rw_server_log() {
	[[ -n $SERVER_LOG && -f $SERVER_LOG ]] || return 0
	local n
	n=$(grep -cE 'level=(WARN|ERROR)' "$SERVER_LOG" || true)
	echo "---- server log: $n WARN/ERROR lines ($SERVER_LOG) ----" >&2
	grep -E 'level=(WARN|ERROR)' "$SERVER_LOG" | head -n 40 >&2 || true
}

# rw_pcap_errors: the NFS calls that failed, from the capture (needs
# tshark); LOOKUP -> NFS4ERR_NOENT (every create does one) and LOCK ->
# NFS4ERR_DENIED (the lock test provokes it) are left out.
rw_pcap_errors() {
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

npass=0 nfail=0
rw_failed=
if [[ -n $EXP ]]; then
	# shellcheck source=exports-check.sh
	. "$E2E_KDIR/exports-check.sh"
elif [[ -n $FS ]]; then
	# shellcheck source=fs-check.sh
	. "$E2E_KDIR/fs-check.sh"
	fs_check "${VERS[0]}"
fi
for v in "${VERS[@]}"; do
	[[ -z $PROBE && -z $FS && -z $RESTART ]] || break
	nf0=${#fails[@]}
	mline=$(grep "^MOUNT $v " "$RESULTS" || true)
	case $mline in
	"MOUNT $v ok"*) e2e_log "v$v: mounted (${mline#MOUNT $v ok })" ;;
	"MOUNT $v fail"*)
		fail "v$v: MOUNT FAILED: ${mline#MOUNT $v fail }"
		nfail=$((nfail + 1))
		continue
		;;
	*)
		fail "v$v: no mount result (the mount hung or the guest stopped before it)"
		nfail=$((nfail + 1))
		continue
		;;
	esac
	sed -n "s/^M $v //p" "$RESULTS" >"$WORK/guest-$v.manifest"
	if ! diff -u "$WORK/host.manifest" "$WORK/guest-$v.manifest" >"$WORK/diff-$v.txt"; then
		echo "---- host vs guest (v$v) listing/checksum differences ----" >&2
		head -n 60 "$WORK/diff-$v.txt" >&2
		bad=$(grep -c '^+[FDLO] ' "$WORK/diff-$v.txt" || true)
		fail "v$v: CHECKSUM/LISTING MISMATCH ($bad guest entries differ; full diff in $WORK/diff-$v.txt)"
	else
		e2e_log "v$v: all $(grep -c '^F ' "$WORK/host.manifest") files match the host's sha256 ($(wc -l <"$WORK/host.manifest") entries)"
	fi
	stat_of() { awk -v v="$v" -v op="$1" -v f="$2" '$1=="STAT" && $2==v && $3==op {print $f; found=1} END{if(!found) print 0}' "$RESULTS" | head -n1; }
	rp=$(stat_of READ_PLUS 4)
	rpe=$(stat_of READ_PLUS 5)
	rd=$(stat_of READ 4)
	e2e_log "v$v: mountstats READ_PLUS ops=$rp errors=$rpe, READ ops=$rd"
	if [[ $v == 4.2 ]]; then
		if ((rp == 0)); then
			fail "v4.2: READ_PLUS counter is 0 in /proc/self/mountstats: the client never used READ_PLUS"
		elif ((rpe >= rp)); then
			fail "v4.2: every READ_PLUS failed ($rpe/$rp errors): server rejected READ_PLUS"
		elif ((rd > 0)); then
			fail "v4.2: client fell back to READ ($rd READs besides $rp READ_PLUS): server rejected READ_PLUS"
		else
			e2e_log "v4.2: READ_PLUS used ($rp ops, $rpe errors), no plain READ"
		fi
	fi
	[[ -z $RW ]] || rw_check "$v"
	if ((${#fails[@]} == nf0)); then npass=$((npass + 1)); else nfail=$((nfail + 1)); fi
done
if [[ -n $rw_failed ]]; then
	rw_server_log
	rw_pcap_errors
fi

if ((${#fails[@]})); then
	[[ -n $PROBE || -n $FS || -n $RESTART ]] || echo "e2e-kernel: $npass passed, $nfail failed"
	{
		echo
		echo "================ e2e (kernel client${FS:+, filesystem phase}) FAILED ================"
		printf '  - %s\n' "${fails[@]}"
		echo "  console log: $CONSOLE"
		echo "  results:     $RESULTS"
		[[ -s $PCAP ]] && echo "  packets:     $PCAP (snaplen 512)"
		echo "============================================================"
	} >&2
	exit 1
fi
[[ -n $PROBE || -n $FS || -n $RESTART ]] || echo "e2e-kernel: $npass passed, 0 failed"
what="NFS ${VERS[*]}"
[[ -z $PROBE ]] || what="probe (boot + guestfwd)"
[[ -z $FS ]] || what="filesystem phase (mounts inside exports, a full filesystem), NFS ${VERS[*]}"
[[ -z $RESTART ]] || what="restart phase (a POSIX lock held across a server kill -9 + restart), NFS ${VERS[*]}"
[[ -z $PNFS ]] || what="pNFS phase, stage ${E2E_PNFS_STAGE:-write} (flexible-files layouts, data on the data servers), NFS ${VERS[*]}"
[[ -z $DELEG ]] || what="delegation phase (a read delegation recalled for another client's write open), NFS ${VERS[*]}"
[[ -z $EXP ]] || what="exports phase (ro, root_squash, a hidden export), NFS ${VERS[*]}"
echo "================ e2e (kernel client) PASSED: $what in ${elapsed}s ================"
