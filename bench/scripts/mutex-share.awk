# mutex-share.awk: goal 5 of issue 10 from `go tool pprof -traces` of a
# mutex profile of nfs's parallel benchmarks (peer-compare.sh): the delay
# in locks taken by the nfs package, on the benchmarks' timed path, against
# the whole delay. Target: under 1 % (none in the top).
#
#   awk -v bench=BENCH_OUTPUT -f mutex-share.awk TRACES
#
# A trace is "-----------+---" then "DELAY FRAME", then a frame a line.
# It counts for nfs when a sync.* frame and an nfsd-uring/nfs. frame are
# in it, and not nfs.newBenchClients (the untimed setup, which opens files
# and binds connections one at a time).
function flush() {
	if (delay != "") {
		total += delay
		if (!setup && hassync && nfsframe != "") {
			nfs += delay
			top[nfsframe] += delay
		}
	}
	delay = ""; setup = 0; hassync = 0; nfsframe = ""
}
function frame(f) {
	if (f ~ /nfs\.newBenchClients/) setup = 1
	if (f ~ /^sync\./) hassync = 1
	if (f ~ /nfsd-uring\/nfs\./ && nfsframe == "") nfsframe = f
}
/^-+\+/ { flush(); first = 1; next }
first {
	first = 0
	if (match($1, /^[0-9.]+(ns|us|ms|s)$/)) {
		unit = $1; sub(/^[0-9.]+/, "", unit)
		delay = ($1 + 0) * (unit == "ns" ? 1e-3 : unit == "us" ? 1 : unit == "ms" ? 1e3 : 1e6)
	}
	frame($2)
	next
}
delay != "" && NF { frame($1) }
END {
	flush()
	while ((getline line < bench) > 0) {
		if (line ~ /^Benchmark[A-Za-z0-9]+-[0-9]+[ \t]/) {
			split(line, w, /[ \t]+/)
			name = w[1]; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
			ns = ns (ns == "" ? "" : ", ") sprintf("%s %.0f ns/op", name, w[3])
		}
	}
	tops = ""
	for (n = 0; n < 3; n++) {
		best = ""
		for (k in top) if (best == "" || top[k] > top[best]) best = k
		if (best == "") break
		tops = tops (tops == "" ? "" : ", ") sprintf("%s %.0f µs", best, top[best])
		delete top[best]
	}
	if (tops == "") tops = "none"
	share = total > 0 ? 100 * nfs / total : 0
	printf "goal 5: nfs locks' share of the mutex delay, parallel READ / one-session READ / WRITE (%s): %.1f of %.1f µs, %.2f %% (target: under 1 %%, none in the top; nfs frames: %s): %s\n",
		ns, nfs, total, share, tops, (nfs <= 0.01 * (total > 1 ? total : 1) ? "met" : "NOT met")
}
