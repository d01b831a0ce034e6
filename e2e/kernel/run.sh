#!/usr/bin/env bash
# Boot a Debian 6.12 kernel in qemu (TCG) and exercise an NFS server running
# on the host's 127.0.0.1:PORT with the kernel's own NFS client.
#
#   run.sh PORT EXPORT_DIR [VERS...]      default VERS: 4.2 4.1
#   run.sh --probe PORT                   boot + TCP round trip only
#
# For each version the guest mounts SERVER:/ (vers=V), runs ls -lR, hashes
# every file with sha256sum and dumps /proc/self/mountstats. The host compares
# the guest's listing + hashes with EXPORT_DIR's and, for 4.2, requires a
# non-zero, error-free READ_PLUS counter (and no fallback to READ).
#
# The guest reaches the server only as 10.0.2.100:2049, which qemu's
# restricted user-mode network forwards (guestfwd, one `nc 127.0.0.1 PORT`
# per guest connection) to 127.0.0.1:PORT. Nothing else is reachable.
#
# Environment:
#   E2E_TIMEOUT  seconds before qemu is killed (default 480)
#   E2E_WORK     where logs go (default e2e/kernel/.work)
#   E2E_MEM      guest memory in MiB (default 1024)
#   E2E_SMP      guest vCPUs (default 1)
#   E2E_CACHE    download/unpack cache (default e2e/kernel/.cache)
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

PROBE=
if [[ ${1:-} == --probe ]]; then
	PROBE=1
	shift
fi
PORT=${1:?usage: run.sh PORT EXPORT_DIR [VERS...] | run.sh --probe PORT}
shift
EXPORT=
if [[ -z $PROBE ]]; then
	EXPORT=${1:?usage: run.sh PORT EXPORT_DIR [VERS...]}
	shift
	[[ -d $EXPORT ]] || e2e_die "export dir $EXPORT does not exist"
fi
VERS=("$@")
((${#VERS[@]})) || VERS=(4.2 4.1)
for v in "${VERS[@]}"; do
	[[ $v =~ ^4\.[0-2]$ ]] || e2e_die "unsupported NFS version '$v' (want 4.0, 4.1 or 4.2)"
done
[[ $PORT =~ ^[0-9]+$ ]] || e2e_die "bad port '$PORT'"

TIMEOUT=${E2E_TIMEOUT:-480}
((TIMEOUT >= 60)) || e2e_die "E2E_TIMEOUT must be at least 60 seconds"
WORK=${E2E_WORK:-$E2E_KDIR/.work}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
CONSOLE=$WORK/console.log
RESULTS=$WORK/results.txt
rm -f "$CONSOLE" "$RESULTS"

e2e_host_deps
e2e_kernel
e2e_log "kernel $E2E_KVER"
INITRD=$WORK/initramfs.cpio.gz
e2e_initramfs "$INITRD"
e2e_log "initramfs $(du -h "$INITRD" | cut -f1), $(zcat "$INITRD" | cpio -it --quiet 2>/dev/null | grep -c "^modules/.*\.ko$") modules"

if [[ -z $PROBE ]]; then
	e2e_log "hashing host tree $EXPORT"
	e2e_manifest "$EXPORT" >"$WORK/host.manifest"
	e2e_log "host tree: $(wc -l <"$WORK/host.manifest") entries"
	MODE=nfs
else
	MODE=probe
fi
# Fail fast if nothing listens: guestfwd would just hand the guest a closed
# connection and the mount would spin until its timeout.
(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null || e2e_die "nothing listens on 127.0.0.1:$PORT"

vers_csv=$(IFS=,; echo "${VERS[*]}")
QEMU=(
	qemu-system-x86_64
	-nodefaults -no-user-config -no-reboot
	-machine pc -accel tcg -cpu max
	-m "${E2E_MEM:-1024}" -smp "${E2E_SMP:-1}"
	-display none
	-kernel "$E2E_VMLINUZ" -initrd "$INITRD"
	-append "console=ttyS0 panic=-1 quiet loglevel=4 e2e_mode=$MODE e2e_vers=$vers_csv e2e_deadline=$((TIMEOUT - 20))"
	-netdev "user,id=n0,restrict=on,net=10.0.2.0/24,guestfwd=tcp:10.0.2.100:2049-cmd:nc 127.0.0.1 $PORT"
	-device virtio-net-pci,netdev=n0
	-serial stdio
	-serial "file:$RESULTS"
)
printf '[e2e] qemu command line:\n ' >&2
printf ' %q' timeout -k 10 "$TIMEOUT" "${QEMU[@]}" >&2
printf '\n' >&2

# A snaplen-limited capture of the NFS traffic on lo (headers and ops, not
# file data), handy for post-mortems: open it with wireshark / tshark.
PCAP=$WORK/nfs.pcap
TPID=
rm -f "$PCAP"
if [[ -z $PROBE && ${E2E_PCAP:-1} == 1 ]] && command -v tcpdump >/dev/null; then
	tcpdump -i lo -n -s 512 -U -w "$PCAP" "tcp port $PORT" >"$WORK/tcpdump.log" 2>&1 &
	TPID=$!
	for _ in $(seq 1 30); do
		grep -q listening "$WORK/tcpdump.log" 2>/dev/null && break
		sleep 0.1
	done
fi
stop_pcap() {
	[[ -n $TPID ]] || return 0
	kill -INT "$TPID" 2>/dev/null || true
	wait "$TPID" 2>/dev/null || true
	TPID=
}
trap stop_pcap EXIT

start=$SECONDS
set +e
timeout -k 10 "$TIMEOUT" "${QEMU[@]}" </dev/null 2>&1 | tee "$CONSOLE"
qrc=${PIPESTATUS[0]}
set -e
elapsed=$((SECONDS - start))
stop_pcap
e2e_log "qemu exited rc=$qrc after ${elapsed}s; console: $CONSOLE; results: $RESULTS"

fails=()
fail() {
	fails+=("$*")
	printf '[e2e] FAIL: %s\n' "$*" >&2
}
[[ -f $RESULTS ]] || touch "$RESULTS"
# The serial port may add CRs.
sed -i 's/\r$//' "$RESULTS"

if ((qrc == 124 || qrc == 137)); then
	fail "TIMEOUT: qemu killed after ${TIMEOUT}s (guest hung; see the console above / $CONSOLE)"
elif ((qrc != 0)); then
	fail "qemu exited with status $qrc"
fi
grep -qx DONE "$RESULTS" || fail "guest did not finish (no DONE record)"
while IFS= read -r l; do fail "guest: ${l#ERR }"; done < <(grep '^ERR ' "$RESULTS" || true)

if [[ -n $PROBE ]]; then
	reply=$(sed -n 's/^PROBE //p' "$RESULTS")
	if [[ -n $reply ]]; then
		e2e_log "probe: guest got '$reply' from the host through guestfwd"
	else
		fail "probe: guest got no reply from 127.0.0.1:$PORT via 10.0.2.100:2049"
	fi
fi

npass=0 nfail=0
for v in "${VERS[@]}"; do
	[[ -z $PROBE ]] || break
	nf0=${#fails[@]}
	mline=$(grep "^MOUNT $v " "$RESULTS" || true)
	case $mline in
	"MOUNT $v ok"*) e2e_log "v$v: mounted (${mline#MOUNT $v ok })" ;;
	"MOUNT $v fail"*)
		fail "v$v: MOUNT FAILED: ${mline#MOUNT $v fail }"
		nfail=$((nfail + 1))
		continue
		;;
	*)
		fail "v$v: no mount result (the mount hung or the guest stopped before it)"
		nfail=$((nfail + 1))
		continue
		;;
	esac
	sed -n "s/^M $v //p" "$RESULTS" >"$WORK/guest-$v.manifest"
	if ! diff -u "$WORK/host.manifest" "$WORK/guest-$v.manifest" >"$WORK/diff-$v.txt"; then
		echo "---- host vs guest (v$v) listing/checksum differences ----" >&2
		head -n 60 "$WORK/diff-$v.txt" >&2
		bad=$(grep -c '^+[FDLO] ' "$WORK/diff-$v.txt" || true)
		fail "v$v: CHECKSUM/LISTING MISMATCH ($bad guest entries differ; full diff in $WORK/diff-$v.txt)"
	else
		e2e_log "v$v: all $(grep -c '^F ' "$WORK/host.manifest") files match the host's sha256 ($(wc -l <"$WORK/host.manifest") entries)"
	fi
	stat_of() { awk -v v="$v" -v op="$1" -v f="$2" '$1=="STAT" && $2==v && $3==op {print $f; found=1} END{if(!found) print 0}' "$RESULTS" | head -n1; }
	rp=$(stat_of READ_PLUS 4)
	rpe=$(stat_of READ_PLUS 5)
	rd=$(stat_of READ 4)
	e2e_log "v$v: mountstats READ_PLUS ops=$rp errors=$rpe, READ ops=$rd"
	if [[ $v == 4.2 ]]; then
		if ((rp == 0)); then
			fail "v4.2: READ_PLUS counter is 0 in /proc/self/mountstats: the client never used READ_PLUS"
		elif ((rpe >= rp)); then
			fail "v4.2: every READ_PLUS failed ($rpe/$rp errors): server rejected READ_PLUS"
		elif ((rd > 0)); then
			fail "v4.2: client fell back to READ ($rd READs besides $rp READ_PLUS): server rejected READ_PLUS"
		else
			e2e_log "v4.2: READ_PLUS used ($rp ops, $rpe errors), no plain READ"
		fi
	fi
	if ((${#fails[@]} == nf0)); then npass=$((npass + 1)); else nfail=$((nfail + 1)); fi
done

if ((${#fails[@]})); then
	[[ -n $PROBE ]] || echo "e2e-kernel: $npass passed, $nfail failed"
	{
		echo
		echo "================ e2e (kernel client) FAILED ================"
		printf '  - %s\n' "${fails[@]}"
		echo "  console log: $CONSOLE"
		echo "  results:     $RESULTS"
		[[ -s $PCAP ]] && echo "  packets:     $PCAP (snaplen 512)"
		echo "============================================================"
	} >&2
	exit 1
fi
[[ -n $PROBE ]] || echo "e2e-kernel: $npass passed, 0 failed"
what="NFS ${VERS[*]}"
[[ -z $PROBE ]] || what="probe (boot + guestfwd)"
echo "================ e2e (kernel client) PASSED: $what in ${elapsed}s ================"
