"""Both example notebooks run top to bottom (their default, short settings)."""

import pytest

from conftest import REPO

NOTEBOOKS = ["cubic-vs-tahoe.ipynb", "sweep-cubic-fit.ipynb"]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_top_to_bottom(name):
    nbformat = pytest.importorskip("nbformat")
    from nbconvert.preprocessors import ExecutePreprocessor

    nb = nbformat.read(REPO / "examples" / name, as_version=4)
    ExecutePreprocessor(timeout=600, kernel_name="python3").preprocess(
        nb, {"metadata": {"path": str(REPO / "examples")}}
    )
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any(o.output_type == "display_data" or "data" in o for o in outputs)
