#!/usr/bin/env bash
# ktls.sh: proof of RPC-with-TLS's kernel TLS path (issue 24) on the
# guest's Linux 6.12, whose tls module the host may lack. The guest runs,
# on its own loopback, with the tls module loaded:
#   rpctls.test  TestStartTLS, TestPipelinedAfterHandshake: the handshake,
#                then kTLS (setsockopt TCP_ULP "tls", TLS_TX, TLS_RX from
#                the traffic secrets) carrying data both ways;
#   e2e.test     TestTLS with NFSD_ENGINE=uring and =portable: our client
#                mounts over TLS, reads and writes, xprtsec= refusals;
# all with RPCTLS_REQUIRE_KTLS=1, so a connection that fell back to the
# user-space pump fails the run. Static test binaries (CGO_ENABLED=0), a
# busybox initramfs of its own; no NFS client in the guest (the Linux
# client over TLS, with tlshd, is e2e-tlshd.sh).
#
#   flock /work/wt/_notes/qemu.lock bash e2e/kernel/ktls.sh
#
# Env: E2E_TIMEOUT (900 s), E2E_MEM (1024), E2E_WORK (e2e/kernel/.work/ktls).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

TIMEOUT=${E2E_TIMEOUT:-900}
WORK=${E2E_WORK:-$E2E_KDIR/.work/ktls}
ROOT=$(cd "$E2E_KDIR/../.." && pwd)
mkdir -p "$WORK"
e2e_host_deps
e2e_kernel
e2e_log "kernel $E2E_KVER"

e2e_log "building static test binaries"
(cd "$ROOT" && CGO_ENABLED=0 go test -c -o "$WORK/rpctls.test" ./rpctls && CGO_ENABLED=0 go test -c -o "$WORK/e2e.test" ./e2e) ||
	e2e_die "go test -c failed"

stage=$(mktemp -d "${TMPDIR:-/tmp}/ktls-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT
chmod 755 "$stage"
mkdir -p "$stage"/{bin,sbin,dev,proc,sys,tmp,modules}
mknod -m 600 "$stage/dev/console" c 5 1 || e2e_die "mknod /dev/console failed (run as root)"
mknod -m 666 "$stage/dev/null" c 1 3
cp /bin/busybox "$stage/bin/busybox"
cp "$WORK/rpctls.test" "$WORK/e2e.test" "$stage/bin/"
# The tls module and its AEADs (there is no modprobe in the guest).
e2e_stage_modules "$stage/modules" --optional "${E2E_TLS_MODULES[@]}"
cat >"$stage/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs -o size=512m tmp /tmp
ip link set lo up
echo "KTLS-GUEST kernel $(uname -r)"
for m in $(cat /modules/order); do
	insmod /modules/$m 2>/dev/null && echo "KTLS-GUEST loaded $m" || echo "KTLS-GUEST cannot load $m"
done
export RPCTLS_REQUIRE_KTLS=1 TMPDIR=/tmp HOME=/tmp
rc=0
cd /tmp
/bin/rpctls.test -test.v -test.count=1 -test.run 'TestStartTLS|TestPipelinedAfterHandshake|TestKTLSKeys' || rc=1
for e in uring portable; do
	NFSD_ENGINE=$e /bin/e2e.test -test.v -test.count=1 -test.timeout 240s -test.run '^TestTLS$' || rc=1
done
echo "KTLS-GUEST RESULT rc=$rc"
sync
poweroff -f
INIT
chmod 755 "$stage/init"
(cd "$stage" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0) | gzip -1 >"$WORK/initramfs.cpio.gz"

e2e_log "booting the guest (TCG; a few minutes)"
timeout -k 10 "$TIMEOUT" qemu-system-x86_64 -nodefaults -no-user-config -no-reboot \
	-machine pc -accel tcg -cpu max -m "${E2E_MEM:-1024}" -smp 1 -display none \
	-kernel "$E2E_VMLINUZ" -initrd "$WORK/initramfs.cpio.gz" \
	-append "console=ttyS0 panic=-1 quiet loglevel=4" \
	-serial stdio </dev/null >"$WORK/console.log" 2>&1 || true
grep -E "KTLS-GUEST|^(=== RUN|--- |PASS|FAIL|ok )|kernel TLS|connections plaintext" "$WORK/console.log" || true
grep -q "KTLS-GUEST RESULT rc=0" "$WORK/console.log" || e2e_die "kTLS guest run failed: $WORK/console.log"
echo "[e2e] PASS: kernel TLS in the $E2E_KVER guest (console: $WORK/console.log)"
