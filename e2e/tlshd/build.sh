#!/usr/bin/env bash
# build.sh: build tlshd (the kernel's TLS handshake agent, ktls-utils 0.11,
# vendored in src/, see src/UPSTREAM) from source with one gcc line, into
# $TLSHD_CACHE/tlshd (default e2e/kernel/.work/tlshd-build, ignored by
# git). config.h replaces autotools. A few seconds on 2 cores; a second run
# with the same sources does nothing. Prints the binary's path.
#
# Why: Debian 12 has no ktls-utils package, and the kernel e2e's TLS phase
# (e2e/kernel/e2e-tlshd.sh) needs tlshd in the guest: the Linux NFS
# client's xprtsec=tls hands the handshake to it over the "handshake"
# generic netlink family.
#
# Needs: gcc, pkg-config and Debian 12's libgnutls28-dev, libglib2.0-dev,
# libnl-3-dev, libnl-genl-3-dev, libkeyutils-dev (installed if missing and
# root; TLSHD_NO_APT=1 only checks). CC picks the compiler.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$here/src/tlshd
cache=${TLSHD_CACHE:-$here/../kernel/.work/tlshd-build}
cc=${CC:-$(command -v gcc || command -v cc || true)}
[[ -n $cc ]] || { echo "build.sh: no C compiler (gcc or cc)" >&2; exit 1; }
pkgs=(pkg-config libgnutls28-dev libglib2.0-dev libnl-3-dev libnl-genl-3-dev libkeyutils-dev)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
	if [[ ${TLSHD_NO_APT:-} != 1 && $(id -u) == 0 ]]; then
		echo "build.sh: apt-get install ${missing[*]}" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
			{ echo "build.sh: apt-get install ${missing[*]} failed" >&2; exit 1; }
	else
		echo "build.sh: missing packages: ${missing[*]}" >&2
		exit 1
	fi
fi
mods="gnutls libkeyutils glib-2.0 libnl-3.0 libnl-genl-3.0"
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
exec 9>"$cache/lock"
flock 9

stamp=$( (cd "$here" && cat build.sh config.h && find src -type f | LC_ALL=C sort | xargs cat &&
	"$cc" --version | head -1 && pkg-config --modversion $mods) | sha256sum | cut -d' ' -f1)
if [[ -x $cache/tlshd && $(cat "$cache/stamp" 2>/dev/null) == "$stamp" ]]; then
	echo "$cache/tlshd"
	exit 0
fi
t0=$SECONDS
# shellcheck disable=SC2046,SC2086
"$cc" -O2 -g0 -Wall -I"$here" -I"$src" $(pkg-config --cflags $mods) \
	"$src"/*.c -o "$cache/tlshd.new" $(pkg-config --libs $mods)
mv "$cache/tlshd.new" "$cache/tlshd"
echo "$stamp" >"$cache/stamp"
echo "build.sh: tlshd ($(sed -n '1s/.*tag \([^,]*\), commit \(.\{12\}\).*/\1 \2/p' "$here/src/UPSTREAM")) built in $((SECONDS - t0))s" >&2
echo "$cache/tlshd"
