#!/usr/bin/env python3
"""Judge one pynfs run from its JSON results (testserver.py --json).

Prints "pynfs ENGINE: P passed, F failed" and the failing codes, and exits 1
when fewer than --min-pct percent of the tests run passed, when a test in
the baseline list (tests that passed before) failed or did not run, or when
the results are missing. Skipped tests do not count as run; warnings pass.
With --subset only the baseline tests that ran are checked.
"""
import argparse
import json
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--engine", required=True)
    p.add_argument("--min-pct", type=float, default=95)
    p.add_argument("--baseline", default=None)
    p.add_argument("--subset", action="store_true",
                   help="the run chose some tests: hold only those run to the baseline")
    p.add_argument("results")
    a = p.parse_args()

    try:
        with open(a.results) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        print("pynfs %s: no results (%s)" % (a.engine, e))
        return 1

    passed, failed, skipped = [], [], []
    for t in data.get("testcase", []):
        if "failure" in t:
            failed.append(t["code"])
        elif "skipped" in t:
            skipped.append(t["code"])
        else:
            passed.append(t["code"])
    run = len(passed) + len(failed)
    pct = 100.0 * len(passed) / run if run else 0.0
    print("pynfs %s: %d passed, %d failed (%.1f%% of %d run; %d not run)"
          % (a.engine, len(passed), len(failed), pct, run, len(skipped)))
    if failed:
        print("pynfs %s failing: %s" % (a.engine, " ".join(sorted(failed))))

    ok = True
    if pct < a.min_pct:
        print("pynfs %s: FAIL: %.1f%% passed, under PYNFS_MIN_PCT=%g"
              % (a.engine, pct, a.min_pct))
        ok = False
    if a.baseline:
        with open(a.baseline) as f:
            want = [ln.split("#")[0].strip() for ln in f]
        want = [w for w in want if w]
        good = set(passed)
        # pynfs marks tests it did not select as skipped, and so too
        # tests whose dependency failed: in a full run a skipped baseline
        # test is lost; a subset (PYNFS_TESTS) is judged on what it ran.
        ran = good | set(failed)
        lost = [w for w in want if w not in good and (w in ran or not a.subset)]
        if lost:
            print("pynfs %s: FAIL: baseline tests no longer pass: %s"
                  % (a.engine, " ".join(lost)))
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
