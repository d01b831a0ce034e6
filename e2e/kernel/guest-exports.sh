# Guest side of the exports phase (e2e-exports.sh); sourced by /init
# (busybox ash) when e2e_mode=exports. Needs say/res/SERVER/GUEST/VERS.
#
# e2e_ex=DIR: the host directory holding the exports ro, sq and hidden,
# served from an exports file by path (SERVER:DIR/ro...). The guest runs as
# root: "sq" squashes it to nobody, "ro" refuses every change, "hidden" is
# exported to another address only.
#
# Records (ttyS1):
#   EXMOUNT NAME ok|fail DETAIL
#   EXR STEP pass|FAIL DETAIL       a step and whether it did what it must
#   EXLS NAMES                      what the pseudo directory DIR lists
#   EXDONE

EX_DIR=
for kv in $(cat /proc/cmdline); do
	case "$kv" in e2e_ex=*) EX_DIR=${kv#e2e_ex=} ;; esac
done

# ex_opts: the mount options of version EX_V (EX_FS: the filesystem
# type); vers=3 mounts through MOUNT on the NFS port, without NLM.
ex_opts() {
	if [ "$EX_V" = 3 ]; then
		EX_FS=nfs
		EX_OPTS="vers=3,addr=$SERVER,port=2049,mountport=2049,mountproto=tcp,nolock,proto=tcp,sec=sys,timeo=100,retrans=3"
	else
		EX_FS=nfs4
		EX_OPTS="vers=$EX_V,addr=$SERVER,clientaddr=$GUEST,port=2049,proto=tcp,sec=sys,timeo=100,retrans=3"
	fi
}

ex_mount() {
	mkdir -p "/mnt/$1"
	_opts=$EX_OPTS
	say "[ex] mount -t $EX_FS -o $_opts $SERVER:$2 /mnt/$1"
	if ! _o=$(timeout 60 mount -t $EX_FS -o "$_opts" "$SERVER:$2" "/mnt/$1" 2>&1); then
		res "EXMOUNT $1 fail $SERVER:$2: $(echo "$_o" | tr '\n' ' ')"
		return 1
	fi
	res "EXMOUNT $1 ok $SERVER:$2"
}

# ex_expect STEP WANT CMD: run CMD (eval'd); WANT is "ok" or text its
# error message must contain (the errno's strerror).
ex_expect() {
	_s=$1 _w=$2
	shift 2
	_o=$(eval "$*" 2>&1)
	_rc=$?
	_o=$(echo "$_o" | tr '\n' ' ' | cut -c1-200)
	if [ "$_w" = ok ]; then
		if [ $_rc -eq 0 ]; then res "EXR $_s pass"; else res "EXR $_s FAIL rc=$_rc, want success: $_o"; fi
	elif [ $_rc -ne 0 ] && echo "$_o" | grep -q "$_w"; then
		res "EXR $_s pass ($_o)"
	else
		res "EXR $_s FAIL rc=$_rc, want '$_w': $_o"
	fi
}

ex_main() {
	set -- $VERS
	EX_V=$1
	ex_opts
	if [ -z "$EX_DIR" ]; then
		res "EXR setup FAIL no e2e_ex= on the kernel command line"
		res EXDONE
		return
	fi
	if ex_mount ro "$EX_DIR/ro"; then
		ex_expect ro-read ok 'test "$(cat /mnt/ro/ro.txt)" = "read-only data"'
		ex_expect ro-create "Read-only file system" 'touch /mnt/ro/new'
		# A v3 client opens by ACCESS, which grants no MODIFY on a
		# read-only export (as knfsd's nfsd_access): EACCES, not EROFS.
		_roa="Read-only file system"
		[ "$EX_V" = 3 ] && _roa="Permission denied"
		ex_expect ro-append "$_roa" 'echo x >>/mnt/ro/ro.txt'
		ex_expect ro-rm "Read-only file system" 'rm -f /mnt/ro/ro.txt'
		ex_expect ro-mkdir "Read-only file system" 'mkdir /mnt/ro/d'
		ex_expect ro-chmod "Read-only file system" 'chmod 600 /mnt/ro/ro.txt'
		ex_expect ro-mv "Read-only file system" 'mv /mnt/ro/ro.txt /mnt/ro/moved'
	fi
	if ex_mount sq "$EX_DIR/sq"; then
		ex_expect sq-create ok 'echo by-root >/mnt/sq/by-root'
		ex_expect sq-mkdir ok 'mkdir /mnt/sq/dir-by-root'
		ex_expect sq-append-rootfile "Permission denied" 'echo x >>/mnt/sq/rootfile'
		ex_expect sq-read-secret "Permission denied" 'cat /mnt/sq/secret'
	fi
	mkdir -p /mnt/hidden
	ex_expect hidden-mount "mount" "timeout 60 mount -t $EX_FS -o $EX_OPTS $SERVER:$EX_DIR/hidden /mnt/hidden"
	if [ "$EX_V" = 3 ]; then
		res EXNOPSEUDO # v3 mounts exports only: no pseudo directory to list
	elif ex_mount px "$EX_DIR"; then
		res "EXLS $(ls /mnt/px | tr '\n' ' ')"
	fi
	sync
	umount /mnt/ro /mnt/sq /mnt/px 2>/dev/null
	res EXDONE
}
