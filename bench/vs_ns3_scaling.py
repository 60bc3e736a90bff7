#!/usr/bin/env python3
"""thinlab against ns-3 as the number of flows grows (docs/performance/comparisons.md, "Against ns-3
at scale").

N thin streams (120 B every 140 ms, 100 ms RTT, 0.5 % loss, 1 Gbit/s, 1 000-packet queue)
between two hosts, in both simulators: `bench/scaling.py`'s scenario in thinlab (simulation
alone, best of `--runs`, timed by `thinlab-sim`'s `profile` example), and
`bench/ns3/thin_stream.py --flows N --bandwidth 1Gbps` in ns-3 (its `Simulator.Run()` CPU
time, one run: at 10 000 flows it takes minutes). Prints one markdown row per case: events,
time and ns per event of each, and the ratio of the times.

    cargo build --release -p thinlab-sim --example profile
    python3 bench/vs_ns3_scaling.py [--python /path/to/python-with-ns3] [--cases 100:20,1000:20]

A case is FLOWS:SECONDS of writes (ns-3 then drains 1 s; thinlab until every flow is done).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scaling  # noqa: E402


def thinlab(profile, flows, seconds, runs, tmp):
    path = os.path.join(tmp, f"thin-{flows}-{seconds}.toml")
    with open(path, "w") as f:
        f.write(scaling.scenario("thin", flows, f"{seconds}s", "1Gbit"))
    p = subprocess.run([profile, path, str(runs)], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{profile} {path} failed:\n{p.stderr}")
    return parse_profile(p.stdout, f"{profile} {path}")


def parse_profile(stdout, what="profile"):
    """(best wall time in seconds, events) of the `profile` example's lines."""
    best, events = None, None
    for line in stdout.splitlines():
        m = re.search(r": ([0-9.]+)(ns|µs|ms|s) wall, .*?, (\d+) events", line)
        if not m:
            continue
        t = float(m.group(1)) * {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}[m.group(2)]
        best = t if best is None else min(best, t)
        events = int(m.group(3))
    if best is None:
        sys.exit(f"no timing in the output of {what}:\n{stdout}")
    return best, events


def ns3(python, flows, seconds):
    cmd = [python, os.path.join(HERE, "ns3", "thin_stream.py"), "--flows", str(flows),
           "--duration", str(seconds), "--drain", "1", "--bandwidth", "1Gbps"]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=os.path.join(HERE, "ns3"))
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    d = json.loads(lines[-1])
    return d["cpu_s"], d["events"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=sys.executable, help="a Python with the ns3 package")
    ap.add_argument("--profile", default="target/release/examples/profile")
    ap.add_argument("--runs", type=int, default=3, help="thinlab runs per case (best taken)")
    ap.add_argument("--cases", default="100:20,1000:20,10000:2",
                    help="FLOWS:SECONDS,… (seconds of writes)")
    a = ap.parse_args()
    # ns-3 runs in bench/ns3: a relative interpreter path is the caller's
    if os.sep in a.python:
        a.python = os.path.abspath(a.python)
    print("| flows | writes for | ns-3 events | ns-3 `Run()` CPU s | ns-3 ns/event "
          "| thinlab events | thinlab simulation s | thinlab ns/event | ns-3 / thinlab |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for case in a.cases.split(","):
            flows, seconds = (int(x) for x in case.split(":"))
            t_s, t_ev = thinlab(a.profile, flows, seconds, a.runs, tmp)
            n_s, n_ev = ns3(a.python, flows, seconds)
            print(f"| {flows:,} | {seconds} s | {n_ev:,} | {n_s:.3f} | {n_s * 1e9 / n_ev:,.0f} "
                  f"| {t_ev:,} | {t_s:.4f} | {t_s * 1e9 / t_ev:,.0f} | {n_s / t_s:,.0f}× |",
                  flush=True)


if __name__ == "__main__":
    main()
