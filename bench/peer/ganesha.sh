#!/bin/bash
# ganesha.sh start|stop|status [EXPORT_DIR] [PORT]
# Runs NFS-Ganesha (Debian nfs-ganesha + nfs-ganesha-vfs, 4.3) in the
# background: NFSv4 only, FSAL VFS exporting EXPORT_DIR as pseudo path
# /export, on 127.0.0.1:PORT, no rpcbind, no rquota/NLM. State lives in
# $GANESHA_RUN (default /tmp/nfsbench-ganesha); the pid is in ganesha.pid.
# GANESHA_V3=1 serves NFSv3 too, with MOUNT on PORT+1 (nfsbench --vers 3
# --mount-port PORT+1 --export EXPORT_DIR): Ganesha 4.3 registers v3 and
# MOUNT with rpcbind and exits ("Cannot register NFS V3 on TCP") when none
# answers, so then this starts `rpcbind -w` (and stop stops it again).
set -euo pipefail
cmd=${1:-status}
dir=${2:-/tmp/nfsbench-ganesha/export}
port=${3:-22049}
run=$(realpath -m "${GANESHA_RUN:-/tmp/nfsbench-ganesha}")
dir=$(realpath -m "$dir")
pidfile=$run/ganesha.pid
protos=4 mnt=
if [ "${GANESHA_V3:-0}" = 1 ]; then protos="3, 4" mnt="MNT_Port = $((port + 1));"; fi

start() {
	command -v ganesha.nfsd >/dev/null || { echo "ganesha.nfsd missing: apt-get install -y nfs-ganesha nfs-ganesha-vfs" >&2; exit 1; }
	if running; then echo "ganesha already running, pid $(cat "$pidfile")"; return; fi
	mkdir -p "$run/recov" "$dir"
	if [ "$protos" != 4 ] && ! rpcinfo -p 127.0.0.1 >/dev/null 2>&1; then
		command -v rpcbind >/dev/null || { echo "GANESHA_V3=1 needs rpcbind: apt-get install -y rpcbind" >&2; exit 1; }
		setsid rpcbind -f -w </dev/null >/dev/null 2>&1 &
		echo $! >"$run/rpcbind.pid"
		for _ in $(seq 50); do rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && break; sleep 0.1; done
		echo "started rpcbind for Ganesha's NFSv3 and MOUNT"
	fi
	cat >"$run/ganesha.conf" <<CONF
NFS_Core_Param {
	NFS_Port = $port;
	$mnt
	Bind_Addr = 127.0.0.1;
	Protocols = $protos;
	Enable_NLM = false;
	Enable_RQUOTA = false;
	Enable_UDP = false;
}
NFSv4 {
	Graceless = true;
	RecoveryBackend = fs;
	Minor_Versions = 1, 2;
}
NFS_KRB5 { Active_krb5 = false; }
EXPORT {
	Export_Id = 1;
	Path = "$dir";
	Pseudo = /export;
	Protocols = $protos;
	Transports = TCP;
	Access_Type = RW;
	Squash = No_Root_Squash;
	SecType = sys;
	FSAL { Name = VFS; }
}
LOG { Default_Log_Level = WARN; }
CONF
	# $run is absolute: the daemon changes to / before it writes the pid file
	ganesha.nfsd -f "$run/ganesha.conf" -L "$run/ganesha.log" -p "$pidfile" -N NIV_WARN
	for _ in $(seq 50); do
		if (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null; then
			echo "ganesha pid $(cat "$pidfile") on 127.0.0.1:$port exporting $dir as /export"
			return
		fi
		sleep 0.2
	done
	echo "ganesha did not come up; log:" >&2
	tail -20 "$run/ganesha.log" >&2
	exit 1
}

running() { [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

stop() {
	if running; then
		pid=$(cat "$pidfile")
		kill "$pid"
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
		echo "ganesha stopped"
	fi
	rm -f "$pidfile"
	if [ -s "$run/rpcbind.pid" ]; then
		kill "$(cat "$run/rpcbind.pid")" 2>/dev/null || true
		rm -f "$run/rpcbind.pid"
		echo "rpcbind stopped"
	fi
}

case $cmd in
start) start ;;
stop) stop ;;
status) if running; then echo "running, pid $(cat "$pidfile")"; else echo "not running"; exit 1; fi ;;
*) echo "usage: $0 start|stop|status [EXPORT_DIR] [PORT]" >&2; exit 2 ;;
esac
