"""Sweeps on a real local Ray cluster (`ray start --head` and a second node process): the same
summary.json as a local run, also when a worker process is killed in the middle of the sweep."""

import os
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest

import thinlab

ray = pytest.importorskip("ray") if not os.environ.get("CI") else __import__("ray")

# A throwaway cluster on 127.0.0.1: no token authentication (a token file left by an earlier
# local `ray.init()` would otherwise switch the head, but not the second node, to it).
os.environ["RAY_AUTH_MODE"] = "disabled"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster():
    port = free_port()
    address = f"127.0.0.1:{port}"
    ray_bin = shutil.which("ray")
    assert ray_bin, "the ray command is missing: pip install 'ray[default]'"
    common = ["--num-cpus=1", "--disable-usage-stats"]
    subprocess.run(
        [ray_bin, "start", "--head", f"--port={port}", "--include-dashboard=false", *common],
        check=True,
        capture_output=True,
    )
    try:
        subprocess.run(
            [ray_bin, "start", f"--address={address}", *common], check=True, capture_output=True
        )
        yield address
    finally:
        if ray.is_initialized():
            ray.shutdown()
        subprocess.run([ray_bin, "stop", "--force"], capture_output=True)


def worker_pids():
    out = subprocess.run(["pgrep", "-f", "ray::_run_batch"], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def test_sweep_on_two_nodes_equals_local_run(cluster, small_scenario):
    res = thinlab.run(
        small_scenario,
        repetitions=5,
        engine="ray",
        ray_address=cluster,
        batch_size=2,
        progress=False,
    )
    assert ray.cluster_resources().get("CPU") == 2.0
    local = thinlab.run(small_scenario, repetitions=5, progress=False)
    assert res._tables.summary_json() == local._tables.summary_json()
    assert res.writes.equals(local.writes)


def test_a_killed_worker_costs_only_its_retried_task(cluster, small_scenario):
    overrides = {"duration": "1h"}
    killed = []

    def killer():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            pids = worker_pids()
            if pids:
                time.sleep(0.3)  # well inside the batch
                try:
                    os.kill(pids[0], signal.SIGKILL)
                    killed.append(pids[0])
                except ProcessLookupError:
                    pass
            time.sleep(0.05)

    t = threading.Thread(target=killer)
    t.start()
    res = thinlab.run(
        small_scenario,
        overrides=overrides,
        repetitions=12,
        engine="ray",
        ray_address=cluster,
        batch_size=2,
        progress=False,
        writes=False,
    )
    t.join()
    assert killed, "no worker was running a batch to kill"
    local = thinlab.run(small_scenario, overrides=overrides, repetitions=12, progress=False, writes=False)
    assert len(res.runs) == 24
    assert res._tables.summary_json() == local._tables.summary_json()


def test_the_command_runs_a_sweep_on_ray(cluster, cli, small_scenario, tmp_path):
    cli("run", small_scenario, "--out", tmp_path / "local", "--quiet")
    p = cli("run", small_scenario, "--ray", cluster, "--out", tmp_path / "ray", check=False)
    assert p.returncode == 0, p.stderr
    assert "on Ray" in p.stdout
    assert (tmp_path / "ray/summary.json").read_bytes() == (tmp_path / "local/summary.json").read_bytes()
    assert (tmp_path / "ray/runs.csv").read_bytes() == (tmp_path / "local/runs.csv").read_bytes()


def test_a_campaign_on_ray_resumes(cluster, small_scenario, tmp_path):
    camp = thinlab.Campaign(tmp_path / "camp")
    camp.run(small_scenario, repetitions=2, engine="ray", ray_address=cluster, progress=False)
    assert camp.missing(small_scenario, repetitions=3) == 2
    res = camp.run(small_scenario, repetitions=3, engine="ray", ray_address=cluster, progress=False)
    local = thinlab.run(small_scenario, repetitions=3, progress=False, writes=False)
    assert res._tables.summary_json() == local._tables.summary_json()
