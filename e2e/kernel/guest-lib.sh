# guest-lib.sh: what every guest init of the kernel e2e does first (the
# main one, guest-init.sh, and the NLM, Kerberos and TLS phases' own);
# lib.sh's base initramfs holds it as /guest-lib.sh. busybox sh. The init
# defines say (console lines with its phase's prefix) before using these.

GUEST=10.0.2.15
R=/dev/ttyS1 # machine-readable records, one per line (e2e/kernel/verdict/doc.go)

res() { echo "$*" >"$R"; }
now() { cut -d' ' -f1 /proc/uptime; }

# finish records DONE and powers the guest off.
finish() {
	res DONE
	sync
	say "powering off"
	poweroff -f
	sleep 5
	echo o >/proc/sysrq-trigger
}

# guest_boot TMPSIZE: busybox's commands, /proc, /sys, /dev, and a tmpfs
# of TMPSIZE on /tmp (not the initramfs' rootfs: it supports fallocate
# punch-hole, hard links, fifos and device nodes).
guest_boot() {
	/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin
	/bin/busybox --install -s
	export PATH=/bin:/sbin:/usr/bin:/usr/sbin
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	mount -t devtmpfs devtmpfs /dev 2>/dev/null
	mkdir -p /tmp /mnt /run /var /etc
	[ -e /var/run ] || ln -s /run /var/run
	mount -t tmpfs -o size="$1" tmpfs /tmp
	ln -sf /proc/mounts /etc/mtab
}

# guest_watchdog DEADLINE [CMD...]: if the guest is still up after
# DEADLINE seconds, show why (dmesg, CMD's output, ps) before the host
# kills qemu, and power off.
guest_watchdog() {
	(
		d=$1
		shift
		sleep "$d"
		say "WATCHDOG: guest deadline ${d}s reached; dmesg follows"
		res "ERR guest watchdog fired after ${d}s"
		dmesg | tail -n 200
		"$@"
		ps
		finish
	) &
}

# guest_modules DIR [PATTERN]: insmod DIR's modules in DIR/order's order
# (there is no modprobe for the kernel to ask), with the arguments
# module_args MODULE prints when the init defines it. A module that fails
# is said; one whose name matches PATTERN (default: every one) is an ERR
# record too.
guest_modules() {
	local m out args
	for m in $(cat "$1/order"); do
		args=
		if command -v module_args >/dev/null; then
			args=$(module_args "$m")
		fi
		# shellcheck disable=SC2086
		if ! out=$(insmod "$1/$m" $args 2>&1); then
			say "insmod $m failed: $out"
			case $m in ${2:-*}) res "ERR insmod $m: $out" ;; esac
		fi
	done
}

# guest_net [HOSTNAME]: lo and the first NIC up, GUEST/24 on it, the
# default route through qemu's user network; no NIC ends the guest.
guest_net() {
	local n IF=
	[ -z "$1" ] || hostname "$1"
	for n in /sys/class/net/*; do
		n=${n##*/}
		[ "$n" = lo ] && continue
		IF=$n
		break
	done
	if [ -z "$IF" ]; then
		say "no network interface"
		res "ERR no network interface (NIC driver not loaded?)"
		dmesg | tail -n 50
		finish
	fi
	ip link set lo up
	ip link set "$IF" up
	ip addr add "$GUEST/24" dev "$IF"
	ip route add default via 10.0.2.2
	say "network: $IF $(ip -4 -o addr show dev "$IF" | awk '{print $4}')"
}
