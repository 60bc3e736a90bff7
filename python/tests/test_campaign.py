"""Campaigns: results stored by configuration; a sweep run again runs only what is missing;
an interrupted campaign loses nothing that finished."""

import os
import signal
import subprocess
import sys
import time

import thinlab
from conftest import SMALL


def test_resume_runs_only_the_missing_jobs(tmp_path, small_scenario):
    camp = thinlab.Campaign(tmp_path / "camp")
    first = camp.run(small_scenario, repetitions=2, progress=False)
    assert len(camp) == 4 and first.complete
    # one more repetition: 2 new runs (seed 9 for both mechanism sets), 4 reused
    assert camp.missing(small_scenario, repetitions=3) == 2
    second = camp.run(small_scenario, repetitions=3, progress=False)
    assert len(camp) == 6
    direct = thinlab.run(small_scenario, repetitions=3, progress=False, writes=False)
    assert second._tables.summary_json() == direct._tables.summary_json()
    assert second.runs.equals(direct.runs)
    # nothing missing: nothing runs, same results
    assert camp.missing(small_scenario, repetitions=3) == 0
    again = camp.run(small_scenario, repetitions=3, progress=False)
    assert again._tables.summary_json() == direct._tables.summary_json()


def test_stored_runs_serve_another_sweep_that_numbers_them_differently(tmp_path, small_scenario):
    camp = thinlab.Campaign(tmp_path / "camp")
    camp.run(small_scenario, progress=False)
    # only the rdb point, seeds 8..8: repetition 1 of the first sweep is repetition 0 here
    n = camp.missing(
        small_scenario,
        overrides={"sweep.flow.0.tcp.mechanisms": [["rdb"]], "seed": 8},
        repetitions=1,
    )
    assert n == 0
    res = camp.run(
        small_scenario,
        overrides={"sweep.flow.0.tcp.mechanisms": [["rdb"]], "seed": 8},
        repetitions=1,
        progress=False,
    )
    direct = thinlab.run(
        small_scenario,
        overrides={"sweep.flow.0.tcp.mechanisms": [["rdb"]], "seed": 8},
        repetitions=1,
        progress=False,
        writes=False,
    )
    assert res._tables.summary_json() == direct._tables.summary_json()


def test_all_results_load_as_one_frame(tmp_path, small_scenario):
    camp = thinlab.Campaign(tmp_path / "camp")
    camp.run(small_scenario, progress=False)
    camp.run(small_scenario, overrides={"network.loss.rate": 0.05}, progress=False)
    frame = camp.runs()
    assert len(frame) == 8
    assert frame["key"].n_unique() == 8
    assert "network.loss.rate" not in frame.columns  # not swept: not a column
    assert set(frame["flow.0.tcp.mechanisms"]) == {"[]", "[rdb]"}


def test_a_killed_campaign_keeps_its_finished_batches(tmp_path):
    scen = tmp_path / "s.toml"
    scen.write_text(SMALL)
    script = tmp_path / "camp.py"
    script.write_text(
        "import thinlab\n"
        f"thinlab.Campaign({str(tmp_path / 'camp')!r}).run({str(scen)!r}, "
        "overrides={'duration': '10min'}, repetitions=30, jobs=1, batch_size=2, progress=False)\n"
    )
    p = subprocess.Popen([sys.executable, str(script)])
    camp = thinlab.Campaign(tmp_path / "camp")
    deadline = time.monotonic() + 120
    while len(camp) < 4 and time.monotonic() < deadline:
        time.sleep(0.2)
    p.send_signal(signal.SIGKILL)
    p.wait()
    stored = len(camp)
    assert 4 <= stored < 60, stored
    # leftovers of the killed batch are temporary files, never half-written batches
    for f in (tmp_path / "camp" / "batches").iterdir():
        assert f.name.startswith(".") or f.suffix in (".runs", ".arrow", ".json")
    missing = camp.missing(scen, overrides={"duration": "10min"}, repetitions=30)
    assert missing == 60 - stored
    res = camp.run(scen, overrides={"duration": "10min"}, repetitions=30, progress=False)
    direct = thinlab.run(
        scen, overrides={"duration": "10min"}, repetitions=30, progress=False, writes=False
    )
    assert res._tables.summary_json() == direct._tables.summary_json()
