"""`Results`: a run's or a capture's results as polars DataFrames.

The tables arrive from Rust as Arrow IPC streams (whole columns) and are read by polars without
converting row by row; `DataFrame.to_pandas()` gives pandas frames. The per-write rows of a run
(one per application write: they grow with simulated time) never sit in memory whole: the runs
kept them in a temporary file, Rust writes them to an uncompressed Arrow IPC file a batch at a
time, and that file is mapped instead of read, so the frame's number columns are pages of a file
that the operating system can drop and read again (polars copies the text columns).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable, Optional, Union

import polars as pl


def _frame(ipc: bytes) -> pl.DataFrame:
    return pl.read_ipc_stream(ipc)


def _mapped_writes(tables: Any) -> pl.DataFrame:
    """The per-write rows, written by Rust to an Arrow IPC file that is mapped, not read (see
    the module's documentation): pyarrow maps it and polars takes its columns without copying
    them. The file's directory is removed at once: on POSIX systems a mapping keeps its file's
    data until the frame is gone."""
    import pyarrow as pa
    import pyarrow.ipc  # noqa: F401  (pa.ipc)

    tmp = tempfile.mkdtemp(prefix="thinlab-writes-")
    try:
        path = Path(tmp) / "writes.arrow"
        tables.write_writes(str(path))
        table = pa.ipc.open_file(pa.memory_map(str(path))).read_all()
        return pl.from_arrow(table, rechunk=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def checked_jobs(jobs: Optional[int]) -> Optional[int]:
    """`jobs` as given (None: the cores), or a ValueError unless it is at least 1 (as
    `thinlab run --jobs` requires)."""
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs = {jobs}: expected at least 1")
    return jobs


class Results:
    """The results of `thinlab.run` (or `thinlab.analyze`).

    Attributes (computed on first use):
      runs     one row per run and flow, exactly the columns of `runs.csv` (typed: swept keys,
               repetition, seed, flow, status, status_reason, every metric)
      writes   one row per application write (`writes=True`): swept keys, run, repetition,
               seed, flow, write, write_time_ms, bytes, first_send_ms, transport_latency_ms,
               app_latency_ms, ack_latency_ms (latencies from the write; null if not reached)
      cdf      the application-latency CDF: configuration, flow, latency_ms, fraction
      summary  `summary.json` as a dict
    """

    def __init__(
        self,
        runs: Callable[[], pl.DataFrame],
        writes: Callable[[], pl.DataFrame],
        cdf: Callable[[], pl.DataFrame],
        summary: Callable[[], dict],
        tables: Any = None,
        planned: int = 0,
        table_text: Optional[str] = None,
        jobs: Optional[int] = None,
    ) -> None:
        self._make = {"runs": runs, "writes": writes, "cdf": cdf, "summary": summary}
        self._cache: dict[str, Any] = {}
        self._tables = tables
        self._planned = planned
        self._table_text = table_text
        self._jobs = jobs

    @classmethod
    def _of_tables(cls, tables: Any, planned: int, jobs: Optional[int] = None) -> "Results":
        return cls(
            runs=lambda: _frame(tables.runs_ipc()),
            writes=lambda: _mapped_writes(tables),
            cdf=lambda: _frame(tables.cdf_ipc()),
            summary=lambda: json.loads(tables.summary_json()),
            tables=tables,
            planned=planned,
            jobs=jobs,
        )

    def _get(self, name: str) -> Any:
        if name not in self._cache:
            self._cache[name] = self._make[name]()
        return self._cache[name]

    @property
    def runs(self) -> pl.DataFrame:
        return self._get("runs")

    @property
    def writes(self) -> pl.DataFrame:
        return self._get("writes")

    @property
    def cdf(self) -> pl.DataFrame:
        return self._get("cdf")

    @property
    def summary(self) -> dict:
        return self._get("summary")

    @property
    def complete(self) -> bool:
        """Whether every planned run finished."""
        return bool(self.summary.get("complete", True))

    def table(self) -> str:
        """The summary table `thinlab run` prints."""
        if self._tables is not None:
            return self._tables.table_text()[0]
        return self._table_text or ""

    def warnings(self) -> list[str]:
        """The run-health warnings `thinlab run` prints (flows that did not complete)."""
        return list(self._tables.table_text()[1]) if self._tables is not None else []

    def write(
        self,
        out: Union[str, Path],
        parquet: bool = False,
        force: bool = False,
        jobs: Optional[int] = None,
    ) -> Path:
        """Writes the result folder as `thinlab run` does (summary.json, runs.csv,
        latency_cdf.csv, plots, report.html; with `parquet`, runs.parquet and writes.parquet),
        on `jobs` threads (default: the `jobs` the runs were given, else the cores). The files
        are the same whatever `jobs` is."""
        if self._tables is None:
            raise TypeError("only the results of thinlab.run can be written as a run folder")
        out = Path(out)
        threads = checked_jobs(jobs) or self._jobs
        self._tables.write_folder(str(out), self._planned, parquet=parquet, force=force,
                                  threads=threads)
        return out

    def __repr__(self) -> str:
        n = len(self._tables) if self._tables is not None else len(self.runs)
        return f"<thinlab.Results: {n} runs>\n{self.table()}"
