#!/usr/bin/env bash
# The kernel e2e's TLS phase: the Linux 6.12 NFS client mounts nfsd-uring
# over RPC-with-TLS (RFC 9289) with xprtsec=tls and xprtsec=mtls, as users
# do: the kernel's AUTH_TLS probe, the handshake by the user-space agent
# tlshd (ktls-utils 0.11, built from e2e/tlshd/src by e2e/tlshd/build.sh),
# the record layer in the guest kernel's kTLS. Runs alone as
# e2e/kernel/e2e-tlshd.sh (`make e2e-tlshd`), in qemu (TCG), one boot
# (guest-tlshd.sh is the guest's init):
#
#   - a throw-away CA (openssl), a server certificate for nfs-server.test
#     (the guest's /etc/hosts maps it to 10.0.2.100, the guestfwd address)
#     and a client certificate for mtls;
#   - nfsd-uring --exports FILE --tls-cert --tls-key --tls-client-ca, with
#     X/tls (xprtsec=tls:mtls) and X/mtls (xprtsec=mtls), --metrics;
#   - the guest: tlshd with /etc/tlshd.conf (the CA as its trust store, the
#     client certificate and key); mount.nfs (the host's nfs-common, with
#     its libraries) vers=4.2: xprtsec=none of X/tls refused; xprtsec=tls of
#     X/tls: a 1.4 MB file of known bytes written, read back byte-exact
#     after drop_caches, ls -l, umount; xprtsec=tls of X/mtls refused (no
#     client certificate); xprtsec=mtls,nconnect=2 of X/mtls (two TLS
#     connections): the same write and read;
#   - the restart step (E2E_TLSHD_RESTART=1, the default), under the tls
#     mount: the host kills its server (SIGKILL) and starts it again on the
#     same port and state directory; the client reconnects (a new AUTH_TLS
#     probe and handshake), reads the file back and writes tls.bin.2;
#   - the local step (E2E_TLSHD_LOCAL=1, the default): the same server
#     binary (static) runs in the guest too (--engine uring, or
#     E2E_TLSHD_LOCAL_ENGINE), where the tls module is loaded, so kTLS
#     carries the records on both sides; the guest mounts it as
#     nfs-local.test (127.0.0.1) with xprtsec=tls, writes and reads back,
#     and its metrics must count a kTLS connection
#     (rpctls_ktls_connections_total; the host's server may have none);
#     then the guest kills it (SIGKILL) and starts it again on the same
#     state directory: the client reconnects (a new AUTH_TLS probe and
#     tlshd handshake), reads the file back and writes a second one.
#
# Verdict (plain shell): every "TLSHD STEP ok" record, no fail or ERR,
# DONE; the host's sha256 of both files in the exports equals data.bin's
# and the guest's; the server's metrics count at least 2 TLS connections
# (rpctls_ktls_ or _user_tls_connections_total: user space here when the
# host lacks the tls module) and the log shows them; tlshd logged 2+
# successful handshakes; and the capture (tcpdump on lo, the relay's side):
# the data's marker text never appears in cleartext, a ClientHello for
# nfs-server.test is there, and (with tshark) every connection that began
# with an AUTH_TLS probe carries no other cleartext RPC call.
#
# Environment: E2E_TLSHD_BIN (server binary; built if unset), ENGINE,
# E2E_SERVER_ARGS, E2E_WORK, E2E_TLSHD_TIMEOUT (default 420), E2E_MEM,
# E2E_TLSHD_MTLS (1; 0 leaves out the mtls steps), E2E_TLSHD_LOCAL (1),
# E2E_TLSHD_LOCAL_ENGINE (uring), E2E_TLSHD_RESTART (1), E2E_PCAP (1). Logs in
# .work/tlshd/.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=lib.sh
. e2e/kernel/lib.sh

T0=$SECONDS
ENGINE=${ENGINE:-portable}
TIMEOUT=${E2E_TLSHD_TIMEOUT:-420}
MTLS=${E2E_TLSHD_MTLS:-1}
LOCAL=${E2E_TLSHD_LOCAL:-1}
RESTART=${E2E_TLSHD_RESTART:-1}
LOCAL_ENGINE=${E2E_TLSHD_LOCAL_ENGINE:-uring}
WORK=${E2E_WORK:-$E2E_KDIR/.work}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
NW=$WORK/tlshd
SLOG=$NW/server.log
HLOG=$NW/host.log
RESULTS=$NW/results.txt
CONSOLE=$NW/console.log
rm -rf "$NW"
mkdir -p "$NW/x/tls" "$NW/x/mtls" "$NW/state" "$NW/pki"
: >"$HLOG"
: >"$RESULTS"
log() { e2e_hlog "$@"; }

BIN=$(e2e_server_bin "${E2E_TLSHD_BIN:-}" "$NW/nfsd-uring")
# The guest's own server (the local step): static, stripped.
if ((LOCAL)); then
	CGO_ENABLED=0 go build -ldflags='-s -w' -o "$NW/nfsd-uring.static" ./cmd/nfsd-uring ||
		e2e_die "go build (static) ./cmd/nfsd-uring failed"
fi

e2e_host_deps
# mount.nfs for the guest from the host's nfs-common; openssl for the
# certificates; tshark (optional) reads the capture.
e2e_need_pkgs nfs-common openssl
t=$SECONDS
TLSHD=$(e2e/tlshd/build.sh) || e2e_die "building tlshd (e2e/tlshd/build.sh) failed"
log "tlshd: $TLSHD ($($TLSHD -v 2>&1)) ready in $((SECONDS - t))s"
e2e_kernel
log "kernel $E2E_KVER"

# The certificates: a CA, the server's for nfs-server.test, a client's.
P=$NW/pki
ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
openssl req -x509 "${ec[@]}" -keyout "$P/ca.key" -out "$P/ca.pem" -days 2 -subj /CN=e2e-tlshd-CA \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>>"$HLOG" ||
	e2e_die "openssl: the CA"
leaf() { # NAME CN EXT
	openssl req -new "${ec[@]}" -keyout "$P/$1.key" -out "$P/$1.csr" -subj "/CN=$2" 2>>"$HLOG" &&
		printf '%b' "$3" >"$P/$1.ext" &&
		openssl x509 -req -in "$P/$1.csr" -CA "$P/ca.pem" -CAkey "$P/ca.key" -CAcreateserial -days 2 \
			-extfile "$P/$1.ext" -out "$P/$1.pem" 2>>"$HLOG" || e2e_die "openssl: the $1 certificate"
}
leaf server nfs-server.test 'subjectAltName=DNS:nfs-server.test,DNS:nfs-local.test\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\nbasicConstraints=CA:FALSE\n'
leaf client nfs-client.test 'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\nbasicConstraints=CA:FALSE\n'
log "certificates: $(openssl x509 -in "$P/server.pem" -noout -subject -ext subjectAltName 2>/dev/null | tr '\n' ' ')"

# The data: 1.4 MB of numbered marker lines (the capture check looks for
# the marker in cleartext).
MARK=TLSHD-E2E-CLEARTEXT-MARKER
awk -v m="$MARK" 'BEGIN { for (i = 0; i < 40000; i++) printf "%s %08d\n", m, i }' >"$NW/data.bin"
DATA_SHA=$(sha256sum <"$NW/data.bin" | cut -d' ' -f1)
log "data.bin: $(stat -c %s "$NW/data.bin") bytes, sha256 $DATA_SHA"

cat >"$NW/exports" <<EOT
# e2e TLS phase
$NW/x/tls   *(rw,insecure,no_root_squash,xprtsec=tls:mtls)
$NW/x/mtls  *(rw,insecure,no_root_squash,xprtsec=mtls)
EOT
"$BIN" exports --check "$NW/exports" >&2 || e2e_die "exports --check refused the phase's exports file"

# The initramfs: lib.sh's (busybox, modules) plus a second archive with
# the init, tlshd, mount.nfs, their libraries, /etc, the certificates, the
# tls module and its AEADs.
# shellcheck disable=SC2034
E2E_MODULES=(virtio_net nfsv4)
INITRD=$NW/initramfs.cpio.gz
e2e_initramfs "$NW/base.cpio.gz"
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/e2e-tlshd.XXXXXX")
chmod 755 "$STAGE"
mkdir -p "$STAGE"/{etc/tlshd,usr/sbin,sbin,lib64,modules-tls}
cp e2e/kernel/guest-tlshd.sh "$STAGE/tlshd-init"
chmod 755 "$STAGE/tlshd-init"
cp "$NW/data.bin" "$STAGE/data.bin"
e2e_stage_bin "$STAGE" "$TLSHD" /usr/sbin/tlshd
e2e_stage_bin "$STAGE" /sbin/mount.nfs # package nfs-common
cp "$P/ca.pem" "$P/client.pem" "$P/client.key" "$STAGE/etc/tlshd/"
if ((LOCAL)); then
	cp "$NW/nfsd-uring.static" "$STAGE/usr/sbin/nfsd-uring"
	mkdir -p "$STAGE/etc/nfsd-uring"
	cp "$P/server.pem" "$P/server.key" "$STAGE/etc/nfsd-uring/"
fi
cat >"$STAGE/etc/tlshd.conf" <<'EOF'
[debug]
loglevel=1
tls=0
nl=0

[authenticate.client]
x509.truststore=/etc/tlshd/ca.pem
x509.certificate=/etc/tlshd/client.pem
x509.private_key=/etc/tlshd/client.key
EOF
e2e_stage_netdb "$STAGE"
printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$STAGE/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$STAGE/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files\n' >"$STAGE/etc/nsswitch.conf"
printf '127.0.0.1 localhost nfs-local.test\n10.0.2.15 tlsguest\n10.0.2.100 nfs-server.test\n' >"$STAGE/etc/hosts"
# tls and the AEADs its records need (as ktls.sh), each after its
# dependencies (modules.dep lists the deepest last).
e2e_stage_modules "$STAGE/modules-tls" --optional "${E2E_TLS_MODULES[@]}"
grep -qx tls.ko "$STAGE/modules-tls/order" || e2e_die "no tls module for kernel $E2E_KVER"
(cd "$STAGE" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0) | gzip -1 >"$NW/tlshd.cpio.gz" ||
	e2e_die "initramfs (TLS part) build failed"
rm -rf "$STAGE"
cat "$NW/base.cpio.gz" "$NW/tlshd.cpio.gz" >"$INITRD"
log "initramfs $(du -h "$INITRD" | cut -f1)"

MPORT=$(e2e_free_port)
# shellcheck disable=SC2206
ARGS=(--exports "$NW/exports" --engine "$ENGINE" --state-dir "$NW/state" --lease-time 15
	--tls-cert "$P/server.pem" --tls-key "$P/server.key" --tls-client-ca "$P/ca.pem"
	--metrics "127.0.0.1:$MPORT" ${E2E_SERVER_ARGS:-})
e2e_start_server "$BIN" "$SLOG" "${ARGS[@]}"
PORT=$E2E_PORT
log "server on 127.0.0.1:$PORT, metrics 127.0.0.1:$MPORT"

# The restart step: when the guest sends RESTART, SIGKILL the server,
# start it again on the same port and state directory (so its file handles
# stay valid), then create tls/restarted for the guest to find over NFS.
# The TLS connection counts of the killed one go to metrics-before.txt.
# scrape: the server's /metrics (bash's /dev/tcp: no curl or wget needed).
scrape() {
	(
		exec 3<>"/dev/tcp/127.0.0.1/$MPORT" || exit 0
		printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
		timeout 10 cat <&3 | tr -d '\r'
	) 2>/dev/null || true
}
: >"$NW/metrics-before.txt"
restart_server() {
	scrape | grep -E '^nfsd_uring_rpctls_' >"$NW/metrics-before.txt" || true
	e2e_kill_restart "$NW/server.pid" "$SLOG" "$BIN" "$PORT" "${ARGS[@]}" ||
		log "the restarted server does not listen on $PORT"
	: >"$NW/x/tls/restarted"
	log "server killed (SIGKILL) and restarted (pid $(cat "$NW/server.pid")); tls/restarted created"
}
watch() {
	until tr -d '\r' 2>/dev/null <"$RESULTS" | grep -qxF RESTART; do sleep 0.2; done
	restart_server
}
echo "$E2E_SPID" >"$NW/server.pid"
FIRST=$E2E_SPID
disown "$E2E_SPID" # killed on purpose: no "Killed" job message
E2E_SPID=
# Both servers, whatever happened: a server left running would keep the
# caller's flock on the qemu lock (it inherits the descriptor).
stop_all() {
	[[ -z ${WPID:-} ]] || kill "$WPID" 2>/dev/null || true
	local pid
	pid=$(cat "$NW/server.pid" 2>/dev/null || true)
	for pid in $pid $FIRST; do
		kill -TERM "$pid" 2>/dev/null || true
	done
}
trap stop_all EXIT
WPID=
if ((RESTART)); then
	watch &
	WPID=$!
fi

PCAP=$NW/tlshd.pcap
e2e_pcap "$PCAP" 0 "tcp port $PORT"

netdev="user,id=n0,restrict=on,net=10.0.2.0/24"
netdev+=",guestfwd=tcp:10.0.2.100:2049-cmd:nc 127.0.0.1 $PORT"
append="rdinit=/tlshd-init e2e_deadline=$((TIMEOUT - 20)) e2e_tls=$NW/x/tls"
((MTLS)) && append+=" e2e_mtls=$NW/x/mtls"
((LOCAL)) && append+=" e2e_local=$LOCAL_ENGINE"
((RESTART)) && append+=" e2e_restart=1"
E2E_SMP=1 e2e_qemu "$netdev" "$append" "$RESULTS" "$CONSOLE" "" 'E2E-TLSHD|tlshd|RPC|NFS|TLS'
log "qemu exited rc=$qrc after ${elapsed}s"
if [[ -n $WPID ]]; then
	kill "$WPID" 2>/dev/null || true
	wait "$WPID" 2>/dev/null || true
	WPID=
fi
if [[ -n $TPID ]]; then
	kill -INT "$TPID" 2>/dev/null || true
	wait "$TPID" 2>/dev/null || true
fi
scrape | grep -E '^nfsd_uring_rpctls_' >"$NW/metrics-rpctls.txt" || true
log "server metrics: $(tr '\n' ' ' <"$NW/metrics-rpctls.txt")"
[[ ! -s $NW/metrics-before.txt ]] || log "server metrics before the restart: $(tr '\n' ' ' <"$NW/metrics-before.txt")"

# The verdict.
fails=()
rec=$(tr -d '\r' <"$RESULTS")
steps=(setup plain-refused mount-tls write-tls umount-tls)
((RESTART)) && steps+=(reconnect-tls)
((MTLS)) && steps+=(tls-on-mtls-refused mount-mtls write-mtls umount-mtls)
((LOCAL)) && steps+=(local-server mount-local write-local local-ktls reconnect-local local-ktls-again umount-local)
for step in "${steps[@]}"; do
	grep -qxF "TLSHD $step ok" <<<"$rec" || fails+=("step $step: no 'TLSHD $step ok' record")
done
while IFS= read -r l; do fails+=("guest: $l"); done < <(grep -E '^(TLSHD [^ ]+ fail|ERR )' <<<"$rec" || true)
grep -qxF DONE <<<"$rec" || fails+=("the guest did not finish (no DONE; qemu rc=$qrc after ${elapsed}s)")
files=(tls/tls.bin)
((RESTART)) && files+=(tls/tls.bin.2)
((MTLS)) && files+=(mtls/mtls.bin)
if ((LOCAL)); then
	for f in local.bin local2.bin; do
		g=$(awk -v n=$f '$1 == "SHA" && $2 == n {print $3}' <<<"$rec")
		[[ $g == "$DATA_SHA" ]] || fails+=("$f read back in the guest: sha256 ${g:-missing}, want $DATA_SHA")
	done
	log "guest-local server (engine $LOCAL_ENGINE, kTLS both sides): $(grep -E '^LOCAL' <<<"$rec" | tr '\n' ' ')"
fi
for f in "${files[@]}"; do
	h=$(sha256sum <"$NW/x/$f" 2>/dev/null | cut -d' ' -f1 || true)
	g=$(awk -v n="${f##*/}" '$1 == "SHA" && $2 == n {print $3}' <<<"$rec")
	log "$f: host sha256 ${h:-missing}, guest ${g:-missing}"
	[[ $h == "$DATA_SHA" ]] || fails+=("$f on the host: sha256 ${h:-missing}, want $DATA_SHA")
	[[ $g == "$DATA_SHA" ]] || fails+=("$f read back in the guest: sha256 ${g:-missing}, want $DATA_SHA")
done
want=${#files[@]} # a connection per file: the restart's new one writes tls.bin.2
ntls=$(cat "$NW/metrics-rpctls.txt" "$NW/metrics-before.txt" | awk '/^nfsd_uring_rpctls_(ktls|user_tls)_connections_total/{s+=$2} END{print s+0}')
((ntls >= want)) || fails+=("the server counted $ntls TLS connections, want >= $want (metrics: $(tr '\n' ' ' <"$NW/metrics-rpctls.txt"))")
nh=$(awk '$1 == "TLSHDLOG" {print $2}' <<<"$rec")
((${nh:-0} >= want)) || fails+=("tlshd logged ${nh:-no} successful handshakes, want >= $want")
if [[ -s $PCAP ]]; then
	if tcpdump -r "$PCAP" -A 2>/dev/null | grep -q "$MARK"; then
		fails+=("the data's marker $MARK is in cleartext in $PCAP")
	fi
	if command -v tshark >/dev/null; then
		# Decoded as TLS (not RPC) to see the handshakes; the ALPN offered
		# is logged (tlshd offers none).
		hellos=$(tshark -r "$PCAP" -d "tcp.port==$PORT,tls" -Y 'tls.handshake.type == 1' \
			-T fields -e tcp.stream -e tls.handshake.extensions_server_name -e tls.handshake.extensions_alpn_str 2>/dev/null)
		nch=$(awk -F'\t' '$2 == "nfs-server.test"' <<<"$hellos" | wc -l)
		log "capture: $nch TLS ClientHellos for nfs-server.test (stream, SNI, ALPN offered: $(awk -F'\t' '{printf "%s %s %s; ", $1, $2, ($3 == "" ? "none" : $3)}' <<<"$hellos"))"
		((nch >= want)) || fails+=("capture: $nch ClientHellos for nfs-server.test, want >= $want")
		# Each connection that began with an AUTH_TLS probe: its cleartext
		# RPC calls (the probe only, as tshark decodes them).
		streams=$(tshark -r "$PCAP" -d "tcp.port==$PORT,rpc" -Y 'rpc.msgtyp == 0 && rpc.auth.flavor == 7' -T fields -e tcp.stream 2>/dev/null | sort -u)
		log "capture: AUTH_TLS probes on TCP streams $(echo $streams)"
		[[ -n $streams ]] || fails+=("capture: no AUTH_TLS probe")
		for s in $streams; do
			n=$(tshark -r "$PCAP" -d "tcp.port==$PORT,rpc" -Y "tcp.stream == $s && rpc.msgtyp == 0" 2>/dev/null | wc -l)
			log "capture: stream $s: $n cleartext RPC call(s) (the probe)"
			((n == 1)) || fails+=("capture: TCP stream $s (AUTH_TLS) has $n cleartext RPC calls, want 1 (the probe)")
		done
		nplain=$(tshark -r "$PCAP" -d "tcp.port==$PORT,rpc" -Y 'rpc.msgtyp == 0 && nfs' 2>/dev/null | wc -l)
		# The plain mount's refusal, in cleartext: NFS4ERR_WRONGSEC (10016)
		# where it enters the xprtsec=tls export.
		nws=$(tshark -r "$PCAP" -d "tcp.port==$PORT,rpc" -Y 'nfs.nfsstat4 == 10016' 2>/dev/null | wc -l)
		log "capture: $nplain cleartext NFS calls in all (the plain mount's and the probes), $nws NFS4ERR_WRONGSEC replies"
		((nws > 0)) || fails+=("capture: the plain mount was not answered NFS4ERR_WRONGSEC")
	else
		log "no tshark: the capture's connections are not decoded (the marker check ran)"
	fi
else
	log "no capture (tcpdump missing or E2E_PCAP=0)"
fi
grep -q 'RPC-with-TLS offered' "$SLOG" || fails+=("the server did not log 'RPC-with-TLS offered'")
kill -0 "$(cat "$NW/server.pid")" 2>/dev/null || fails+=("the server is not running at the end")
if ((${#fails[@]})); then
	{
		echo
		echo "================ e2e (kernel client) TLS phase FAILED ================"
		printf '  - %s\n' "${fails[@]}"
		echo "  logs: $NW (host.log, server.log, console.log, results.txt, tlshd.pcap)"
		echo "======================================================================"
	} >&2
	grep -E 'level=(WARN|ERROR)' "$SLOG" | tail -n 30 >&2 || true
	exit 1
fi
echo "================ e2e (kernel client) PASSED: TLS phase (Linux client + tlshd, xprtsec=tls$( ((MTLS)) && echo ' and mtls')$( ((LOCAL)) && echo ", and against a server in the guest with kTLS on both sides (engine $LOCAL_ENGINE)"): plain mount refused, 1.4 MB written and read back byte-exact over kTLS, $ntls TLS connections, no cleartext) in $((SECONDS - T0))s (guest ${elapsed}s) ================"
