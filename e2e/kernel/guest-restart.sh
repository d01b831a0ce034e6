# shellcheck shell=sh
# The restart phase in the guest (sourced by /init when e2e_mode=restart;
# the host side is e2e-restart.sh). Per NFS version: a process holds a
# POSIX write lock while the host kills the server with SIGKILL and starts
# it again on the same state directory. The client must reclaim the lock in
# the server's grace period: afterwards another process's conflicting lock
# is still refused, the holder's unlock works, and then the lock is free.
#
# Records (ttyS1): HOLDING V (host: kill and restart the server now),
# RESTART V ok, ERR v<V> restart: <why>.

restart_fail() {
	restart_bad=1
	say "restart v$1 FAILED: $2"
	res "ERR v$1 restart: $2"
}

# restart_one V
restart_one() {
	v=$1
	restart_bad=
	mnt=/mnt/r$v
	f=$mnt/lock-v$v.dat
	mkdir -p "$mnt"
	opts="vers=$v,addr=$SERVER,clientaddr=$GUEST,port=2049,proto=tcp,sec=sys,timeo=100,retrans=3"
	say "=== restart v$v: mount -t nfs4 -o $opts $SERVER:/ $mnt"
	if ! out=$(timeout 60 mount -t nfs4 -o "$opts" "$SERVER:/" "$mnt" 2>&1); then
		restart_fail "$v" "mount failed: $out"
		return
	fi
	echo "lock file v$v" >"$f"
	rm -f "/tmp/held-$v" "/tmp/release-$v"
	fshelper holdlock "$f" "/tmp/held-$v" "/tmp/release-$v" >"/tmp/holder-$v.log" 2>&1 &
	hp=$!
	i=0
	while [ ! -e "/tmp/held-$v" ] && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ ! -e "/tmp/held-$v" ]; then
		restart_fail "$v" "the holder did not get its lock: $(cat "/tmp/holder-$v.log")"
		kill "$hp" 2>/dev/null
		umount -l "$mnt"
		return
	fi
	out=$(timeout 60 fshelper trylock "$f" 2>&1)
	rc=$?
	if [ $rc != 3 ]; then
		restart_fail "$v" "before the restart, another process's lock: rc=$rc $out (want refused)"
	fi
	say "restart v$v: lock held; asking the host to kill -9 and restart the server"
	res "HOLDING $v"
	i=0
	while [ ! -e "$mnt/restarted-v$v" ] && [ $i -lt 120 ]; do
		sleep 1
		echo 2 >/proc/sys/vm/drop_caches
		i=$((i + 1))
	done
	if [ ! -e "$mnt/restarted-v$v" ]; then
		restart_fail "$v" "no restarted-v$v marker from the host after 120 s"
		touch "/tmp/release-$v"
		umount -l "$mnt"
		return
	fi
	say "restart v$v: the server was restarted ($(cut -d' ' -f1 /proc/uptime)s)"
	# Blocks while the client recovers and through the grace period.
	out=$(timeout 120 fshelper trylock "$f" 2>&1)
	rc=$?
	say "restart v$v: another process's lock after the restart: rc=$rc $out ($(cut -d' ' -f1 /proc/uptime)s)"
	if [ $rc != 3 ]; then
		restart_fail "$v" "after the restart, another process's conflicting lock: rc=$rc $out (want refused: the holder's lock was not reclaimed)"
	fi
	touch "/tmp/release-$v"
	wait "$hp"
	hrc=$?
	if [ $hrc != 0 ]; then
		restart_fail "$v" "the holder's unlock after the restart failed: rc=$hrc $(cat "/tmp/holder-$v.log")"
	fi
	out=$(timeout 60 fshelper trylock "$f" 2>&1)
	rc=$?
	if [ $rc != 0 ]; then
		restart_fail "$v" "after the holder unlocked, another process's lock: rc=$rc $out (want granted)"
	fi
	[ -n "$restart_bad" ] || res "RESTART $v ok"
	kmsg=$(dmesg -c)
	[ -z "$kmsg" ] || { say "---- guest kernel messages (restart v$v) ----"; echo "$kmsg" | tail -n 50; }
	if ! out=$(timeout 60 umount "$mnt" 2>&1); then
		restart_fail "$v" "umount failed: $out"
		umount -l "$mnt" 2>/dev/null
	fi
}

restart_main() {
	for v in $VERS; do
		restart_one "$v"
	done
}
