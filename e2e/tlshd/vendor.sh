#!/usr/bin/env bash
# vendor.sh GITDIR [REV]: refresh e2e/tlshd/src from a ktls-utils git
# repository (oracle/ktls-utils; REV default ktls-utils-0.11). Only what
# build.sh compiles is kept (src/tlshd's C sources and headers, the sample
# tlshd.conf and the two man pages) with the licence files; autotools
# files, systemd units, docs and CI files are left out.
set -euo pipefail
gitdir=${1:?usage: vendor.sh GITDIR [REV]}
rev=${2:-ktls-utils-0.11}
here=$(cd "$(dirname "$0")" && pwd)
commit=$(git --git-dir="$gitdir" rev-parse "$rev^{commit}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git --git-dir="$gitdir" archive "$commit" | tar -x -C "$tmp"
rm -rf "$here/src"
mkdir -p "$here/src"
cd "$tmp"
{
	echo COPYING THIRD_PARTY_LICENSES README.md
	ls src/tlshd/*.c src/tlshd/*.h
	echo src/tlshd/tlshd.conf src/tlshd/tlshd.conf.man src/tlshd/tlshd.man
} | tr ' ' '\n' | grep . | sort -u | while read -r f; do
	d=$here/src/${f#src/} # src/tlshd/X -> src/tlshd/X, not src/src/...
	mkdir -p "$(dirname "$d")"
	cp "$f" "$d"
done
cat >"$here/src/UPSTREAM" <<EOT
ktls-utils (https://github.com/oracle/ktls-utils), tag $rev, commit $commit
($(git --git-dir="$gitdir" log -1 --format='%cd, %s' --date=short "$commit")).
A subset of its tree, unmodified: made by e2e/tlshd/vendor.sh, built by
e2e/tlshd/build.sh. Licence: GPL-2.0 (COPYING); src/tlshd/netlink.h is
the kernel's generated uapi header (GPL-2.0 WITH Linux-syscall-note OR
BSD-3-Clause). A test tool only: nothing of it is linked into nfsd-uring.
EOT
du -sh "$here/src"
