#!/usr/bin/env bash
# The kernel e2e's Kerberos phase: the Linux 6.12 NFS client with
# rpc.gssd (Debian's nfs-common) mounts nfsd-uring with RPCSEC_GSS
# (sec=krb5p, krb5i, krb5), as users do. Runs alone as
# e2e/kernel/e2e-krb5.sh or `make e2e-krb5`. One guest boot
# (guest-krb5.sh, the guest's init).
#
# Host: a throw-away MIT KDC (realm NFSD-URING.TEST, krb5kdc on a private
# 127.0.0.1 port, TCP) with three principals: the server's
# nfs/nfs-server.test (keytab given to nfsd-uring with --keytab), the
# guest's machine principal nfs/nfs-client.test (a keytab copied into the
# initramfs as /etc/krb5.keytab: rpc.gssd uses it for root) and
# daemon@REALM (a ticket-granting ticket got here with kinit and copied
# into the guest, /tmp/krb5cc_1 there: rpc.gssd uses it for uid 1; the server
# maps daemon@REALM to the host's user daemon, uid 1). The server
# (--exports) exports DIR/k with sec=krb5p:krb5i:krb5 and DIR/s with
# sec=sys, both root_squash (the default): the machine credential maps to
# the anonymous ids (65534) anyway, so DIR/k/mach is owned by 65534 and
# DIR/k/user by uid 1.
#
# The server runs with --idmap-domain nfs.test, the guest's nfsidmap
# (through request-key) with Domain = nfs.test, so owners read as names
# (nobody, daemon) map to the guest's ids.
#
# Guest: the mounts and writes of guest-krb5.sh (see there). Networking:
# qemu user net (restrict=on), guestfwd 10.0.2.100:2049 -> the server,
# 10.0.2.101:88 -> the KDC.
#
# The verdict is plain shell: every step's "KRB5 STEP ok" record, no fail
# or ERR record, DONE; every keep-*.bin in the export has the bytes the
# guest wrote (sha256) and the owner the principal maps to; the capture
# of the NFS port holds RPCSEC_GSS calls (flavour 6) of each service
# (none: krb5, integrity: krb5i, privacy: krb5p) and no AUTH_SYS NFSv4
# COMPOUND beyond the refusal steps'; the refusals are the server's
# NFS4ERR_WRONGSEC; after the restart (see guest-krb5.sh) calls on the old
# contexts were denied with RPCSEC_GSS_CREDPROBLEM/CTXPROBLEM; the
# restarted server refused no GSS call (metric rpcsec_gss_refused 0) and
# is alive at the end.
#
# Environment: E2E_KRB5_RESTART (1; 0: no restart step), E2E_KRB5_SIZE
# (bytes the guest writes per step, default 384 KiB), E2E_KRB5_BIN
# (server binary; built if unset), ENGINE (portable|uring), E2E_WORK,
# E2E_KRB5_TIMEOUT (default 600),
# E2E_KRB5_STEPS (the guest's VERS:SEC mounts, comma-separated; default
# 4.2:krb5p,4.2:krb5i,4.2:krb5,4.1:krb5p,4.0:krb5i,3:krb5p,3:krb5),
# E2E_KRB5_REFUSE (the refusal steps, default sys,krb5), E2E_KRB5_DEBUG=1
# (the guest prints rpc.gssd's log, a krb5 trace and the kernel's NFS
# debug messages of the refusals), E2E_SERVER_ARGS,
# E2E_MEM, E2E_SMP. Logs in .work/krb5/. Needs root (the server acts as
# the mapped users) and the Debian packages krb5-kdc, krb5-admin-server,
# krb5-user, nfs-common, keyutils, tshark (installed when missing).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=lib.sh
. e2e/kernel/lib.sh

T0=$SECONDS
ENGINE=${ENGINE:-portable}
TIMEOUT=${E2E_KRB5_TIMEOUT:-600}
STEPS=${E2E_KRB5_STEPS:-4.2:krb5p,4.2:krb5i,4.2:krb5,4.1:krb5p,4.0:krb5i,3:krb5p,3:krb5}
REFUSE=${E2E_KRB5_REFUSE:-sys,krb5}
RESTART=${E2E_KRB5_RESTART:-1}
WORK=${E2E_WORK:-$E2E_KDIR/.work}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
KW=$WORK/krb5
SLOG=$KW/server.log
HLOG=$KW/host.log
RESULTS=$KW/results.txt
CONSOLE=$KW/console.log
K=$KW/kdc
DIR=$KW/x
REALM=NFSD-URING.TEST
[[ $(id -u) == 0 ]] || e2e_die "the Kerberos phase needs root (the server writes as the users principals map to)"
rm -rf "$KW"
mkdir -p "$K" "$DIR/k/mach" "$DIR/k/user" "$DIR/s" "$KW/state"
: >"$HLOG"
: >"$RESULTS"
log() { e2e_hlog "$@"; }

BIN=$(e2e_server_bin "${E2E_KRB5_BIN:-}" "$KW/nfsd-uring")

e2e_host_deps
# The KDC, kinit, and rpc.gssd, mount.nfs, nfsidmap (nfs-common) and
# request-key (keyutils) for the guest (with their shared libraries);
# tshark reads the capture.
e2e_need_pkgs krb5-kdc krb5-admin-server krb5-user nfs-common keyutils tshark
export PATH=$PATH:/usr/sbin:/sbin
e2e_kernel
log "kernel $E2E_KVER"
id daemon >/dev/null 2>&1 || e2e_die "no user daemon on this host (daemon@$REALM maps to it)"
DUID=$(id -u daemon)
DGID=$(id -g daemon)

# The KDC.
KPORT=$(e2e_free_port)
# shellcheck source=../../internal/krb5test/kdc.sh
. internal/krb5test/kdc.sh
kdc_create "$K" "$REALM" "$KPORT" || e2e_die "kdb5_util create failed: $(cat "$K/create.log")"
for p in nfs/nfs-server.test nfs/nfs-client.test daemon; do
	kadmin.local -r "$REALM" -q "addprinc -randkey $p" >>"$K/kadmin.log" 2>&1
done
kadmin.local -r "$REALM" -q "ktadd -k $K/server.keytab nfs/nfs-server.test" >>"$K/kadmin.log" 2>&1
kadmin.local -r "$REALM" -q "ktadd -k $K/client.keytab nfs/nfs-client.test" >>"$K/kadmin.log" 2>&1
kadmin.local -r "$REALM" -q "ktadd -k $K/daemon.keytab daemon" >>"$K/kadmin.log" 2>&1
[[ -s $K/server.keytab && -s $K/client.keytab && -s $K/daemon.keytab ]] || e2e_die "kadmin.local failed: $(cat "$K/kadmin.log")"
krb5kdc -n -r "$REALM" >"$K/krb5kdc.out" 2>&1 &
KPID=$!
for _ in $(seq 1 100); do
	ss -Hltn "sport = :$KPORT" 2>/dev/null | grep -q . && break
	sleep 0.1
done
ss -Hltn "sport = :$KPORT" 2>/dev/null | grep -q . || e2e_die "krb5kdc did not listen on 127.0.0.1:$KPORT: $(cat "$K/krb5kdc.out" "$K/kdc.log")"
# daemon's ticket-granting ticket, for the guest's uid 1.
KRB5CCNAME=FILE:$K/ccache.daemon kinit -k -t "$K/daemon.keytab" daemon >"$K/kinit.log" 2>&1 ||
	e2e_die "kinit daemon failed: $(cat "$K/kinit.log")"
log "KDC $REALM on 127.0.0.1:$KPORT (pid $KPID)"

# The exports: root_squash (default) everywhere; mach/ is for the
# anonymous ids the machine credential maps to, user/ for daemon.
chown 65534:65534 "$DIR/k/mach"
chown "$DUID:$DGID" "$DIR/k/user"
cat >"$KW/exports" <<EOT
# e2e Kerberos phase
$DIR/k  127.0.0.1(rw,insecure,sec=krb5p:krb5i:krb5)
$DIR/s  127.0.0.1(rw,insecure,sec=sys)
EOT
"$BIN" exports --check "$KW/exports" >&2 || e2e_die "exports --check refused the phase's exports file"

# The known bytes the guest writes (E2E_KRB5_SIZE, default 384 KiB).
head -c "${E2E_KRB5_SIZE:-393216}" /dev/urandom >"$KW/data.bin"
SUM=$(sha256sum <"$KW/data.bin" | cut -d' ' -f1)

# The initramfs: lib.sh's (busybox, fshelper, modules) plus a second
# archive with the Kerberos init, rpc.gssd, mount.nfs, their libraries
# and the Kerberos files; the kernel unpacks both (rdinit=/krb5-init).
# rpcsec_gss_krb5 pulls in auth_rpcgss; cts: the krb5 enctypes'
# cts(cbc(aes)) (there is no modprobe in the guest to load it on demand).
# shellcheck disable=SC2034
E2E_MODULES=(virtio_net nfsv4 nfsv3 cts rpcsec_gss_krb5)
INITRD=$KW/initramfs.cpio.gz
e2e_initramfs "$KW/base.cpio.gz"
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/e2e-krb5.XXXXXX")
chmod 755 "$STAGE"
mkdir -p "$STAGE"/{etc,usr/sbin,sbin,lib64,run,tmp,var/lib/nfs}
cp e2e/kernel/guest-krb5.sh "$STAGE/krb5-init"
chmod 755 "$STAGE/krb5-init"
# nfsidmap through request-key: the kernel's NFSv4 id mapper (owner
# strings user@domain, which the server sends Kerberos callers).
# Packages nfs-common and keyutils.
for b in /usr/sbin/rpc.gssd /sbin/mount.nfs /usr/sbin/nfsidmap /sbin/request-key; do
	e2e_stage_bin "$STAGE" "$b"
done
# libkrb5's plugins are loaded at run time, not linked: none needed here;
# libnfsidmap's nsswitch plugin is.
mkdir -p "$STAGE/usr/lib/x86_64-linux-gnu/libnfsidmap" "$STAGE/etc/request-key.d"
cp /usr/lib/x86_64-linux-gnu/libnfsidmap/nsswitch.so "$STAGE/usr/lib/x86_64-linux-gnu/libnfsidmap/" ||
	e2e_die "no libnfsidmap nsswitch.so on the host (nfs-common)"
cp /etc/request-key.conf "$STAGE/etc/" || e2e_die "no /etc/request-key.conf on the host (keyutils)"
printf 'create\tid_resolver\t*\t*\t/usr/sbin/nfsidmap -t 600 %%k %%d\n' >"$STAGE/etc/request-key.d/id_resolver.conf"
printf '[General]\nDomain = nfs.test\n[Mapping]\nNobody-User = nobody\nNobody-Group = nogroup\n' >"$STAGE/etc/idmapd.conf"
e2e_stage_netdb "$STAGE"
cat >"$STAGE/etc/passwd" <<EOF
root:x:0:0:root:/:/bin/sh
daemon:x:1:1:daemon:/:/bin/false
nobody:x:65534:65534:nobody:/:/bin/false
EOF
printf 'root:x:0:\ndaemon:x:1:\nnogroup:x:65534:\n' >"$STAGE/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files\n' >"$STAGE/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n10.0.2.15 nfs-client.test nfs-client\n10.0.2.100 nfs-server.test\n10.0.2.101 kdc.test\n' >"$STAGE/etc/hosts"
{
	krb5_conf "$REALM" 10.0.2.101:88
	cat <<CONF
[domain_realm]
	.test = $REALM
	test = $REALM
CONF
} >"$STAGE/etc/krb5.conf"
printf '[general]\npipefs-directory=/run/rpc_pipefs\n' >"$STAGE/etc/nfs.conf"
cp "$K/client.keytab" "$STAGE/etc/krb5.keytab"
chmod 600 "$STAGE/etc/krb5.keytab"
cp "$K/ccache.daemon" "$STAGE/krb5cc_1"
cp "$KW/data.bin" "$STAGE/data.bin"
chmod 644 "$STAGE/data.bin"
(cd "$STAGE" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0) | gzip -1 >"$KW/krb5.cpio.gz" ||
	e2e_die "initramfs (Kerberos part) build failed"
rm -rf "$STAGE"
cat "$KW/base.cpio.gz" "$KW/krb5.cpio.gz" >"$INITRD"
log "initramfs $(du -h "$INITRD" | cut -f1)"

MPORT=$(e2e_free_port)
# shellcheck disable=SC2206
ARGS=(--exports "$KW/exports" --engine "$ENGINE" --state-dir "$KW/state" --keytab "$K/server.keytab"
	--lease-time 15 --grace 15 --idmap-domain nfs.test --rpcbind=false --metrics "127.0.0.1:$MPORT" ${E2E_SERVER_ARGS:-})
e2e_start_server "$BIN" "$SLOG" "${ARGS[@]}"
PORT=$E2E_PORT
echo "$E2E_SPID" >"$KW/server.pid"
disown "$E2E_SPID" # killed on purpose: no "Killed" job message
E2E_SPID=
stop_all() {
	[[ -z ${WPID:-} ]] || kill "$WPID" 2>/dev/null || true
	local pid
	pid=$(cat "$KW/server.pid" 2>/dev/null || true)
	[[ -z $pid ]] || kill -TERM "$pid" 2>/dev/null || true
	kill "$KPID" 2>/dev/null || true
	[[ -z ${TPID:-} ]] || kill -INT "$TPID" 2>/dev/null || true
}
# restart_server: SIGKILL (the RPCSEC_GSS contexts die with it), start
# again on the same port and state directory, drop the marker the guest
# waits for.
restart_server() {
	local pid
	pid=$(cat "$KW/server.pid")
	e2e_kill_restart "$KW/server.pid" "$SLOG" "$BIN" "$PORT" "${ARGS[@]}" ||
		log "the restarted server does not listen on $PORT"
	: >"$DIR/k/mach/go-restart"
	chown 65534:65534 "$DIR/k/mach/go-restart"
	log "server (pid $pid) killed with SIGKILL and restarted (pid $(cat "$KW/server.pid")); marker mach/go-restart written"
}
watch() {
	until tr -d '\r' 2>/dev/null <"$RESULTS" | grep -qxF RESTART; do sleep 0.2; done
	restart_server
}
WPID=
if [[ $RESTART == 1 ]]; then
	watch &
	WPID=$!
fi
trap stop_all EXIT
log "server on 127.0.0.1:$PORT (metrics 127.0.0.1:$MPORT); KDC 127.0.0.1:$KPORT"

# The capture of the NFS port: the verdict counts RPCSEC_GSS calls in it.
PCAP=$KW/krb5.pcap
E2E_PCAP=1 e2e_pcap "$PCAP" 0 "tcp port $PORT" # the verdict needs it

netdev="user,id=n0,restrict=on,net=10.0.2.0/24"
netdev+=",guestfwd=tcp:10.0.2.100:2049-cmd:nc 127.0.0.1 $PORT"
netdev+=",guestfwd=tcp:10.0.2.101:88-cmd:nc 127.0.0.1 $KPORT"
e2e_qemu "$netdev" "rdinit=/krb5-init e2e_kexp=$DIR/k e2e_sexp=$DIR/s e2e_steps=$STEPS e2e_debug=${E2E_KRB5_DEBUG:-0} e2e_refuse=$REFUSE e2e_restart=$RESTART e2e_deadline=$((TIMEOUT - 20))" "$RESULTS" "$CONSOLE" "$KW/qemu.pid"
if [[ -n $TPID ]]; then
	sleep 1 # the last packets reach the file
	kill -INT "$TPID" 2>/dev/null || true
	wait "$TPID" 2>/dev/null || true
	TPID=
fi
[[ -z $WPID ]] || kill "$WPID" 2>/dev/null || true
WPID=
log "qemu exited rc=$qrc after ${elapsed}s"

# The verdict.
fails=()
rec=$(tr -d '\r' <"$RESULTS")
want=(user)
[[ $RESTART != 1 ]] || want+=(restart restart-mach restart-user)
[[ ,$REFUSE, != *,sys,* ]] || want+=(refuse-sys)
[[ ,$REFUSE, != *,krb5,* ]] || want+=(refuse-krb5)
for vs in ${STEPS//,/ }; do
	want+=("m-${vs/:/-}" "io-${vs/:/-}")
done
for step in "${want[@]}"; do
	grep -qxF "KRB5 $step ok" <<<"$rec" || fails+=("step $step: no 'KRB5 $step ok' record")
done
while IFS= read -r l; do fails+=("guest: $l"); done < <(grep -E '^(KRB5 [^ ]+ fail|ERR )' <<<"$rec" || true)
while IFS= read -r l; do log "guest: $l"; done < <(grep -E '^NOTE ' <<<"$rec" || true)
grep -qxF DONE <<<"$rec" || fails+=("the guest did not finish (no DONE; qemu rc=$qrc after ${elapsed}s)")
# What the guest wrote, as the server stored it: the bytes, and the owner
# its principal maps to (machine credential: the anonymous 65534; daemon:
# uid 1).
keep() { # FILE UID
	if [[ ! -f $1 ]]; then
		fails+=("$1 missing")
		return
	fi
	local s o
	s=$(sha256sum <"$1" | cut -d' ' -f1)
	o=$(stat -c %u:%g "$1")
	log "$1: sha256 $s owner $o"
	[[ $s == "$SUM" ]] || fails+=("$1: sha256 $s, want $SUM (the bytes the guest wrote)")
	[[ $o == "$2" ]] || fails+=("$1: owner $o, want $2")
}
for vs in ${STEPS//,/ }; do
	keep "$DIR/k/mach/keep-${vs/:/-}.bin" 65534:65534
done
keep "$DIR/k/user/keep-user.bin" "$DUID:$DGID"
if [[ $RESTART == 1 ]]; then
	keep "$DIR/k/mach/keep-restart.bin" 65534:65534
	keep "$DIR/k/user/keep-user-restart.bin" "$DUID:$DGID"
fi
left=$(find "$DIR" -name 'tmp-*' -o -name 'small-*')
[[ -z $left ]] || fails+=("files the guest removed or renamed are still there: $left")

# RPCSEC_GSS on the wire (needs tshark): calls with flavour 6 of each
# service (1 none: krb5, 2 integrity: krb5i, 3 privacy: krb5p).
if [[ -s $PCAP ]] && command -v tshark >/dev/null; then
	# One line per frame (its first call): flavour,gss procedure,gss service,version.
	tshark -r "$PCAP" -d "tcp.port==$PORT,rpc" -Y 'rpc.msgtyp == 0' -T fields -E separator=, -E occurrence=f \
		-e rpc.auth.flavor -e rpc.authgss.procedure -e rpc.authgss.service -e rpc.programversion 2>/dev/null |
		sort | uniq -c >"$KW/wire.txt" || true
	log "calls on the wire (frames; flavour,gss procedure,gss service,version):"
	sed 's/^/    /' "$KW/wire.txt" >&2
	# gss count WANT-PROC WANT-SERVICE ('' any)
	gss() {
		awk -v p="$1" -v s="$2" '{split($2, a, ","); if (a[1] == 6 && a[2] == p && (s == "" || a[3] == s)) n += $1} END {print n + 0}' "$KW/wire.txt"
	}
	for svc in 1 2 3; do
		n=$(gss 0 $svc)
		log "RPCSEC_GSS DATA calls with service $svc: $n"
		svcs=$(sed 's/[^:]*://' <<<"${STEPS//,/$'\n'}" | sort -u | tr '\n' ' ')
		case $svc:" $svcs" in 1:*" krb5 "* | 2:*" krb5i "* | 3:*" krb5p "*) ;; *) continue ;; esac
		((n > 0)) || fails+=("no RPCSEC_GSS DATA call with service $svc in $PCAP")
	done
	n=$(gss 1 '')
	log "RPCSEC_GSS_INIT calls: $n"
	((n > 0)) || fails+=("no RPCSEC_GSS_INIT call in $PCAP")
	# No silent fall back to AUTH_SYS: AUTH_SYS NFS calls on one
	# connection at most, the refuse-sys step's, which carries no GSS
	# DATA call but the kernel's lease operations (EXCHANGE_ID,
	# CREATE_SESSION, SEQUENCE...) with the machine credential, krb5i;
	# one more for each mount retried after rpc.gssd's legacy pipe race
	# (its lease operations fell back to AUTH_SYS, its mount failed).
	nmax=$(($(grep -c '^NOTE .*legacy krb5 pipe' <<<"$rec" || true) + 1))
	tshark -r "$PCAP" -d "tcp.port==$PORT,rpc" -Y 'rpc.msgtyp == 0 && rpc.program == 100003' -T fields -E separator=, -E occurrence=f \
		-e tcp.stream -e rpc.auth.flavor -e rpc.authgss.procedure -e rpc.authgss.service 2>/dev/null | sort | uniq -c >"$KW/streams.txt" || true
	log "NFS calls per connection (count stream,flavour,gss procedure,gss service): $(tr -s ' \n' ' ' <"$KW/streams.txt")"
	bad=$(awk '{split($2, a, ","); if (a[2] == 1) s[a[1]] += $1; if (a[2] == 6 && a[3] == 0 && a[4] != 2) g[a[1]] += $1}
		END {for (k in s) {n++; if (k in g) printf "connection %s: %d AUTH_SYS calls and %d krb5/krb5p DATA calls; ", k, s[k], g[k]}; if (n > nmax) printf "AUTH_SYS NFS calls on %d connections", n}' nmax="$nmax" "$KW/streams.txt")
	[[ -z $bad ]] || fails+=("AUTH_SYS NFS calls beside RPCSEC_GSS ones: $bad")
	# The refusals are the server's: LOOKUP of the export answers
	# NFS4ERR_WRONGSEC (then SECINFO lists what it takes, and the client,
	# told which flavour to use, gives up).
	if [[ $RESTART == 1 ]]; then
		# After the restart the old contexts' calls are denied with
		# RPCSEC_GSS_CREDPROBLEM (13) or CTXPROBLEM (14), so that the
		# client makes new ones.
		n=$(tshark -r "$PCAP" -d "tcp.port==$PORT,rpc" -Y 'rpc.replystat == 1 && (rpc.state_auth == 13 || rpc.state_auth == 14)' 2>/dev/null | wc -l)
		log "calls denied with RPCSEC_GSS_CREDPROBLEM/CTXPROBLEM (the restart): $n"
		((n > 0)) || fails+=("no call denied with RPCSEC_GSS_CREDPROBLEM or CTXPROBLEM in $PCAP after the restart")
		grep -q 'grace period ended' "$SLOG" || fails+=("the restarted server's log has no 'grace period ended'")
	fi
	n=$(tshark -r "$PCAP" -d "tcp.port==$PORT,rpc" -Y 'nfs.nfsstat4 == 10016' 2>/dev/null | wc -l)
	log "replies with NFS4ERR_WRONGSEC: $n"
	[[ $REFUSE != *,* ]] || ((n >= 2)) || fails+=("$n NFS4ERR_WRONGSEC replies in $PCAP, want one per refusal step at least")
else
	fails+=("tshark or the capture missing: RPCSEC_GSS on the wire not checked (apt-get install tshark)")
fi
# The metrics (HTTP/1.0 through bash's /dev/tcp: no curl needed).
m=$( (exec 3<>"/dev/tcp/127.0.0.1/$MPORT" && printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 && timeout 10 cat <&3) 2>/dev/null |
	tr -d '\r' | grep -E '^nfsd_uring_rpcsec_gss' || true)
log "metrics: $(tr '\n' ' ' <<<"$m")"
r=$(awk '$1 == "nfsd_uring_rpcsec_gss_refused" {print $2}' <<<"$m")
[[ $r == 0 ]] || fails+=("the server refused RPCSEC_GSS calls: rpcsec_gss_refused $r")
kill -0 "$(cat "$KW/server.pid")" 2>/dev/null || fails+=("the server is not running at the end")
if ((${#fails[@]})); then
	{
		echo
		echo "================ e2e (kernel client) Kerberos phase FAILED ================"
		printf '  - %s\n' "${fails[@]}"
		echo "  logs: $KW (host.log, server.log, console.log, results.txt, krb5.pcap, wire.txt, kdc/kdc.log)"
		echo "==========================================================================="
	} >&2
	grep -E 'level=(WARN|ERROR)' "$SLOG" | tail -n 30 >&2 || true
	exit 1
fi
what="mounts ${STEPS//,/ }; machine and user credentials"
[[ $RESTART != 1 ]] || what+="; new contexts after a server kill -9"
[[ -z $REFUSE ]] || what+="; refusals: ${REFUSE//,/ }"
echo "================ e2e (kernel client) PASSED: Kerberos phase (rpc.gssd: $what) in $((SECONDS - T0))s (guest ${elapsed}s) ================"
