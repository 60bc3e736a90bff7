#!/usr/bin/env python3
"""Paired A/B timing of builds on one scenario: of the `profile` example (sim only), or with
`--cli` of whole `thinlab run` processes (the simulation's ns/event from their `timing.json`).

On a shared machine the speed of memory-bound runs drifts by tens of percent within minutes
(docs/performance.md, "Hot fields first"), so two builds are compared in alternation: each
round runs every build once (the order reversed every other round), and the change is the
median of the per-round ratios against the first build, with how many rounds it was lower.

    cargo build --release -p thinlab-sim --example profile   # once per build, copied aside
    python3 bench/paired.py OLD_PROFILE NEW_PROFILE SCENARIO.toml [--rounds 6]
    python3 bench/paired.py --cli OLD_THINLAB NEW_THINLAB SCENARIO.toml   # e.g. two PGO builds
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def ns_per_event(binary: str, scenario: str) -> int:
    out = subprocess.run([binary, scenario, "1"], capture_output=True, text=True, check=True)
    m = re.search(r"(\d+) ns/event", out.stdout)
    if not m:
        sys.exit(f"{binary}: no 'ns/event' in its output:\n{out.stdout}{out.stderr}")
    return int(m.group(1))


def cli_ns_per_event(binary: str, scenario: str) -> int:
    """One `thinlab run` with one thread; its simulation's ns per event from `timing.json`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        subprocess.run([binary, "run", scenario, "--quiet", "--jobs", "1", "--out", out],
                       capture_output=True, text=True, check=True)
        with open(os.path.join(out, "timing.json")) as f:
            t = json.load(f)
    return round(t["sim_wall_s"] * 1e9 / max(t["events_processed"], 1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("builds", nargs="+", help="profile binaries; the first is the reference")
    ap.add_argument("scenario", help="scenario TOML (e.g. from bench/scaling.py's scenario())")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--cli", action="store_true",
                    help="the builds are thinlab binaries: time whole `thinlab run` processes")
    a = ap.parse_args()
    measure = cli_ns_per_event if a.cli else ns_per_event
    if len(a.builds) < 2:
        sys.exit("give at least two builds")
    res = {b: [] for b in a.builds}
    for i in range(a.rounds):
        for b in a.builds if i % 2 == 0 else a.builds[::-1]:
            res[b].append(measure(b, a.scenario))
    for b in a.builds:
        v = res[b]
        print(f"{b}: median {statistics.median(v):.0f} ns/event (min {min(v)}, max {max(v)}): {v}")
    ref = res[a.builds[0]]
    for b in a.builds[1:]:
        d = [x / y - 1 for x, y in zip(res[b], ref)]
        lower = sum(1 for x in d if x < 0)
        print(f"{b} against {a.builds[0]}: median change {100 * statistics.median(d):+.1f} %, "
              f"lower in {lower} of {len(d)} rounds")


if __name__ == "__main__":
    main()
