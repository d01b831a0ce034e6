# shellcheck shell=sh
# The pNFS phase in the guest (sourced by /init when e2e_mode=pnfs; the host
# side is e2e-pnfs.sh). The server at 10.0.2.100 is a flexible-files
# metadata server (MDS); the data servers it names in its layouts are at
# 10.0.2.101 and 10.0.2.102 (more guestfwd rules, to an nfsd-uring and an
# NFS-Ganesha on the host). nfs_layout_flexfiles is loaded by /init.
#
# Stages (kernel command line e2e_pnfs=STAGE, one per boot):
#   write   per version V: mount the MDS, write 8 files of different sizes
#           into vV/ with dd (13 B to 8 MiB, one with a hole, one with
#           O_DIRECT), sync, drop_caches, read them back.
#   read    (after the host killed the MDS with SIGKILL and restarted it on
#           the same state directory) a new client: per version V, mount
#           and read every file of vV/ back through new layouts.
#   dsfail  against a second MDS with --mirrors 2: write 4 files, sync,
#           keep them open (their layouts held), say DSFAIL_WRITTEN V; the
#           host kills one data server (e2e_pnfs_dead=ADDR), the guest
#           makes ADDR unreachable and reads the files back (the client
#           must turn to the other mirror and report the dead one); once
#           the host drops dsdown-vV (the MDS has the server out of
#           service) close them, then write and read one more file.
#   stripe  as write, against an MDS with --stripe-unit: the 6.12 client
#           gets no striped layout and does its I/O through the MDS.
#
# Records (ttyS1):
#   PW V NAME SIZE SHA256     what the guest wrote (hashed from its tmpfs copy)
#   PR V NAME SIZE SHA256     what it read back over NFS after drop_caches
#                             (SHA256 = READ-ERROR:<errno text> if the read failed)
#   PSTAT STAGE V OP OPS ERRORS   the MDS mount's per-op counters
#   PTIME STAGE V SECONDS     how long the stage took for V
#   DSFAIL_WRITTEN V          (dsfail) host: kill the data server now
#   PNFS STAGE V ok
#   ERR v<V> pnfs-<stage>: <why>

pnfs_fail() {
	pnfs_bad=1
	say "pnfs $2 v$1 FAILED: $3"
	res "ERR v$1 pnfs-$2: $3"
}

pnfs_now() { cut -d' ' -f1 /proc/uptime; }

# pnfs_stats STAGE V MNT: the counters of the layout operations and of the
# I/O the MDS itself served, from MNT's section of /proc/self/mountstats.
pnfs_stats() {
	awk -v mnt="$3" '
		$1 == "device" { inside = ($5 == mnt); next }
		inside && $1 ~ /:$/ && NF >= 9 && $2 ~ /^[0-9]+$/ {
			op = $1; sub(/:$/, "", op)
			print op, $2, (NF >= 10 ? $10 : 0)
		}' /proc/self/mountstats | while read -r op n e; do
		case $op in
		LAYOUTGET | GETDEVICEINFO | LAYOUTRETURN | LAYOUTCOMMIT | LAYOUTERROR | LAYOUTSTATS | READ | READ_PLUS | WRITE | COMMIT | OPEN | CLOSE)
			res "PSTAT $1 $2 $op $n $e"
			;;
		esac
	done
}

# pnfs_mount V MNT
pnfs_mount() {
	mkdir -p "$2"
	opts="vers=$1,addr=$SERVER,clientaddr=$GUEST,port=2049,proto=tcp,sec=sys,timeo=100,retrans=3"
	say "=== pnfs v$1: mount -t nfs4 -o $opts $SERVER:/ $2"
	if ! out=$(timeout 60 mount -t nfs4 -o "$opts" "$SERVER:/" "$2" 2>&1); then
		pnfs_fail "$1" "$pnfs_stage" "mount failed: $out"
		return 1
	fi
	say "mounted: $(grep " $2 " /proc/mounts)"
}

# pnfs_umount V MNT
pnfs_umount() {
	kmsg=$(dmesg -c)
	[ -z "$kmsg" ] || { say "---- guest kernel messages (pnfs $pnfs_stage v$1) ----"; echo "$kmsg" | tail -n 60; }
	if ! out=$(timeout 60 umount "$2" 2>&1); then
		pnfs_fail "$1" "$pnfs_stage" "umount failed: $out"
		umount -l "$2" 2>/dev/null
	fi
}

# pnfs_put V SRC DST NAME: record what SRC (tmpfs) holds as NAME.
pnfs_put() {
	res "PW $1 $4 $(wc -c <"$2/$4") $(sha256sum <"$2/$4" | cut -d' ' -f1)"
}

# pnfs_readback V DIR: hash every file of DIR (over NFS) into PR records.
# A file whose read fails is recorded as READ-ERROR with the error text.
pnfs_readback() {
	for f in "$2"/*; do
		[ -f "$f" ] || continue
		n=${f##*/}
		case $n in dsdown-*) continue ;; esac
		if s=$(timeout 180 sha256sum <"$f" 2>/tmp/pnfs-read.err); then
			s=${s%% *}
		else
			s="READ-ERROR:$(head -n1 /tmp/pnfs-read.err | tr ' ' '_')"
			pnfs_fail "$1" "$pnfs_stage" "reading $f: $(cat /tmp/pnfs-read.err)"
		fi
		res "PR $1 $n $(stat -c %s "$f" 2>/dev/null || echo '?') $s"
	done
}

# pnfs_dd V WHAT ARGS...: dd that records a failure under WHAT.
pnfs_dd() {
	v=$1 what=$2
	shift 2
	if ! out=$(dd "$@" 2>&1); then
		pnfs_fail "$v" "$pnfs_stage" "dd for $what ($*) failed: $out"
	fi
}

# pnfs_write8 V SRC DST: the 8 files, each made in SRC (tmpfs) first and
# then written into DST over NFS with dd; the sparse one is made the same
# way in both.
pnfs_write8() {
	v=$1 src=$2 dst=$3
	printf 'hello pnfs v%s\n' "$v" >"$src/a-small.txt"
	head -c 4096 /dev/urandom >"$src/b-4k.bin"
	head -c 100003 /dev/urandom >"$src/c-odd.bin"
	head -c 1048576 /dev/urandom >"$src/d-1m.bin"
	head -c 3149825 /dev/urandom >"$src/e-3m-odd.bin"
	head -c 8388608 /dev/urandom >"$src/f-8m.bin"
	head -c 2097152 /dev/urandom >"$src/h-direct.bin"
	pnfs_dd "$v" a-small.txt if="$src/a-small.txt" of="$dst/a-small.txt"
	pnfs_dd "$v" b-4k.bin if="$src/b-4k.bin" of="$dst/b-4k.bin" bs=4096
	pnfs_dd "$v" c-odd.bin if="$src/c-odd.bin" of="$dst/c-odd.bin" bs=47008
	pnfs_dd "$v" d-1m.bin if="$src/d-1m.bin" of="$dst/d-1m.bin" bs=1M
	pnfs_dd "$v" e-3m-odd.bin if="$src/e-3m-odd.bin" of="$dst/e-3m-odd.bin" bs=65536
	pnfs_dd "$v" f-8m.bin if="$src/f-8m.bin" of="$dst/f-8m.bin" bs=1M conv=fsync
	# g-sparse.bin: 64 KiB of data at 0 and at 4 MiB, a hole between.
	head -c 65536 /dev/urandom >/tmp/pnfs-chunk1
	head -c 65536 /dev/urandom >/tmp/pnfs-chunk2
	for d in "$src" "$dst"; do
		pnfs_dd "$v" g-sparse.bin if=/tmp/pnfs-chunk1 of="$d/g-sparse.bin" bs=65536
		pnfs_dd "$v" g-sparse.bin if=/tmp/pnfs-chunk2 of="$d/g-sparse.bin" bs=65536 seek=64 conv=notrunc
	done
	pnfs_dd "$v" h-direct.bin if="$src/h-direct.bin" of="$dst/h-direct.bin" bs=1M oflag=direct
	for n in a-small.txt b-4k.bin c-odd.bin d-1m.bin e-3m-odd.bin f-8m.bin g-sparse.bin h-direct.bin; do
		pnfs_put "$v" "$src" "$dst" "$n"
	done
}

# pnfs_write V: stage write for version V.
pnfs_write() {
	v=$1 mnt=/mnt/p$1 src=/tmp/pnfs-src/v$1
	pnfs_mount "$v" "$mnt" || return
	t0=$(pnfs_now)
	mkdir -p "$src" "$mnt/v$v" || pnfs_fail "$v" write "mkdir $mnt/v$v failed"
	pnfs_write8 "$v" "$src" "$mnt/v$v"
	pnfs_stats write-written "$v" "$mnt"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	pnfs_readback "$v" "$mnt/v$v"
	pnfs_stats write "$v" "$mnt"
	res "PTIME write $v $(awk -v a="$t0" -v b="$(pnfs_now)" 'BEGIN{printf "%.1f", b-a}')"
	say "--- /proc/self/mountstats (pnfs write v$v) ---"
	awk -v m="$mnt" '$1 == "device" { p = ($5 == m) } p' /proc/self/mountstats
	rm -rf "$src"
	pnfs_umount "$v" "$mnt"
}

# pnfs_read V: stage read (a new client after the MDS restart) for V.
pnfs_read() {
	v=$1 mnt=/mnt/p$1
	pnfs_mount "$v" "$mnt" || return
	t0=$(pnfs_now)
	if [ -d "$mnt/v$v" ]; then
		pnfs_readback "$v" "$mnt/v$v"
	else
		pnfs_fail "$v" read "no directory v$v on the MDS after its restart"
	fi
	pnfs_stats read "$v" "$mnt"
	res "PTIME read $v $(awk -v a="$t0" -v b="$(pnfs_now)" 'BEGIN{printf "%.1f", b-a}')"
	pnfs_umount "$v" "$mnt"
}

# pnfs_dsfail V: stage dsfail for V (the MDS has --mirrors 2).
pnfs_dsfail() {
	v=$1 mnt=/mnt/c$1 src=/tmp/pnfs-src/c$1
	pnfs_mount "$v" "$mnt" || return
	t0=$(pnfs_now)
	dst=$mnt/c$v
	mkdir -p "$src" "$dst" || pnfs_fail "$v" dsfail "mkdir $dst failed"
	head -c 13 /dev/urandom >"$src/m-13b.bin"
	head -c 100003 /dev/urandom >"$src/m-odd.bin"
	head -c 1048576 /dev/urandom >"$src/m-1m.bin"
	head -c 3149825 /dev/urandom >"$src/m-3m-odd.bin"
	for n in m-13b.bin m-odd.bin m-1m.bin m-3m-odd.bin; do
		pnfs_dd "$v" "$n" if="$src/$n" of="$dst/$n" bs=65536 conv=fsync
		pnfs_put "$v" "$src" "$dst" "$n"
	done
	sync
	# Keep the files open, so their layouts (the MDS may set return-on-
	# close) naming both mirrors are still held when the data server
	# dies, and read each once, so the client has connected to the data
	# servers: the reads after the kill then meet the dead one.
	# (drop_caches first: the reads must go to the data servers, not to
	# the pages dd left; drop_caches 1 after: the pages only, the open
	# files keep their inodes and layouts.)
	echo 3 >/proc/sys/vm/drop_caches
	exec 3<"$dst/m-13b.bin" 4<"$dst/m-odd.bin" 5<"$dst/m-1m.bin" 6<"$dst/m-3m-odd.bin"
	cat <&3 >/dev/null
	cat <&4 >/dev/null
	cat <&5 >/dev/null
	cat <&6 >/dev/null
	echo 1 >/proc/sys/vm/drop_caches
	pnfs_stats dsfail-written "$v" "$mnt"
	say "pnfs dsfail v$v: 4 files written and committed; asking the host to kill a data server"
	res "DSFAIL_WRITTEN $v"
	# The host now kills the data server at PNFS_DEAD (and the relays to
	# it); the guest makes its address unreachable at once and reads the
	# held files back, so the client meets the failure with the layouts it
	# holds, before the MDS, which notices the dead server itself, could
	# recall them. The route: qemu's user network answers every connection
	# to a guestfwd address itself and only then runs nc, so without it a
	# dead data server looks to the guest like one that accepts and closes
	# at once, which the data-server I/O (RPC_TASK_SOFTCONN: it gives up
	# only when a connect fails; fs/nfs/flexfilelayout/flexfilelayout.c
	# ff_layout_read_pagelist) retries without end. A real network answers
	# a dead host so (EHOSTUNREACH), a dead process with ECONNREFUSED.
	if [ -n "$PNFS_DEAD" ]; then
		ip route add unreachable "$PNFS_DEAD/32" 2>/dev/null || ip route replace unreachable "$PNFS_DEAD/32"
		say "pnfs dsfail v$v: route to $PNFS_DEAD: $(ip route show "$PNFS_DEAD/32" 2>&1)"
	fi
	say "pnfs dsfail v$v: reading back ($(pnfs_now)s)"
	t1=$(pnfs_now)
	echo 1 >/proc/sys/vm/drop_caches
	pnfs_readback "$v" "$dst"
	res "PTIME dsfail-read $v $(awk -v a="$t1" -v b="$(pnfs_now)" 'BEGIN{printf "%.1f", b-a}')"
	# The host drops the marker once the MDS has taken the server out of
	# service: from here on no layout may name it.
	i=0
	while [ ! -e "$dst/dsdown-v$v" ] && [ $i -lt 120 ]; do
		sleep 1
		echo 2 >/proc/sys/vm/drop_caches
		i=$((i + 1))
	done
	if ! cat "$dst/dsdown-v$v" >/dev/null 2>&1; then
		pnfs_fail "$v" dsfail "no dsdown-v$v marker from the host after 120 s"
	fi
	say "pnfs dsfail v$v: the MDS has the data server out of service ($(pnfs_now)s)"
	# The last close returns the layouts (with the errors met, on 4.1).
	exec 3<&- 4<&- 5<&- 6<&-
	sleep 1
	pnfs_stats dsfail-read "$v" "$mnt"
	# A file made after the failure: its layout may only name the live
	# data server (or the MDS serves it).
	head -c 1048576 /dev/urandom >"$src/n-after.bin"
	pnfs_dd "$v" n-after.bin if="$src/n-after.bin" of="$dst/n-after.bin" bs=65536 conv=fsync
	pnfs_put "$v" "$src" "$dst" n-after.bin
	sync
	echo 3 >/proc/sys/vm/drop_caches
	if s=$(timeout 180 sha256sum <"$dst/n-after.bin" 2>/tmp/pnfs-read.err); then
		res "PR $v n-after.bin $(stat -c %s "$dst/n-after.bin") ${s%% *}"
	else
		pnfs_fail "$v" dsfail "reading n-after.bin: $(cat /tmp/pnfs-read.err)"
	fi
	pnfs_stats dsfail "$v" "$mnt"
	res "PTIME dsfail $v $(awk -v a="$t0" -v b="$(pnfs_now)" 'BEGIN{printf "%.1f", b-a}')"
	say "--- /proc/self/mountstats (pnfs dsfail v$v) ---"
	awk -v m="$mnt" '$1 == "device" { p = ($5 == m) } p' /proc/self/mountstats
	rm -rf "$src"
	pnfs_umount "$v" "$mnt"
}

pnfs_main() {
	pnfs_stage=write
	PNFS_DS_TIMEO=
	PNFS_DEAD=
	for kv in $(cat /proc/cmdline); do
		case "$kv" in
		e2e_pnfs=*) pnfs_stage=${kv#e2e_pnfs=} ;;
		e2e_dstimeo=*) PNFS_DS_TIMEO=${kv#e2e_dstimeo=} ;;
		e2e_pnfs_dead=*) PNFS_DEAD=${kv#e2e_pnfs_dead=} ;;
		esac
	done
	# Data-server RPCs time out after dataserver_timeo tenths of a second
	# (fs/nfs/flexfilelayout/flexfilelayoutdev.c, a module parameter,
	# default 600) and dataserver_retrans retries: shorter, so a dead data
	# server is noticed well inside the run's time limit.
	p=/sys/module/nfs_layout_flexfiles/parameters
	if [ -d $p ]; then
		[ -z "$PNFS_DS_TIMEO" ] || echo "$PNFS_DS_TIMEO" >$p/dataserver_timeo
		say "nfs_layout_flexfiles: dataserver_timeo=$(cat $p/dataserver_timeo) dataserver_retrans=$(cat $p/dataserver_retrans)"
	else
		pnfs_fail "$(echo $VERS | cut -d' ' -f1)" "$pnfs_stage" "nfs_layout_flexfiles is not loaded"
	fi
	for v in $VERS; do
		pnfs_bad=
		case $pnfs_stage in
		write) pnfs_write "$v" ;;
		read) pnfs_read "$v" ;;
		dsfail) pnfs_dsfail "$v" ;;
		stripe) pnfs_write "$v" ;; # as write, against an MDS with --stripe-unit (e2e-pnfs.sh)
		*) pnfs_fail "$v" "$pnfs_stage" "unknown stage" ;;
		esac
		[ -n "$pnfs_bad" ] || res "PNFS $pnfs_stage $v ok"
	done
}
