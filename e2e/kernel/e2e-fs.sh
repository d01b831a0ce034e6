#!/usr/bin/env bash
# The kernel e2e's filesystem phase (run by e2e.sh after the main one):
# ext4 filesystems mounted inside the exports, files with equal inode
# numbers on both sides of a mount point, and a filesystem filled up.
#
# Host layout (under $E2E_WORK/fs/x), four fresh 8 MiB ext4 images, so that
# the first regular file of each has inode 12 and every root inode 2:
#
#   outer/             fs A1, export "outer" (plain)
#     a.txt            inode 12 on A1
#     proj/            mount point of fs B1 ...
#       hidden.txt     ... written on A1 before B1 was mounted over it
#     (proj on B1:     b.txt, inode 12 on B1)
#   cross/             fs A2, export "cross" (crossmnt)
#     c.txt            inode 12 on A2
#     proj/            mount point of fs B2 (d.txt, inode 12 on B2), over
#                      hidden2.txt on A2
#   under-outer/       a non-recursive bind mount of outer: A1 alone, so
#                      under-outer/proj is the directory beneath B1
#
# The server runs with --export outer=x/outer --export cross=x/cross,crossmnt.
# knfsd's rule (exports(5), no crossmnt/nohide): a plain export shows the
# directory beneath a mount point, so the guest must see proj/hidden.txt in
# "outer" and write to A1 there; with crossmnt it crosses into B2, which has
# its own fsid (the Linux client makes an automatic submount). The guest
# (guest-fs.sh) lists both trees before and after writing on all four sides
# (incl. over the equal-inode files); the host compares every file's sha256
# with its own view (under-outer, and cross through the mount). Then it
# fills A1 through "outer": dd must fail with ENOSPC, the file written
# before must be intact, and after removing the filler a write works again.
#
# Environment: E2E_FS_BIN (server binary; built if unset), ENGINE,
# E2E_SERVER_ARGS, E2E_WORK, E2E_FS_VERS (one NFS version, default 4.2),
# E2E_FS_CROSS=0 (no crossmnt export: for servers without the option; its
# checks are reported SKIPPED), plus run.sh's.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=lib.sh
. e2e/kernel/lib.sh

ENGINE=${ENGINE:-portable}
VERS=${E2E_FS_VERS:-4.2}
[[ $VERS =~ ^4\.[12]$ ]] || e2e_die "E2E_FS_VERS must be one version, 4.1 or 4.2 (got '$VERS')"
WORK=${E2E_WORK:-$E2E_KDIR/.work}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
FWORK=$WORK/fs
FSX=$FWORK/x
IMG=$FWORK/img
SLOG=$FWORK/server.log
CROSS=${E2E_FS_CROSS:-1}

skip() {
	echo "[e2e] filesystem phase SKIPPED: $*" >&2
	exit 0
}
[[ $(id -u) == 0 ]] || skip "not root (needs loop devices and mount)"
e2e_need_pkgs e2fsprogs
[[ -e /dev/loop-control ]] || modprobe loop 2>/dev/null || true
[[ -e /dev/loop-control ]] || skip "no loop device support (/dev/loop-control missing)"

# fs_umount_all: unmount everything under $FSX, deepest first (a run that
# was killed may have left mounts behind). The loop devices go with the
# mounts (mount -o loop sets autoclear).
fs_umount_all() {
	local m
	[[ -d $FSX ]] || return 0
	while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" || echo "[e2e] cannot unmount $m" >&2
	done < <(awk -v p="$FSX/" 'index($2, p) == 1 {print $2}' /proc/mounts | sort -r)
}
cleanup() {
	e2e_stop_server
	fs_umount_all
}
trap cleanup EXIT
# Killed or interrupted: exit, so that the EXIT trap unmounts.
trap 'exit 130' INT
trap 'exit 143' TERM
fs_umount_all
rm -rf "$FWORK"
mkdir -p "$FSX" "$IMG"

# mkimg NAME: a fresh 8 MiB ext4 image (1 KiB blocks, no reserved blocks,
# inode tables written now so nothing changes them in the background).
mkimg() {
	truncate -s 8M "$IMG/$1.img"
	mkfs.ext4 -q -F -b 1024 -m 0 -E lazy_itable_init=0,lazy_journal_init=0 "$IMG/$1.img" ||
		e2e_die "mkfs.ext4 $IMG/$1.img failed"
}
# mountimg NAME DIR
mountimg() {
	local out
	mkdir -p "$2"
	out=$(mount -o loop "$IMG/$1.img" "$2" 2>&1) || skip "cannot loop-mount an ext4 image here: $out"
}
# rnd FILE BYTES [TEXT]: TEXT then BYTES random bytes.
rnd() {
	{
		[[ -z ${3:-} ]] || printf '%s\n' "$3"
		head -c "$2" /dev/urandom
	} >"$1"
}

e2e_log "filesystem phase: making 4 ext4 images in $IMG, mounting them under $FSX"
for n in a1 b1 a2 b2; do mkimg "$n"; done
# A1 first: a.txt is its first file (inode 12), then what B1 will cover.
mountimg a1 "$FSX/outer"
rnd "$FSX/outer/a.txt" 100003 "a.txt on A1 (outer)"
mkdir "$FSX/outer/proj" "$FSX/outer/dir"
rnd "$FSX/outer/proj/hidden.txt" 5001 "hidden.txt on A1, beneath the mount at proj"
rnd "$FSX/outer/dir/x.bin" 20000
mountimg b1 "$FSX/outer/proj"
rnd "$FSX/outer/proj/b.txt" 70001 "b.txt on B1 (mounted at outer/proj)"
mkdir "$FSX/outer/proj/sub"
rnd "$FSX/outer/proj/sub/y.bin" 3000
mountimg a2 "$FSX/cross"
rnd "$FSX/cross/c.txt" 90001 "c.txt on A2 (cross)"
mkdir "$FSX/cross/proj"
rnd "$FSX/cross/proj/hidden2.txt" 4001 "hidden2.txt on A2, beneath the mount at proj"
mountimg b2 "$FSX/cross/proj"
rnd "$FSX/cross/proj/d.txt" 60001 "d.txt on B2 (mounted at cross/proj)"
mkdir -p "$FSX/cross/proj/sub/deeper"
rnd "$FSX/cross/proj/sub/deeper/z.bin" 7000
mkdir -p "$FSX/under-outer"
mount --bind "$FSX/outer" "$FSX/under-outer" || e2e_die "mount --bind $FSX/outer $FSX/under-outer failed"
sync

# The point of the layout: equal inode numbers on different filesystems.
ino() { stat -c '%i' "$1"; }
dev() { stat -c '%D' "$1"; }
e2e_log "inode numbers: outer/a.txt $(ino "$FSX/outer/a.txt") (dev $(dev "$FSX/outer")), outer/proj/b.txt $(ino "$FSX/outer/proj/b.txt") (dev $(dev "$FSX/outer/proj")), cross/c.txt $(ino "$FSX/cross/c.txt") (dev $(dev "$FSX/cross")), cross/proj/d.txt $(ino "$FSX/cross/proj/d.txt") (dev $(dev "$FSX/cross/proj")); roots: $(ino "$FSX/outer") $(ino "$FSX/outer/proj") $(ino "$FSX/cross") $(ino "$FSX/cross/proj"); underlying outer/proj: $(ino "$FSX/under-outer/proj")"
for f in outer/a.txt outer/proj/b.txt cross/c.txt cross/proj/d.txt; do
	[[ $(ino "$FSX/$f") == "$(ino "$FSX/outer/a.txt")" ]] || e2e_die "harness: $f has inode $(ino "$FSX/$f"), not $(ino "$FSX/outer/a.txt") like outer/a.txt (mkfs.ext4 numbering changed?)"
done
[[ $(dev "$FSX/outer") != "$(dev "$FSX/outer/proj")" ]] || e2e_die "harness: outer/proj is not a mount point"
[[ -f $FSX/under-outer/proj/hidden.txt ]] || e2e_die "harness: the bind mount does not show the directory beneath outer/proj"

# The host's views before the guest runs (compared with the guest's first
# listing): outer without B1, B1 alone, cross with B2.
e2e_rw_manifest "$FSX/under-outer" >"$FWORK/host-before-outer.manifest"
e2e_rw_manifest "$FSX/outer/proj" >"$FWORK/host-before-b1.manifest"
e2e_rw_manifest "$FSX/cross" >"$FWORK/host-before-cross.manifest"

if [[ -z ${E2E_FS_BIN:-} ]]; then
	E2E_FS_BIN=$FWORK/nfsd-uring
	go build -o "$E2E_FS_BIN" ./cmd/nfsd-uring || e2e_die "go build ./cmd/nfsd-uring failed"
fi
exports=(--export "outer=$FSX/outer")
guest_exports=outer:/
if [[ $CROSS == 1 ]]; then
	exports+=(--export "cross=$FSX/cross,crossmnt")
	guest_exports=outer:/outer,cross:/cross
else
	e2e_log "the crossmnt export SKIPPED (E2E_FS_CROSS=0): only 'outer', served as the root"
fi
# shellcheck disable=SC2086
e2e_start_server "$E2E_FS_BIN" "$SLOG" "${exports[@]}" --engine "$ENGINE" --state-dir "$FWORK/state" ${E2E_SERVER_ARGS:-}

set +e
E2E_WORK=$FWORK E2E_FS_EXPORTS=$guest_exports E2E_SERVER_LOG=$SLOG E2E_SERVER_PID=$E2E_SPID \
	e2e/kernel/run.sh --fs "$E2E_PORT" "$FSX" "$VERS"
rc=$?
set -e
e2e_server_verdict "$SLOG" "$rc"
