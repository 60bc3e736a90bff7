#!/usr/bin/env python3
"""Paired A/B timing of builds on one scenario: of the `profile` example (sim only), or with
`--cli` of whole `thinlab run` processes (the simulation's ns/event from their `timing.json`).

On a shared machine the speed of memory-bound runs drifts by tens of percent within minutes
(docs/performance/many-flows.md, "Hot fields first"), so two builds are compared in alternation:
each round runs every build once (the order reversed every other round), and the change is the
median of the per-round ratios against the first build, with how many rounds it was lower.

    cargo build --release -p thinlab-sim --example profile   # once per build, copied aside
    python3 bench/paired.py OLD_PROFILE NEW_PROFILE SCENARIO.toml [--rounds 6]
    python3 bench/paired.py --cli OLD_THINLAB NEW_THINLAB SCENARIO.toml   # e.g. two PGO builds

`--copy` also times a byte-identical copy of the first build (beside it, in a file of its own)
as one more build: its change against the first is the comparison's noise floor. Copies of one
binary have measured apart by more than 3 % (docs/performance/many-flows.md, "Copies of one
binary").

Before the rounds, each build's file is dropped from the page cache and run once untimed, so
that every build's pages are read in the same way (by the kernel's readahead at its first
run), whatever wrote them and when. In one series a fresh copy of a static build ran 21 %
slower than an older copy of it, until its file was dropped from the cache and read in again
(docs/performance/builds.md, "A static binary for the benchmarks"). `--keep-cache` leaves the cache
as it is.
"""

import argparse
import json
import os
import re
import shutil
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
    ap.add_argument("--copy", action="store_true",
                    help="also time a copy of the first build (the comparison's noise floor)")
    ap.add_argument("--keep-cache", action="store_true",
                    help="do not drop the builds' files from the page cache before timing")
    a = ap.parse_args()
    measure = cli_ns_per_event if a.cli else ns_per_event
    if len(a.builds) < 2 and not a.copy:
        sys.exit("give at least two builds (or one with --copy)")
    if a.rounds < 1:
        sys.exit("--rounds must be at least 1")
    # absolute paths: a bare name would be looked up on PATH when run
    builds, labels = [os.path.abspath(b) for b in a.builds], list(a.builds)
    for b in builds:
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            sys.exit(f"{b}: not an executable file")
    first = builds[0]
    with tempfile.TemporaryDirectory(dir=os.path.dirname(first)) as tmp:
        if a.copy:
            builds.append(os.path.join(tmp, os.path.basename(first)))
            shutil.copy2(first, builds[-1])
            labels.append(f"{a.builds[0]} (a copy)")
        if not a.keep_cache:
            for b in builds:
                reread_from_disk(b)
        compare(builds, labels, a.scenario, a.rounds, measure)


def reread_from_disk(path: str) -> None:
    """Drops `path`'s pages from the page cache (written back first), so that its next run
    reads the file in afresh."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def compare(builds, labels, scenario, rounds, measure) -> None:
    """Times `builds` in alternation, after one untimed run of each (which reads its file in),
    and prints each one's change against the first, under `labels`."""
    for b in dict.fromkeys(builds):
        measure(b, scenario)
    # by position: the same build may be given twice
    res = [[] for _ in builds]
    order = list(range(len(builds)))
    for i in range(rounds):
        for k in order if i % 2 == 0 else order[::-1]:
            res[k].append(measure(builds[k], scenario))
    for v, name in zip(res, labels):
        print(f"{name}: median {statistics.median(v):.0f} ns/event (min {min(v)}, max {max(v)}): {v}")
    ref = res[0]
    for v, name in zip(res[1:], labels[1:]):
        d = [x / y - 1 for x, y in zip(v, ref)]
        lower = sum(1 for x in d if x < 0)
        print(f"{name} against {labels[0]}: median change {100 * statistics.median(d):+.1f} %, "
              f"lower in {lower} of {len(d)} rounds")


if __name__ == "__main__":
    main()
