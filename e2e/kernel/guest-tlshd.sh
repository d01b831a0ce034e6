#!/bin/busybox sh
# /tlshd-init: the init (kernel command line rdinit=/tlshd-init) of the
# kernel e2e's TLS phase (the host side is e2e-tlshd.sh): the Linux NFS
# client mounts nfsd-uring over RPC-with-TLS (RFC 9289) as users do. The
# kernel sends the AUTH_TLS probe, then hands the socket to tlshd
# (ktls-utils, built from e2e/tlshd/) over the "handshake" netlink family;
# tlshd does the TLS 1.3 handshake with gnutls (the CA in /etc/tlshd/ as its
# trust store, the server's name nfs-server.test checked against the
# certificate) and programs the keys into kTLS (the tls module); the
# kernel's RPC records then go through kTLS.
#
# The server is nfs-server.test = 10.0.2.100 (/etc/hosts; a guestfwd rule
# to nfsd-uring on the host). Exports (e2e_tls=PATH, e2e_mtls=PATH on the
# command line): PATH/tls with xprtsec=tls:mtls, PATH/mtls with
# xprtsec=mtls. /data.bin (host-made, known bytes) is what gets written.
#
# Steps (records on ttyS1: TLSHD STEP ok | TLSHD STEP fail WHY; DONE):
#   setup        tls module loaded, tlshd running (netlink family bound)
#   plain-refused  mount vers=4.2 (xprtsec=none) of the tls export fails
#   mount-tls    mount.nfs vers=4.2,xprtsec=tls of the tls export
#   write-tls    cp /data.bin, sync, drop caches, read back byte-exact
#   reconnect-tls  (e2e_restart=1) the host kills and restarts its server
#                under the mount; the file read back, a second one written
#   umount-tls
#   tls-on-mtls-refused  xprtsec=tls (no client certificate) of the mtls
#                export fails
#   mount-mtls   xprtsec=mtls,nconnect=2 (tlshd presents the client
#                certificate; two TLS connections)
#   write-mtls   as write-tls, into the mtls export
#   umount-mtls
#   local-server, mount-local, write-local, local-ktls, reconnect-local,
#   local-ktls-again, umount-local
#                (e2e_local=ENGINE): nfsd-uring in this guest on
#                127.0.0.1:2049 (nfs-local.test), xprtsec=tls, so kTLS on
#                both sides; its metrics must count a kTLS connection; then
#                it is killed with SIGKILL and started again on the same
#                state: the client reconnects (a new probe and handshake),
#                reads the file again and writes another
. /guest-lib.sh
say() { echo "E2E-TLSHD: $*"; }
guest_boot 64m
mkdir -p /var/lib/nfs
SERVER=nfs-server.test
ok() {
	res "TLSHD $1 ok"
	say "$1: ok"
}
bad() {
	res "TLSHD $1 fail $2"
	say "$1: FAILED: $2"
}

DEADLINE=400
TLS=
MTLS=
LOCAL=
RESTART=
for kv in $(cat /proc/cmdline); do
	case "$kv" in
	e2e_deadline=*) DEADLINE=${kv#e2e_deadline=} ;;
	e2e_tls=*) TLS=${kv#e2e_tls=} ;;
	e2e_mtls=*) MTLS=${kv#e2e_mtls=} ;;
	e2e_local=*) LOCAL=${kv#e2e_local=} ;;
	e2e_restart=*) RESTART=${kv#e2e_restart=} ;;
	esac
done
say "guest up: $(uname -r) deadline=${DEADLINE}s tls export $TLS mtls export $MTLS"
guest_watchdog "$DEADLINE" cat /tmp/tlshd.log

# The NFS modules (lib.sh's /modules), then tls and the AEADs its records
# need (/modules-tls).
guest_modules /modules 'tls*'
guest_modules /modules-tls 'tls*'
say "modules loaded: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
guest_net tlsguest
say "server: $(grep nfs-server /etc/hosts)"
say "clock: $(date -u)"

# tlshd: -s logs to stderr too (no syslogd here).
tlshd -s -c /etc/tlshd.conf >/tmp/tlshd.log 2>&1 &
TLSHD=$!
sleep 1
if kill -0 $TLSHD 2>/dev/null && grep -q '^tls ' /proc/modules; then
	ok setup
	say "tlshd pid $TLSHD: $(cat /tmp/tlshd.log | tr '\n' ' ')"
else
	bad setup "tlshd not running or no tls module: $(cat /tmp/tlshd.log | tr '\n' ' ') modules: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
	finish
fi
dmesg -c >/dev/null

OPTS="vers=4.2,proto=tcp,port=2049,sec=sys,timeo=100,retrans=2"
XOPTS=
# nfsmount STEP DIR XPRTSEC PATH: mount.nfs (nfs-common's, as users run it).
nfsmount() {
	mkdir -p "$2"
	say "$1: mount.nfs $SERVER:$4 $2 -o $OPTS$XOPTS,xprtsec=$3"
	out=$(timeout 90 mount.nfs "$SERVER:$4" "$2" -o "$OPTS$XOPTS,xprtsec=$3" 2>&1)
}
# start_local ENGINE: nfsd-uring in the guest on 127.0.0.1:2049 with
# /tmp/lstate (kept across restarts: the file handle key); sets LPID.
start_local() {
	nfsd-uring --listen 127.0.0.1:2049 --exports /etc/exports.local --engine "$1" --state-dir /tmp/lstate \
		--rpcbind=false --lease-time 15 --metrics 127.0.0.1:9249 \
		--tls-cert /etc/nfsd-uring/server.pem --tls-key /etc/nfsd-uring/server.key >>/tmp/local-server.log 2>&1 &
	LPID=$!
	i=0
	while ! wget -qO- http://127.0.0.1:9249/metrics >/dev/null 2>&1 && [ $i -lt 150 ]; do
		kill -0 $LPID 2>/dev/null || break
		sleep 0.2
		i=$((i + 1))
	done
	kill -0 $LPID 2>/dev/null && wget -qO- http://127.0.0.1:9249/metrics >/dev/null 2>&1
}
# local_ktls STEP: the running local server counted a kTLS connection.
local_ktls() {
	m=$(wget -qO- http://127.0.0.1:9249/metrics 2>/dev/null | grep '^nfsd_uring_rpctls_')
	res "LOCALMETRICS $1 $(echo "$m" | tr '\n' ' ')"
	say "$1: local server metrics: $(echo "$m" | tr '\n' ' ')"
	n=$(echo "$m" | awk '$1 == "nfsd_uring_rpctls_ktls_connections_total" {print $2}')
	if [ "${n:-0}" -ge 1 ]; then
		ok "$1"
	else
		bad "$1" "the guest's server counted ${n:-no} kTLS connections: $(grep -E 'WARN|ERROR' /tmp/local-server.log | tail -n 3 | tr '\n' ' ')"
	fi
}
# local_server ENGINE: nfsd-uring in the guest (kTLS on both sides), mounted
# as nfs-local.test with xprtsec=tls; write and read back; then the server
# is killed (SIGKILL) and started again: the client reconnects (a new
# AUTH_TLS probe and tlshd handshake), recovers its state, reads the file
# again and writes another.
local_server() {
	mkdir -p /tmp/srv/local /tmp/lstate
	echo "/tmp/srv/local *(rw,insecure,no_root_squash,xprtsec=tls)" >/etc/exports.local
	if ! start_local "$1"; then
		bad local-server "the guest's nfsd-uring did not start: $(tail -n 5 /tmp/local-server.log | tr '\n' ' ')"
		return
	fi
	ok local-server
	say "local server: $(grep -E 'RPC-with-TLS offered|serving addr' /tmp/local-server.log | tr '\n' ' ')"
	SERVER=nfs-local.test
	M=/mnt/local
	if nfsmount mount-local $M tls /tmp/srv/local; then
		ok mount-local
		say "mounted: $(grep " $M " /proc/mounts)"
	else
		bad mount-local "$(echo "$out" | tr '\n' ' ')"
		SERVER=nfs-server.test
		kill $LPID
		return
	fi
	SERVER=nfs-server.test
	rw write-local $M local.bin
	local_ktls local-ktls
	cmp /data.bin /tmp/srv/local/local.bin || bad local-ktls "the server's file differs from /data.bin"
	# The reconnect.
	kill -9 $LPID
	wait $LPID 2>/dev/null
	hs=$(grep -c 'was successful' /tmp/tlshd.log)
	echo "---- killed (SIGKILL), restarting ----" >>/tmp/local-server.log
	t0=$(cut -d' ' -f1 /proc/uptime)
	if ! start_local "$1"; then
		bad reconnect-local "the guest's nfsd-uring did not restart: $(tail -n 5 /tmp/local-server.log | tr '\n' ' ')"
		umount -f $M
		return
	fi
	echo 3 >/proc/sys/vm/drop_caches
	if timeout 120 cmp /data.bin $M/local.bin && timeout 60 cp /data.bin $M/local2.bin && sync &&
		echo 3 >/proc/sys/vm/drop_caches && timeout 60 cmp /data.bin $M/local2.bin; then
		if [ "$(grep -c 'was successful' /tmp/tlshd.log)" -gt "$hs" ]; then
			ok reconnect-local
		else
			bad reconnect-local "no new TLS handshake in tlshd's log after the restart"
		fi
	else
		bad reconnect-local "read or write after the server's restart failed"
	fi
	res "SHA local2.bin $(sha256sum <$M/local2.bin | cut -d' ' -f1)"
	say "reconnect-local: $(($(grep -c 'was successful' /tmp/tlshd.log) - hs)) new handshake(s); $t0..$(cut -d' ' -f1 /proc/uptime)s; $(ls -l $M | tr '\n' ' ')"
	local_ktls local-ktls-again
	if umount $M; then ok umount-local; else bad umount-local "umount failed"; fi
	kill $LPID
}
# refused STEP XPRTSEC PATH: the mount must fail.
refused() {
	t0=$(cut -d' ' -f1 /proc/uptime)
	if nfsmount "$1" /mnt/r "$2" "$3"; then
		bad "$1" "mounted: $(grep ' /mnt/r ' /proc/mounts)"
		umount /mnt/r
	else
		ok "$1"
		say "$1: refused as it should be (after $t0..$(cut -d' ' -f1 /proc/uptime)s): $(echo "$out" | tr '\n' ' ')"
	fi
}
# rw STEP DIR NAME: write /data.bin as DIR/NAME, read it back byte-exact.
rw() {
	if ! cp /data.bin "$2/$3" || ! sync; then
		bad "$1" "cp or sync failed"
		return
	fi
	echo 3 >/proc/sys/vm/drop_caches
	if cmp /data.bin "$2/$3"; then
		ok "$1"
	else
		bad "$1" "read back differs"
	fi
	res "SHA $3 $(sha256sum <"$2/$3" | cut -d' ' -f1)"
	say "$1: $(ls -l "$2")"
}
# host_restart DIR NAME: RESTART asks the host to kill its server
# (SIGKILL) and start it again on the same port and state directory; it
# then creates DIR/restarted, which this polls for over NFS (the client
# reconnects: a new AUTH_TLS probe and tlshd handshake, the user-space TLS
# on the host's side); then DIR/NAME is read back and DIR/NAME.2 written.
host_restart() {
	hs=$(grep -c 'was successful' /tmp/tlshd.log)
	t0=$(cut -d' ' -f1 /proc/uptime)
	res RESTART
	i=0
	while [ ! -e "$1/restarted" ] && [ $i -lt 120 ]; do
		sleep 1
		echo 2 >/proc/sys/vm/drop_caches
		i=$((i + 1))
	done
	if [ ! -e "$1/restarted" ]; then
		bad reconnect-tls "no $1/restarted after ${i}s"
		return
	fi
	echo 3 >/proc/sys/vm/drop_caches
	if timeout 120 cmp /data.bin "$1/$2" && timeout 60 cp /data.bin "$1/$2.2" && sync &&
		echo 3 >/proc/sys/vm/drop_caches && timeout 60 cmp /data.bin "$1/$2.2"; then
		if [ "$(grep -c 'was successful' /tmp/tlshd.log)" -gt "$hs" ]; then
			ok reconnect-tls
		else
			bad reconnect-tls "no new TLS handshake in tlshd's log after the restart"
		fi
	else
		bad reconnect-tls "read or write after the server's restart failed"
	fi
	res "SHA $2.2 $(sha256sum <"$1/$2.2" | cut -d' ' -f1)"
	say "reconnect-tls: $(($(grep -c 'was successful' /tmp/tlshd.log) - hs)) new handshake(s); $t0..$(cut -d' ' -f1 /proc/uptime)s; $(ls -l "$1" | tr '\n' ' ')"
}
# session STEP XPRTSEC PATH NAME: mount, rw, stats, umount.
session() {
	M=/mnt/$1
	if nfsmount "mount-$1" "$M" "$2" "$3"; then
		ok "mount-$1"
		say "mounted: $(grep " $M " /proc/mounts)"
	else
		bad "mount-$1" "$(echo "$out" | tr '\n' ' ')"
		dmesg | tail -n 30
		return
	fi
	rw "write-$1" "$M" "$4"
	res "MOUNTLINE $1 $(grep " $M " /proc/mounts)"
	[ "$1" != tls ] || [ -z "$RESTART" ] || host_restart "$M" "$4"
	grep -A6 "mounted on $M with" /proc/self/mountstats | grep -E 'xprt:|sec:|opts:' | while read -r l; do say "$1 mountstats: $l"; done
	if umount "$M"; then ok "umount-$1"; else bad "umount-$1" "umount failed"; fi
}

[ -n "$TLS" ] || {
	res "ERR no e2e_tls= on the command line"
	finish
}
refused plain-refused none "$TLS"
session tls tls "$TLS" tls.bin
if [ -n "$MTLS" ]; then
	refused tls-on-mtls-refused tls "$MTLS"
	# nconnect=2: two TLS connections (two handshakes) under one mount.
	XOPTS=,nconnect=2
	session mtls mtls "$MTLS" mtls.bin
	XOPTS=
fi
[ -z "$LOCAL" ] || local_server "$LOCAL"
say "dmesg:"
dmesg | tail -n 40
say "tlshd log:"
cat /tmp/tlshd.log
res "TLSHDLOG $(grep -c 'was successful' /tmp/tlshd.log) successful handshakes"
say "local server log:"
cat /tmp/local-server.log 2>/dev/null | cut -c1-300 | tail -n 20
finish
