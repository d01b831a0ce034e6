#!/usr/bin/env bash
# vendor.sh GITDIR [REV]: refresh e2e/libnfs/src from a libnfs git
# repository (sahlberg/libnfs; REV default HEAD). Only what build.sh compiles
# is kept (the library, the generated XDR code of each protocol, nfs-ls,
# nfs-cat, nfs-cp) with the licence files; the .x sources, cmake/autotools
# files, tests, examples and ports are left out.
set -euo pipefail
gitdir=${1:?usage: vendor.sh GITDIR [REV]}
rev=${2:-HEAD}
here=$(cd "$(dirname "$0")" && pwd)
commit=$(git --git-dir="$gitdir" rev-parse "$rev^{commit}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git --git-dir="$gitdir" archive "$commit" | tar -x -C "$tmp"
rm -rf "$here/src"
mkdir -p "$here/src"
cd "$tmp"
{
	echo COPYING LICENCE-BSD.txt LICENCE-GPL-3.txt LICENCE-LGPL-2.1.txt
	echo include/*.h include/nfsc/*.h
	echo lib/init.c lib/krb5-wrapper.c lib/krb5-wrapper.h lib/libnfs.c lib/libnfs-sync.c \
		lib/libnfs-zdr.c lib/multithreading.c lib/nfs_v3.c lib/nfs_v4.c lib/pdu.c lib/socket.c
	for p in mount nfs nfs4 nlm nsm portmap rquota; do
		ls $p/*.c $p/libnfs-raw-*.h
	done
	echo utils/nfs-ls.c utils/nfs-cat.c utils/nfs-cp.c
} | tr ' ' '\n' | grep . | sort -u | while read -r f; do
	mkdir -p "$here/src/$(dirname "$f")"
	cp "$f" "$here/src/$f"
done
cat >"$here/src/UPSTREAM" <<EOT
libnfs (https://github.com/sahlberg/libnfs), commit $commit
($(git --git-dir="$gitdir" log -1 --format='%cd, %s' --date=short "$commit")).
A subset of its tree, unmodified: made by e2e/libnfs/vendor.sh, built by
e2e/libnfs/build.sh. Licences: COPYING (library LGPL-2.1+, see
LICENCE-LGPL-2.1.txt; the generated protocol code simplified BSD, see
LICENCE-BSD.txt; the utilities GPL-3+, see LICENCE-GPL-3.txt).
EOT
du -sh "$here/src"
