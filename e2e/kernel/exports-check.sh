# shellcheck shell=bash
# The host's verdict on the exports phase (e2e-exports.sh); sourced by
# run.sh --exports after qemu exited. Uses run.sh's fail, RESULTS, WORK and
# EXPORT (e2e-exports.sh's directory holding ro, sq and hidden).

ex_check() {
	local line n=0
	grep -q '^EXDONE' "$RESULTS" || fail "exports phase: the guest did not finish (no EXDONE)"
	while IFS= read -r line; do
		case $line in
		"EXMOUNT "*" fail "*) fail "exports phase: ${line#EXMOUNT }" ;;
		"EXR "*" pass"*) n=$((n + 1)) ;;
		"EXR "*) fail "exports phase: step ${line#EXR }" ;;
		esac
	done < <(tr -d '\r' <"$RESULTS")
	e2e_log "exports phase: $n guest steps did what they must"
	local ls
	ls=$(tr -d '\r' <"$RESULTS" | sed -n 's/^EXLS //p' | xargs)
	[[ $ls == "ro sq" ]] || fail "exports phase: the pseudo directory $EXPORT lists '$ls', want 'ro sq' (hidden is exported to another address only)"
	local f own
	for f in sq/by-root sq/dir-by-root; do
		own=$(stat -c %u:%g "$EXPORT/$f" 2>/dev/null || echo missing)
		[[ $own == 65534:65534 ]] || fail "exports phase: $f made by the guest's root is owned by $own, want 65534:65534 (root_squash)"
	done
	[[ $(cat "$EXPORT/ro/ro.txt") == "read-only data" ]] || fail "exports phase: ro/ro.txt changed"
	[[ $(stat -c %a "$EXPORT/ro/ro.txt") == 644 ]] || fail "exports phase: ro/ro.txt's mode changed"
	[[ ! -e $EXPORT/ro/new && ! -e $EXPORT/ro/d && ! -e $EXPORT/ro/moved ]] || fail "exports phase: something was created in ro"
	[[ $(cat "$EXPORT/sq/rootfile") == "root's" ]] || fail "exports phase: sq/rootfile was written through root_squash"
}
ex_check
