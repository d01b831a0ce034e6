#!/usr/bin/env bash
# Create the e2e export tree in DIR (emptied first).  Usage: mktree.sh DIR
set -euo pipefail
DIR=${1:?usage: mktree.sh DIR}
rm -rf "$DIR"
mkdir -p "$DIR"
cd "$DIR"
printf 'hello from nfsd-uring\nsecond line\n' >small.txt
# 64 MiB of random data.
head -c $((64 << 20)) /dev/urandom >random-64M.bin
# 64 MiB, fully sparse.
truncate -s 64M sparse-64M.bin
# 16 MiB alternating 4 KiB data / 32 KiB hole (data at each 36 KiB stride).
truncate -s 16M holey-16M.bin
i=0
for ((off = 0; off + 4096 <= 16 << 20; off += 36864)); do
	dd if=/dev/urandom of=holey-16M.bin bs=4096 count=1 seek=$((off / 4096)) conv=notrunc status=none
	i=$((i + 1))
done
# Odd size, not a multiple of any block or page size.
head -c 1000003 /dev/urandom >odd-1000003.bin
mkdir -p dir/sub/deeper
printf 'a\n' >dir/a.txt
head -c 5000 /dev/urandom >dir/sub/b.bin
printf 'deep\n' >dir/sub/deeper/c.txt
: >dir/empty
ln -s small.txt link-to-small
ln -s dir/sub/b.bin dir-link
echo "made $(find . -mindepth 1 | wc -l) entries in $DIR ($(du -sh . | cut -f1) on disk, holey-16M has $i data extents)"
