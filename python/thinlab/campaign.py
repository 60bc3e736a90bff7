"""`Campaign`: results stored by configuration, so that running a sweep again runs only what is
missing (the idea of SEM, the simulation execution manager of ns-3's users).

A job's result is keyed by the SHA-256 of thinlab's version, its seed and its configuration
(the scenario with the sweep point and the overrides applied, as TOML with sorted keys, without
`seed` and `repetitions`). Runs are stored a batch at a time, as soon as the batch finishes:

    <path>/batches/<id>.runs       the batch's runs (exact: `RunSet.to_bytes`)
    <path>/batches/<id>.arrow      their `runs` rows (Arrow IPC) with a `key` column
    <path>/batches/<id>.keys.json  [key, configuration, repetition, writes kept] per run

each written to a temporary name and renamed; the `.keys.json` file is written last and is what
makes a batch count. An interrupted campaign (Ctrl-C, a killed process, a lost Ray worker) loses
at most the batches under way.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from pathlib import Path
from typing import Any, Mapping, Optional, Union

import polars as pl

from . import _native
from .api import Scenario, plan_source, run_jobs
from .results import Results


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class Campaign:
    """A folder of stored results (see the module's documentation)."""

    def __init__(self, path: Union[str, "os.PathLike[str]"]) -> None:
        self.path = Path(path)
        self._batches = self.path / "batches"
        self._batches.mkdir(parents=True, exist_ok=True)

    def _index(self) -> dict[str, tuple[str, int, int, bool]]:
        """key → (batch id, configuration, repetition in that batch, writes kept)."""
        index: dict[str, tuple[str, int, int, bool]] = {}
        for f in sorted(self._batches.glob("*.keys.json")):
            batch = f.name[: -len(".keys.json")]
            try:
                entries = json.loads(f.read_text())
            except (OSError, ValueError):
                continue  # unreadable: its runs count as missing and run again
            for key, config, repetition, writes in entries:
                if key not in index or (writes and not index[key][3]):
                    index[key] = (batch, config, repetition, writes)
        return index

    @staticmethod
    def keys(plan: _native.Plan) -> list[str]:
        """The key of every job of `plan`, in job order."""
        texts: dict[int, str] = {}
        out = []
        for config, _repetition, seed in plan.jobs():
            if config not in texts:
                texts[config] = plan.config_text(config)
            ident = f"thinlab {_native.__version__}\nseed {seed}\n{texts[config]}"
            out.append(hashlib.sha256(ident.encode()).hexdigest())
        return out

    def _store(self, plan: _native.Plan, keys: list[str], runs: _native.RunSet, writes: bool) -> None:
        batch = uuid.uuid4().hex
        jobs = plan.jobs()
        key_of = {(jobs[i][0], jobs[i][1]): keys[i] for i in range(len(jobs))}
        run_keys = [key_of[k] for k in runs.keys()]
        _atomic_write(self._batches / f"{batch}.runs", runs.to_bytes())
        tables = plan.tables([runs], False)
        rows = pl.read_ipc_stream(tables.runs_ipc()).with_columns(
            pl.Series("key", [key_of[r] for r in tables.row_runs()], dtype=pl.Utf8)
        )
        tmp = self._batches / f".{batch}.arrow.tmp"
        rows.write_ipc(tmp)
        os.replace(tmp, self._batches / f"{batch}.arrow")
        entries = [[k, c, r, writes] for k, (c, r) in zip(run_keys, runs.keys())]
        _atomic_write(self._batches / f"{batch}.keys.json", json.dumps(entries).encode())

    def missing(
        self,
        scenario: Scenario,
        overrides: Optional[Mapping[str, Any]] = None,
        repetitions: Optional[int] = None,
        writes: bool = False,
    ) -> int:
        """How many of the sweep's runs are not stored yet."""
        plan = _native.Plan.load(*plan_source(scenario, overrides, repetitions))
        index = self._index()
        return sum(1 for k in self.keys(plan) if k not in index or (writes and not index[k][3]))

    def run(
        self,
        scenario: Scenario,
        overrides: Optional[Mapping[str, Any]] = None,
        repetitions: Optional[int] = None,
        jobs: Optional[int] = None,
        *,
        writes: bool = False,
        engine: str = "local",
        ray_address: Optional[str] = None,
        batch_size: Optional[int] = None,
        progress: bool = True,
        force: bool = False,
    ) -> Results:
        """`thinlab.run` that runs only the jobs whose results are not stored, stores each
        batch as it finishes, and returns the results of the whole sweep (stored and new).
        `writes=True` also reruns stored runs that were kept without their writes."""
        source = plan_source(scenario, overrides, repetitions)
        plan = _native.Plan.load(*source)
        keys = self.keys(plan)
        index = self._index()
        todo = [i for i, k in enumerate(keys) if k not in index or (writes and not index[k][3])]
        if todo:
            store = lambda runs: self._store(plan, keys, runs, writes)  # noqa: E731
            if engine == "local":
                # Batches of a few runs per thread: a killed process loses only the last one.
                threads = jobs or os.cpu_count() or 1
                size = batch_size or max(4 * threads, 1)
                for i in range(0, len(todo), size):
                    run_jobs(plan, source, todo[i : i + size], jobs, writes, engine,
                             None, None, progress, force, store)
            else:
                run_jobs(plan, source, todo, jobs, writes, engine, ray_address, batch_size,
                         progress, force, store)
            index = self._index()
        return self._load(plan, keys, index, jobs)

    def _load(self, plan: _native.Plan, keys: list[str], index: dict,
              threads: Optional[int] = None) -> Results:
        jobs = plan.jobs()
        by_batch: dict[str, list] = {}
        for (config, repetition, _seed), key in zip(jobs, keys):
            entry = index.get(key)
            if entry is None:
                continue
            batch, old_config, old_repetition, _writes = entry
            by_batch.setdefault(batch, []).append(((old_config, old_repetition), (config, repetition)))
        sets = []
        for batch, mapping in by_batch.items():
            stored = _native.RunSet.from_bytes((self._batches / f"{batch}.runs").read_bytes())
            sets.append(stored.relabeled(mapping))
        found = sum(len(s) for s in sets)
        return Results._of_tables(plan.tables(sets, found == len(jobs)), len(jobs), threads)

    def runs(self) -> pl.DataFrame:
        """Every stored run's rows (the `runs` columns of each sweep, and `key`), as one
        DataFrame; columns a sweep does not have are null."""
        index = self._index()
        owner = {key: entry[0] for key, entry in index.items()}
        frames = []
        for batch in sorted({entry[0] for entry in index.values()}):
            path = self._batches / f"{batch}.arrow"
            if path.exists():
                rows = pl.read_ipc(path)
                # a run stored twice (again with its writes) counts once
                keep = [owner.get(k) == batch for k in rows["key"]]
                frames.append(rows.filter(pl.Series(keep, dtype=pl.Boolean)))
        if not frames:
            return pl.DataFrame()
        return pl.concat(frames, how="diagonal_relaxed")

    def __len__(self) -> int:
        return len(self._index())

    def __repr__(self) -> str:
        return f"<thinlab.Campaign {self.path}: {len(self)} runs stored>"
