# Guest side of the filesystem phase (e2e-fs.sh); sourced by /init (busybox
# ash) when e2e_mode=fs. Needs say/res/SERVER/GUEST/VERS from /init and
# rw_manifest from guest-rw.sh.
#
# e2e_fs=NAME:PATH,... names the exports to mount (SERVER:PATH on /mnt/NAME):
# "outer" (plain: proj must be the directory beneath the mount point) and,
# unless the host skipped it, "cross" (crossmnt: proj is another filesystem).
# The guest lists both trees, writes on both sides of each mount point and
# over the files that share inode 12 on all four filesystems, fills the
# filesystem behind "outer", then (after sync + drop_caches) lists again.
# The host (run.sh, then e2e/kernel/verdict) compares everything with its
# own view.
#
# Records (ttyS1):
#   FSMOUNT NAME ok|fail DETAIL
#   FSM0 NAME LINE | FSM1 NAME LINE   rw_manifest before / after the writes
#   FSDEV NAME ROOT_DEV PROJ_DEV yes|no   st_dev of the mount and of proj,
#                                     whether proj is a (sub)mount in the guest
#   FSINO NAME REL FILEID             fileids of the equal-inode files (info)
#   FSW NAME ./REL SHA256             what the guest wrote there (expected)
#   FSERR NAME STEP rc=N MSG          a write step failed
#   FILL rc=N MSG | FILLSIZE BYTES | FILLKEEP GOT WANT | FILLAFTER rc=N MSG
#   FSDONE

FS_EXPORTS=
for kv in $(cat /proc/cmdline); do
	case "$kv" in e2e_fs=*) FS_EXPORTS=$(echo "${kv#e2e_fs=}" | tr ',' ' ') ;; esac
done

sha() { sha256sum <"$1" | cut -d' ' -f1; }

# fs_step NAME STEP CMD: run CMD (eval'd); a failure is an FSERR record.
fs_step() {
	_n=$1 _s=$2
	shift 2
	_o=$(eval "$*" 2>&1)
	_rc=$?
	if [ $_rc -ne 0 ]; then
		say "[fs] $_n: step $_s FAILED rc=$_rc: $_o"
		res "FSERR $_n $_s rc=$_rc $(echo "$_o" | tr '\n' ' ' | cut -c1-300)"
	fi
	return $_rc
}

# fs_put NAME REL SRC: write SRC to /mnt/NAME/REL (truncating), record it.
fs_put() {
	res "FSW $1 ./$2 $(sha "$3")"
	fs_step "$1" "write-$2" "cat $3 >/mnt/$1/$2"
}

fs_list() {
	rw_manifest "/mnt/$2" >/tmp/fs.list 2>/tmp/fs.err
	[ -s /tmp/fs.err ] && res "FSERR $2 list-$1 rc=1 $(head -n3 /tmp/fs.err | tr '\n' ' ')"
	while IFS= read -r l; do res "$1 $2 $l"; done </tmp/fs.list
}

fs_mount() {
	_m=/mnt/$1
	mkdir -p "$_m"
	_opts="vers=$FS_V,addr=$SERVER,clientaddr=$GUEST,port=2049,proto=tcp,sec=sys,timeo=100,retrans=3"
	say "[fs] mount -t nfs4 -o $_opts $SERVER:$2 $_m"
	if ! _o=$(timeout 60 mount -t nfs4 -o "$_opts" "$SERVER:$2" "$_m" 2>&1); then
		say "[fs] mount of $2 FAILED: $_o"
		res "FSMOUNT $1 fail $SERVER:$2: $_o"
		return 1
	fi
	res "FSMOUNT $1 ok $SERVER:$2 $(grep " $_m " /proc/mounts | awk '{print $4}')"
}

fs_sources() {
	mkdir -p /tmp/fs
	head -c 300001 /dev/urandom >/tmp/fs/s1
	head -c 200003 /dev/urandom >/tmp/fs/s2
	head -c 150001 /dev/urandom >/tmp/fs/s3
	head -c 250007 /dev/urandom >/tmp/fs/s4
	head -c 180001 /dev/urandom >/tmp/fs/s5
	head -c 40001 /dev/urandom >/tmp/fs/s6
	head -c 12345 /dev/urandom >/tmp/fs/s7
	head -c 33333 /dev/urandom >/tmp/fs/s8
	head -c 1048576 /dev/urandom >/tmp/fs/keep
	head -c 300001 /dev/urandom >/tmp/fs/after
}

# fs_writes_outer: A1's root and the directory beneath B1 (plain export),
# and a.txt (inode 12 on A1, like c.txt and d.txt in "cross").
fs_writes_outer() {
	fs_put outer w-root.bin /tmp/fs/s1
	fs_put outer proj/w-under.bin /tmp/fs/s2
	fs_step outer mkdir-under 'mkdir /mnt/outer/proj/newdir'
	fs_put outer proj/newdir/n.bin /tmp/fs/s8
	fs_put outer a.txt /tmp/fs/s3
}

# fs_writes_cross: A2's root and B2 (crossmnt), over both inode-12 files.
fs_writes_cross() {
	fs_put cross w-root.bin /tmp/fs/s4
	fs_put cross proj/w-sub.bin /tmp/fs/s5
	fs_put cross proj/sub/deeper/new.bin /tmp/fs/s8
	# Shrink d.txt (B2, inode 12) and append to c.txt (A2, inode 12).
	fs_put cross proj/d.txt /tmp/fs/s6
	res "FSW cross ./c.txt $(cat /mnt/cross/c.txt /tmp/fs/s7 | sha256sum | cut -d' ' -f1)"
	fs_step cross append-c.txt 'cat /tmp/fs/s7 >>/mnt/cross/c.txt'
}

# fs_fill: a known file, then dd until the filesystem behind "outer" is
# full: dd must fail with ENOSPC (at a write or at the fsync), the known
# file must read back intact, and after removing the filler a write works.
fs_fill() {
	_d=/mnt/outer
	res "FSW outer ./keep.bin $(sha /tmp/fs/keep)"
	fs_step outer write-keep.bin "dd if=/tmp/fs/keep of=$_d/keep.bin bs=65536 conv=fsync 2>&1" || return 1
	say "[fs] filling $_d (8 MiB filesystem) with dd bs=1M count=64 conv=fsync"
	# SIGKILL: a task waiting on a hard NFS mount ignores SIGTERM.
	_o=$(timeout -s KILL 120 dd if=/dev/zero of=$_d/fill.bin bs=1M count=64 conv=fsync 2>&1)
	_rc=$?
	say "[fs] fill: dd rc=$_rc: $_o"
	res "FILL rc=$_rc $(echo "$_o" | tr '\n' ' ' | cut -c1-300)"
	res "FILLSIZE $(stat -c %s $_d/fill.bin 2>&1)"
	timeout -s KILL 60 sync
	echo 3 >/proc/sys/vm/drop_caches
	res "FILLKEEP $(sha $_d/keep.bin) $(sha /tmp/fs/keep)"
	fs_step outer rm-fill.bin "rm $_d/fill.bin"
	_o=$(timeout -s KILL 60 dd if=/tmp/fs/after of=$_d/after.bin bs=65536 conv=fsync 2>&1)
	_rc=$?
	res "FILLAFTER rc=$_rc $(echo "$_o" | tr '\n' ' ' | cut -c1-300)"
	res "FSW outer ./after.bin $(sha /tmp/fs/after)"
}

# fs_dev NAME: st_dev of the mount's root and of proj (after the listing
# walked into proj, so an automount has happened), and whether proj is a
# mount point in the guest.
fs_dev() {
	_m=/mnt/$1
	ls "$_m/proj" >/dev/null 2>&1
	_sub=no
	grep -q " $_m/proj " /proc/mounts && _sub=yes
	res "FSDEV $1 $(stat -c %d "$_m" 2>/dev/null || echo none) $(stat -c %d "$_m/proj" 2>/dev/null || echo none) $_sub"
	for _f in a.txt c.txt proj/b.txt proj/d.txt proj/hidden.txt proj/hidden2.txt; do
		[ -e "$_m/$_f" ] && res "FSINO $1 $_f $(stat -c %i "$_m/$_f")"
	done
}

fs_main() {
	FS_V=${VERS%% *}
	say "=== filesystem phase, NFS v$FS_V: exports $FS_EXPORTS ==="
	fs_sources
	FS_UP=
	for e in $FS_EXPORTS; do
		fs_mount "${e%%:*}" "${e#*:}" && FS_UP="$FS_UP ${e%%:*}"
	done
	for n in $FS_UP; do
		say "[fs] --- ls -lR /mnt/$n ---"
		ls -lR "/mnt/$n"
		fs_list FSM0 "$n"
		fs_dev "$n"
	done
	say "[fs] /proc/mounts: $(grep nfs4 /proc/mounts | tr '\n' ';')"
	for n in $FS_UP; do
		say "[fs] writes in /mnt/$n"
		case $n in
		outer) fs_writes_outer ;;
		cross) fs_writes_cross ;;
		esac
	done
	case " $FS_UP " in *" outer "*) fs_fill ;; esac
	timeout -s KILL 60 sync
	echo 3 >/proc/sys/vm/drop_caches
	for n in $FS_UP; do
		say "[fs] --- /mnt/$n after the writes (read back after drop_caches) ---"
		fs_list FSM1 "$n"
		cat /tmp/fs.list
	done
	for n in $FS_UP; do
		grep -q " /mnt/$n/proj " /proc/mounts && umount "/mnt/$n/proj" 2>/dev/null
		if ! _o=$(timeout 60 umount "/mnt/$n" 2>&1); then
			res "ERR umount /mnt/$n: $_o"
			umount -l "/mnt/$n" 2>/dev/null
		fi
	done
	_k=$(dmesg -c)
	[ -z "$_k" ] || { say "---- guest kernel messages ----"; echo "$_k" | tail -n 100; }
	res FSDONE
}
