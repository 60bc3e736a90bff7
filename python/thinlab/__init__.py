"""thinlab from Python: run TCP thin-stream scenarios in thinlab's simulator and analyse captures,
with results as polars DataFrames.

    import thinlab
    res = thinlab.run("scenarios/quickstart.toml", overrides={"network.loss.rate": 0.05})
    res.runs      # one row per run and flow: the columns of runs.csv
    res.writes    # one row per application write: write time, first send, latencies
    res.cdf       # the application-latency CDF of latency_cdf.csv
    res.summary   # summary.json as a dict

The numbers are the `thinlab` command's, bit for bit, on the same seed: both call the same Rust
library (no subprocess). `Campaign` stores results by configuration and runs only what is
missing; `engine="ray"` spreads a sweep over a Ray cluster.
"""

from ._native import ScenarioError, ThinlabError, __version__
from .api import analyze, run
from .campaign import Campaign
from .results import Results

__all__ = [
    "run",
    "analyze",
    "Results",
    "Campaign",
    "ThinlabError",
    "ScenarioError",
    "__version__",
]
