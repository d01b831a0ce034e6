#!/bin/busybox sh
# /nlm-init: the init (kernel command line rdinit=/nlm-init) of the kernel
# e2e's NLM phase (the host side is e2e-nlm.sh). NFSv3 byte-range locks
# through the kernel's lockd (NLM 4) and the guest's rpc.statd (NSM), and
# their conflicts with NFSv4.2 locks on the same server.
#
# The guest runs rpcbind and rpc.statd (from the host's Debian packages,
# copied in with their libraries) and loads lockd with fixed ports; the
# server is 10.0.2.100: port 2049 (NFS, MOUNT, NLM: one guestfwd rule to
# the server) and 111 (a guestfwd rule to e2e/kernel/nlmpmap, which tells
# lockd that NLM is on 2049). The server reaches the guest's rpcbind and
# statd through hostfwd rules (127.0.0.1:HP -> guest 111, 127.0.0.1:SP ->
# guest SP, UDP) for SM_NOTIFY after its restart.
#
# Steps (records on ttyS1: NLM STEP ok | NLM STEP fail WHY; HOLDING; DONE):
#   mount3      mount.nfs vers=3 with locking (no nolock), MOUNT through
#               mountport=2049; mount4      vers=4.2 of the same export
#   v3-then-v4  a process holds a write lock on [0,100) through the v3
#               mount; another's F_SETLK on the same file through the v4.2
#               mount is refused (EAGAIN), and granted once the holder
#               unlocked
#   v4-then-v3  the same the other way round
#   v3-v3       a second process's v3 F_SETLK is refused while the first
#               holds the lock
#   v3-wait     a v3 F_SETLKW behind a v4.2 holder waits and is granted
#               after the unlock (see wait_step)
#   restart     a v3 lock is held; HOLDING: the host kills the server with
#               SIGKILL and starts it again on the same state directory, it
#               sends SM_NOTIFY to this statd, lockd reclaims in the grace
#               period; the host drops nlm/go-restart once the grace period
#               is over. Then a v4.2 F_SETLK is still refused (the lock was
#               reclaimed), the holder's unlock works, and a v4.2 F_SETLK
#               is granted.
. /guest-lib.sh
say() { echo "E2E-NLM: $*"; }
guest_boot 64m
mkdir -p /run/rpcbind /var/lib/nfs/sm /var/lib/nfs/sm.bak
SERVER=10.0.2.100
ok() { res "NLM $1 ok"; say "$1: ok"; }
bad() {
	res "NLM $1 fail $2"
	say "$1: FAILED: $2"
}

DEADLINE=400
STATD_PORT=662
LOCKD_PORT=4045
for kv in $(cat /proc/cmdline); do
	case "$kv" in
	e2e_deadline=*) DEADLINE=${kv#e2e_deadline=} ;;
	e2e_statd=*) STATD_PORT=${kv#e2e_statd=} ;;
	e2e_lockd=*) LOCKD_PORT=${kv#e2e_lockd=} ;;
	esac
done
say "guest up: $(uname -r) deadline=${DEADLINE}s statd port $STATD_PORT lockd port $LOCKD_PORT"
guest_watchdog "$DEADLINE"
module_args() {
	case $1 in
	lockd.ko) echo "nlm_tcpport=$LOCKD_PORT nlm_udpport=$LOCKD_PORT" ;;
	esac
}
guest_modules /modules
say "modules loaded: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
guest_net nlmguest

# rpcbind, then statd (no sm-notify: this guest never rebooted).
rpcbind -f >/tmp/rpcbind.log 2>&1 &
i=0
while ! rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && [ $i -lt 50 ]; do
	sleep 0.2
	i=$((i + 1))
done
rpc.statd -d --no-notify -F -p "$STATD_PORT" -o $((STATD_PORT + 1)) >/tmp/statd.log 2>&1 &
i=0
while ! rpcinfo -p 127.0.0.1 2>/dev/null | grep -q status && [ $i -lt 50 ]; do
	sleep 0.2
	i=$((i + 1))
done
say "rpcbind + statd: $(rpcinfo -p 127.0.0.1 2>&1 | tr '\n' ';')"
rpcinfo -p 127.0.0.1 2>/dev/null | grep -q status || {
	bad setup "rpc.statd is not registered: $(cat /tmp/rpcbind.log /tmp/statd.log | tr '\n' ' ')"
	finish
}
dmesg -c >/dev/null

M3=/mnt/v3
M4=/mnt/v4
mkdir -p $M3 $M4
o3="vers=3,proto=tcp,port=2049,mountport=2049,mountproto=tcp,addr=$SERVER,sec=sys,timeo=100,retrans=3"
say "mount.nfs $SERVER:/ $M3 -o $o3"
if out=$(timeout 90 mount.nfs "$SERVER:/" $M3 -o "$o3" 2>&1); then
	ok mount3
	say "mounted: $(grep " $M3 " /proc/mounts)"
else
	bad mount3 "$(echo "$out" | tr '\n' ' ')"
	dmesg | tail -n 50
	finish
fi
o4="vers=4.2,addr=$SERVER,clientaddr=$GUEST,port=2049,proto=tcp,sec=sys,timeo=100,retrans=3"
mount4() {
	if out=$(timeout 90 mount -t nfs4 -o "$o4" "$SERVER:/" $M4 2>&1); then
		ok "$1"
	else
		bad "$1" "$(echo "$out" | tr '\n' ' ')"
		return 1
	fi
}
mount4 mount4 || finish
mkdir -p $M3/nlm || bad setup "mkdir $M3/nlm"
for f in a b c d r; do echo "lock file $f" >$M3/nlm/$f.dat; done
sync

# hold STEP MNT FILE: start a holder of [0,100) on MNT/nlm/FILE; sets HP.
hold() {
	rm -f "/tmp/held-$1" "/tmp/release-$1"
	fshelper holdlock "$2/nlm/$3" "/tmp/held-$1" "/tmp/release-$1" >"/tmp/holder-$1.log" 2>&1 &
	HP=$!
	i=0
	while [ ! -e "/tmp/held-$1" ] && [ $i -lt 600 ]; do
		kill -0 $HP 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	if [ ! -e "/tmp/held-$1" ]; then
		bad "$1" "the holder did not get its lock through $2: $(cat "/tmp/holder-$1.log")"
		kill $HP 2>/dev/null
		return 1
	fi
	say "$1: lock held through $2 ($(now)s)"
}
# release STEP: the holder unlocks and exits 0.
release() {
	touch "/tmp/release-$1"
	wait $HP
	hrc=$?
	[ $hrc = 0 ] || { bad "$1" "the holder's unlock failed: rc=$hrc $(cat "/tmp/holder-$1.log")"; return 1; }
}
# try STEP MNT FILE WANT(0 granted / 3 refused) WHAT
try() {
	out=$(timeout 120 fshelper trylock "$2/nlm/$3" 2>&1)
	rc=$?
	say "$1: F_SETLK through $2: rc=$rc $out ($(now)s)"
	[ "$rc" = "$4" ] || { bad "$1" "$5: F_SETLK through $2 rc=$rc $out"; return 1; }
}

# cross STEP HOLDMNT TRYMNT FILE
cross() {
	hold "$1" "$2" "$4" || return
	e=
	try "$1" "$3" "$4" 3 "while the lock is held (want refused: EAGAIN)" || e=1
	release "$1" || e=1
	try "$1" "$3" "$4" 0 "after the holder unlocked (want granted)" || e=1
	[ -n "$e" ] || ok "$1"
}
cross v3-then-v4 $M3 $M4 a.dat
cross v4-then-v3 $M4 $M3 b.dat
cross v3-v3 $M3 $M3 c.dat

# v3-wait: a blocking v3 lock (F_SETLKW) behind a v4.2 holder waits, and
# gets the lock once the holder unlocked: the server answers LCK_BLOCKED,
# queues the waiter and grants it at the unlock. Its NLM GRANTED callback
# cannot reach this lockd (no forward to it; and Linux's nlmclnt_grant
# takes a GRANTED only from the server's own address, while anything the
# host sends through qemu comes from 10.0.2.2), so the waiter learns of
# the grant when lockd re-sends its blocking LOCK (every 30 s,
# NLMCLNT_POLL_TIMEOUT): the server answers LCK_GRANTED.
wait_step() {
	hold v3-wait $M4 d.dat || return
	fshelper lockchild $M3/nlm/d.dat wait >/tmp/waiter.log 2>&1 &
	wp=$!
	sleep 3
	if ! kill -0 $wp 2>/dev/null; then
		bad v3-wait "the blocking v3 lock did not wait for the v4.2 holder: $(cat /tmp/waiter.log)"
		release v3-wait
		return
	fi
	t0=$(now)
	release v3-wait || return
	i=0
	while kill -0 $wp 2>/dev/null && [ $i -lt 900 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 $wp 2>/dev/null; then
		bad v3-wait "the blocking v3 lock still waits 90 s after the holder unlocked"
		kill $wp
		return
	fi
	wait $wp
	wrc=$?
	say "v3-wait: the waiter got the lock $(awk -v a="$t0" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}')s after the unlock (rc=$wrc)"
	[ $wrc = 0 ] || { bad v3-wait "the blocking v3 lock failed: $(cat /tmp/waiter.log)"; return; }
	ok v3-wait
}
wait_step
kmsg=$(dmesg -c)
[ -z "$kmsg" ] || { say "---- guest kernel messages (conflicts) ----"; echo "$kmsg" | tail -n 40; }

# The restart: the v4.2 mount goes first (nothing of it must survive).
umount $M4 || umount -l $M4
if hold restart $M3 r.dat; then
	say "restart: lock held; statd knows: $(ls /var/lib/nfs/sm 2>&1 | tr '\n' ' ')"
	res HOLDING
	i=0
	while [ ! -e $M3/nlm/go-restart ] && [ $i -lt 240 ]; do
		sleep 1
		echo 2 >/proc/sys/vm/drop_caches # dentries and inodes: fresh LOOKUPs (1..4 only: 6 was refused)
		ls $M3/nlm >/dev/null 2>&1
		i=$((i + 1))
	done
	say "restart: statd log: $(tr '\n' ' ' </tmp/statd.log)"
	kmsg=$(dmesg -c)
	[ -z "$kmsg" ] || { say "---- guest kernel messages (restart) ----"; echo "$kmsg" | tail -n 40; }
	if [ ! -e $M3/nlm/go-restart ]; then
		bad restart "no go-restart marker from the host after 240 s"
		touch /tmp/release-restart
	else
		say "restart: the host says the server restarted and its grace period is over ($(now)s)"
		e=
		mount4 remount4 || e=1
		try restart $M4 r.dat 3 "after the restart and the grace period, through v4.2 (want refused: the v3 lock must have been reclaimed)" || e=1
		try restart $M3 r.dat 3 "after the restart, another v3 process (want refused)" || e=1
		release restart || e=1
		try restart $M4 r.dat 0 "after the holder unlocked (want granted)" || e=1
		[ -n "$e" ] || ok restart
		umount $M4 || umount -l $M4
	fi
fi
kmsg=$(dmesg -c)
[ -z "$kmsg" ] || { say "---- guest kernel messages (end) ----"; echo "$kmsg" | tail -n 40; }
timeout 60 umount $M3 || umount -l $M3
finish
