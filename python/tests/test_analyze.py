"""thinlab.analyze: the same tables as `thinlab analyze` writes, plus the per-write rows."""

import json

import polars as pl
import pytest

import thinlab


def test_analyze_equals_the_cli(cli, repo, tmp_path):
    snd = repo / "tests/data/kernel-140ms-sender.pcap"
    rcv = repo / "tests/data/kernel-140ms-receiver.pcap"
    out = tmp_path / "cli"
    cli("analyze", snd, "--receiver", rcv, "--out", out, "--quiet")
    res = thinlab.analyze(snd, rcv)
    assert res.summary == json.loads((out / "summary.json").read_text())
    assert res.runs.equals(pl.read_csv(out / "connections.csv", infer_schema_length=None))
    assert res.cdf.equals(pl.read_csv(out / "latency_cdf.csv", infer_schema_length=None))
    # per-write rows: as many as the connections' writes, latencies where the capture saw them
    w = res.writes
    assert len(w) > 100
    by_flow = w.group_by("flow").len()
    assert set(by_flow["flow"]) <= set(res.runs["connection"] if "connection" in res.runs.columns else res.runs[res.runs.columns[0]])
    assert w["app_latency_ms"].drop_nulls().min() > 0


def test_a_truncated_capture_is_counted_not_fatal(repo, tmp_path):
    data = (repo / "tests/data/kernel-30ms-sender.pcap").read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[: len(data) // 2 + 7])
    res = thinlab.analyze(cut)
    assert len(res.runs) >= 1


def test_not_a_capture_raises(tmp_path):
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"this is not a pcap file at all")
    with pytest.raises(thinlab.ThinlabError):
        thinlab.analyze(bad)
    with pytest.raises(thinlab.ThinlabError):
        thinlab.analyze(tmp_path / "missing.pcap")
