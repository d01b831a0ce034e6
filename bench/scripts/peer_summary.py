#!/usr/bin/env python3
"""Summary of peer-compare.sh: tables, then issue 10's goals with their
measured ratios and met / NOT met. Input: the results.jsonl it wrote."""
import json
import math
import statistics as st
import sys

rows = [json.loads(l) for l in open(sys.argv[1])]
nan = float("nan")


def pick(tag=None, tagp=None, server=None, wl=None, file=None, op=None, cached=None):
    out = []
    for r in rows:
        if tag is not None and r.get("tag") != tag:
            continue
        if tagp is not None and not r.get("tag", "").startswith(tagp):
            continue
        if server is not None and r.get("server") != server:
            continue
        if wl is not None and r.get("workload") != wl:
            continue
        if file is not None and r.get("file") != file:
            continue
        if op is not None and r.get("op") != op:
            continue
        if cached is not None and r.get("cached") != cached:
            continue
        out.append(r)
    return out


def val(rs, field):
    v = [r.get(field) for r in rs if not r.get("error") and r.get(field) is not None]
    return st.median(v) if v else nan


def err(rs):
    return any(r.get("error") for r in rs)


def f(x, d=0):
    if isinstance(x, float) and math.isnan(x):
        return "-"
    return f"{x:.{d}f}"


def ratio(a, b):
    return a / b if b and not math.isnan(a) and not math.isnan(b) else nan


for r in rows:
    if r.get("error") and not (r.get("server") == "ganesha" and r.get("op") == "READ_PLUS"):
        print("ERROR:", r.get("tag"), r.get("server"), r.get("workload"), r.get("file"), r.get("op"), r["error"][:200])

files = sorted({r["file"] for r in pick(tagp="readmatrix-") + pick(tagp="cold-") if r.get("file")},
               key=lambda x: (x != "data", x != "hole", x))

print("\n### readmatrix (1 MiB sequential), MB/s and server CPU s/GiB")
print("| file | cache | uring READ | uring READ_PLUS | portable READ | ganesha READ | READ uring/ganesha | srv s/GiB READ uring / portable / ganesha |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for fl in files:
    for c in (False, True):
        u = pick(tag="readmatrix-uring", server="uring", file=fl, op="READ", cached=c)
        up = pick(tag="readmatrix-uring", server="uring", file=fl, op="READ_PLUS", cached=c)
        p = pick(tag="readmatrix-portable", server="portable", file=fl, op="READ", cached=c)
        g = pick(tag="readmatrix-uring", server="ganesha", file=fl, op="READ", cached=c)
        print(f"| {fl} | {'cached' if c else 'uncached'} | {f(val(u, 'mb_per_sec'))} | {f(val(up, 'mb_per_sec'))} | "
              f"{f(val(p, 'mb_per_sec'))} | {f(val(g, 'mb_per_sec'))} | {f(ratio(val(u, 'mb_per_sec'), val(g, 'mb_per_sec')), 2)}x | "
              f"{f(val(u, 'server_cpu_seconds_per_gib'), 2)} / {f(val(p, 'server_cpu_seconds_per_gib'), 2)} / {f(val(g, 'server_cpu_seconds_per_gib'), 2)} |")
gp = pick(tagp="readmatrix-", server="ganesha", op="READ_PLUS")
if err(gp):
    print("\n(NFS-Ganesha 4.3 READ_PLUS: error, as known: see BENCHMARKS.md)")

print("\n### randread 4 KiB, 2 connections, depth 16")
print("| server | ops/s | p99 µs | server CPU µs/op |")
print("|---|---:|---:|---:|")
for s, tag in (("uring", "randread-uring"), ("portable", "randread-portable"), ("ganesha", "randread-uring")):
    rs = pick(tag=tag, server=s, wl="randread")
    p99 = [r.get("latency_us", {}).get("p99") for r in rs if r.get("latency_us")]
    print(f"| {s} | {f(val(rs, 'ops_per_sec'))} | {f(p99[0] if p99 and p99[0] else nan)} | {f(val(rs, 'server_cpu_us_per_op'), 1)} |")

fio = val(pick(tag="fio"), "mb_per_sec")
print("\n### Cold reads (goal 2): io_uring engine, --direct-reads auto vs off, READ 1 MiB, medians")
print(f"fio --direct=1 --ioengine=io_uring, 1 MiB sequential, depth 16, on the evicted `data` file: {f(fio)} MB/s (device limit, median of {len(pick(tag='fio'))})")
print("| file | cache | auto MB/s | off MB/s | auto srv s/GiB | off srv s/GiB | auto MB/s vs fio |")
print("|---|---|---:|---:|---:|---:|---:|")
cold = {}
for fl in files:
    for c in (False, True):
        a = pick(tagp="cold-", server="uring", file=fl, op="READ", cached=c)
        b = pick(tagp="cold-", server="buffered", file=fl, op="READ", cached=c)
        cold[(fl, c)] = (val(a, "server_cpu_seconds_per_gib"), val(b, "server_cpu_seconds_per_gib"))
        print(f"| {fl} | {'cached' if c else 'uncached'} | {f(val(a, 'mb_per_sec'))} | {f(val(b, 'mb_per_sec'))} | "
              f"{f(val(a, 'server_cpu_seconds_per_gib'), 2)} | {f(val(b, 'server_cpu_seconds_per_gib'), 2)} | "
              f"{f(ratio(val(a, 'mb_per_sec'), fio), 2)}x |")
# The IO500-style configurations that ran (peer-compare.sh's
# io500-configs.txt: "SIZE FILES" per line, the first also with portable),
# each repeated; every phase is the median of its repetitions.
try:
    configs = [l.split() for l in open(sys.argv[2] + "/io500-configs.txt") if l.strip()]
except OSError:
    configs = []
IO500_ORDER = ["ior-easy write", "mdtest-easy create", "ior-hard write", "mdtest-hard create",
               "ior-easy read", "mdtest-easy stat", "ior-hard read", "mdtest-hard stat",
               "mdtest-easy read", "mdtest-hard read", "mdtest-easy remove", "mdtest-hard remove"]


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v and all(x > 0 for x in v) else nan


def io500(eng, size):
    """Per-phase medians of eng and Ganesha over the repetitions at size,
    and the IO500-style score ratio: {phase: (eng row, ganesha row)}, ratios."""
    tagp = f"io500-{eng}-{size}-"
    phases = {}
    for key in IO500_ORDER:
        wl, op = key.split()
        phases[key] = [pick(tagp=tagp, server=s, wl=wl, op=op) for s in (eng, "ganesha")]
    bw = [ratio(val(a, "mb_per_sec"), val(g, "mb_per_sec")) for k, (a, g) in phases.items() if k.startswith("ior-")]
    md = [ratio(val(a, "ops_per_sec"), val(g, "ops_per_sec")) for k, (a, g) in phases.items() if k.startswith("mdtest-")]
    b, m = geomean(bw), geomean(md)
    return phases, b, m, math.sqrt(b * m) if not math.isnan(b * m) else nan


def reps(eng, size):
    return len({r["tag"] for r in pick(tagp=f"io500-{eng}-{size}-", server=eng)})


for size, nfiles in configs:
    for eng in ("uring", "portable"):
        n = reps(eng, size)
        if not n:
            continue
        phases, b, m, score = io500(eng, size)
        print(f"\n### IO500-style, {eng} vs ganesha: io500 --size {size} --files {nfiles} --conns 4 --depth 8 "
              f"--stonewall 10s, medians of {n} (servers' order swapped every other time)")
        print(f"| phase | {eng} MB/s | ganesha MB/s | {eng} ops/s | ganesha ops/s | ops/s {eng}/ganesha | "
              f"srv µs/op {eng} / ganesha | srv µs/op ratio | runs of the ratio |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
        for key, (a, g) in phases.items():
            runs = []
            for t in sorted({r["tag"] for r in a}):
                ra, rg = pick(tag=t, server=eng, wl=key.split()[0], op=key.split()[1]), pick(tag=t, server="ganesha", wl=key.split()[0], op=key.split()[1])
                runs.append(f(ratio(val(ra, "ops_per_sec"), val(rg, "ops_per_sec")), 2))
            mb = key.startswith("ior-")
            print(f"| {key} | {f(val(a, 'mb_per_sec')) if mb else '-'} | {f(val(g, 'mb_per_sec')) if mb else '-'} | "
                  f"{f(val(a, 'ops_per_sec'))} | {f(val(g, 'ops_per_sec'))} | "
                  f"{f(ratio(val(a, 'ops_per_sec'), val(g, 'ops_per_sec')), 2)}x | "
                  f"{f(val(a, 'server_cpu_us_per_op'), 1)} / {f(val(g, 'server_cpu_us_per_op'), 1)} | "
                  f"{f(ratio(val(a, 'server_cpu_us_per_op'), val(g, 'server_cpu_us_per_op')), 2)}x | {', '.join(runs)} |")
        print(f"ratio {eng}/ganesha (medians): bandwidth {f(b, 2)}x  metadata {f(m, 2)}x  score {f(score, 2)}x "
              f"(IO500-style: geometric means of the ior and of the mdtest phases; not an official IO500 score)")

first = f"io500-uring-{configs[0][0]}-" if configs else "io500-uring-"
iu = pick(tagp=first, server="uring", wl="ior-easy", op="read")
ig = pick(tagp=first, server="ganesha", wl="ior-easy", op="read")
print(f"ior-easy read at --size {configs[0][0] if configs else '-'} (files written O_DIRECT by nfsd-uring: cold): uring {f(val(iu, 'mb_per_sec'))} MB/s, "
      f"{f(val(iu, 'server_cpu_seconds_per_gib'), 2)} s/GiB; ganesha {f(val(ig, 'mb_per_sec'))} MB/s, "
      f"{f(val(ig, 'server_cpu_seconds_per_gib'), 2)} s/GiB")

rp = pick(tagp="g4-rp-", server="uring", op="READ_PLUS")
rd = pick(tagp="g4-rd-", server="uring", wl="randread")
c2 = pick(tagp="g6-", server="cores2")
c1 = pick(tagp="g6-", server="uring")

print("\n### Goals of issue 10")

# goal 1: the IO500-style score from the per-phase medians, and the
# weakest phase, against Ganesha, per configuration; the goal is the
# uring engine's at every configuration (portable's is shown beside it)
def goal1(eng, size, files):
    phases, _, _, score = io500(eng, size)
    worst = (nan, "-")
    for key, (a, g) in phases.items():
        q = ratio(val(a, "ops_per_sec"), val(g, "ops_per_sec"))
        if not math.isnan(q) and (math.isnan(worst[0]) or q < worst[0]):
            worst = (q, key)
    met = not math.isnan(score) and score >= 3 and worst[0] >= 1.5
    state = "-" if math.isnan(score) else ("met" if met else "NOT met")
    print(f"goal 1: IO500-style score {eng} / ganesha at --size {size} --files {files} (medians of {reps(eng, size)}): "
          f"{f(score, 2)}x (target >= 3.00x), weakest phase {worst[1]} {f(worst[0], 2)}x (target >= 1.50x): {state}")
    return met


if not configs:
    print("goal 1: not measured (SKIP_IO500)")
met1 = [goal1("uring", size, nfiles) for size, nfiles in configs]
if len(configs) > 1:
    print(f"goal 1: uring at all {len(configs)} configurations: {'met' if all(met1) else 'NOT met'}")
if configs and reps("portable", configs[0][0]):
    goal1("portable", *configs[0])


def goal(n, what, r, note=""):
    state = "-" if math.isnan(r) else ("met" if r <= 1.0 else "NOT met")
    print(f"goal {n}: {what}: ratio {f(r, 2)}x (target <= 1.00x): {state}{note}")


d_un, d_ca = cold.get(("data", False), (nan, nan))[0], cold.get(("data", True), (nan, nan))[0]
goal(2, f"cold READ costs no more than hot (data, srv s/GiB uncached {f(d_un, 2)} / cached {f(d_ca, 2)})", ratio(d_un, d_ca))
for fl in files:
    if fl != "data":
        a, b = cold.get((fl, False), (nan, nan))[0], cold.get((fl, True), (nan, nan))[0]
        print(f"        {fl}: uncached / cached {f(ratio(a, b), 2)}x ({f(a, 2)} / {f(b, 2)} s/GiB)")
print(f"        uncached data READ, auto / off: {f(ratio(d_un, cold.get(('data', False), (nan, nan))[1]), 2)}x server CPU per GiB")
ip = pick(tag="g3", server="iperf3", op="TCP")
cp = pick(tag="g3", server="copy", op="READ")
if ip and cp:
    mb = ratio(val(cp, "mb_per_sec"), val(ip, "mb_per_sec"))
    cpu = ratio(val(cp, "server_cpu_seconds_per_gib"), val(ip, "server_cpu_seconds_per_gib"))
    state = "met" if cpu <= 1 and mb >= 0.9 else "NOT met"
    print(f"goal 3: cached 1 MiB READ (copy path) vs iperf3 sender: server CPU per GiB {f(cpu, 2)}x (target <= 1.00x), "
          f"MB/s {f(mb, 2)}x (target >= 0.90x): {state}; splice measured slower (io_uring punts file splice to a "
          f"worker), see BENCHMARKS.md \"Goal 3\"")
else:
    print("goal 3: not measured (iperf3 missing); see BENCHMARKS.md \"Goal 3\"")
a, b = val(rp, "server_cpu_us_per_op"), val(rd, "server_cpu_us_per_op")
goal(4, f"1 MiB all-hole READ_PLUS vs 4 KiB READ server CPU ({f(a, 1)} vs {f(b, 1)} µs/op, medians of {len(rp)})", ratio(a, b))
g4m = pick(tag="g4m")
if g4m and g4m[0]["read_plus"]:
    m = g4m[0]
    miss = m["read_plus"] - m["hits"]
    print(f"goal 4: READ_PLUS extent cache, uring server over the run: {m['read_plus']:.0f} READ_PLUS, "
          f"{miss:.0f} walked the file (hit rate {100 * m['hits'] / m['read_plus']:.2f} %), "
          f"{m['lseeks'] / m['read_plus']:.3f} lseeks per READ_PLUS, {m['lseeks'] / max(miss, 1):.1f} per walk "
          f"(nfsd_uring_read_plus_extent_cache_hits_total, _lseeks_total)")
h4 = val(pick(tag="handle", wl="HandleRead4K"), "ns_per_op")
hh = val(pick(tag="handle", wl="HandleReadPlusHole1M"), "ns_per_op")
goal(4, f"same, server's own work in-process (nfs Handle benchmarks: {f(hh)} vs {f(h4)} ns/op, medians)", ratio(hh, h4))
g5 = pick(tag="g5")
if g5:
    r = g5[0]
    share = ratio(r["nfs_us"], r["total_us"])
    top = ", ".join(f"{k} {v:.0f} µs" for k, v in r["top"]) or "none"
    state = "met" if r["nfs_us"] <= 0.01 * max(r["total_us"], 1) else "NOT met"
    print(f"goal 5: nfs locks' share of the mutex delay, 16 goroutines, parallel READ / one-session READ / WRITE "
          f"({', '.join(f'{k} {v:.0f} ns/op' for k, v in r['ns_per_op'].items())}): {f(r['nfs_us'], 1)} of "
          f"{f(r['total_us'], 1)} µs, {f(100 * share, 2)} % (target: none in the top; nfs frames: {top}): {state}")
else:
    print("goal 5: mutex profile failed (see json/g5-bench.txt)")
a, b = val(c2, "server_cpu_us_per_op"), val(c1, "server_cpu_us_per_op")
goal(6, f"--cores 2 vs --cores 1, 4 connections, randread ({f(a, 1)} vs {f(b, 1)} µs/op; ops/s "
        f"{f(val(c2, 'ops_per_sec'))} vs {f(val(c1, 'ops_per_sec'))})", ratio(a, b))
print("goal 7: one place decides direct vs buffered: met by construction (engine/plan.go readPolicy.plan, both engines; "
      "nfs offers only Read.DirectFD; tests TestPlanRead, TestColdReadsGoDirect, TestReadOpensNoDirectFD)")
