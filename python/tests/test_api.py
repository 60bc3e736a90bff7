"""thinlab.run: the same numbers as the thinlab command, bit for bit; scenario forms; writes."""

import json

import polars as pl
import pyarrow.parquet as pq
import pytest

import thinlab
from conftest import SMALL


def cli_run(cli, scenario, out, *extra):
    cli("run", scenario, "--out", out, "--quiet", *extra)
    return out


def test_results_equal_the_cli_files(cli, small_scenario, tmp_path):
    out = cli_run(cli, small_scenario, tmp_path / "cli", "--set", "network.loss.rate=0.03")
    res = thinlab.run(small_scenario, overrides={"network.loss.rate": "0.03"}, progress=False)
    # summary.json: the very same text
    assert res._tables.summary_json() == (out / "summary.json").read_text()
    assert res.summary == json.loads((out / "summary.json").read_text())
    # runs.csv: same columns, same values (floats read back from the CSV's shortest
    # round-trip text are the same bits)
    csv = pl.read_csv(out / "runs.csv", infer_schema_length=None)
    assert res.runs.columns == csv.columns
    assert len(res.runs) == 4
    for name in csv.columns:
        a, b = res.runs[name], csv[name]
        if a.dtype.is_numeric():
            assert a.cast(pl.Float64).to_list() == b.cast(pl.Float64).to_list(), name
        else:
            assert a.fill_null("").cast(pl.Utf8).to_list() == b.fill_null("").cast(pl.Utf8).to_list(), name
    cdf = pl.read_csv(out / "latency_cdf.csv")
    assert res.cdf.equals(cdf)


def test_counts_are_integers_and_swept_keys_typed(small_scenario):
    res = thinlab.run(small_scenario, progress=False, writes=False)
    schema = res.runs.schema
    assert schema["writes"] == pl.UInt64
    assert schema["app_latency_ms.p99"] == pl.Float64
    assert schema["seed"] == pl.UInt64
    assert schema["flow.0.tcp.mechanisms"] == pl.Utf8
    assert res.runs["flow.0.tcp.mechanisms"].to_list() == ["[]", "[]", "[rdb]", "[rdb]"]
    assert res.writes.is_empty()


def test_writes_agree_with_the_metrics(small_scenario):
    res = thinlab.run(small_scenario, progress=False)
    w = res.writes
    per_run = w.group_by(["run", "flow"], maintain_order=True).agg(
        pl.len().alias("n"),
        pl.col("app_latency_ms").max().alias("max"),
        pl.col("app_latency_ms").mean().alias("mean"),
    )
    assert per_run["n"].to_list() == res.runs["writes"].to_list()
    assert per_run["max"].to_list() == res.runs["app_latency_ms.max"].to_list()
    for got, want in zip(per_run["mean"].to_list(), res.runs["app_latency_ms.mean"].to_list()):
        assert got == pytest.approx(want, rel=1e-12)
    # every write that reached the application reached the receiver's TCP first
    both = w.drop_nulls(["app_latency_ms", "transport_latency_ms"])
    assert (both["transport_latency_ms"] <= both["app_latency_ms"]).all()
    assert w["write_time_ms"].is_sorted() is False or len(w) > 0


def test_writes_travel_in_a_runsets_bytes(small_scenario):
    # Runs keep their writes in a temporary file of their process; a run handed to another
    # process (a Ray task's result, a campaign's store) must carry them in its bytes.
    from thinlab import _native
    from thinlab.api import execute, load_plan
    from thinlab.results import Results

    plan = load_plan(small_scenario)
    runs = execute(plan, writes=True, progress=False)
    again = _native.RunSet.from_bytes(runs.to_bytes())
    n = len(plan.jobs())
    here = Results._of_tables(plan.tables([runs], True), n).writes
    there = Results._of_tables(plan.tables([again], True), n).writes
    assert len(here) > 100
    assert here.equals(there)
    assert here.equals(thinlab.run(small_scenario, progress=False).writes)


def test_scenario_as_path_text_or_dict_gives_the_same_results(small_scenario):
    import tomllib

    a = thinlab.run(small_scenario, progress=False, writes=False)
    b = thinlab.run(SMALL, progress=False, writes=False)
    c = thinlab.run(tomllib.loads(SMALL), progress=False, writes=False)
    assert a.runs.equals(b.runs) and a.runs.equals(c.runs)
    assert a.summary == b.summary == c.summary


def test_repetitions_and_sweep_overrides(small_scenario):
    res = thinlab.run(
        small_scenario,
        overrides={"sweep.flow.0.tcp.mechanisms": [["rdb"]]},
        repetitions=3,
        progress=False,
        writes=False,
    )
    assert res.runs["seed"].to_list() == [7, 8, 9]
    assert res.summary["overrides"] == {
        "sweep.flow.0.tcp.mechanisms": [["rdb"]],
        "repetitions": 3,
    }


def test_parquet_from_the_cli_equals_the_api(cli, small_scenario, tmp_path):
    out = cli_run(cli, small_scenario, tmp_path / "pq", "--format", "parquet")
    res = thinlab.run(small_scenario, progress=False)
    assert pl.read_parquet(out / "runs.parquet").equals(res.runs)
    assert pl.read_parquet(out / "writes.parquet").equals(res.writes)
    meta = pq.read_schema(out / "runs.parquet").metadata
    assert meta[b"thinlab.version"].decode() == thinlab.__version__
    assert 'name = "small"' in meta[b"thinlab.scenario"].decode()


def test_write_gives_the_cli_folder(cli, small_scenario, tmp_path):
    out = cli_run(cli, small_scenario, tmp_path / "cli")
    res = thinlab.run(small_scenario, progress=False, writes=False)
    mine = res.write(tmp_path / "api", parquet=True)
    for f in ["summary.json", "runs.csv", "latency_cdf.csv", "scenario.resolved.toml"]:
        assert (mine / f).read_bytes() == (out / f).read_bytes(), f
    assert (mine / "report.html").stat().st_size > 10_000
    assert (mine / "runs.parquet").exists()


def test_write_on_one_thread_gives_the_same_folder(small_scenario, tmp_path):
    res = thinlab.run(small_scenario, jobs=1, progress=False, writes=False)
    assert res._jobs == 1  # the runs' jobs are the folder's default
    one = res.write(tmp_path / "one")
    two = res.write(tmp_path / "two", jobs=2)
    for f in ["summary.json", "runs.csv", "latency_cdf.csv", "report.html"]:
        assert (one / f).read_bytes() == (two / f).read_bytes(), f
    with pytest.raises(ValueError, match="jobs = 0"):
        res.write(tmp_path / "zero", jobs=0)
    with pytest.raises(ValueError, match="jobs = 0"):  # as `thinlab run --jobs 0`
        thinlab.run(small_scenario, jobs=0, progress=False, writes=False)


def test_pandas_through_polars(small_scenario):
    res = thinlab.run(small_scenario, progress=False, writes=False)
    df = res.runs.to_pandas()
    assert list(df.columns) == res.runs.columns
    assert len(df) == 4
