#!/usr/bin/env bash
# The kernel e2e's pNFS phase (issue 23): nfsd-uring as a flexible-files
# metadata server (MDS, RFC 8435) over two data servers (DS) on the host,
# one nfsd-uring (an exports line: rw, no_root_squash for 127.0.0.1) and
# one NFS-Ganesha (loosely coupled: it knows nothing of the MDS), with the
# Linux 6.12 client (nfs_layout_flexfiles) in qemu. Runs alone as
# e2e/kernel/e2e-pnfs.sh or `make e2e-pnfs`.
#
# The guest reaches the MDS as 10.0.2.100:2049 and the data servers as
# 10.0.2.101:2049 (nfsd-uring) and 10.0.2.102:2049 (Ganesha): one guestfwd
# rule each. The MDS reaches the data servers on 127.0.0.1 and tells the
# guest the 10.0.2.x addresses (--data-server HOST:PORT/PATH,advertise=).
#
# Stages, one guest boot each (guest-pnfs.sh):
#   write   per version (E2E_PNFS_VERS, default "4.2 4.1"): mount the MDS,
#           dd 8 files (13 B .. 8 MiB, one with a hole, one O_DIRECT) into
#           vV/, sync, drop_caches, read back. The host requires every byte
#           right, LAYOUTGET and GETDEVICEINFO counted in mountstats, no
#           READ/WRITE sent to the MDS, each file's data in a file on a data
#           server (same size and sha256; both data servers used) and the
#           MDS's copy of it sparse (no data blocks).
#   read    the MDS is killed with SIGKILL and started again on the same
#           --state-dir; a new guest boot (a new client) reads every file
#           back through new layouts (LAYOUTGET counted again).
#   dsfail  (E2E_PNFS_DSFAIL=0 skips it) a second MDS with --mirrors 2 over
#           the same data servers: the guest writes 4 files (each on both
#           servers: checked), the host kills one data server
#           (E2E_PNFS_KILL=uring, the default, or ganesha) and the guest
#           reads them back after drop_caches (every byte right: nothing
#           committed is lost), then writes and reads one more file. The
#           host requires the client to have reported the dead server to the
#           MDS (LAYOUTERROR, or LAYOUTRETURN carrying ff_ioerr4, in the
#           capture; LAYOUTERROR or LAYOUTRETURN in mountstats) and, from
#           the first report on, no layout naming it (LAYOUTGET replies in
#           the capture). Versions E2E_PNFS_FAIL_VERS (default 4.2: 4.2
#           clients report with LAYOUTERROR, 4.1 ones in LAYOUTRETURN).
#
# Environment: E2E_PNFS_BIN (server binary; built if unset), ENGINE,
# E2E_PNFS_MDS_ARGS (more MDS flags), E2E_WORK, E2E_PNFS_VERS,
# E2E_PNFS_FAIL_VERS, E2E_PNFS_DSFAIL, E2E_PNFS_KILL, E2E_PNFS_DS_TIMEO
# (nfs_layout_flexfiles dataserver_timeo in the guest, tenths of a second,
# default 50), plus run.sh's. Logs in .work/pnfs/.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=lib.sh
. e2e/kernel/lib.sh

T0=$SECONDS
ENGINE=${ENGINE:-portable}
read -r -a VERS <<<"${E2E_PNFS_VERS:-4.2 4.1}"
read -r -a FVERS <<<"${E2E_PNFS_FAIL_VERS:-4.2}"
KILL=${E2E_PNFS_KILL:-uring}
[[ $KILL == uring || $KILL == ganesha ]] || e2e_die "E2E_PNFS_KILL must be uring or ganesha"
WORK=${E2E_WORK:-$E2E_KDIR/.work}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
PW=$WORK/pnfs
HLOG=$PW/host.log
rm -rf "$PW"
mkdir -p "$PW"/{mds,mds-state,mds2,mds2-state,ds1/m1,ds1/m2,ds1-state,ganesha/export/m1,ganesha/export/m2,ganesha/run}
: >"$HLOG"

if [[ -z ${E2E_PNFS_BIN:-} ]]; then
	E2E_PNFS_BIN=$PW/nfsd-uring
	go build -o "$E2E_PNFS_BIN" ./cmd/nfsd-uring || e2e_die "go build ./cmd/nfsd-uring failed"
fi
BIN=$E2E_PNFS_BIN
help=$("$BIN" --help 2>&1 || true)
# E2E_PNFS_SELFTEST=1 (the harness's own check, for a server without the
# MDS role): the "MDS" is a plain server, so the layout checks fail, but the
# data servers, the guest's I/O and the read-back are exercised.
if [[ ${E2E_PNFS_SELFTEST:-0} != 1 && $help != *--data-server* ]]; then
	e2e_die "$BIN has no --data-server flag (the MDS role): nothing to test"
fi
e2e_host_deps
e2e_need_pkgs nfs-ganesha nfs-ganesha-vfs
e2e_kernel

log() { e2e_hlog "$@"; }

# ---- processes: the two data servers and the MDSs ----
DS1_PID= DS1_PORT= G_PID= G_PORT= MDS_PID= MDS_PORT= MDS2_PID= MDS2_PORT=
stop_pid() {
	local pid=$1
	[[ -n $pid ]] || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	for _ in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
stop_all() {
	[[ -z ${WPID:-} ]] || kill "$WPID" 2>/dev/null || true
	stop_pid "$MDS2_PID"
	stop_pid "${MDS3_PID:-}"
	stop_pid "$MDS_PID"
	stop_pid "$G_PID"
	stop_pid "$DS1_PID"
}
trap stop_all EXIT

# wait_listen PORT PID [TENTHS]: up to TENTHS/10 s (default 10 s) for PID
# to listen on 127.0.0.1:PORT.
wait_listen() {
	for _ in $(seq 1 "${3:-100}"); do
		kill -0 "$2" 2>/dev/null || return 1
		ss -Hltn "sport = :$1" 2>/dev/null | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

# The nfsd-uring data server: an exports line for its directory. The MDS
# creates, truncates, chowns (fencing) and removes the data files as root,
# and the guest reads and writes them with the layouts' synthetic uids: both
# come from 127.0.0.1 (the MDS directly, the guest through guestfwd's nc),
# so one line: rw, no_root_squash, insecure (nc's source port is not
# privileged); the synthetic uids are left as they are (no all_squash).
echo "$PW/ds1 127.0.0.1(rw,insecure,no_root_squash)" >"$PW/ds1.exports"
"$BIN" exports --check "$PW/ds1.exports" >"$PW/ds1-exports-check.txt" 2>&1 ||
	{ cat "$PW/ds1-exports-check.txt" >&2; e2e_die "the data server's exports file does not parse"; }
DS1_MPORT=$(e2e_free_port)
e2e_start_server "$BIN" "$PW/ds1.log" --exports "$PW/ds1.exports" --engine "$ENGINE" --state-dir "$PW/ds1-state" --metrics "127.0.0.1:$DS1_MPORT"
DS1_PID=$E2E_SPID DS1_PORT=$E2E_PORT E2E_SPID=
log "data server 1: nfsd-uring pid $DS1_PID on 127.0.0.1:$DS1_PORT exporting $PW/ds1"

# NFS-Ganesha as a loosely coupled data server: NFSv4.1/4.2 only, FSAL VFS,
# its export /ds with Squash = None (the MDS's root and the synthetic uids
# both as they come), in the foreground so its pid is ours.
start_ganesha() {
	local run=$PW/ganesha/run attempt
	for attempt in 1 2 3; do
		G_PORT=$(e2e_free_port)
		cat >"$run/ganesha.conf" <<CONF
NFS_Core_Param {
	NFS_Port = $G_PORT;
	Bind_Addr = 127.0.0.1;
	Protocols = 4;
	Enable_NLM = false;
	Enable_RQUOTA = false;
	Enable_UDP = false;
}
NFSv4 {
	Graceless = true;
	RecoveryBackend = fs;
	RecoveryRoot = "$run/recov";
	Minor_Versions = 1, 2;
}
NFS_KRB5 { Active_krb5 = false; }
EXPORT {
	Export_Id = 7;
	Path = "$PW/ganesha/export";
	Pseudo = /ds;
	Protocols = 4;
	Transports = TCP;
	Access_Type = RW;
	Squash = None;
	SecType = sys;
	CLIENT { Clients = 127.0.0.1; Access_Type = RW; Squash = None; }
	FSAL { Name = VFS; }
}
LOG { Default_Log_Level = WARN; }
CONF
		mkdir -p "$run/recov"
		ganesha.nfsd -F -f "$run/ganesha.conf" -L "$PW/ganesha.log" -p "$run/ganesha.pid" -N NIV_WARN &
		G_PID=$!
		wait_listen "$G_PORT" "$G_PID" && return 0
		stop_pid "$G_PID"
		G_PID=
	done
	tail -n 30 "$PW/ganesha.log" >&2
	e2e_die "NFS-Ganesha did not start (log: $PW/ganesha.log)"
}
start_ganesha
log "data server 2: NFS-Ganesha pid $G_PID on 127.0.0.1:$G_PORT exporting $PW/ganesha/export as /ds"
FWD="10.0.2.101:2049=$DS1_PORT 10.0.2.102:2049=$G_PORT"

# mds_args N EXPORT STATE SUBDIR [FLAGS...]: an MDS over both data servers,
# its data files in SUBDIR of each.
mds_args() {
	local export=$1 state=$2 sub=$3
	shift 3
	MPORT=$(e2e_free_port)
	MARGS=(--export "$export" --engine "$ENGINE" --state-dir "$state" --lease-time 15 --grace 15 --log-level debug --metrics "127.0.0.1:$MPORT")
	[[ ${E2E_PNFS_SELFTEST:-0} == 1 ]] && return 0
	MARGS+=(--data-server "127.0.0.1:$DS1_PORT$PW/ds1/$sub,advertise=10.0.2.101:2049"
		--data-server "127.0.0.1:$G_PORT/ds/$sub,advertise=10.0.2.102:2049" "$@")
	# shellcheck disable=SC2206
	MARGS+=(${E2E_PNFS_MDS_ARGS:-})
}

# start_mds LOG ARGS...: an MDS on a free port; it may take a while to
# listen (the embedded etcd starts first). Sets SPID and SPORT.
start_mds() {
	local slog=$1 attempt
	shift
	for attempt in 1 2 3; do
		SPORT=$(e2e_free_port)
		log "starting the MDS: $BIN --listen 127.0.0.1:$SPORT $*"
		"$BIN" --listen "127.0.0.1:$SPORT" "$@" >>"$slog" 2>&1 &
		SPID=$!
		wait_listen "$SPORT" "$SPID" 300 && return 0
		stop_pid "$SPID"
		grep -qi 'address already in use' "$slog" || break
	done
	tail -n 40 "$slog" >&2
	e2e_die "the MDS did not start listening (log: $slog)"
}

# ---- verdict helpers ----
fails=()
fail() {
	fails+=("$*")
	printf '[e2e] FAIL: pnfs: %s\n' "$*" >&2
	echo "$(date +%T) FAIL: $*" >>"$HLOG"
}
res_of() { tr -d '\r' <"$1"; }
# pstat RESULTS STAGE V OP: the op's count (field 5) or errors (6).
pstat() { res_of "$1" | awk -v s="$2" -v v="$3" -v op="$4" -v f="${5:-5}" '$1=="PSTAT" && $2==s && $3==v && $4==op {n=$f} END{print n+0}'; }

# check_readback WRITTEN RESULTS WHAT V...: every file WRITTEN's PW records
# name (name, size, sha256) must have a PR record in RESULTS that equals it.
check_readback() {
	local written=$1 results=$2 what=$3 v bad=0 n
	shift 3
	for v in "$@"; do
		n=0
		while read -r name size sha; do
			n=$((n + 1))
			got=$(res_of "$results" | awk -v v="$v" -v f="$name" '$1=="PR" && $2==v && $3==f {print $4, $5}' | tail -n1)
			if [[ -z $got ]]; then
				fail "$what v$v: $name was not read back"
				bad=1
			elif [[ $got != "$size $sha" ]]; then
				fail "$what v$v: $name read back as size/sha256 '$got', wrote '$size $sha'"
				bad=1
			fi
		done < <(awk -v v="$v" '$1=="PW" && $2==v {print $3, $4, $5}' "$written")
		((n > 0)) || { fail "$what v$v: no files recorded as written"; bad=1; }
	done
	((bad == 0)) && log "$what: every file read back with the size and sha256 written ($(wc -l <"$written") files)"
	return 0
}

# ds_manifest SUBDIR: "DS SIZE SHA256 PATH" for every data file.
ds_manifest() {
	local sub=$1 d
	for d in "ds1:$PW/ds1/$sub" "ganesha:$PW/ganesha/export/$sub"; do
		find "${d#*:}" -type f -print0 | while IFS= read -r -d '' f; do
			echo "${d%%:*} $(stat -c %s "$f") $(sha256sum <"$f" | cut -d' ' -f1) $f"
		done
	done
}

# scrape PORT OUT: the Prometheus metrics of the nfsd-uring on
# 127.0.0.1:PORT (--metrics), with bash's /dev/tcp (no curl needed).
scrape() {
	{
		exec 3<>"/dev/tcp/127.0.0.1/$1" &&
			printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 &&
			cat <&3
		exec 3>&-
	} >"$2" 2>/dev/null || true
}
# ops FILE OP [STATUS]: nfsd_uring_operations_total for OP, summed over
# the statuses (or STATUS only; "!NFS4_OK": the errors).
ops() {
	awk -v op="$2" -v st="${3:-}" '
		index($0, "nfsd_uring_operations_total{op=\"" op "\",") == 1 {
			ok = index($0, "status=\"NFS4_OK\"") > 0
			if (st == "" || (st == "!NFS4_OK" && !ok) || (st == "NFS4_OK" && ok)) n += $NF
		}
		END { print n + 0 }' "$1"
}
# errs FILE OP: "STATUS=N ..." of OP's errors.
errs() {
	awk -v op="$2" 'index($0, "nfsd_uring_operations_total{op=\"" op "\",") == 1 && !index($0, "NFS4_OK") {
		match($0, /status="[^"]*"/); printf "%s=%s ", substr($0, RSTART + 8, RLENGTH - 9), $NF }' "$1"
}
fbytes() { awk -v d="$2" 'index($0, "nfsd_uring_file_bytes_total{dir=\"" d "\"}") == 1 {print $NF + 0; f = 1} END {if (!f) print 0}' "$1"; }

# tshark_d: tshark's -d options decoding RPC on every server port.
tshark_d() {
	local p a=()
	for p in $PORTS_ALL; do a+=(-d "tcp.port==$p,rpc"); done
	printf '%s\n' "${a[@]}"
}

# ---- the stages ----
# E2E_PNFS_STAGES picks the stages (default "write read dsfail"; read needs
# write; "stripe" is opt-in).
STAGES=" ${E2E_PNFS_STAGES:-write read dsfail} "
[[ ${E2E_PNFS_DSFAIL:-1} == 1 ]] || STAGES=${STAGES/ dsfail / }
has_stage() { [[ $STAGES == *" $1 "* ]]; }
declare -A STAGE_TIME=()
run_stage() {
	local stage=$1 port=$2 pid=$3 slog=$4 rc=0
	shift 4
	mkdir -p "$PW/$stage"
	local t=$SECONDS
	E2E_WORK=$PW/$stage E2E_PNFS_STAGE=$stage E2E_GUESTFWD=$FWD E2E_PCAP_SNAPLEN=2048 \
		E2E_GUEST_ARGS="e2e_dstimeo=${E2E_PNFS_DS_TIMEO:-50}${STAGE_ARGS:+ $STAGE_ARGS}" E2E_SERVER_LOG=$slog E2E_SERVER_PID=$pid \
		e2e/kernel/run.sh --pnfs "$port" "$PW/mds" "$@" || rc=$?
	STAGE_TIME[$stage]=$((SECONDS - t))
	((rc == 0)) || fail "stage $stage: the guest run failed (rc=$rc; see $PW/$stage/console.log, $PW/$stage/results.txt)"
	for v in "$@"; do
		# (grep >/dev/null, not -q: with pipefail, grep -q leaving
		# early fails the pipeline when tr gets SIGPIPE.)
		res_of "$PW/$stage/results.txt" | grep -x "PNFS $stage $v ok" >/dev/null || fail "stage $stage v$v: no 'PNFS $stage $v ok' from the guest"
	done
}

# The layouts. The Linux client asks for them inside OPEN (flexfiles sets
# PNFS_LAYOUTGET_ON_OPEN: fs/nfs/flexfilelayout/flexfilelayout.c,
# fs/nfs/pnfs.c pnfs_lgopen_prepare), where mountstats counts them as
# OPEN: its LAYOUTGET line counts only LAYOUTGET compounds of their own.
# So the layouts granted are counted from the capture (replies with a
# LAYOUTGET result naming a device, OPEN's or alone), per minor version.
# mountstats' READ and WRITE lines count the data servers' I/O too
# (ff_layout_read_count_stats / ff_layout_write_count_stats count them on
# the MDS's rpc client): the MDS's own metrics tell what it served.
layout_checks() {
	local stage=$1 res=$2 pcap=$3 port=$4 v lg gdi lc lr le w r e n
	shift 4
	for v in "$@"; do
		lg=$(pstat "$res" "$stage" "$v" LAYOUTGET) gdi=$(pstat "$res" "$stage" "$v" GETDEVICEINFO)
		lc=$(pstat "$res" "$stage" "$v" LAYOUTCOMMIT) lr=$(pstat "$res" "$stage" "$v" LAYOUTRETURN)
		le=$(pstat "$res" "$stage" "$v" LAYOUTERROR) e=$(pstat "$res" "$stage" "$v" LAYOUTGET 6)
		w=$(pstat "$res" "$stage" "$v" WRITE) r=$(($(pstat "$res" "$stage" "$v" READ) + $(pstat "$res" "$stage" "$v" READ_PLUS)))
		n=$(granted "$pcap" "$port" "${v#4.}")
		log "$stage v$v: layouts granted (capture: LAYOUTGET results naming a device, in OPEN or alone): $n; mountstats: LAYOUTGET=$lg (errors $e) GETDEVICEINFO=$gdi LAYOUTCOMMIT=$lc LAYOUTRETURN=$lr LAYOUTERROR=$le, READ(+_PLUS)=$r WRITE=$w (the data servers' I/O included) ($(res_of "$res" | awk -v s="$stage" -v v="$v" '$1=="PTIME" && $2==s && $3==v {print $4 "s"}'))"
		[[ $n == "?" ]] || ((n > 0)) || fail "$stage v$v: no layout granted to the client (no LAYOUTGET result naming a device in $pcap)"
		((le == 0)) || fail "$stage v$v: the client sent $le LAYOUTERROR (a data server failed it; see the MDS log)"
	done
}

# granted PCAP PORT MINOR: LAYOUTGET results from PORT that name a device,
# on the connections whose calls are of minor version MINOR (a reply does
# not say its version; each mount has its own connection).
granted() {
	command -v tshark >/dev/null && [[ -s $1 ]] || { echo "?"; return; }
	mapfile -t TD < <(tshark_d)
	{
		tshark -r "$1" "${TD[@]}" -Y "tcp.dstport==$2 && rpc.msgtyp==0 && nfs.minorversion" -T fields -e tcp.srcport -e nfs.minorversion 2>/dev/null | sed 's/^/C /'
		tshark -r "$1" "${TD[@]}" -Y "tcp.srcport==$2 && rpc.msgtyp==1 && nfs.opcode==50 && nfs.deviceid" -T fields -e tcp.dstport 2>/dev/null | sed 's/^/R /'
	} | awk -v m="$3" '$1=="C" {split($3, a, ","); minor[$2]=a[1]} $1=="R" {r[NR]=$2} END {for (i in r) if (minor[r[i]]==m) n++; print n+0}'
}

# ---- stage 1: write ----
if has_stage write; then
	mds_args "$PW/mds" "$PW/mds-state" m1
	MDS_ARGS=("${MARGS[@]}") MDS_MPORT=$MPORT
	start_mds "$PW/mds.log" "${MDS_ARGS[@]}"
	MDS_PID=$SPID MDS_PORT=$SPORT
	log "MDS pid $MDS_PID listening on 127.0.0.1:$MDS_PORT"
	PORTS_ALL="$MDS_PORT $DS1_PORT $G_PORT"
	run_stage write "$MDS_PORT" "$MDS_PID" "$PW/mds.log" "${VERS[@]}"
	R1=$PW/write/results.txt
	res_of "$R1" | grep '^PW ' >"$PW/written.txt" || true
	check_readback "$PW/written.txt" "$R1" "write (after drop_caches)" "${VERS[@]}"
	layout_checks write "$R1" "$PW/write/nfs.pcap" "$MDS_PORT" "${VERS[@]}"

	# The data is on the data servers: each file written has a data file with
	# its size and sha256 on one of them (--mirrors 1), and both are used.
	ds_manifest m1 >"$PW/ds-m1.manifest"
	declare -A ON=()
	ndsf=0
	while read -r v name size sha; do
		hits=$(awk -v s="$size" -v h="$sha" '$2==s && $3==h {print $1}' "$PW/ds-m1.manifest" | sort | paste -sd+ -)
		if [[ -z $hits ]]; then
			fail "write: the data of v$v/$name ($size bytes, sha256 $sha) is on no data server"
		else
			ON[$hits]=$((${ON[$hits]:-0} + 1))
			ndsf=$((ndsf + 1))
		fi
	done < <(awk '{print $2, $3, $4, $5}' "$PW/written.txt")
	placement=$(for k in "${!ON[@]}"; do printf '%s:%s ' "$k" "${ON[$k]}"; done)
	log "write: data files on the data servers (server:files): $placement($(wc -l <"$PW/ds-m1.manifest") data files, $(awk '{s+=$2} END{print s+0}' "$PW/ds-m1.manifest") bytes)"
	[[ -n ${ON[ds1]:-} && -n ${ON[ganesha]:-} ]] || fail "write: the files were not placed on both data servers ($placement)"
	# ...and not on the MDS: its files have the size but no data blocks (an
	# extended attribute block, 8 sectors, is allowed: the layout may live in one).
	mds_blocks=0
	while read -r _ v name size _; do
		f=$PW/mds/v$v/$name
		if [[ ! -f $f ]]; then
			fail "write: $f is not on the MDS's export"
			continue
		fi
		read -r s b < <(stat -c '%s %b' "$f")
		mds_blocks=$((mds_blocks + b))
		[[ $s == "$size" ]] || fail "write: the MDS's $f has size $s, want $size (LAYOUTCOMMIT?)"
		((b <= 8)) || fail "write: the MDS's $f has $b blocks of 512 bytes allocated: the data went to the MDS"
	done <"$PW/written.txt"
	log "write: the MDS's copies of the files have the right sizes and $mds_blocks blocks of 512 bytes allocated in all (du: $(du -sh "$PW/mds" | cut -f1))"

	# What the servers counted (--metrics): the MDS served no file data, the
	# nfsd-uring data server its share.
	scrape "$MDS_MPORT" "$PW/write/mds.metrics"
	scrape "$DS1_MPORT" "$PW/write/ds1.metrics"
	log "write: the MDS counted LAYOUTGET=$(ops "$PW/write/mds.metrics" LAYOUTGET) GETDEVICEINFO=$(ops "$PW/write/mds.metrics" GETDEVICEINFO) LAYOUTCOMMIT=$(ops "$PW/write/mds.metrics" LAYOUTCOMMIT) LAYOUTRETURN=$(ops "$PW/write/mds.metrics" LAYOUTRETURN) WRITE=$(ops "$PW/write/mds.metrics" WRITE) READ=$(ops "$PW/write/mds.metrics" READ) READ_PLUS=$(ops "$PW/write/mds.metrics" READ_PLUS), file bytes written $(fbytes "$PW/write/mds.metrics" write) read $(fbytes "$PW/write/mds.metrics" read); LAYOUTGET errors: $(errs "$PW/write/mds.metrics" LAYOUTGET)"
	log "write: data server 1 (nfsd-uring) counted WRITE=$(ops "$PW/write/ds1.metrics" WRITE) READ=$(ops "$PW/write/ds1.metrics" READ) READ_PLUS=$(ops "$PW/write/ds1.metrics" READ_PLUS), file bytes written $(fbytes "$PW/write/ds1.metrics" write) read $(fbytes "$PW/write/ds1.metrics" read); WRITE errors: $(errs "$PW/write/ds1.metrics" WRITE)"
	n=$(fbytes "$PW/write/mds.metrics" write) m=$(fbytes "$PW/write/mds.metrics" read)
	((n == 0 && m == 0)) || fail "write: the MDS itself wrote $n and read $m bytes of file data (its metrics): the client's I/O went through the MDS"
	n=$(ops "$PW/write/mds.metrics" LAYOUTGET NFS4_OK)
	((n > 0)) || fail "write: the MDS granted no LAYOUTGET (its metrics)"
	n=$(fbytes "$PW/write/ds1.metrics" write)
	((n > 0)) || fail "write: the nfsd-uring data server wrote no file data (its metrics)"

fi

# ---- stage 2: kill -9 the MDS, restart it on the same state directory ----
if has_stage write && has_stage read; then
	log "killing the MDS (pid $MDS_PID) with SIGKILL"
	kill -KILL "$MDS_PID"
	wait "$MDS_PID" 2>/dev/null || true
	echo "---- $(date +%T) killed with SIGKILL, restarting ----" >>"$PW/mds.log"
	"$BIN" --listen "127.0.0.1:$MDS_PORT" "${MDS_ARGS[@]}" >>"$PW/mds.log" 2>&1 &
	MDS_PID=$!
	wait_listen "$MDS_PORT" "$MDS_PID" 300 || { tail -n 40 "$PW/mds.log" >&2; e2e_die "the MDS did not come back after kill -9 (log: $PW/mds.log)"; }
	log "MDS restarted: pid $MDS_PID on 127.0.0.1:$MDS_PORT, same --state-dir"
	run_stage read "$MDS_PORT" "$MDS_PID" "$PW/mds.log" "${VERS[@]}"
	R2=$PW/read/results.txt
	check_readback "$PW/written.txt" "$R2" "read (a new client after the MDS's kill -9 + restart)" "${VERS[@]}"
	layout_checks read "$R2" "$PW/read/nfs.pcap" "$MDS_PORT" "${VERS[@]}"
	scrape "$MDS_MPORT" "$PW/read/mds.metrics"
	n=$(fbytes "$PW/read/mds.metrics" read)
	log "read: the restarted MDS counted LAYOUTGET=$(ops "$PW/read/mds.metrics" LAYOUTGET) (errors: $(errs "$PW/read/mds.metrics" LAYOUTGET)) GETDEVICEINFO=$(ops "$PW/read/mds.metrics" GETDEVICEINFO), file bytes read $n"
	((n == 0)) || fail "read: the restarted MDS sent $n bytes of file data itself (its metrics)"
	n=$(ops "$PW/read/mds.metrics" LAYOUTGET NFS4_OK)
	((n > 0)) || fail "read: the restarted MDS granted no LAYOUTGET (its metrics): the files were not read through new layouts"
	stop_pid "$MDS_PID"
	MDS_PID=

fi

# ---- stage stripe (e2e-pnfs-stripe.sh): striping on, the 6.12 client through the MDS ----
if has_stage stripe; then
	# shellcheck source=e2e-pnfs-stripe.sh
	. e2e/kernel/e2e-pnfs-stripe.sh
fi

# ---- stage 3: a data server dies ----
if has_stage dsfail; then
	mds_args "$PW/mds2" "$PW/mds2-state" m2 --mirrors 2
	MDS2_ARGS=("${MARGS[@]}") MDS2_MPORT=$MPORT
	start_mds "$PW/mds2.log" "${MDS2_ARGS[@]}"
	MDS2_PID=$SPID MDS2_PORT=$SPORT
	log "MDS 2 (--mirrors 2) pid $MDS2_PID on 127.0.0.1:$MDS2_PORT"
	PORTS_ALL="$MDS2_PORT $DS1_PORT $G_PORT"
	if [[ $KILL == uring ]]; then DEAD=ds1 DEADADDR=10.0.2.101 DEADPORT=$DS1_PORT; else DEAD=ganesha DEADADDR=10.0.2.102 DEADPORT=$G_PORT; fi

	# kill_relays PORT: SIGKILL the guestfwd relays of this run's qemu to
	# the dead server: the processes "nc 127.0.0.1 PORT" exactly (PORT was
	# picked free for this run), one by one by pid.
	kill_relays() {
		local p n=0
		for p in $(pgrep -x nc 2>/dev/null); do
			[[ $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) == "nc 127.0.0.1 $1 " ]] || continue
			kill -KILL "$p" 2>/dev/null && n=$((n + 1))
		done
		echo "$(date +%T) ended $n guestfwd relays to port $1" >>"$HLOG"
	}
	# dsfail_watch: on DSFAIL_WRITTEN V, check the mirrors, kill the data
	# server (once) and drop the marker.
	dsfail_watch() {
		local v res=$PW/dsfail/results.txt
		for v in "${FVERS[@]}"; do
			until tr -d '\r' 2>/dev/null <"$res" | grep -xF "DSFAIL_WRITTEN $v" >/dev/null; do sleep 0.2; done
			ds_manifest m2 >"$PW/ds-m2-before-v$v.manifest"
			if [[ ! -e $PW/ds-killed ]]; then
				date +%s.%N >"$PW/ds-killed"
				if [[ $KILL == uring ]]; then
					kill -KILL "$DS1_PID"
					echo "$(date +%T) v$v: killed data server 1 (nfsd-uring, pid $DS1_PID) with SIGKILL" >>"$HLOG"
				else
					kill -KILL "$G_PID"
					echo "$(date +%T) v$v: killed data server 2 (NFS-Ganesha, pid $G_PID) with SIGKILL" >>"$HLOG"
				fi
				# The guest's connections to it end too, as a dead
				# server's would: qemu relays each through an nc of its
				# own, which outlives the server (it waits for the
				# guest's next bytes); end those ncs, by pid.
				kill_relays "$DEADPORT"
			fi
			# The marker once the MDS has the server out of service
			# (its prober, or a client's report it checked).
			for _ in $(seq 1 300); do
				grep -q "msg=\"data server out of service\" server=127.0.0.1:$DEADPORT/" "$PW/mds2.log" && break
				sleep 0.1
			done
			echo "$(date +%T) v$v: the MDS log: $(grep -m1 "msg=\"data server out of service\" server=127.0.0.1:$DEADPORT/" "$PW/mds2.log" || echo 'no out-of-service line for it after 30 s')" >>"$HLOG"
			[[ -s $PW/marker-time ]] || date +%s.%N >"$PW/marker-time"
			echo "$DEADADDR" >"$PW/mds2/c$v/dsdown-v$v"
			echo "$(date +%T) v$v: marker dsdown-v$v written" >>"$HLOG"
		done
	}
	mkdir -p "$PW/dsfail"
	: >"$PW/dsfail/results.txt"
	dsfail_watch &
	WPID=$!
	STAGE_ARGS="e2e_pnfs_dead=$DEADADDR" run_stage dsfail "$MDS2_PORT" "$MDS2_PID" "$PW/mds2.log" "${FVERS[@]}"
	kill "$WPID" 2>/dev/null || true
	wait "$WPID" 2>/dev/null || true
	WPID=
	R3=$PW/dsfail/results.txt
	res_of "$R3" | grep '^PW ' | grep -v ' n-after.bin ' >"$PW/written-dsfail.txt" || true
	check_readback "$PW/written-dsfail.txt" "$R3" "dsfail (one data server dead, --mirrors 2)" "${FVERS[@]}"
	for v in "${FVERS[@]}"; do
		# Before the kill, each file had a data file on both servers.
		if [[ -f $PW/ds-m2-before-v$v.manifest ]]; then
			while read -r _ _ name size sha; do
				[[ $name == n-after.bin ]] && continue
				hits=$(awk -v s="$size" -v h="$sha" '$2==s && $3==h {print $1}' "$PW/ds-m2-before-v$v.manifest" | sort -u | paste -sd+ -)
				[[ $hits == ds1+ganesha ]] || fail "dsfail v$v: before the kill, $name (mirrors 2) had data on '$hits', want both data servers"
			done < <(res_of "$R3" | awk -v v="$v" '$1=="PW" && $2==v')
		fi
		got=$(res_of "$R3" | awk -v v="$v" '$1=="PR" && $2==v && $3=="n-after.bin" {print $4, $5}')
		want=$(res_of "$R3" | awk -v v="$v" '$1=="PW" && $2==v && $3=="n-after.bin" {print $4, $5}')
		[[ -n $want && $got == "$want" ]] || fail "dsfail v$v: the file written after the failure read back as '$got', want '$want'"
		le=$(pstat "$R3" dsfail "$v" LAYOUTERROR) lr=$(pstat "$R3" dsfail "$v" LAYOUTRETURN) lg=$(pstat "$R3" dsfail "$v" LAYOUTGET)
		lr0=$(pstat "$R3" dsfail-written "$v" LAYOUTRETURN) lg0=$(pstat "$R3" dsfail-written "$v" LAYOUTGET)
		log "dsfail v$v: mountstats after the failure: LAYOUTERROR=$le LAYOUTRETURN=$lr (before: $lr0) LAYOUTGET=$lg (before: $lg0); read-back took $(res_of "$R3" | awk -v v="$v" '$1=="PTIME" && $2=="dsfail-read" && $3==v {print $4 "s"}')"
		# Judged from the capture below when tshark is there: mountstats
		# counts a LAYOUTRETURN sent inside CLOSE (return-on-close, how
		# a 4.1 client reports) as CLOSE.
		if ! command -v tshark >/dev/null; then
			((le > 0 || lr > lr0)) || fail "dsfail v$v: neither LAYOUTERROR nor LAYOUTRETURN after the data server died (mountstats): the client reported nothing"
		fi
	done
	# From the capture: the error reports, and the layouts handed out after
	# the first one.
	PCAP=$PW/dsfail/nfs.pcap
	if command -v tshark >/dev/null && [[ -s $PCAP ]]; then
		mapfile -t TD < <(tshark_d)
		# The dead server's device id, from GETDEVICEINFO: the call names
		# the device, the reply its address (r_addr h1.h2.h3.h4.p1.p2).
		tshark -r "$PCAP" "${TD[@]}" -Y "tcp.port==$MDS2_PORT && nfs.opcode==47" -T fields -e rpc.xid -e rpc.msgtyp -e nfs.deviceid -e nfs.r_addr 2>/dev/null >"$PW/gdi.txt" || true
		deadid=$(awk -F'\t' -v a="$DEADADDR." '$2==0 {dev[$1]=$3} $2==1 && index($4, a)==1 {print dev[$1]; exit}' "$PW/gdi.txt")
		log "dsfail: the dead data server ($DEADADDR) is device ${deadid:-unknown} (GETDEVICEINFO in $PCAP)"
		[[ -n $deadid ]] || fail "dsfail: no GETDEVICEINFO reply in the capture gives the dead data server's address $DEADADDR"
		tshark -r "$PCAP" "${TD[@]}" -Y "tcp.dstport==$MDS2_PORT && rpc.msgtyp==0 && (nfs.opcode==64 || (nfs.opcode==51 && nfs.ff.ioerrs_count > 0))" \
			-T fields -e frame.number -e frame.time_epoch -e nfs.opcode -e nfs.deviceid -e nfs.nfsstat4 -e nfs.ff.ioerrs_count 2>/dev/null >"$PW/error-reports.txt" || true
		# Either the client reported the failure, or the MDS's prober saw
		# the server go first (its connection closed at the kill) and
		# recalled the layouts before the client touched it: then the
		# client had nothing to report. Which comes first is a race.
		first= oos=
		grep -q "msg=\"data server out of service\" server=127.0.0.1:$DEADPORT/" "$PW/mds2.log" && oos=1
		if [[ -s $PW/error-reports.txt ]]; then
			first=$(head -n1 "$PW/error-reports.txt" | cut -f1)
			log "dsfail: the client reported the failure to the MDS in $(wc -l <"$PW/error-reports.txt") calls (LAYOUTERROR=opcode 64, LAYOUTRETURN with ff_ioerr4=51), first in frame $first: $(head -n3 "$PW/error-reports.txt" | tr '\t\n' ' /')"
		elif [[ -n $oos ]]; then
			log "dsfail: no error report from the client: the MDS took the data server out of service first (its log) and recalled its layouts"
		fi
		if [[ -n $first || -n $oos ]]; then
			# From the marker on (the host drops it once the MDS logged
			# the server out of service; the capture has the host's
			# clock), no layout may name the dead server.
			mk=$(cat "$PW/marker-time" 2>/dev/null || true)
			tshark -r "$PCAP" "${TD[@]}" -Y "tcp.srcport==$MDS2_PORT && rpc.msgtyp==1 && nfs.opcode==50 && frame.time_epoch > ${mk:-0}" \
				-T fields -e frame.number -e nfs.deviceid -e nfs.nfsstat4 2>/dev/null >"$PW/layouts-after.txt" || true
			nl=$(wc -l <"$PW/layouts-after.txt")
			nd=$(grep -ci -- "${deadid:-no-such-device}" "$PW/layouts-after.txt" || true)
			log "dsfail: $nl LAYOUTGET replies after the MDS took the dead server out of service (the marker, $(date -d "@${mk%.*}" +%T 2>/dev/null)), $nd of them naming it"
			[[ -n $mk ]] || fail "dsfail: no marker time ($PW/marker-time): the host never dropped the marker"
			((nd == 0)) || fail "dsfail: $nd LAYOUTGET replies after the MDS took the dead data server out of service still name it (see $PW/layouts-after.txt)"
			# The first report in full, for the record.
			[[ -z $first ]] || tshark -r "$PCAP" "${TD[@]}" -Y "frame.number == $first" -O nfs 2>/dev/null | sed -n '/^Network File System/,$p' >"$PW/error-report-first.txt" || true
			# The file made after the kill: the layouts the MDS gave for
			# it (found by its file handle: OPEN's GETFH, then the
			# LAYOUTGETs with it) must not name the dead server.
			for v in "${FVERS[@]}"; do
				ox=$(tshark -r "$PCAP" "${TD[@]}" -Y "tcp.dstport==$MDS2_PORT && rpc.msgtyp==0 && nfs.opcode==18 && nfs.pathname.component==\"n-after.bin\"" -T fields -e rpc.xid 2>/dev/null | head -n1)
				fh=
				[[ -z $ox ]] || fh=$(tshark -r "$PCAP" "${TD[@]}" -Y "tcp.srcport==$MDS2_PORT && rpc.msgtyp==1 && rpc.xid==$ox" -T fields -e nfs.fh.hash 2>/dev/null | head -n1 | cut -d, -f1)
				lx=
				[[ -z $fh ]] || lx=$(tshark -r "$PCAP" "${TD[@]}" -Y "tcp.dstport==$MDS2_PORT && rpc.msgtyp==0 && nfs.opcode==50 && nfs.fh.hash==$fh" -T fields -e rpc.xid 2>/dev/null | paste -sd, -)
				if [[ -z $lx ]]; then
					log "dsfail v$v: no LAYOUTGET for n-after.bin found in the capture (OPEN xid ${ox:-none}, fh ${fh:-none}): its layout is not checked"
					continue
				fi
				tshark -r "$PCAP" "${TD[@]}" -Y "tcp.srcport==$MDS2_PORT && rpc.msgtyp==1 && rpc.xid in {${lx}}" -T fields -e frame.number -e nfs.deviceid -e nfs.nfsstat4 2>/dev/null >"$PW/layouts-n-after.txt" || true
				nd=$(grep -ci -- "${deadid:-no-such-device}" "$PW/layouts-n-after.txt" || true)
				log "dsfail v$v: n-after.bin (made after the kill, fh $fh): $(wc -l <"$PW/layouts-n-after.txt") LAYOUTGET replies, devices: $(cut -f2 "$PW/layouts-n-after.txt" | tr '\n' ' ')"
				((nd == 0)) || fail "dsfail v$v: the MDS gave n-after.bin, made after the data server died, a layout naming it ($nd replies; $PW/layouts-n-after.txt)"
			done
		else
			fail "dsfail: no LAYOUTERROR and no LAYOUTRETURN with an ff_ioerr4 in the capture ($PCAP), and the MDS never took the server out of service: nobody noticed the failure"
		fi
	else
		log "dsfail: tshark or the capture missing: the error reports and later layouts are not checked"
	fi
	scrape "$MDS2_MPORT" "$PW/dsfail/mds2.metrics"
	M=$PW/dsfail/mds2.metrics
	log "dsfail: MDS 2 counted LAYOUTERROR=$(ops "$M" LAYOUTERROR) LAYOUTRETURN=$(ops "$M" LAYOUTRETURN) LAYOUTGET=$(ops "$M" LAYOUTGET) (errors: $(errs "$M" LAYOUTGET)) LAYOUTSTATS=$(ops "$M" LAYOUTSTATS) WRITE=$(ops "$M" WRITE) READ=$(ops "$M" READ) READ_PLUS=$(ops "$M" READ_PLUS)"
	grep -iE 'data.?server|layouterror|fence|mirror' "$PW/mds2.log" | grep -vi 'level=DEBUG' | tail -n 20 >&2 || true
	stop_pid "$MDS2_PID"
	MDS2_PID=
else
	log "dsfail stage SKIPPED (E2E_PNFS_STAGES='${E2E_PNFS_STAGES:-}', E2E_PNFS_DSFAIL=${E2E_PNFS_DSFAIL:-1})"
fi

times=
for s in write read stripe dsfail; do [[ -z ${STAGE_TIME[$s]:-} ]] || times+=" $s=${STAGE_TIME[$s]}s"; done
log "pNFS phase took $((SECONDS - T0))s (guest boots:$times)"
if ((${#fails[@]})); then
	{
		echo
		echo "================ e2e (kernel client) pNFS phase FAILED ================"
		printf '  - %s\n' "${fails[@]}"
		echo "  logs: $PW (host.log, mds.log, mds2.log, ds1.log, ganesha.log, STAGE/console.log, STAGE/results.txt, STAGE/nfs.pcap)"
		echo "======================================================================"
	} >&2
	grep -E 'level=(WARN|ERROR)' "$PW/mds.log" "$PW/mds2.log" 2>/dev/null | tail -n 30 >&2 || true
	exit 1
fi
what=
has_stage write && what+="; write + read back, NFS ${VERS[*]}"
has_stage write && has_stage read && what+="; MDS kill -9 + restart, a new client reads back"
has_stage dsfail && what+="; a data server killed (--mirrors 2), NFS ${FVERS[*]}"
has_stage stripe && what+="; --stripe-unit: the 6.12 client through the MDS, NFS ${VERS[*]}"
echo "================ e2e (kernel client) PASSED: pNFS phase (flexible-files MDS over an nfsd-uring and an NFS-Ganesha data server$what) in $((SECONDS - T0))s ================"
