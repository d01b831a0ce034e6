#!/usr/bin/env bash
# The kernel e2e's NLM phase (issue 25): NFSv3 byte-range locks of the
# Linux 6.12 client (lockd, NLM 4, with rpc.statd: NSM) against
# nfsd-uring, in qemu (TCG). Runs alone as e2e/kernel/e2e-nlm.sh or
# `make e2e-nlm`. One guest boot (guest-nlm.sh, the guest's init):
#
#   1. the guest mounts the export with vers=3 and locking (mount.nfs, no
#      nolock; MOUNT through mountport=) and with vers=4.2; a v3 lock and a
#      v4.2 lock on the same range conflict both ways (F_SETLK: EAGAIN),
#      and are granted once the holder unlocked; a blocking v3 lock
#      (F_SETLKW) behind a v4.2 holder is granted after the unlock;
#   2. restart: a guest process holds a v3 lock; the host kills the server
#      with SIGKILL and starts it again on the same port and --state-dir;
#      the server sends SM_NOTIFY to the guest's statd, the guest's lockd
#      reclaims the lock in the grace period; after it a v4.2 F_SETLK is
#      still refused, the holder's unlock works, then the lock is free.
#
# Networking (qemu user net, restrict=off, see below): the guest reaches the server as
# 10.0.2.100:2049 (guestfwd -> nc 127.0.0.1 PORT: NFS, MOUNT and NLM) and
# that address's rpcbind as 10.0.2.100:111 (guestfwd -> nc to nlmpmap, a
# private portmapper answering GETPORT: NLM 4 over TCP is on 2049; the
# host's rpcbind is shared by every process here, and need not run). The
# server sees the guest at 127.0.0.1 (the nc relays), so it asks
# 127.0.0.1:RPCB (--nsm-rpcbind-port; hostfwd udp to the guest's
# rpcbind on 111) for the guest's statd and sends SM_NOTIFY to
# 127.0.0.1:SP (hostfwd udp to the guest's statd, which runs with -p SP).
# The server's name in SM_NOTIFY (--nsm-name) is 10.0.2.100, the name the
# guest mounted, so the guest's statd matches it.
#
# The verdict is plain shell: every step's "NLM STEP ok" record, no fail
# or ERR record, DONE, the server log's "nsm: host notified of the
# restart", and the server alive at the end.
#
# Environment: E2E_NLM_BIN (server binary; built if unset), ENGINE,
# E2E_NLM_RESTRICT (qemu user net restrict=, default off: see netdev),
# E2E_SERVER_ARGS, E2E_WORK, E2E_NLM_TIMEOUT (default 600), E2E_NLM_GRACE
# (server --grace, default 20), E2E_MEM, E2E_SMP. Logs in .work/nlm/.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=lib.sh
. e2e/kernel/lib.sh

T0=$SECONDS
ENGINE=${ENGINE:-portable}
TIMEOUT=${E2E_NLM_TIMEOUT:-600}
GRACE=${E2E_NLM_GRACE:-20}
WORK=${E2E_WORK:-$E2E_KDIR/.work}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
NW=$WORK/nlm
SLOG=$NW/server.log
HLOG=$NW/host.log
RESULTS=$NW/results.txt
CONSOLE=$NW/console.log
rm -rf "$NW"
mkdir -p "$NW/export" "$NW/state"
: >"$HLOG"
: >"$RESULTS"
log() { e2e_hlog "$@"; }

BIN=$(e2e_server_bin "${E2E_NLM_BIN:-}" "$NW/nfsd-uring")
help=$("$BIN" --help 2>&1 || true)
[[ $help == *-nsm-rpcbind-port* ]] || e2e_die "$BIN has no --nsm-rpcbind-port"
go build -o "$NW/nlmpmap" ./e2e/kernel/nlmpmap || e2e_die "go build e2e/kernel/nlmpmap failed"

e2e_host_deps
# rpcbind, rpcinfo, rpc.statd and mount.nfs for the guest come from the
# host's packages (with their shared libraries).
e2e_need_pkgs rpcbind nfs-common
e2e_kernel
log "kernel $E2E_KVER"

# The initramfs: lib.sh's (busybox, fshelper, modules: nfsv3 pulls in
# lockd, grace, nfs, sunrpc) plus a second archive with the NLM init and
# the user space; the kernel unpacks both (rdinit=/nlm-init picks ours).
# shellcheck disable=SC2034
E2E_MODULES=(virtio_net nfsv4 nfsv3)
INITRD=$NW/initramfs.cpio.gz
e2e_initramfs "$NW/base.cpio.gz"
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/e2e-nlm.XXXXXX")
chmod 755 "$STAGE"
mkdir -p "$STAGE"/{etc,usr/sbin,sbin,lib64,run/rpcbind,var/lib/nfs/sm,var/lib/nfs/sm.bak}
cp e2e/kernel/guest-nlm.sh "$STAGE/nlm-init"
chmod 755 "$STAGE/nlm-init"
# Packages rpcbind and nfs-common.
for b in /usr/sbin/rpcbind /usr/sbin/rpcinfo /usr/sbin/rpc.statd /sbin/mount.nfs; do
	e2e_stage_bin "$STAGE" "$b"
done
e2e_stage_netdb "$STAGE"
cat >"$STAGE/etc/passwd" <<'EOF'
root:x:0:0:root:/:/bin/sh
_rpc:x:100:65534::/run/rpcbind:/bin/false
statd:x:101:65534::/var/lib/nfs:/bin/false
nobody:x:65534:65534:nobody:/:/bin/false
EOF
printf 'root:x:0:\nnogroup:x:65534:\n' >"$STAGE/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files\n' >"$STAGE/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n10.0.2.15 nlmguest\n' >"$STAGE/etc/hosts"
(cd "$STAGE" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0) | gzip -1 >"$NW/nlm.cpio.gz" ||
	e2e_die "initramfs (NLM part) build failed"
rm -rf "$STAGE"
cat "$NW/base.cpio.gz" "$NW/nlm.cpio.gz" >"$INITRD"
log "initramfs $(du -h "$INITRD" | cut -f1)"

# free_udp: a port for a UDP hostfwd on 127.0.0.1 that no socket uses,
# below the ephemeral range (so no outgoing connection takes it meanwhile:
# qemu fails to start when a hostfwd port is taken).
free_udp() {
	local lo p i
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range
	((lo > 12000)) || lo=32768
	for ((i = 0; i < 500; i++)); do
		p=$((10000 + RANDOM % (lo - 11000)))
		ss -Hanu "sport = :$p" 2>/dev/null | grep -q . && continue
		ss -Hant "sport = :$p" 2>/dev/null | grep -q . && continue
		echo "$p"
		return 0
	done
	e2e_die "no free UDP port"
}
RPCB=$(free_udp)
SP=$(free_udp)
while [[ $SP == "$RPCB" ]]; do SP=$(free_udp); done

# The private portmapper: NLM 4, NFS 3 and MOUNT 3 over TCP at the
# guest's 2049.
"$NW/nlmpmap" -listen 127.0.0.1:0 -map 100021:4:6=2049 -map 100003:3:6=2049 -map 100005:3:6=2049 >"$NW/nlmpmap.out" 2>"$NW/nlmpmap.log" &
PMPID=$!
for _ in $(seq 1 100); do
	grep -q '^listening' "$NW/nlmpmap.out" 2>/dev/null && break
	sleep 0.1
done
PMAP=$(awk '/^listening/{n=split($2,a,":"); print a[n]}' "$NW/nlmpmap.out")
[[ -n $PMAP ]] || e2e_die "nlmpmap did not start: $(cat "$NW/nlmpmap.log")"

# shellcheck disable=SC2206
ARGS=(--export "$NW/export" --engine "$ENGINE" --state-dir "$NW/state" --lease-time 15 --grace "$GRACE"
	--delegations=false --rpcbind=false --nsm-name 10.0.2.100 --nsm-rpcbind-port "$RPCB" ${E2E_SERVER_ARGS:-})
e2e_start_server "$BIN" "$SLOG" "${ARGS[@]}"
PORT=$E2E_PORT
echo "$E2E_SPID" >"$NW/server.pid"
disown "$E2E_SPID" # killed on purpose: no "Killed" job message
E2E_SPID=
log "server on 127.0.0.1:$PORT; portmapper 127.0.0.1:$PMAP; guest rpcbind at 127.0.0.1:$RPCB, statd at 127.0.0.1:$SP"

# restart_server: SIGKILL, start again on the same port and state dir,
# wait for the SM_NOTIFY to the guest, then for the grace period's end,
# and drop the marker the guest waits for.
restart_server() {
	local t i
	# (SIGKILL writes nothing: the file now is what the restart reads.)
	log "killing the server; hosts file: $(tr '\n' ' ' <"$NW/state/nlm-hosts" 2>/dev/null)"
	t=$SECONDS
	e2e_kill_restart "$NW/server.pid" "$SLOG" "$BIN" "$PORT" "${ARGS[@]}" ||
		log "the restarted server does not listen on $PORT"
	log "server restarted (pid $(cat "$NW/server.pid"))"
	for ((i = 0; i < 120; i++)); do
		grep -q 'nsm: host notified of the restart' "$SLOG" && break
		sleep 0.5
	done
	log "after $((SECONDS - t))s: $(grep -E 'nsm: |grace period' "$SLOG" | tail -n 4 | tr '\n' ' ')"
	while ((SECONDS - t < GRACE + 3)); do sleep 0.5; done
	: >"$NW/export/nlm/go-restart"
	log "grace period over ($((SECONDS - t))s after the restart): marker nlm/go-restart written"
}
watch() {
	until tr -d '\r' 2>/dev/null <"$RESULTS" | grep -qxF HOLDING; do sleep 0.2; done
	restart_server
}
stop_all() {
	[[ -z ${WPID:-} ]] || kill "$WPID" 2>/dev/null || true
	local pid
	pid=$(cat "$NW/server.pid" 2>/dev/null || true)
	[[ -z $pid ]] || kill -KILL "$pid" 2>/dev/null || true
	kill "$PMPID" 2>/dev/null || true
}
trap stop_all EXIT
watch &
WPID=$!

# A capture of the NFS, NLM and NSM traffic on lo, for post-mortems.
PCAP=$NW/nlm.pcap
e2e_pcap "$PCAP" 512 "port $PORT or port $PMAP or port $RPCB or port $SP"

# restrict=off (E2E_NLM_RESTRICT=on to see why): in restricted mode
# libslirp's udp_input drops every UDP datagram the guest sends, before
# it looks for a socket (only DHCP and TFTP to the host address pass), so
# the guest's rpcbind and statd cannot answer through a UDP hostfwd: the
# server's GETPORT for statd goes unanswered and no SM_NOTIFY is sent.
# The guest still reaches the host only as 10.0.2.100 (guestfwd) and sends
# nothing else; the restart step's reclaim needs the replies.
netdev="user,id=n0,restrict=${E2E_NLM_RESTRICT:-off},net=10.0.2.0/24"
netdev+=",guestfwd=tcp:10.0.2.100:2049-cmd:nc 127.0.0.1 $PORT"
netdev+=",guestfwd=tcp:10.0.2.100:111-cmd:nc 127.0.0.1 $PMAP"
# The server asks rpcbind and sends SM_NOTIFY over UDP only.
netdev+=",hostfwd=udp:127.0.0.1:$RPCB-:111,hostfwd=udp:127.0.0.1:$SP-:$SP"
e2e_qemu "$netdev" "rdinit=/nlm-init e2e_statd=$SP e2e_deadline=$((TIMEOUT - 20))" "$RESULTS" "$CONSOLE" "$NW/qemu.pid"
kill "$WPID" 2>/dev/null || true
wait "$WPID" 2>/dev/null || true
WPID=
if [[ -n $TPID ]]; then
	kill -INT "$TPID" 2>/dev/null || true
	wait "$TPID" 2>/dev/null || true
fi
log "qemu exited rc=$qrc after ${elapsed}s"

# The verdict.
fails=()
rec=$(tr -d '\r' <"$RESULTS")
for step in mount3 mount4 v3-then-v4 v4-then-v3 v3-v3 v3-wait remount4 restart; do
	grep -qxF "NLM $step ok" <<<"$rec" || fails+=("step $step: no 'NLM $step ok' record")
done
while IFS= read -r l; do fails+=("guest: $l"); done < <(grep -E '^(NLM [^ ]+ fail|ERR )' <<<"$rec" || true)
grep -qxF DONE <<<"$rec" || fails+=("the guest did not finish (no DONE; qemu rc=$qrc after ${elapsed}s)")
grep -q 'nsm: host notified of the restart' "$SLOG" || fails+=("the restarted server did not notify the guest's statd (no 'nsm: host notified of the restart' in $SLOG)")
grep -q 'GETPORT prog 100021 vers 4 proto 6 -> 2049' "$NW/nlmpmap.log" || fails+=("the guest's lockd never asked the portmapper for NLM over TCP")
# The reclaim on the wire: an NLM LOCK with reclaim=true (needs tshark).
if [[ -s $PCAP ]] && command -v tshark >/dev/null; then
	n=$(tshark -r "$PCAP" -d "tcp.port==$PORT,rpc" -Y 'nlm.reclaim == 1' 2>/dev/null | wc -l)
	log "capture: $n NLM LOCK calls with reclaim=true"
	((n > 0)) || fails+=("no NLM LOCK with reclaim=true in $PCAP: the guest's lockd did not reclaim")
else
	log "tshark or the capture missing: the reclaim on the wire is not checked"
fi
pid=$(cat "$NW/server.pid")
kill -0 "$pid" 2>/dev/null || fails+=("the (restarted) server is not running at the end")
kill -TERM "$pid" 2>/dev/null || true
log "portmapper: $(grep -c GETPORT "$NW/nlmpmap.log" || true) GETPORT calls"
if ((${#fails[@]})); then
	{
		echo
		echo "================ e2e (kernel client) NLM phase FAILED ================"
		printf '  - %s\n' "${fails[@]}"
		echo "  logs: $NW (host.log, server.log, console.log, results.txt, nlmpmap.log, nlm.pcap)"
		echo "======================================================================"
	} >&2
	grep -E 'level=(WARN|ERROR)' "$SLOG" | tail -n 30 >&2 || true
	exit 1
fi
echo "================ e2e (kernel client) PASSED: NLM phase (NFSv3 locks with lockd + statd: v3/v4.2 conflicts both ways, a v3 lock reclaimed after SM_NOTIFY across a server kill -9) in $((SECONDS - T0))s (guest ${elapsed}s) ================"
