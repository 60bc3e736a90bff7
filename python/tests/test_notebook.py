"""The example notebook (examples/sweep.ipynb) runs from top to bottom and draws its plot."""

import nbformat
import pytest
from nbclient import NotebookClient


def test_example_notebook_executes(repo, tmp_path):
    nb = nbformat.read(repo / "examples" / "sweep.ipynb", as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(repo / "examples")}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    png = repo / "examples" / "sweep_ccdf.png"
    assert png.exists() and png.stat().st_size > 10_000
    png.unlink()
