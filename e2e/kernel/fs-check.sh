# shellcheck shell=bash
# The host's verdict on the filesystem phase (e2e-fs.sh); sourced by
# run.sh --fs after qemu exited. Uses run.sh's fail, RESULTS, WORK and
# EXPORT (here e2e-fs.sh's $FSX: outer, cross, under-outer).

fs_fail() {
	fail "$*"
	# run.sh then prints the server's warnings and the failed NFS calls.
	# shellcheck disable=SC2034
	rw_failed=1
}

# fs_host_dir NAME: the host directory that shows what export NAME must show:
# for the plain "outer", A1 alone (the bind mount: proj is the directory
# beneath B1); for "cross", the tree with B2 mounted at proj.
fs_host_dir() {
	case $1 in
	outer) echo "$EXPORT/under-outer" ;;
	cross) echo "$EXPORT/cross" ;;
	esac
}

# fs_diff NAME WHEN A B WHAT: fail unless the listings A and B are equal.
fs_diff() {
	local out=$WORK/diff-$2-$1.txt
	if ! diff -u "$3" "$4" >"$out"; then
		echo "---- export $1, $5 ($out) ----" >&2
		head -n 40 "$out" >&2
		fs_fail "export $1: $5: $(grep -c '^[-+][A-Z] ' "$out") lines differ (full diff: $out)"
		return 1
	fi
}

# fs_rule NAME: what is at proj: the directory beneath the mount point
# (plain export) or the filesystem mounted there (crossmnt), and its fsid.
fs_rule() {
	local n=$1 m=$WORK/guest-before-$1.manifest root proj sub
	read -r root proj sub < <(sed -n "s/^FSDEV $n //p" "$RESULTS")
	case $n in
	outer)
		if grep -q '^F \./proj/b\.txt ' "$m"; then
			fs_fail "export outer (no crossmnt): the guest sees proj/b.txt, a file of the filesystem mounted at proj: without crossmnt a mount point inside the export must show the directory beneath it (proj/hidden.txt), as knfsd does (exports(5))"
		elif ! grep -q '^F \./proj/hidden\.txt ' "$m"; then
			fs_fail "export outer (no crossmnt): proj/hidden.txt, in the directory beneath the mount point, is not in the guest's listing"
		fi
		if [[ -z $root || $proj == none || $root != "$proj" || $sub != no ]]; then
			fs_fail "export outer (no crossmnt): st_dev of the root ${root:-?} and of proj ${proj:-?}, proj a submount in the guest: ${sub:-?}; the directory beneath the mount point belongs to the export's filesystem (same fsid, no submount)"
		else
			e2e_log "export outer: proj is the directory beneath the mount point (hidden.txt, same fsid: st_dev $root)"
		fi
		;;
	cross)
		if grep -q '^F \./proj/hidden2\.txt ' "$m"; then
			fs_fail "export cross (crossmnt): the guest sees proj/hidden2.txt, beneath the mount point: crossmnt must cross into the filesystem mounted at proj"
		elif ! grep -q '^F \./proj/d\.txt ' "$m"; then
			fs_fail "export cross (crossmnt): proj/d.txt, on the filesystem mounted at proj, is not in the guest's listing"
		fi
		if [[ -z $root || $proj == none || $root == "$proj" || $sub != yes ]]; then
			fs_fail "export cross (crossmnt): st_dev of the root ${root:-?} and of proj ${proj:-?}, proj a submount in the guest: ${sub:-?}; the filesystem mounted at proj needs its own fsid (the client then mounts it as a submount)"
		else
			e2e_log "export cross: proj is the filesystem mounted there, with its own fsid (guest submount, st_dev $root vs $proj)"
		fi
		;;
	esac
}

# fs_export NAME: mount result, listings before / after vs the host's, the
# crossing rule, and every file the guest wrote.
fs_export() {
	local n=$1 mline dir rel want got l
	mline=$(grep "^FSMOUNT $n " "$RESULTS" || true)
	case $mline in
	"FSMOUNT $n ok"*) e2e_log "export $n: mounted (${mline#FSMOUNT "$n" ok })" ;;
	"FSMOUNT $n fail"*)
		fs_fail "export $n: MOUNT FAILED: ${mline#FSMOUNT "$n" fail }"
		return
		;;
	*)
		fs_fail "export $n: no mount result (the mount hung or the guest stopped before it)"
		return
		;;
	esac
	dir=$(fs_host_dir "$n")
	sed -n "s/^FSM0 $n //p" "$RESULTS" >"$WORK/guest-before-$n.manifest"
	sed -n "s/^FSM1 $n //p" "$RESULTS" >"$WORK/guest-after-$n.manifest"
	e2e_rw_manifest "$dir" >"$WORK/host-after-$n.manifest"
	fs_diff "$n" before "$WORK/host-before-$n.manifest" "$WORK/guest-before-$n.manifest" \
		"host's view of $dir vs the guest's listing before the writes" &&
		e2e_log "export $n: before the writes, $(grep -c . "$WORK/host-before-$n.manifest") entries identical on the host and in the guest (sha256 + size + mode + nlink + owner)"
	fs_rule "$n"
	if grep -qx FSDONE "$RESULTS"; then
		fs_diff "$n" after "$WORK/host-after-$n.manifest" "$WORK/guest-after-$n.manifest" \
			"host's view of $dir vs the guest's read-back after the writes (drop_caches)" &&
			e2e_log "export $n: after the writes, $(grep -c . "$WORK/host-after-$n.manifest") entries identical on the host and in the guest's read-back"
	fi
	while read -r rel want; do
		got=MISSING
		[[ -f $dir/$rel ]] && got=$(sha256sum <"$dir/$rel" | cut -d' ' -f1)
		[[ $got == "$want" ]] || fs_fail "export $n: $rel on the host (in $dir): sha256 $got, want $want (what the guest wrote)"
	done < <(sed -n "s/^FSW $n //p" "$RESULTS")
	l=$(sed -n "s/^FSINO $n //p" "$RESULTS" | paste -sd, - | sed 's/,/, /g')
	[[ -z $l ]] || e2e_log "export $n: fileids the guest sees: $l"
}

# fs_fill_check: dd on the full filesystem must fail with ENOSPC, the file
# written before must be intact, and space must come back after rm.
fs_fill_check() {
	local l rc msg size got want
	l=$(grep '^FILL ' "$RESULTS" || true)
	if [[ -z $l ]]; then
		fs_fail "fill: no result from the guest (it stopped before the fill)"
		return
	fi
	rc=${l#FILL rc=}
	rc=${rc%% *}
	msg=${l#FILL rc="$rc"}
	size=$(sed -n 's/^FILLSIZE //p' "$RESULTS")
	if [[ $rc == 0 ]]; then
		fs_fail "fill: dd wrote 64 MiB into an 8 MiB filesystem and exited 0 (fill.bin: $size bytes):$msg: a WRITE that failed on the server (ENOSPC) must be answered with an error (NFS4ERR_NOSPC), never NFS4_OK"
	elif [[ $rc == 137 ]]; then
		fs_fail "fill: dd did not finish within 120 s (killed; fill.bin: $size bytes): the client kept retrying?"
	elif [[ $msg != *"No space left on device"* ]]; then
		fs_fail "fill: dd failed (rc=$rc) but not with ENOSPC ('No space left on device'):$msg"
	else
		e2e_log "fill: dd failed with ENOSPC as it must (rc=$rc, fill.bin reached $size bytes):$msg"
	fi
	read -r got want < <(sed -n 's/^FILLKEEP //p' "$RESULTS")
	if [[ -z $got || $got != "$want" ]]; then
		fs_fail "fill: keep.bin, written before the fill, reads back in the guest (after drop_caches) with sha256 ${got:-none}, want $want"
	else
		e2e_log "fill: keep.bin, written before the fill, reads back intact"
	fi
	l=$(grep '^FILLAFTER ' "$RESULTS" || true)
	rc=${l#FILLAFTER rc=}
	rc=${rc%% *}
	if [[ $rc != 0 ]]; then
		fs_fail "fill: after removing fill.bin, writing after.bin failed (rc=${rc:-none}):${l#FILLAFTER rc="$rc"}: the space of the removed file did not come back?"
	fi
}

fs_check() {
	local v=$1 e n names=() l
	grep -qx FSDONE "$RESULTS" || fs_fail "v$v: the guest did not finish the filesystem phase (no FSDONE)"
	for e in ${E2E_FS_EXPORTS//,/ }; do names+=("${e%%:*}"); done
	[[ " ${names[*]} " == *" cross "* ]] || e2e_log "export cross (crossmnt) SKIPPED (E2E_FS_CROSS=0)"
	while IFS= read -r l; do
		read -r _ n e l <<<"$l"
		fs_fail "v$v: export $n: step $e FAILED in the guest: $l"
	done < <(grep '^FSERR ' "$RESULTS" || true)
	for n in "${names[@]}"; do fs_export "$n"; done
	[[ " ${names[*]} " != *" outer "* ]] || fs_fill_check
	# Nothing written through "outer" may land in B1, mounted over its proj.
	e2e_rw_manifest "$EXPORT/outer/proj" >"$WORK/host-after-b1.manifest"
	fs_diff outer b1 "$WORK/host-before-b1.manifest" "$WORK/host-after-b1.manifest" \
		"B1 (mounted at outer/proj on the host, hidden from the plain export) changed" || true
}
