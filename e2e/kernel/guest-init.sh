#!/bin/busybox sh
# /init of the e2e guest (runs as PID 1 in the initramfs, busybox only).
#
# Kernel command line (read from /proc/cmdline):
#   e2e_mode=probe|nfs|fs|restart|deleg|pnfs  probe: TCP round trip to 10.0.2.100:2049 only;
#                        fs: the filesystem phase (guest-fs.sh, e2e_fs=...);
#                        restart: a lock held across a server restart (guest-restart.sh);
#                        deleg: a delegation recalled for another client (guest-deleg.sh);
#                        pnfs: flexible-files layouts, stage e2e_pnfs=... (guest-pnfs.sh)
#   e2e_vers=4.2,4.1     NFS versions to mount, in order
#   e2e_deadline=SECS    guest-side watchdog (dump dmesg, power off)
#   e2e_rw=FLAGS         write checks: "off", or a comma list of the
#                        optional steps to run (punch,alloc,copy,clone,locks;
#                        "on" alone = the mandatory steps only)
#
# Human-readable output goes to the console (ttyS0). Machine-readable
# results go to ttyS1, one record per line:
#   PROBE <reply>                       probe mode
#   MOUNT <vers> ok|fail <detail>
#   M <vers> <manifest line>            same format as e2e_manifest on the host
#   STAT <vers> <OP> <ops> <errors>     per-op counters from mountstats
#   (write checks: see guest-rw.sh for WERR, RM, RW, HB, HA, HC, READY...;
#   every record, and what the host adds: e2e/kernel/verdict/doc.go)
#   ERR <text>
#   DONE
. /guest-lib.sh
say() { echo "E2E: $*"; }
guest_boot 512m # the write checks' mirror tree is in /tmp
. /guest-rw.sh

SERVER=10.0.2.100

MODE=nfs
VERS=4.2
DEADLINE=300
RW=off
for kv in $(cat /proc/cmdline); do
	case "$kv" in
	e2e_mode=*) MODE=${kv#e2e_mode=} ;;
	e2e_vers=*) VERS=$(echo "${kv#e2e_vers=}" | tr ',' ' ') ;;
	e2e_deadline=*) DEADLINE=${kv#e2e_deadline=} ;;
	e2e_rw=*) RW=${kv#e2e_rw=} ;;
	esac
done
RW_FLAGS=$RW
say "guest up: $(uname -r) mode=$MODE vers=$VERS rw=$RW deadline=${DEADLINE}s uptime=$(cut -d' ' -f1 /proc/uptime)"

guest_watchdog "$DEADLINE"
guest_modules /modules
say "modules loaded: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
guest_net
# From here on, dmesg -c shows what each step added.
dmesg -c >/dev/null

if [ "$MODE" = probe ]; then
	reply=$(echo "probe-from-guest" | timeout 20 nc "$SERVER" 2049 2>&1 | head -n1)
	say "probe reply: '$reply'"
	res "PROBE $reply"
	finish
fi

if [ "$MODE" = fs ]; then
	. /guest-fs.sh
	fs_main
	finish
fi

if [ "$MODE" = restart ]; then
	. /guest-restart.sh
	restart_main
	finish
fi
if [ "$MODE" = deleg ]; then
	. /guest-deleg.sh
	deleg_main
	finish
fi
if [ "$MODE" = pnfs ]; then
	. /guest-pnfs.sh
	pnfs_main
	finish
fi
if [ "$MODE" = exports ]; then
	. /guest-exports.sh
	ex_main
	finish
fi

# manifest DIR: same format as e2e_manifest in lib.sh.
manifest() {
	(
		cd "$1" || exit 1
		# ./rw: the write checks' area, checked separately.
		find . -mindepth 1 | grep -v -e '^\./rw$' -e '^\./rw/' | LC_ALL=C sort | while IFS= read -r p; do
			if [ -L "$p" ]; then
				echo "L $p -> $(readlink "$p")"
			elif [ -d "$p" ]; then
				echo "D $p"
			elif [ -f "$p" ]; then
				s=$(sha256sum <"$p" | cut -d' ' -f1)
				[ -n "$s" ] || s=READ-ERROR
				echo "F $p $s"
			else
				echo "O $p"
			fi
		done
	)
}

# opstats MNT: print "OP ops errors" for the mount's per-op statistics.
opstats() {
	awk -v mnt="$1" '
		$1 == "device" { inside = ($5 == mnt); next }
		inside && $1 ~ /:$/ && NF >= 9 && $2 ~ /^[0-9]+$/ {
			op = $1; sub(/:$/, "", op)
			print op, $2, (NF >= 10 ? $10 : 0)
		}' /proc/self/mountstats
}

for v in $VERS; do
	mnt=/mnt/v$v
	mkdir -p "$mnt"
	opts="vers=$v,addr=$SERVER,clientaddr=$GUEST,port=2049,proto=tcp,sec=sys,timeo=100,retrans=3"
	fstype=nfs4
	if [ "$v" = 3 ]; then
		# MOUNT on the NFS port (no portmapper in the guest's network);
		# no NLM: nolock.
		fstype=nfs
		opts="vers=3,addr=$SERVER,port=2049,mountport=2049,mountproto=tcp,nolock,proto=tcp,sec=sys,timeo=100,retrans=3"
	fi
	say "=== NFS v$v: mount -t $fstype -o $opts $SERVER:/ $mnt"
	t0=$(cut -d' ' -f1 /proc/uptime)
	if ! out=$(timeout 60 mount -t $fstype -o "$opts" "$SERVER:/" "$mnt" 2>&1); then
		say "mount v$v FAILED: $out"
		res "MOUNT $v fail $out"
		# Retry once with client debugging on, for the server authors.
		# (6.12 routes dprintk through dynamic debug: enable both.)
		mkdir -p /sys/kernel/debug
		mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
		for mod in nfs nfsv4 sunrpc; do
			echo "module $mod +p" >/sys/kernel/debug/dynamic_debug/control 2>/dev/null
		done
		echo 65535 >/proc/sys/sunrpc/nfs_debug 2>/dev/null
		echo 2 >/proc/sys/sunrpc/rpc_debug 2>/dev/null
		say "retrying mount v$v with nfs_debug on"
		timeout 30 mount -t $fstype -o "$opts" "$SERVER:/" "$mnt" >/dev/null 2>&1 && umount "$mnt"
		echo 0 >/proc/sys/sunrpc/nfs_debug 2>/dev/null
		echo 0 >/proc/sys/sunrpc/rpc_debug 2>/dev/null
		for mod in nfs nfsv4 sunrpc; do
			echo "module $mod -p" >/sys/kernel/debug/dynamic_debug/control 2>/dev/null
		done
		say "---- guest dmesg (v$v mount failure) ----"
		dmesg -c | tail -n 400
		say "---- end dmesg ----"
		continue
	fi
	say "mounted: $(grep " $mnt " /proc/mounts)"
	res "MOUNT $v ok $(grep " $mnt " /proc/mounts | awk '{print $4}')"
	say "--- ls -lR $mnt ---"
	ls -lR "$mnt"
	say "--- sha256 of every file ---"
	manifest "$mnt" >/tmp/manifest.$v 2>/tmp/manifest.err.$v
	cat /tmp/manifest.$v
	[ -s /tmp/manifest.err.$v ] && { say "manifest errors:"; cat /tmp/manifest.err.$v; res "ERR v$v walk: $(head -n3 /tmp/manifest.err.$v | tr '\n' ' ')"; }
	while IFS= read -r line; do res "M $v $line"; done </tmp/manifest.$v
	t1=$(cut -d' ' -f1 /proc/uptime)
	say "v$v walk+checksum took $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')s"
	say "--- /proc/self/mountstats (v$v) ---"
	cat /proc/self/mountstats
	opstats "$mnt" | while read -r op n e; do res "STAT $v $op $n $e"; done
	if [ "$RW" != off ]; then
		say "=== v$v: write checks in $mnt/rw/v$v (optional steps: $RW) ==="
		t0=$(cut -d' ' -f1 /proc/uptime)
		rw_workload "$v" "$mnt"
		opstats "$mnt" | while read -r op n e; do res "STAT2 $v $op $n $e"; done
		t1=$(cut -d' ' -f1 /proc/uptime)
		say "v$v write checks took $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')s"
		say "=== v$v: host-side changes while mounted ($mnt/rw/host/v$v) ==="
		rw_reverse "$v" "$mnt"
		res "RWDONE $v"
	fi
	if ! out=$(timeout 60 umount "$mnt" 2>&1); then
		say "umount v$v failed: $out"
		res "ERR umount v$v: $out"
		umount -l "$mnt" 2>/dev/null
	fi
	kmsg=$(dmesg -c)
	if [ -n "$kmsg" ]; then
		say "---- guest kernel messages during v$v ----"
		echo "$kmsg" | tail -n 100
	fi
done

finish
