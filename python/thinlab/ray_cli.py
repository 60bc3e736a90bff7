"""`thinlab run SCENARIO --ray [ADDRESS]`: the command hands a sweep to this module (Ray is a
Python library), which runs it as Ray tasks and writes the same result folder as a local run.
Also usable as `python -m thinlab.ray_cli` / `thinlab-ray`. Exit codes as the command's: 2 for
bad input, 1 for other failures, 130 after Ctrl-C."""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from . import _native
from .api import plan_source
from .ray_engine import run_on_ray


def parse(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="thinlab run --ray", description=__doc__)
    p.add_argument("scenario")
    p.add_argument(
        "--address",
        default="auto",
        help='Ray address; "auto": the cluster on this machine, else a new local one',
    )
    p.add_argument("--out")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--batch-size", type=int)
    p.add_argument("--format", choices=["csv", "parquet"], default="csv")
    p.add_argument("--quiet", "-q", action="store_true")
    p.add_argument("--force", action="store_true")
    p.add_argument("--strict", action="store_true")
    return p.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    a = parse(argv)
    try:
        overrides = {}
        for s in a.sets:
            key, sep, value = s.partition("=")
            if not sep:
                raise _native.ScenarioError(f"--set {s}: expected KEY=VALUE")
            overrides[key] = value  # read as the command reads --set values
        source = plan_source(a.scenario, overrides)
        plan = _native.Plan.load(*source)
        planned = len(plan.jobs())
        address = a.address
        runs = run_on_ray(
            plan,
            source,
            writes=a.format == "parquet",
            address=address,
            batch_size=a.batch_size,
            progress=not a.quiet and sys.stderr.isatty(),
        )
        found = sum(len(r) for r in runs)
        tables = plan.tables(runs, found == planned)
        out = a.out or plan.default_out
        tables.write_folder(out, planned, parquet=a.format == "parquet", force=a.force)
        table, warnings = tables.table_text()
        if not a.quiet:
            print(table, end="")
            print(f"{found} run{'' if found == 1 else 's'} on Ray; results in {out}")
        for w in warnings:
            print(w, file=sys.stderr)
        if a.strict and warnings:
            return 3
        return 0
    except _native.ScenarioError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except _native.ThinlabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except Exception as e:  # Ray's own failures: a message, not a traceback
        print(f"error: Ray: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
