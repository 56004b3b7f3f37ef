"""notebooks/explore.ipynb runs top to bottom in a fresh kernel and says what the sample run's facts say.

The kernel is this interpreter (support.kernel), so the test cannot pick up another Python by accident.
Expected values come from `sample_runs/nan_masked.facts.json`, written when the run was made.
"""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from support.kernel import execute

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "explore.ipynb"
FACTS = json.loads((ROOT / "sample_runs" / "nan_masked.facts.json").read_text())


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> nbformat.NotebookNode:
    """The notebook after running every cell; nbclient raises CellExecutionError when a cell fails."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    return execute(nb, tmp_path_factory.mktemp("kernels"), NOTEBOOK.parent)


def _tagged(nb, tag: str):
    cells = [c for c in nb.cells if tag in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"expected one cell tagged {tag!r}, found {len(cells)}"
    return cells[0]


def _printed(nb, tag: str) -> list[str]:
    """The lines a tagged cell printed to stdout."""
    cell = _tagged(nb, tag)
    text = "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")
    return text.splitlines()


def test_notebook_is_stored_without_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code
    assert all(c.outputs == [] and c.execution_count is None for c in code)


def test_every_cell_runs_without_error(executed):
    code = [c for c in executed.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code)
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert errors == []


def test_first_incident_cell_prints_the_step_the_run_broke_at(executed):
    lines = _printed(executed, "first-incident")
    assert "status: broken" in lines
    assert any(line.startswith("first incident: ") and f" at step {FACTS['first_nonfinite_step']} " in line
               for line in lines), lines


def test_masked_loss_cell_prints_the_first_masked_step(executed):
    lines = _printed(executed, "masked-loss")
    n_masked = sum(s >= FACTS["first_masked_loss_step"] for s in FACTS["logged_steps"])
    assert lines == [f"loss logged as 0.0 next to a non-finite grad_norm from step {FACTS['first_masked_loss_step']} "
                     f"({n_masked} logged steps)"]


def test_checkpoint_cell_names_last_good_and_first_bad(executed):
    lines = _printed(executed, "checkpoints")
    good, bad = FACTS["last_good_checkpoint"], FACTS["first_bad_checkpoint"]
    assert f"last good checkpoint: {good} (step {FACTS['checkpoints'][good]['step']})" in lines
    assert f"first bad checkpoint: {bad} (step {FACTS['checkpoints'][bad]['step']})" in lines
    finite = [name for name, c in FACTS["checkpoints"].items() if not c["nonfinite_blocks"]]
    assert f"finite checkpoints: {', '.join(finite)}" in lines


def test_damaged_blocks_cell_lists_the_poisoned_blocks(executed):
    bad = FACTS["first_bad_checkpoint"]
    assert _printed(executed, "damaged-blocks") == ["damaged blocks: " + ", ".join(FACTS["checkpoints"][bad]["nonfinite_blocks"])]


def test_bisect_cell_finds_the_same_pair(executed):
    good, bad = FACTS["last_good_checkpoint"], FACTS["first_bad_checkpoint"]
    steps = FACTS["checkpoints"][good]["step"], FACTS["checkpoints"][bad]["step"]
    assert _printed(executed, "bisect") == [
        f"bisect: last good {good}, first bad {bad}, broke between steps {steps[0]} and {steps[1]}"]


def test_top_cause_is_the_sudden_break_the_run_s_own_grad_norm_shows(executed):
    """The sample's NaN was put into a block between two logged steps: grad_norm steady, then NaN, with nothing
    building up before it. The first cause shown is that sudden break, citing the step it went non-finite."""
    lines = _printed(executed, "top-cause")
    assert lines[0].startswith("A sudden break"), lines
    assert any(f"non-finite at step {FACTS['first_nonfinite_step']}" in line for line in lines[1:]), lines


def test_rich_outputs_show_as_html_and_png(executed):
    first = next(c for c in executed.cells if c.cell_type == "code")
    html = "".join(o["data"].get("text/html", "") for o in first.outputs if "data" in o)
    assert "forensics-summary" in html
    plot = _tagged(executed, "plot")
    assert any("image/png" in o.get("data", {}) for o in plot.outputs)
