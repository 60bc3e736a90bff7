"""A progress bar over runs for terminals and notebooks (tqdm.auto), fed by the Rust runner's
progress callback: it advances with the simulated time of all runs, not only as runs finish."""

from __future__ import annotations

from typing import Any, Optional


class Bar:
    """`with Bar(runs, name) as bar: plan.run(..., progress=bar.update)`."""

    def __init__(self, runs: int, name: str, enabled: bool = True) -> None:
        self.runs = runs
        self.name = name
        self.enabled = enabled and runs > 0
        self._bar: Optional[Any] = None

    def __enter__(self) -> "Bar":
        if self.enabled:
            try:  # a widget in notebooks that have ipywidgets, else text
                import ipywidgets  # noqa: F401
                from tqdm.auto import tqdm
            except ImportError:
                from tqdm.std import tqdm

            self._bar = tqdm(
                total=1000,
                desc=f"thinlab {self.name}",
                unit="‰",
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {postfix} [{elapsed}<{remaining}]",
                leave=False,
            )
            self._bar.set_postfix_str(f"0/{self.runs} runs")
        return self

    def update(self, done: int, total: int, fraction: float) -> None:
        """The runner's callback: `done` of `total` runs finished, `fraction` of the simulated
        time done."""
        if self._bar is not None:
            self._bar.n = int(fraction * 1000)
            self._bar.set_postfix_str(f"{done}/{total} runs", refresh=False)
            self._bar.refresh()

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.close()
