#!/usr/bin/env bash
# krb5.sh: RPCSEC_GSS krb5i and krb5p against AUTH_SYS, in one run on one
# server (io_uring engine, --export shorthand: every flavour).
#
# A throw-away MIT KDC (realm NFSD-URING.BENCH, in $WORK) issues the
# server's keytab (nfs/nfs-server.bench) and root's password; nfsbench
# logs in as root@REALM (uid 0: the shorthand export is no_root_squash).
# For each flavour in $SECS, $REPS times:
#   - readmatrix, layout `data`, cached: sequential 1 MiB READ of a $SIZE
#     file: MB/s, server CPU s/GiB
#   - randread: $OPS random 4 KiB READs: ops/s, server CPU µs/op
#
#   nice bash bench/scripts/krb5.sh        # make bench-krb5
#   REPS=1 SIZE=256M OPS=20000 bash bench/scripts/krb5.sh   # quick
#   VERS=3 bash bench/scripts/krb5.sh      # NFSv3 (MOUNT on the NFS port)
#
# Env: VERS (4; 3: NFSv3), REPS (3), SECS ("sys krb5i krb5p"), SIZE (1G), OPS (50000), CONNS
# (4), DEPTH (16), BASE_PORT (31300), KDC_PORT (BASE_PORT+1), ENGINE
# (uring), WORK (/tmp/nfsd-uring-bench/krb5), NO_BUILD=1.
# Needs the MIT KDC: apt-get install -y krb5-kdc krb5-admin-server.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
install_traps

REPS=${REPS:-3}
VERS=${VERS:-4}
SECS=${SECS:-sys krb5i krb5p}
SIZE=${SIZE:-1G}
OPS=${OPS:-50000}
CONNS=${CONNS:-4}
DEPTH=${DEPTH:-16}
ENGINE=${ENGINE:-uring}
BASE_PORT=${BASE_PORT:-31300}
KDC_PORT=${KDC_PORT:-$((BASE_PORT + 1))}
WORK=${WORK:-/tmp/nfsd-uring-bench/krb5}
REALM=NFSD-URING.BENCH
SPN=nfs/nfs-server.bench

for p in krb5kdc kdb5_util kadmin.local; do
	command -v "$p" >/dev/null || [ -x "/usr/sbin/$p" ] || die "$p missing: apt-get install -y krb5-kdc krb5-admin-server"
done
export PATH=$PATH:/usr/sbin
build
rm -rf "$WORK"
mkdir -p "$WORK/export" "$WORK/json" "$WORK/kdc"
EXP=$WORK/export
K=$WORK/kdc
machine_note

# shellcheck source=../../internal/krb5test/kdc.sh
source "$(dirname "$0")/../../internal/krb5test/kdc.sh"
kdc_create "$K" "$REALM" "$KDC_PORT" || die "kdb5_util create failed: $(cat "$K/create.log")"
kadmin.local -r "$REALM" -q "addprinc -randkey $SPN" >/dev/null
kadmin.local -r "$REALM" -q "ktadd -k $K/server.keytab $SPN" >/dev/null
kadmin.local -r "$REALM" -q "addprinc -pw rootpw root" >/dev/null
port_free "$KDC_PORT" || die "127.0.0.1:$KDC_PORT in use (set KDC_PORT)"
krb5kdc -n -r "$REALM" >"$K/krb5kdc.log" 2>&1 &
KPID=$!
BG_PIDS+=("$KPID")
wait_port "$KDC_PORT" "$KPID"

PORT=$BASE_PORT
start_server SPID "$PORT" "$WORK/server.log" --export "$EXP" --engine "$ENGINE" --keytab "$K/server.keytab"

# nb WORKLOAD SEC REP
nb() {
	local wl=$1 sec=$2 rep=$3 extra=() j="$WORK/json/$1-$2-r$3.json" auth=()
	case $wl in
	readmatrix) extra=(--layouts data --cache cached --read-ops READ) ;;
	randread) extra=(--ops "$OPS" --stonewall 30s) ;;
	esac
	[ "$sec" = sys ] || auth=(--sec "$sec" --principal root --password rootpw --krb5-conf "$K/krb5.conf" --service-principal "$SPN")
	local cmd=("$BIN/nfsbench" "$wl" --vers "$VERS" --server "127.0.0.1:$PORT" --name "$sec" --server-pid "$SPID" --local-dir "$EXP"
		--size "$SIZE" --conns "$CONNS" --depth "$DEPTH" "${extra[@]}" "${auth[@]}" --no-verify
		--tag "sec=$sec" --tag "rep=$rep" --no-progress --json "$j")
	echo "${cmd[*]}" >>"$WORK/commands.txt"
	timeout 600 "${cmd[@]}" >"$WORK/json/$wl-$sec-r$rep.out" 2>&1 ||
		die "nfsbench failed: $(grep -E 'ERROR|nfsbench:' "$WORK/json/$wl-$sec-r$rep.out" | head -3)"
}

for rep in $(seq "$REPS"); do
	for sec in $SECS; do
		log "rep $rep $sec: readmatrix, randread"
		nb readmatrix "$sec" "$rep"
		nb randread "$sec" "$rep"
	done
done
stop_pid "$SPID"

echo
echo "## krb5.sh: AUTH_SYS vs RPCSEC_GSS krb5i/krb5p, NFSv$VERS, $ENGINE engine (built from $BUILD_REV), medians of $REPS, size $SIZE, conns $CONNS, depth $DEPTH, randread $OPS ops"
J=("$WORK"/json/*.json)
SUM=("$BIN/nfsbench" summarize --base sys)
echo
echo "### 1 MiB sequential READ, cached \`data\` file (readmatrix)"
echo
"${SUM[@]}" --where workload=readmatrix --rows op --metrics mb_per_sec,server_cpu_seconds_per_gib,client_cpu_seconds_per_gib --runs "${J[@]}"
echo
echo "### 4 KiB random READ (randread)"
echo
"${SUM[@]}" --where workload=randread --rows op --metrics ops_per_sec,server_cpu_us_per_op,latency_us.p99 --runs "${J[@]}"
echo
echo "commands: $WORK/commands.txt; raw results: $WORK/json/"
machine_note
runtime
