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
    # preprocess() raises at the first cell that fails; so every code cell ran, and
    # the notebook showed something (a plot or a table).
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count is not None for c in code)
    outputs = [o for c in code for o in c.outputs]
    assert any(o.output_type in ("display_data", "execute_result") for o in outputs)
