#!/usr/bin/env bash
# build.sh: build libnfs's nfs-ls, nfs-cat and nfs-cp from the vendored
# source (src/, see src/UPSTREAM) into e2e/libnfs/.cache/bin, with only a C
# compiler (gcc or cc, libc headers): config.h is written for Linux/glibc, so
# neither cmake nor autotools is needed. About 10-30 s on 2 cores; a second
# run with the same sources does nothing. Prints the bin directory.
#
# Why: Debian 12's libnfs-utils (libnfs 4.0.0) cannot WRITE over NFSv4 (its
# COMPOUND buffer is 4 KiB, so nfs-cp's 1 MiB WRITE fails before it is sent;
# fixed upstream in libnfs 5.0.0), and the e2e test TestNFS3Libnfs needs an
# NFSv4.0 client that writes.
#
# LIBNFS_CACHE: the cache directory (default e2e/libnfs/.cache); CC: the
# compiler (default gcc, else cc).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$here/src
cache=${LIBNFS_CACHE:-$here/.cache}
cc=${CC:-$(command -v gcc || command -v cc || true)}
[[ -n $cc ]] || { echo "build.sh: no C compiler (gcc or cc)" >&2; exit 1; }
mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9 # one build at a time (go test runs packages in parallel)

stamp=$( (cd "$here" && cat build.sh config.h && find src -type f | LC_ALL=C sort | xargs cat && "$cc" --version | head -1) | sha256sum | cut -d' ' -f1)
tools="nfs-ls nfs-cat nfs-cp"
ok=1
for t in $tools; do [[ -x $cache/bin/$t ]] || ok=0; done
if ((ok)) && [[ $(cat "$cache/stamp" 2>/dev/null) == "$stamp" ]]; then
	echo "$cache/bin"
	exit 0
fi

t0=$SECONDS
obj=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$obj"' EXIT
cflags=(-O2 -g0 -w -pthread -DHAVE_CONFIG_H "-D_U_=__attribute__((unused))" -I"$here"
	-I"$src/include" -I"$src/include/nfsc" -I"$src/mount" -I"$src/nfs" -I"$src/nfs4"
	-I"$src/nlm" -I"$src/nsm" -I"$src/portmap" -I"$src/rquota")
export cc obj src
libsrc=$(cd "$src" && ls lib/*.c mount/*.c nfs/*.c nfs4/*.c nlm/*.c nsm/*.c portmap/*.c rquota/*.c)
# shellcheck disable=SC2016
printf '%s\n' $libsrc | xargs -P "$(nproc)" -I{} sh -c \
	'"$cc" "$@" -c "$src/{}" -o "$obj/$(echo {} | tr / _).o" || { echo "build.sh: {} failed" >&2; exit 255; }' \
	sh "${cflags[@]}"
ar rcs "$obj/libnfs.a" "$obj"/*.o
mkdir -p "$obj/bin"
for t in $tools; do
	"$cc" "${cflags[@]}" "$src/utils/$t.c" "$obj/libnfs.a" -o "$obj/bin/$t"
done
rm -rf "$cache/bin"
mv "$obj/bin" "$cache/bin"
echo "$stamp" >"$cache/stamp"
echo "build.sh: libnfs $(sed -n '1s/.*commit \(.\{12\}\).*/\1/p' "$src/UPSTREAM") tools built in $((SECONDS - t0))s" >&2
echo "$cache/bin"
