"""`thinlab.run` and `thinlab.analyze`: the `thinlab run` and `thinlab analyze` commands as
functions, with the same names, inputs, seeds and numbers."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import polars as pl

from . import _native
from .progress import Bar
from .results import Results, checked_jobs

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def bad_input(
    message: str, key: Optional[str] = None, value: Any = None, expected: Optional[str] = None
) -> _native.ScenarioError:
    """A `ScenarioError` as the Rust side raises them (with `key`, `value`, `expected`)."""
    e = _native.ScenarioError(message)
    e.key, e.value, e.expected = key, None if value is None else repr(value), expected
    return e


def plan_source(
    scenario: Scenario,
    overrides: Optional[Mapping[str, Any]] = None,
    repetitions: Optional[int] = None,
) -> tuple[str, bool, bool, str]:
    """`Plan.load`'s arguments for a scenario (a path, TOML text or a dict), `overrides`
    (the CLI's `--set` keys) and `repetitions`: (scenario, is_path, is_json, overrides as
    JSON)."""
    pairs = list((overrides or {}).items())
    for key, _ in pairs:
        if not isinstance(key, str):
            raise bad_input(
                f"override key {key!r}: expected a dotted key as a string",
                key=str(key),
                expected="a dotted key as a string",
            )
    if repetitions is not None:
        if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
            raise bad_input(
                f"`repetitions` = {repetitions!r}: expected a whole number ≥ 1",
                "repetitions",
                repetitions,
                "a whole number ≥ 1",
            )
        pairs.append(("repetitions", repetitions))
    try:
        overrides_json = json.dumps(pairs)
    except (TypeError, ValueError) as e:
        raise bad_input(f"overrides: {e}") from None
    if isinstance(scenario, Mapping):
        try:
            return json.dumps(scenario), False, True, overrides_json
        except (TypeError, ValueError) as e:
            raise bad_input(f"the scenario table: {e}") from None
    if isinstance(scenario, os.PathLike):
        return os.fspath(scenario), True, False, overrides_json
    if not isinstance(scenario, str):
        raise bad_input(
            f"scenario = {scenario!r}: expected a file path, TOML text or a dict",
            "scenario",
            scenario,
            "a file path, TOML text or a dict",
        )
    is_path = "\n" not in scenario and (
        scenario.endswith(".toml") or os.path.exists(scenario) or "=" not in scenario
    )
    return scenario, is_path, False, overrides_json


def load_plan(
    scenario: Scenario,
    overrides: Optional[Mapping[str, Any]] = None,
    repetitions: Optional[int] = None,
) -> _native.Plan:
    """The scenario (a path, TOML text or a dict) with `overrides` (the CLI's `--set` keys:
    `{"network.loss.rate": 0.02, "sweep.flow.0.tcp.mechanisms": [[], ["rdb"]]}`) applied,
    its sweep expanded and every configuration validated. Raises `ScenarioError`."""
    return _native.Plan.load(*plan_source(scenario, overrides, repetitions))


def execute(
    plan: _native.Plan,
    indices: Optional[Sequence[int]] = None,
    jobs: Optional[int] = None,
    writes: bool = True,
    progress: bool = True,
    force: bool = False,
    on_batch: Optional[Callable[[_native.RunSet], None]] = None,
) -> _native.RunSet:
    """Runs jobs `indices` of `plan` (all when None) on this machine. At Ctrl-C the runs under
    way finish, `on_batch` gets the finished ones, and KeyboardInterrupt is raised."""
    total = len(indices) if indices is not None else len(plan.jobs())
    with Bar(total, plan.name, enabled=progress) as bar:
        runs, interrupted = plan.run(
            indices=list(indices) if indices is not None else None,
            threads=jobs,
            keep_writes=writes,
            force=force,
            progress=bar.update,
        )
    if on_batch is not None and len(runs) > 0:
        on_batch(runs)
    if interrupted:
        raise KeyboardInterrupt(
            f"thinlab: interrupted; {len(runs)} of {total} runs had finished"
        )
    return runs


def run(
    scenario: Scenario,
    overrides: Optional[Mapping[str, Any]] = None,
    repetitions: Optional[int] = None,
    jobs: Optional[int] = None,
    *,
    writes: bool = True,
    engine: str = "local",
    ray_address: Optional[str] = None,
    batch_size: Optional[int] = None,
    progress: bool = True,
    force: bool = False,
) -> Results:
    """Runs a scenario in the simulator, as `thinlab run` does.

    scenario     a scenario file's path, TOML text, or a dict of the same table
    overrides    dotted keys → values, the CLI's `--set` (a string value is read as `--set`
                 reads it); `sweep.KEY` replaces one sweep axis
    repetitions  overrides the scenario's `repetitions` (seeds seed, seed+1, …)
    jobs         runs in parallel on this machine (default: the cores)
    writes       keep every write's milestones for `Results.writes` (in a temporary file while
                 the runs go; the frame maps a file: docs/python.md)
    engine       "local" (threads) or "ray" (tasks on a Ray cluster: `ray_address`, else the
                 local one or a new one; `batch_size` runs per task)
    progress     a progress bar (terminal or notebook)
    force        run even when the memory estimate says the runs will not fit
    """
    source = plan_source(scenario, overrides, repetitions)
    plan = _native.Plan.load(*source)
    planned = len(plan.jobs())
    runs = run_jobs(plan, source, None, jobs, writes, engine, ray_address, batch_size, progress, force)
    complete = sum(len(r) for r in runs) == planned
    return Results._of_tables(plan.tables(runs, complete), planned, jobs)


def run_jobs(
    plan: _native.Plan,
    source: tuple[str, bool, bool, str],
    indices: Optional[Sequence[int]],
    jobs: Optional[int],
    writes: bool,
    engine: str,
    ray_address: Optional[str],
    batch_size: Optional[int],
    progress: bool,
    force: bool,
    on_batch: Optional[Callable[[_native.RunSet], None]] = None,
) -> list[_native.RunSet]:
    """Runs jobs `indices` (all when None) of `plan` (loaded from `source`) with `engine`;
    `on_batch` gets each batch of finished runs as it arrives."""
    checked_jobs(jobs)
    if engine == "local":
        return [execute(plan, indices, jobs, writes, progress, force, on_batch)]
    if engine == "ray":
        from .ray_engine import run_on_ray

        return run_on_ray(
            plan,
            source,
            indices,
            writes=writes,
            address=ray_address,
            batch_size=batch_size,
            progress=progress,
            on_batch=on_batch,
        )
    raise bad_input(
        f'engine = {engine!r}: expected "local" or "ray"', "engine", engine, '"local" or "ray"'
    )


def analyze(
    sender: Union[str, "os.PathLike[str]"],
    receiver: Optional[Union[str, "os.PathLike[str]"]] = None,
    *,
    connection: Optional[str] = None,
    clock_offset: Optional[float] = None,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> Results:
    """Analyses a capture taken at the data sender (and optionally the receiver's), as
    `thinlab analyze` does. `runs` has a row per connection direction (the columns of
    `connections.csv`), `writes` a row per write as the capture shows it (its time is the first
    send: a capture cannot see the application's writes), `cdf` the latency CDF
    (`latency_cdf.csv`), `summary` `summary.json`. The result folder is written to `out` (by
    default a temporary folder, removed afterwards)."""
    if clock_offset is not None and receiver is None:
        raise bad_input(
            f"clock_offset = {clock_offset}: expected a receiver capture too (receiver=...)",
            "clock_offset",
            clock_offset,
            "a receiver capture too",
        )
    with tempfile.TemporaryDirectory(prefix="thinlab-analyze-") as tmp:
        folder = Path(out) if out is not None else Path(tmp)
        writes = _native.analyze(
            os.fspath(sender),
            os.fspath(folder),
            os.fspath(receiver) if receiver is not None else None,
            connection,
            clock_offset,
        )
        runs = pl.read_csv(folder / "connections.csv", infer_schema_length=None)
        cdf_path = folder / "latency_cdf.csv"
        cdf = (
            pl.read_csv(cdf_path, infer_schema_length=None)
            if cdf_path.exists()
            else pl.DataFrame()
        )
        summary = json.loads((folder / "summary.json").read_text())
    writes_frame = pl.read_ipc_stream(writes)
    return Results(
        runs=lambda: runs,
        writes=lambda: writes_frame,
        cdf=lambda: cdf,
        summary=lambda: summary,
        table_text=None,
    )
