# shellcheck shell=sh
# The delegation phase in the guest (sourced by /init when e2e_mode=deleg;
# the host side is e2e-deleg.sh, run against a server with --delegations).
# Per NFS version: keep deleg-vV.txt open for reading (the OPEN gets a read
# delegation: the Linux client binds a back channel at CREATE_SESSION) and
# say DELEG_HELD V; the host then opens the file for writing with a second
# NFS client, which makes the server recall the delegation, and writes new
# content, then drops deleg-done-vV in the export. The guest closes the
# file and, after drop_caches, must read the host client's content;
# mountstats must count a DELEGRETURN (the recalled delegation came back).
#
# Records (ttyS1): DELEG_HELD V (host: open for writing now),
# DELEG V ok delegreturn=N, ERR v<V> deleg: <why>.

deleg_fail() {
	deleg_bad=1
	say "deleg v$1 FAILED: $2"
	res "ERR v$1 deleg: $2"
}

# deleg_ops MNT OP: OP's count in MNT's section of /proc/self/mountstats.
deleg_ops() {
	awk -v m="$1" -v op="$2:" '$1 == "device" { in_mnt = ($5 == m) } in_mnt && $1 == op { print $2; exit }' /proc/self/mountstats
}

# deleg_one V
deleg_one() {
	v=$1
	deleg_bad=
	mnt=/mnt/d$v
	f=$mnt/deleg-v$v.txt
	mkdir -p "$mnt"
	opts="vers=$v,addr=$SERVER,clientaddr=$GUEST,port=2049,proto=tcp,sec=sys,timeo=100,retrans=3"
	say "=== deleg v$v: mount -t nfs4 -o $opts $SERVER:/ $mnt"
	if ! out=$(timeout 60 mount -t nfs4 -o "$opts" "$SERVER:/" "$mnt" 2>&1); then
		deleg_fail "$v" "mount failed: $out"
		return
	fi
	# fd 7 stays open (and the delegation with it) until the host is done.
	if ! exec 7<"$f"; then
		deleg_fail "$v" "cannot open $f for reading"
		umount -l "$mnt"
		return
	fi
	got=$(cat <&7)
	[ "$got" = "before v$v" ] || deleg_fail "$v" "first read: '$got', want 'before v$v'"
	say "deleg v$v: $f open for reading; asking the host to open it for writing"
	res "DELEG_HELD $v"
	i=0
	while [ ! -e "$mnt/deleg-done-v$v" ] && [ $i -lt 60 ]; do
		sleep 1
		echo 2 >/proc/sys/vm/drop_caches
		i=$((i + 1))
	done
	exec 7<&-
	if [ ! -e "$mnt/deleg-done-v$v" ]; then
		deleg_fail "$v" "no deleg-done-v$v marker from the host after 60 s"
		umount -l "$mnt"
		return
	fi
	echo 3 >/proc/sys/vm/drop_caches
	got=$(cat "$f" 2>&1)
	want="written by the host client v$v"
	[ "$got" = "$want" ] || deleg_fail "$v" "read after the host's write: '$got', want '$want'"
	n=$(deleg_ops "$mnt" DELEGRETURN)
	say "deleg v$v: mountstats DELEGRETURN ops: ${n:-none}"
	[ "${n:-0}" -ge 1 ] 2>/dev/null || deleg_fail "$v" "mountstats counts no DELEGRETURN (${n:-none}): the delegation was not returned (or never granted)"
	[ -n "$deleg_bad" ] || res "DELEG $v ok delegreturn=$n"
	kmsg=$(dmesg -c)
	[ -z "$kmsg" ] || { say "---- guest kernel messages (deleg v$v) ----"; echo "$kmsg" | tail -n 50; }
	if ! out=$(timeout 60 umount "$mnt" 2>&1); then
		deleg_fail "$v" "umount failed: $out"
		umount -l "$mnt" 2>/dev/null
	fi
}

deleg_main() {
	for v in $VERS; do
		deleg_one "$v"
	done
}
