"""Sweeps on a Ray cluster (`thinlab.run(..., engine="ray")`, `thinlab run --ray`).

The jobs of a plan are cut into batches (a 1 ms simulation must not pay a task's scheduling
each); each batch is one Ray task that loads the same scenario, runs its jobs on one core and
returns them serialized exactly (`RunSet.to_bytes`). The driver gathers the batches as they
finish and orders the runs by (configuration, repetition), so the result files are the same,
byte for byte, as a local run's. A worker that dies costs only the retry of its task (Ray
retries tasks whose worker died, `max_retries`); every batch's result is taken once.
"""

from __future__ import annotations

import functools
import math
import time
from typing import Any, Callable, Optional, Sequence

from . import _native
from .progress import Bar

#: Retries of a batch whose worker process died.
MAX_RETRIES = 5
#: Most jobs in one task.
MAX_BATCH = 1000


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise _native.ThinlabError(
            'engine="ray" needs Ray: pip install "./python[ray]" (or pip install ray)'
        ) from None
    return ray


@functools.lru_cache(maxsize=4)
def _worker_plan(source: tuple[str, bool, bool, str]) -> _native.Plan:
    return _native.Plan.load(*source)


def _run_batch(source: tuple[str, bool, bool, str], indices: list[int], writes: bool) -> bytes:
    """A Ray task: jobs `indices` of the plan `source` describes, on one thread."""
    plan = _worker_plan(source)
    runs, interrupted = plan.run(
        indices=indices, threads=1, keep_writes=writes, force=True, progress=None
    )
    if interrupted:
        raise _native.ThinlabError("the batch was interrupted")
    return runs.to_bytes()


def batch_size_for(jobs: int, cpus: int) -> int:
    """Four batches per CPU of the cluster (so that a slow batch does not leave CPUs idle at
    the end), at most MAX_BATCH jobs each."""
    return max(1, min(MAX_BATCH, math.ceil(jobs / max(1, 4 * cpus))))


def connect(address: Optional[str]) -> Any:
    """Ray, connected to `address`; "auto" or None: the cluster `ray start` made on this
    machine (or `RAY_ADDRESS`'s), else a new local one for this process."""
    ray = _ray()
    if ray.is_initialized():
        return ray
    opts = dict(include_dashboard=False, log_to_driver=False, configure_logging=False)
    if address in (None, "auto"):
        try:
            ray.init(address="auto", **opts)
        except ConnectionError:
            ray.init(**opts)  # no cluster running: a local one, for this process
        return ray
    try:
        ray.init(address=address, **opts)
    except ConnectionError as e:
        raise _native.ThinlabError(f"cannot reach the Ray cluster at {address}: {e}") from None
    return ray


def run_on_ray(
    plan: _native.Plan,
    source: tuple[str, bool, bool, str],
    indices: Optional[Sequence[int]] = None,
    *,
    writes: bool = True,
    address: Optional[str] = None,
    batch_size: Optional[int] = None,
    progress: bool = True,
    on_batch: Optional[Callable[[_native.RunSet], None]] = None,
) -> list[_native.RunSet]:
    """Runs jobs `indices` (all when None) of `plan` as Ray tasks; `source` is what `plan` was
    loaded from (`api.plan_source`: a file path is sent as its text). Returns the batches'
    runs; `on_batch` gets each as it arrives."""
    ray = connect(address)
    scenario, is_path, is_json, overrides = source
    if is_path:
        with open(scenario, encoding="utf-8") as f:
            scenario = f.read()
    shipped = (scenario, False, is_json, overrides)
    todo = list(range(len(plan.jobs()))) if indices is None else list(indices)
    if batch_size is None:
        batch_size = batch_size_for(len(todo), int(ray.cluster_resources().get("CPU", 1)))
    if batch_size < 1:
        raise _native.ScenarioError(f"batch_size = {batch_size}: expected a whole number ≥ 1")
    task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(_run_batch)
    source_ref = ray.put(shipped)
    batches = [todo[i : i + batch_size] for i in range(0, len(todo), batch_size)]
    pending = {task.remote(source_ref, b, writes): len(b) for b in batches}
    out: list[_native.RunSet] = []
    done = 0
    try:
        with Bar(len(todo), plan.name, enabled=progress) as bar:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
                for ref in ready:
                    done += pending.pop(ref)
                    try:
                        runs = _native.RunSet.from_bytes(ray.get(ref))
                    except ray.exceptions.RayError as e:
                        raise _native.ThinlabError(f"a Ray task failed: {e}") from None
                    out.append(runs)
                    if on_batch is not None:
                        on_batch(runs)
                bar.update(done, len(todo), done / max(1, len(todo)))
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
    return out


def wait_for_workers(cpus: int, timeout_s: float = 60.0) -> None:
    """Blocks until the connected cluster has `cpus` CPUs (a second node joining)."""
    ray = _ray()
    deadline = time.monotonic() + timeout_s
    while ray.cluster_resources().get("CPU", 0) < cpus:
        if time.monotonic() > deadline:
            raise _native.ThinlabError(f"the Ray cluster did not reach {cpus} CPUs")
        time.sleep(0.2)
