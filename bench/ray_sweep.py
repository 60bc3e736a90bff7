#!/usr/bin/env python3
"""Benchmark: a sweep of N configurations of 1-minute thin streams (default 100 000), run on this
machine's threads (rayon, `thinlab.run(engine="local")`'s runner) and as Ray tasks on a local
Ray cluster with two worker processes (`ray start --head --num-cpus=2`), in the same process and
the same session, so the ratio is measured under the same load.

Reports, for each engine and batch size: wall time of the runs (planning and result tables
excluded: they are the same for both), runs per second, and Ray's overhead per task
((ray wall − local wall) × CPUs / tasks), then the batch size beyond which the overhead is below
5 % of the local time. The batch-size sweep runs on the first `--subset` configurations.

    python3 bench/ray_sweep.py [--configs 100000] [--subset 4000] [--out bench/results/ray_sweep.json]

Needs the Python package with Ray (`pip install "./python[ray]"`) and the `ray` command.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import thinlab
from thinlab import _native, ray_engine
from thinlab.api import plan_source

SCENARIO = """
name = "ray-sweep"
seed = 1
duration = "1min"
repetitions = 1

[network]
rtt = "100ms"
bandwidth = "100Mbit"
queue_packets = 1000

[network.loss]
model = "bernoulli"
rate = 0.01

[[flow]]
name = "game"
app = {{ kind = "fixed", payload_bytes = 120, interval = "140ms" }}
tcp = {{ profile = "linux", nodelay = true }}

[sweep]
"network.loss.rate" = [{rates}]
"network.rtt" = [{rtts}]
"""


def scenario(configs: int) -> str:
    rtts = 100
    rates = max(1, configs // rtts)
    return SCENARIO.format(
        rates=", ".join(f"{0.001 * (i + 1) / rates * 50:.6f}" for i in range(rates)),
        rtts=", ".join(f'"{20 + 2 * i}ms"' for i in range(rtts)),
    )


def load() -> str:
    try:
        return open("/proc/loadavg").read().split()[0]
    except OSError:
        return "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", type=int, default=100_000)
    ap.add_argument("--subset", type=int, default=4000)
    ap.add_argument("--batches", default="1,10,100,1000")
    ap.add_argument("--full-batch", type=int, default=500)
    ap.add_argument("--out", default="bench/results/ray_sweep.json")
    a = ap.parse_args()

    source = plan_source(scenario(a.configs))
    plan = _native.Plan.load(*source)
    n = len(plan.jobs())
    print(f"{n} configurations × 1 min; load {load()}", flush=True)
    result = {"configs": n, "cpus": os.cpu_count(), "load_before": load(), "cases": []}

    def local(indices):
        t = time.perf_counter()
        runs, _ = plan.run(indices=indices, threads=2, keep_writes=False, force=True)
        return time.perf_counter() - t, len(runs)

    ray_bin = shutil.which("ray")
    subprocess.run([ray_bin, "stop", "--force"], capture_output=True)
    subprocess.run(
        [ray_bin, "start", "--head", "--num-cpus=2", "--include-dashboard=false",
         "--disable-usage-stats", "--port=6399"],
        check=True, capture_output=True,
    )
    try:
        ray_engine.connect("127.0.0.1:6399")

        def on_ray(indices, batch):
            t = time.perf_counter()
            sets = ray_engine.run_on_ray(plan, source, indices, writes=False, batch_size=batch, progress=False)
            return time.perf_counter() - t, sum(len(s) for s in sets)

        # warm the workers (imports, first plan load) outside the measurement
        on_ray(list(range(min(n, 8))), 1)
        subset = list(range(min(n, a.subset)))
        base, _ = local(subset)
        result["cases"].append({"engine": "local", "configs": len(subset), "wall_s": base})
        print(f"local  subset {len(subset)}: {base:.2f} s ({len(subset)/base:.0f} runs/s)", flush=True)
        for b in [int(x) for x in a.batches.split(",")]:
            wall, got = on_ray(subset, b)
            tasks = -(-len(subset) // b)
            over = (wall - base) * 2 / tasks
            result["cases"].append({"engine": "ray", "configs": len(subset), "batch": b, "tasks": tasks,
                                    "wall_s": wall, "overhead_per_task_ms": over * 1e3, "runs": got})
            print(f"ray    subset {len(subset)} batch {b}: {wall:.2f} s, {tasks} tasks, "
                  f"overhead {over*1e3:.2f} ms/task, ratio {wall/base:.2f}", flush=True)
        full = list(range(n))
        lw, _ = local(full)
        result["cases"].append({"engine": "local", "configs": n, "wall_s": lw})
        print(f"local  all {n}: {lw:.1f} s ({n/lw:.0f} runs/s)", flush=True)
        rw, got = on_ray(full, a.full_batch)
        result["cases"].append({"engine": "ray", "configs": n, "batch": a.full_batch,
                                "tasks": -(-n // a.full_batch), "wall_s": rw, "runs": got})
        print(f"ray    all {n} batch {a.full_batch}: {rw:.1f} s ({n/rw:.0f} runs/s), ratio {rw/lw:.2f}", flush=True)
    finally:
        import ray
        ray.shutdown()
        subprocess.run([ray_bin, "stop", "--force"], capture_output=True)
    result["load_after"] = load()
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=2)
    print(f"written {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
