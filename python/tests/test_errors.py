"""Bad input raises ScenarioError with the CLI's message and the key, value and expectation;
Ctrl-C stops a long run without killing the interpreter."""

import os
import signal
import subprocess
import sys
import time

import pytest

import thinlab
from conftest import SMALL


def test_out_of_range_value_names_key_value_and_expectation(small_scenario):
    with pytest.raises(thinlab.ScenarioError) as e:
        thinlab.run(small_scenario, overrides={"network.loss.rate": 2}, progress=False)
    assert e.value.key == "network.loss.rate"
    assert e.value.value == "2"
    assert "probability" in e.value.expected
    assert "`network.loss.rate` = 2" in str(e.value)


def test_unknown_key_and_bad_type(small_scenario):
    with pytest.raises(thinlab.ScenarioError) as e:
        thinlab.run(small_scenario, overrides={"network.bogus": 1}, progress=False)
    assert e.value.key == "network.bogus"
    assert "unknown field" in str(e.value) and "rtt" in e.value.expected
    with pytest.raises(thinlab.ScenarioError) as e:
        thinlab.run(small_scenario, overrides={"network.rtt": "abc"}, progress=False)
    assert e.value.key == "network.rtt" and "duration" in e.value.expected


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"scenario": "does/not/exist.toml"}, "cannot read scenario file"),
        ({"scenario": 'name = "x"\n[network\n'}, "not valid TOML"),
        ({"scenario": {"name": "x"}}, "missing field"),
        ({"scenario": 42}, "expected a file path, TOML text or a dict"),
        ({"repetitions": 0}, "whole number"),
        ({"repetitions": True}, "whole number"),
        ({"overrides": {"network.loss.rate": None}}, "TOML has no null"),
        ({"overrides": {"network.loss.rate": object()}}, "overrides"),
        ({"engine": "spark"}, '"local" or "ray"'),
        ({"overrides": {"flow.7.tcp.mechanisms": ["rdb"]}}, "flow"),
    ],
)
def test_bad_input_is_a_clear_exception(small_scenario, kwargs, words):
    kwargs = {"scenario": small_scenario, **kwargs}
    with pytest.raises(thinlab.ScenarioError) as e:
        thinlab.run(progress=False, **kwargs)
    assert words in str(e.value)


def test_absurd_size_is_refused_before_running(small_scenario):
    with pytest.raises(thinlab.ScenarioError) as e:
        thinlab.run(
            small_scenario,
            overrides={"duration": "100000h", "flow.0.app.interval": "1ms"},
            progress=False,
        )
    assert "memory" in str(e.value) or "writes" in str(e.value)


def test_progress_callback_errors_stop_the_run(small_scenario):
    plan = thinlab.api.load_plan(small_scenario)

    def boom(done, total, fraction):
        raise ValueError("stop here")

    with pytest.raises(ValueError, match="stop here"):
        plan.run(threads=1, progress=boom)


def test_ctrl_c_interrupts_a_long_run(tmp_path):
    script = tmp_path / "long.py"
    script.write_text(
        "import thinlab, sys\n"
        "try:\n"
        f"    thinlab.run({SMALL!r}, overrides={{'duration': '2h', 'repetitions': 40}}, jobs=1, progress=False, writes=False)\n"
        "except KeyboardInterrupt as e:\n"
        "    print('interrupted:', e); sys.exit(7)\n"
    )
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    time.sleep(3)
    p.send_signal(signal.SIGINT)
    started = time.monotonic()
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 7, out
    assert "interrupted" in out and "runs had finished" in out
    assert time.monotonic() - started < 60
