# Guest side of the write checks; sourced by /init (busybox ash). Needs
# say/res from /init and /bin/fshelper.
#
# rw_workload V MNT: every write-side operation, done twice: once in a tmpfs
# mirror (/tmp/mirror-V, the reference) and once over NFS in MNT/rw/vV.
# After sync + drop_caches the guest prints both trees (RM = mirror, RW =
# NFS readback); the host compares them with each other and with its own
# view of EXPORT/rw/vV.
#
# rw_reverse V MNT: the host changes files in MNT/rw/host/vV while the guest
# holds one of them open: the guest prints the tree before (HB), says
# READY V, waits for the host's marker rw/host/go-vV, then prints what it
# sees through close-to-open revalidation (HC, page cache still populated)
# and after drop_caches (HA).
#
# Records (ttyS1):
#   STEP V NAME                    about to run step NAME (for hang reports)
#   WERR V NAME mirror|nfs rc=N MSG  a step failed (MSG: its stderr)
#   SKIP V NAME WHY                step disabled (E2E_<FLAG>=0 on the host)
#   INFO V NAME TEXT
#   SEEK V FILE OFF hole|data RESULT
#   RM V LINE | RW V LINE | HB V LINE | HA V LINE | HC V FILE SHA256
#   RWLISTED V                     both trees printed
#   STAT2 V OP ops errors          mountstats after the write workload
#   STATU0|STATU1 V OP ops errors  mountstats around the expected refusals
#   READY V

RW_FLAGS=${RW_FLAGS:-}

rw_has() {
	case ",$RW_FLAGS," in *",$1,"*) return 0 ;; esac
	return 1
}

# rw_manifest DIR: same format as e2e_rw_manifest in lib.sh.
rw_manifest() {
	(
		cd "$1" || exit 1
		find . -mindepth 1 | LC_ALL=C sort | while IFS= read -r p; do
			if [ -L "$p" ]; then
				echo "L $p -> $(readlink "$p")"
			elif [ -d "$p" ]; then
				echo "D $p $(stat -c '%a %u:%g' "$p")"
			elif [ -f "$p" ]; then
				s=$(sha256sum <"$p" | cut -d' ' -f1)
				[ -n "$s" ] || s=READ-ERROR
				echo "F $p $(stat -c '%s %a %h %u:%g' "$p") $s"
			elif [ -p "$p" ]; then
				echo "P $p $(stat -c '%a %u:%g' "$p")"
			elif [ -c "$p" ]; then
				echo "C $p $(stat -c '%t:%T %a %u:%g' "$p")"
			else
				echo "O $p"
			fi
			case "${p##*/}" in t-*) echo "T $p $(stat -c '%Y' "$p")" ;; esac
		done
	)
}

# rw_step NAME SIDE CMD: run CMD (eval'd, $D = the side's directory).
rw_step() {
	_n=$1 _side=$2
	shift 2
	if [ "$_side" = mirror ]; then D=$RW_M; else D=$RW_W; fi
	_out=$(eval "$*" 2>&1)
	_rc=$?
	if [ $_rc -ne 0 ]; then
		say "[v$RW_V] step $_n ($_side) FAILED rc=$_rc: $_out"
		res "WERR $RW_V $_n $_side rc=$_rc $(echo "$_out" | tr '\n' ' ' | cut -c1-400)"
	fi
	return $_rc
}

# both NAME CMD: CMD in the mirror, then over NFS.
both() {
	say "[v$RW_V] step $1"
	res "STEP $RW_V $1"
	rw_step "$1" mirror "$2"
	rw_step "$1" nfs "$2"
}

# both2 NAME MIRROR_CMD NFS_CMD: different commands with the same effect.
both2() {
	say "[v$RW_V] step $1"
	res "STEP $RW_V $1"
	rw_step "$1" mirror "$2"
	rw_step "$1" nfs "$3"
}

# flagged FLAG NAME ...: run "both NAME ..." only when FLAG is on.
flagged() {
	_f=$1
	shift
	if rw_has "$_f"; then
		both "$@"
	else
		say "[v$RW_V] step $1 skipped ($_f off)"
		res "SKIP $RW_V $1 E2E_$(echo "$_f" | tr a-z A-Z)=0"
	fi
}

# rw_deny WANT UID CMD: CMD run as UID:UID must fail, its message saying
# WANT ("Permission denied" = EACCES, "Operation not permitted" = EPERM).
rw_deny() {
	_o=$(fshelper runas "$2" "$2" /bin/sh -c "$3" 2>&1) && {
		echo "uid $2 was allowed to: $3"
		return 1
	}
	case "$_o" in *"$1"*) return 0 ;; esac
	echo "uid $2: $3: want '$1', got: $_o"
	return 1
}

# rw_acl FILE: NFSv4 ACLs with nfs4-acl-tools (a root 0600 file): an ACE
# for uid 1000 set by nfs4_setfacl becomes the POSIX ACL
# u::rw-,u:1000:r--,g::---,m::r--,o::--- on the server (mode 640, as the
# mirror's chmod), nfs4_getfacl shows it as knfsd would, uid 1000 may read
# and uid 1001 may not; an AUDIT ACE (unmappable) is refused.
rw_acl() {
	nfs4_setfacl -a "A::1000:r" "$1" || return 1
	_a=$(nfs4_getfacl "$1" 2>&1 | tr '\n' ' ')
	case "$_a" in
	*"A::OWNER@:rwatTcCy A::1000:rtcy A::GROUP@:tcy A::EVERYONE@:tcy"*) ;;
	*) echo "nfs4_getfacl after adding A::1000:r: $_a"; return 1 ;;
	esac
	if nfs4_setfacl -a "U::EVERYONE@:r" "$1" 2>/dev/null; then
		echo "an AUDIT ACE was accepted"
		return 1
	fi
	fshelper runas 1000 1000 /bin/sh -c "cat $1" >/dev/null || { echo "uid 1000 cannot read through its ACE"; return 1; }
	if fshelper runas 1001 1001 /bin/sh -c "cat $1" >/dev/null 2>&1; then
		echo "uid 1001 read a file its ACL does not grant"
		return 1
	fi
}

# rw_xattr FILE: user xattrs over NFS 4.2 (RFC 8276): set (create,
# replace), get, list, remove, and the refusals (EEXIST, ENODATA, EACCES
# for uid 1001). Leaves user.e2e=hello-xattr alone, which the host checks.
rw_xattr() {
	fshelper setxattr "$1" user.e2e first create &&
		fshelper setxattr "$1" user.e2e hello-xattr replace &&
		fshelper setxattr "$1" user.gone bye || return 1
	_v=$(fshelper getxattr "$1" user.e2e 2>&1)
	[ "$_v" = hello-xattr ] || { echo "getxattr user.e2e: '$_v', want hello-xattr"; return 1; }
	_l=$(fshelper listxattr "$1" | grep '^user\.' | sort | tr '\n' ' ')
	[ "$_l" = "user.e2e user.gone " ] || { echo "listxattr: '$_l', want user.e2e user.gone"; return 1; }
	fshelper removexattr "$1" user.gone || return 1
	for _c in "getxattr $1 user.gone:ENODATA" "setxattr $1 user.e2e x create:EEXIST" "setxattr $1 user.new x replace:ENODATA"; do
		_o=$(fshelper ${_c%:*} 2>&1) && { echo "fshelper ${_c%:*} succeeded"; return 1; }
		case "$_o" in *"${_c##*:}"*) ;; *) echo "fshelper ${_c%:*}: want ${_c##*:}, got: $_o"; return 1 ;; esac
	done
	rw_deny EACCES 1001 "fshelper setxattr $1 user.e2e by-1001"
}

rw_sources() {
	[ -d /tmp/src ] && return 0
	mkdir -p /tmp/src
	dd if=/dev/urandom of=/tmp/src/a bs=47008 count=20 2>/dev/null
	head -c 1000003 /dev/urandom >/tmp/src/odd
	head -c 4194304 /dev/urandom >/tmp/src/m4
	head -c 300001 /dev/urandom >/tmp/src/f
	head -c 524288 /dev/urandom >/tmp/src/dio
	head -c 12291 /dev/urandom >/tmp/src/dio2
}

rw_workload() {
	RW_V=$1
	RW_MNT=$2
	RW_W=$RW_MNT/rw/v$RW_V
	RW_M=/tmp/mirror-$RW_V
	rw_sources
	rm -rf "$RW_M"
	both mkdir-top 'mkdir $D'
	both dd-bs47008-count20 'dd if=/tmp/src/a of=$D/dd-47008x20.bin bs=47008 count=20'
	both write-1000003 'cat /tmp/src/odd >$D/odd-1000003.bin'
	both write-3-bytes 'printf xyz >$D/three.bin'
	both dd-4M-bs1M 'dd if=/tmp/src/m4 of=$D/4M.bin bs=1M'
	both dd-conv-fsync 'dd if=/tmp/src/f of=$D/fsync.bin bs=65536 conv=fsync'
	# tmpfs may refuse O_DIRECT: the mirror uses a plain copy.
	both2 dd-oflag-direct 'cat /tmp/src/dio >$D/direct.bin' \
		'dd if=/tmp/src/dio of=$D/direct.bin bs=65536 oflag=direct'
	both2 dd-oflag-direct-misaligned 'cat /tmp/src/dio2 >$D/direct-odd.bin' \
		'dd if=/tmp/src/dio2 of=$D/direct-odd.bin bs=4097 oflag=direct'
	both overwrite-middle 'cat /tmp/src/odd >$D/rmw.bin && dd if=/tmp/src/f of=$D/rmw.bin bs=777 count=1 seek=12345 oflag=seek_bytes conv=notrunc'
	both append 'printf "line1\n" >$D/append.txt && dd if=/tmp/src/a of=$D/append.txt bs=4099 count=3 oflag=append conv=notrunc && echo more >>$D/append.txt'
	both write-past-eof 'dd if=/tmp/src/f of=$D/past-eof.bin bs=4096 count=2 seek=300'
	# Concurrent WRITEs: four files at once, then four O_DIRECT writers on
	# disjoint 256 KiB ranges of one file (separate RPCs in flight).
	both parallel-writers 'for i in 0 1 2 3; do dd if=/tmp/src/m4 of=$D/par-$i.bin bs=65536 skip=$((i * 16)) count=16 2>/dev/null & done; wait'
	both2 same-file-concurrent-direct \
		'for i in 0 1 2 3; do dd if=/tmp/src/m4 of=$D/shared.bin bs=262144 skip=$i seek=$i count=1 conv=notrunc 2>/dev/null; done' \
		': >$D/shared.bin && for i in 0 1 2 3; do dd if=/tmp/src/m4 of=$D/shared.bin bs=262144 skip=$i seek=$i count=1 conv=notrunc oflag=direct 2>/dev/null & done; wait'
	both cp-readonly-file 'cp $RW_MNT/odd-1000003.bin $D/copied.bin'
	both many-small-files 'mkdir $D/many && for i in $(seq 1 40); do echo "file $i" >$D/many/f$i || exit 1; done'
	both mkdir-p 'mkdir -p $D/n1/n2/n3/n4'
	both mv-within-dir 'printf "move me\n" >$D/mv-src.txt && mv $D/mv-src.txt $D/mv-dst.txt'
	both mv-across-dirs 'cp $D/fsync.bin $D/across.bin && mv $D/across.bin $D/n1/n2/n3/across.bin'
	both mv-dir 'mkdir $D/mvdir && echo x >$D/mvdir/f && mv $D/mvdir $D/n1/mvdir2'
	both mv-replace 'echo old >$D/victim.txt && echo new >$D/replacer.txt && mv $D/replacer.txt $D/victim.txt'
	both rm 'echo gone >$D/rmme.txt && rm $D/rmme.txt'
	both rm-r 'mkdir -p $D/rmtree/a/b && echo x >$D/rmtree/a/b/c && ln -s c $D/rmtree/a/b/l && rm -r $D/rmtree'
	both ln-s 'ln -s odd-1000003.bin $D/sym-odd && ln -s n2/n3 $D/n1/symdir && ln -s /does/not/exist $D/dangling'
	both ln-hard 'ln $D/4M.bin $D/4M-hard.bin && ln $D/4M.bin $D/n1/4M-hard2.bin'
	both truncate-extend 'printf abc >$D/trunc-up.bin && truncate -s 2097157 $D/trunc-up.bin'
	both truncate-shrink 'cat /tmp/src/odd >$D/trunc-down.bin && truncate -s 500001 $D/trunc-down.bin'
	both truncate-shrink-extend 'cat /tmp/src/m4 >$D/trunc-both.bin && truncate -s 100000 $D/trunc-both.bin && truncate -s 3000000 $D/trunc-both.bin'
	both truncate-zero 'cat /tmp/src/f >$D/trunc-zero.bin && truncate -s 0 $D/trunc-zero.bin'
	if [ "$RW_V" = 4.2 ]; then
		# DEALLOCATE: a page-aligned 1 MiB hole and a misaligned 5000 bytes.
		flagged punch punch-hole 'cat /tmp/src/m4 >$D/punched.bin && fshelper punch $D/punched.bin 1048576 1048576 && fshelper punch $D/punched.bin 3000001 5000'
	elif rw_has punch; then
		# NFSv4.1 has no DEALLOCATE: the client must refuse, not corrupt.
		both punch-hole-file 'cat /tmp/src/m4 >$D/punched.bin'
		if out=$(fshelper punch "$RW_W/punched.bin" 1048576 1048576 2>&1); then
			res "WERR $RW_V punch-hole-v4.1 nfs rc=0 fallocate(PUNCH_HOLE) succeeded on a vers=4.1 mount (no DEALLOCATE in 4.1)"
		else
			case "$out" in
			*ENOTSUP* | *EOPNOTSUPP*) res "INFO $RW_V punch-hole refused as expected on 4.1 (no DEALLOCATE): $out" ;;
			*) res "WERR $RW_V punch-hole-v4.1 nfs rc=1 want EOPNOTSUPP: $out" ;;
			esac
		fi
	else
		res "SKIP $RW_V punch-hole E2E_PUNCH=0"
	fi
	if [ "$RW_V" = 4.2 ]; then
		# tmpfs may lack user xattrs: the mirror only gets the file.
		both2 xattr 'echo x >$D/xattr.txt' 'echo x >$D/xattr.txt && rw_xattr $D/xattr.txt'
	fi
	if [ "$RW_V" = 3 ]; then
		res "SKIP $RW_V acl NFSv4 ACLs are not NFSv3's (no NFSACL side protocol)"
	elif command -v nfs4_setfacl >/dev/null 2>&1; then
		# The mirror (tmpfs) takes no NFSv4 ACL: it gets the mode the
		# ACL makes.
		both2 acl 'echo x >$D/acl.txt && chmod 640 $D/acl.txt' 'echo x >$D/acl.txt && chmod 600 $D/acl.txt && rw_acl $D/acl.txt'
	else
		res "SKIP $RW_V acl no nfs4_setfacl in the guest (install nfs4-acl-tools on the host)"
	fi
	flagged alloc fallocate 'fallocate -l 1048576 $D/alloc.bin && cat /tmp/src/f >$D/alloc-data.bin && fallocate -o 0 -l 2097152 $D/alloc-data.bin'
	flagged copy copy_file_range 'fshelper copy $D/odd-1000003.bin $D/cfr.bin'
	both chmod 'chmod 600 $D/three.bin && chmod 751 $D/n1 && chmod 4755 $D/fsync.bin && chmod 444 $D/copied.bin'
	both chown 'chown 1234:5678 $D/odd-1000003.bin && chown 4321 $D/n1/n2'
	# The server acts with the caller's identity: creates by uid 1000 are
	# owned by 1000:1000, and what uid 1000/1001 may not do is refused.
	both users-dir 'mkdir $D/users && chmod 1777 $D/users'
	both user-create 'fshelper runas 1000 1000 /bin/sh -c "echo mine >$D/users/u1000.txt && chmod 640 $D/users/u1000.txt && mkdir $D/users/u1000dir && echo in >$D/users/u1000dir/f"'
	# The refusals below are errors in mountstats too: bracket them.
	opstats "$RW_MNT" | while read -r op n e; do res "STATU0 $RW_V $op $n $e"; done
	both user-denied-write 'rw_deny "Permission denied" 1001 "echo x >>$D/fsync.bin"'
	both user-denied-create 'rw_deny "Permission denied" 1001 "echo x >$D/u1001.txt"'
	both user-denied-read 'rw_deny "Permission denied" 1001 "cat $D/users/u1000.txt"'
	both user-denied-sticky-rm 'rw_deny "Operation not permitted" 1001 "rm -f $D/users/u1000.txt"'
	both user-denied-chmod 'rw_deny "Operation not permitted" 1001 "chmod 666 $D/users/u1000.txt"'
	both user-denied-chown 'rw_deny "Operation not permitted" 1000 "chown 1001 $D/users/u1000.txt"'
	opstats "$RW_MNT" | while read -r op n e; do res "STATU1 $RW_V $op $n $e"; done
	both touch-d 'printf "t\n" >$D/t-old.txt && touch -d "2001-02-03 04:05:06" $D/t-old.txt && mkdir $D/t-dir && touch -d "1999-12-31 23:59:59" $D/t-dir'
	both touch-create 'touch $D/new-empty'
	# now.txt: host checks its mtime is from this run (SET_TO_SERVER_TIME).
	both touch-now 'printf x >$D/now.txt && touch -d "2001-01-01 00:00:00" $D/now.txt && touch $D/now.txt'
	both mkfifo 'mkfifo -m 640 $D/fifo'
	both mknod-char 'mknod -m 600 $D/null-dev c 1 3'
	if rw_has clone; then
		say "[v$RW_V] step clone"
		res "STEP $RW_V clone"
		if out=$(fshelper clone "$RW_W/4M.bin" "$RW_W/clone.bin" 2>&1); then
			res "INFO $RW_V clone FICLONE succeeded"
			rw_step clone mirror 'cp /tmp/src/m4 $D/clone.bin'
		else
			case "$out" in
			*EOPNOTSUPP* | *ENOTSUP* | *EXDEV*) res "INFO $RW_V clone FICLONE refused: $out" ;;
			*) res "WERR $RW_V clone nfs rc=1 $out" ;;
			esac
		fi
	else
		res "SKIP $RW_V clone E2E_CLONE=0"
	fi
	if rw_has locks; then
		both2 posix-locks 'touch $D/locks.dat' 'timeout 100 fshelper locks $D/locks.dat'
	else
		res "SKIP $RW_V posix-locks E2E_LOCKS=0"
	fi
	res "STEP $RW_V sync"
	rw_step sync nfs 'sync'
	echo 3 >/proc/sys/vm/drop_caches
	# Reads below come from the server: READ_PLUS on 4.2.
	if rw_has punch && [ -f "$RW_W/punched.bin" ]; then
		for q in "0 hole" "1048576 data" "2097152 hole"; do
			set -- $q
			r=$(fshelper seek "$RW_W/punched.bin" "$1" "$2" 2>&1)
			res "SEEK $RW_V punched.bin $1 $2 $(echo "$r" | tr '\n' ' ')"
		done
		a=$(dd if="$RW_W/punched.bin" bs=1M iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)
		b=$(sha256sum <"$RW_M/punched.bin" | cut -d' ' -f1)
		[ "$a" = "$b" ] || res "WERR $RW_V punched-direct-read nfs rc=0 O_DIRECT read of punched.bin: sha256 $a, want $b"
	fi
	r=$(fshelper seek "$RW_W/past-eof.bin" 0 data 2>&1)
	res "SEEK $RW_V past-eof.bin 0 data $(echo "$r" | tr '\n' ' ')"
	say "[v$RW_V] mirror tree"
	rw_manifest "$RW_M" >/tmp/rm.$RW_V 2>&1
	while IFS= read -r l; do res "RM $RW_V $l"; done </tmp/rm.$RW_V
	say "[v$RW_V] NFS tree (read back after drop_caches)"
	rw_manifest "$RW_W" >/tmp/rw.$RW_V 2>/tmp/rw.err.$RW_V
	cat /tmp/rw.$RW_V
	[ -s /tmp/rw.err.$RW_V ] && res "WERR $RW_V readback-walk nfs rc=1 $(head -n3 /tmp/rw.err.$RW_V | tr '\n' ' ')"
	while IFS= read -r l; do res "RW $RW_V $l"; done </tmp/rw.$RW_V
	res "RWLISTED $RW_V"
}

rw_reverse() {
	RW_V=$1
	RW_MNT=$2
	H=$RW_MNT/rw/host/v$RW_V
	res "STEP $RW_V reverse-before"
	rw_manifest "$H" >/tmp/hb.$RW_V 2>&1
	while IFS= read -r l; do res "HB $RW_V $l"; done </tmp/hb.$RW_V
	# Keep chg.bin open: its inode and cached pages must survive the
	# polling below, so the re-read checks close-to-open revalidation.
	exec 7<"$H/chg.bin"
	sha256sum <"$H/chg.bin" >/dev/null
	cat "$H/repl.txt" "$H/grow.txt" >/dev/null
	res "READY $RW_V"
	say "[v$RW_V] READY: waiting for the host to change $H"
	res "STEP $RW_V reverse-wait"
	i=0
	while [ ! -e "$RW_MNT/rw/host/go-v$RW_V" ]; do
		i=$((i + 1))
		if [ $i -gt 300 ]; then
			res "WERR $RW_V reverse-wait nfs rc=1 marker rw/host/go-v$RW_V not visible after 90s"
			exec 7<&-
			return 1
		fi
		# Drop the negative dentry so the next test is a fresh LOOKUP.
		echo 2 >/proc/sys/vm/drop_caches
		sleep 0.3
	done
	say "[v$RW_V] marker seen after $i polls"
	res "STEP $RW_V reverse-after"
	res "HC $RW_V chg.bin $(sha256sum <"$H/chg.bin" | cut -d' ' -f1)"
	res "HC $RW_V repl.txt $(sha256sum <"$H/repl.txt" | cut -d' ' -f1)"
	res "HC $RW_V grow.txt $(sha256sum <"$H/grow.txt" | cut -d' ' -f1)"
	exec 7<&-
	echo 3 >/proc/sys/vm/drop_caches
	rw_manifest "$H" >/tmp/ha.$RW_V 2>&1
	while IFS= read -r l; do res "HA $RW_V $l"; done </tmp/ha.$RW_V
}
