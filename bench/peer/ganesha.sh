#!/bin/bash
# ganesha.sh start|stop|status [EXPORT_DIR] [PORT]
# Runs NFS-Ganesha (Debian nfs-ganesha + nfs-ganesha-vfs, 4.3) in the
# background: NFSv4 only, FSAL VFS exporting EXPORT_DIR as pseudo path
# /export, on 127.0.0.1:PORT, no rpcbind, no rquota/NLM. State lives in
# $GANESHA_RUN (default /tmp/nfsbench-ganesha); the pid is in ganesha.pid.
set -euo pipefail
cmd=${1:-status}
dir=${2:-/tmp/nfsbench-ganesha/export}
port=${3:-22049}
run=${GANESHA_RUN:-/tmp/nfsbench-ganesha}
pidfile=$run/ganesha.pid

start() {
	command -v ganesha.nfsd >/dev/null || { echo "ganesha.nfsd missing: apt-get install -y nfs-ganesha nfs-ganesha-vfs" >&2; exit 1; }
	if running; then echo "ganesha already running, pid $(cat "$pidfile")"; return; fi
	mkdir -p "$run/recov" "$dir"
	cat >"$run/ganesha.conf" <<CONF
NFS_Core_Param {
	NFS_Port = $port;
	Bind_Addr = 127.0.0.1;
	Protocols = 4;
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
	Protocols = 4;
	Transports = TCP;
	Access_Type = RW;
	Squash = No_Root_Squash;
	SecType = sys;
	FSAL { Name = VFS; }
}
LOG { Default_Log_Level = WARN; }
CONF
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
}

case $cmd in
start) start ;;
stop) stop ;;
status) if running; then echo "running, pid $(cat "$pidfile")"; else echo "not running"; exit 1; fi ;;
*) echo "usage: $0 start|stop|status [EXPORT_DIR] [PORT]" >&2; exit 2 ;;
esac
