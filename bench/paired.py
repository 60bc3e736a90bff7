#!/usr/bin/env python3
"""Paired A/B timing of builds of the `profile` example (sim only) on one scenario.

On a shared machine the speed of memory-bound runs drifts by tens of percent within minutes
(docs/performance.md, "Hot fields first"), so two builds are compared in alternation: each
round runs every build once (the order reversed every other round), and the change is the
median of the per-round ratios against the first build, with how many rounds it was lower.

    cargo build --release -p thinlab-sim --example profile   # once per build, copied aside
    python3 bench/paired.py OLD_PROFILE NEW_PROFILE SCENARIO.toml [--rounds 6]
"""

import argparse
import re
import statistics
import subprocess
import sys


def ns_per_event(binary: str, scenario: str) -> int:
    out = subprocess.run([binary, scenario, "1"], capture_output=True, text=True, check=True)
    m = re.search(r"(\d+) ns/event", out.stdout)
    if not m:
        sys.exit(f"{binary}: no 'ns/event' in its output:\n{out.stdout}{out.stderr}")
    return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("builds", nargs="+", help="profile binaries; the first is the reference")
    ap.add_argument("scenario", help="scenario TOML (e.g. from bench/scaling.py's scenario())")
    ap.add_argument("--rounds", type=int, default=6)
    a = ap.parse_args()
    if len(a.builds) < 2:
        sys.exit("give at least two builds")
    res = {b: [] for b in a.builds}
    for i in range(a.rounds):
        for b in a.builds if i % 2 == 0 else a.builds[::-1]:
            res[b].append(ns_per_event(b, a.scenario))
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
