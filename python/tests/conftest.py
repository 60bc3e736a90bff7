"""Shared fixtures: the repository, the `thinlab` binary the API is compared with, scenarios."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _binary() -> Path:
    env = os.environ.get("THINLAB_BIN")
    if env:
        return Path(env)
    for profile in ("release", "debug"):
        p = REPO / "target" / profile / "thinlab"
        if p.exists():
            return p
    found = shutil.which("thinlab")
    if found:
        return Path(found)
    pytest.fail("no thinlab binary: build it (cargo build --release) or set THINLAB_BIN")


@pytest.fixture(scope="session")
def thinlab_bin() -> Path:
    return _binary()


@pytest.fixture(scope="session")
def cli(thinlab_bin):
    """Runs the thinlab command; returns the CompletedProcess (check=True unless told)."""

    def call(*args, check=True):
        return subprocess.run(
            [str(thinlab_bin), *map(str, args)], capture_output=True, text=True, check=check
        )

    return call


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


SMALL = """
name = "small"
seed = 7
duration = "20s"
repetitions = 2

[network]
rtt = "100ms"
bandwidth = "10Mbit"
queue_packets = 50

[network.loss]
model = "bernoulli"
rate = 0.02

[[flow]]
name = "game"
app = { kind = "fixed", payload_bytes = 100, interval = "50ms" }

[sweep]
"flow.0.tcp.mechanisms" = [[], ["rdb"]]
"""


@pytest.fixture
def small_scenario(tmp_path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p
