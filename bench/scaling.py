#!/usr/bin/env python3
"""Scaling benchmark: how the simulator's cost per event and its memory grow with the number of
flows, the simulated time and the bandwidth, and how the whole command's time grows with the
number of configurations of a sweep (docs/performance/many-flows.md, "Scaling").

For each case it writes a scenario, runs `thinlab run SCENARIO --quiet --jobs 1` under
`/usr/bin/time`, and prints one markdown row: flows, simulated time, bandwidth, events,
simulation wall time (from the run's `timing.json`), ns per event, the whole process's wall
time (simulation, metrics, files and report.html), peak RSS and, against the
single-flow case of the same kind, the bytes of peak RSS each further flow adds.

A second table sweeps one thin stream of 10 s over N loss rates (N configurations, one run
each) and prints the whole process's time per configuration: output that searched a list per
row made this quadratic once (a sweep of 100 000 configurations took 75 s on the default
jobs, 59 s on one).

    cargo build --release -p thinlab
    python3 bench/scaling.py [--bin target/release/thinlab] [--quick]

`--quick` runs a smaller grid (for a smoke test). Wall times depend on the machine's load;
state it beside the table (`uptime`).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

THIN = """
[[flow]]
name = "thin{i}"
start = "{start}ms"
app = {{ kind = "fixed", payload_bytes = 120, interval = "140ms" }}
tcp = {{ profile = "linux", nodelay = true }}
"""

BULK = """
[[flow]]
name = "bulk{i}"
start = "{start}ms"
app = {{ kind = "bulk" }}
tcp = {{ profile = "linux" }}
"""


def scenario(kind, flows, duration, bandwidth):
    head = f"""name = "scaling-{kind}-{flows}"
seed = 1
duration = "{duration}"
repetitions = 1

[network]
rtt = "100ms"
bandwidth = "{bandwidth}"
queue_packets = {1000 if kind == "thin" else 2000}

[network.loss]
model = "bernoulli"
rate = 0.005
"""
    flow = THIN if kind == "thin" else BULK
    # starts spread over the first 140 ms so that the flows do not write in lock step
    body = "".join(flow.format(i=i, start=(i * 140) // max(flows, 1)) for i in range(flows))
    return head + body


def sweep_scenario(configs):
    """One thin stream for 10 s, swept over `configs` loss rates (distinct values)."""
    rates = ", ".join(f"{i * 1e-6:.6f}" for i in range(configs))
    return scenario("thin", 1, "10s", "100Mbit") + f'[sweep]\n"network.loss.rate" = [{rates}]\n'


def run(binary, kind, flows, duration, bandwidth, tmp, text=None):
    path = os.path.join(tmp, f"{kind}-{flows}-{duration}-{bandwidth}.toml")
    with open(path, "w") as f:
        f.write(text if text is not None else scenario(kind, flows, duration, bandwidth))
    # a fresh folder, removed after the run: `--force` over the previous case's folder would
    # time its removal too
    out = os.path.join(tmp, "out")
    shutil.rmtree(out, ignore_errors=True)
    # `--force` also skips the memory estimate's refusal, which the largest cases may meet on a
    # machine with a memory limit; the folder is new, so it removes nothing
    cmd = ["/usr/bin/time", "-f", "%M %e", binary, "run", path, "--quiet", "--jobs", "1",
           "--force", "--out", out]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 3):
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    rss_kb, wall = p.stderr.strip().splitlines()[-1].split()
    with open(os.path.join(out, "timing.json")) as f:
        t = json.load(f)
    shutil.rmtree(out)
    return {
        "kind": kind, "flows": flows, "duration": duration, "bandwidth": bandwidth,
        "events": t["events_processed"], "sim_s": t["sim_wall_s"],
        "ns_per_event": t["sim_wall_s"] * 1e9 / max(t["events_processed"], 1),
        "rss_mib": int(rss_kb) / 1024, "process_s": float(wall),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/thinlab")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.quick:
        cases = [("thin", n, "10s", "1Gbit") for n in (1, 10, 100)] + \
                [("bulk", n, "2s", "1Gbit") for n in (1, 10)]
        sweeps = [10, 100]
    else:
        sweeps = [100, 1000, 10000, 100000]
        cases = [("thin", n, "1min", "1Gbit") for n in (1, 10, 100, 1000, 10000)] + \
                [("thin", 1, d, "100Mbit") for d in ("1h", "10h", "100h")] + \
                [("bulk", n, "10s", "1Gbit") for n in (1, 10, 100)] + \
                [("bulk", 1, "10s", "10Gbit")]
    print("| kind | flows | simulated | bandwidth | events | sim s | ns/event | process s "
          "| peak RSS MiB | bytes/flow beyond the first |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    base = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind, n, d, bw in cases:
            r = run(a.bin, kind, n, d, bw, tmp)
            key = (kind, d, bw)
            if n == 1:
                base[key] = r
            per_flow = ""
            if n > 1 and key in base:
                per_flow = f"{(r['rss_mib'] - base[key]['rss_mib']) * 1024 * 1024 / (n - 1):,.0f}"
            print(f"| {kind} | {n} | {d} | {bw} | {r['events']:,} | {r['sim_s']:.3f} "
                  f"| {r['ns_per_event']:.0f} | {r['process_s']:.2f} | {r['rss_mib']:.1f} | {per_flow} |",
                  flush=True)
        print()
        print("| configurations (1 thin stream, 10 s each) | events | sim s | process s "
              "| process ms per configuration | peak RSS MiB |")
        print("|---|---|---|---|---|---|")
        for n in sweeps:
            r = run(a.bin, "sweep", n, "10s", "100Mbit", tmp, sweep_scenario(n))
            print(f"| {n:,} | {r['events']:,} | {r['sim_s']:.3f} | {r['process_s']:.2f} "
                  f"| {r['process_s'] * 1e3 / n:.3f} | {r['rss_mib']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
