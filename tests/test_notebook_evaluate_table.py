"""trainer.evaluate()'s one-row table after the Trainer's progress table in a notebook (forensics/ingest/notebook.py):
the end of that training, not a new one.

From corpus batch AS52 (DulaniDeSilva_Natural-Language-Processing-NLP-). The notebooks are written in nbformat 4's
shape with their outputs as the Trainer prints them."""
from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

import forensics
from forensics.ingest import notebook


def _html(html: str):
    return new_output("display_data", data={"text/html": html, "text/plain": "<IPython.core.display.HTML object>"})


def _notebook(folder: Path, cells: list[tuple[str, list, int | None]]) -> Path:
    """`folder/run.ipynb` of code cells (source, outputs, execution count or None for a cell that never ran)."""
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=[new_code_cell(source, outputs=outputs, execution_count=count)
                                       for source, outputs, count in cells]), folder / "run.ipynb")
    return folder


# --- trainer.evaluate()'s one-row table after the training's table --------------------------------------------------

def _table(header: list[str], rows: list[list[str]], progress: str = "") -> dict:
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    bar = f"<div><progress value='1' max='1'></progress> {progress}</div>" if progress else ""
    return _html(f'{bar}<table border="1" class="dataframe"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')


def _training_table(start: int = 100) -> dict:
    """The Trainer's table of a run evaluated every 100 steps to 600, both losses falling."""
    rows = [[str(step), f"{3.45 - 0.04 * k:.6f}", f"{3.34 - 0.02 * k:.6f}"]
            for k, step in enumerate(range(start, start + 600, 100))]
    return _table(["Step", "Training Loss", "Validation Loss"], rows, f"[{start + 500}/{start + 500} 50:15, Epoch 3/3]")


def test_evaluate_table_at_the_training_s_last_step_is_the_end_of_that_training(tmp_path):
    """evaluate()'s table: Training Loss, Validation Loss, then Step, one row at step 600 where the training ended."""
    evaluate = _table(["Training Loss", "Validation Loss", "Step"], [["3.250000", "3.239000", "600"]])
    _notebook(tmp_path, [("trainer.train()", [_training_table()], 18),
                         ("trainer.evaluate()", [_html("<div><progress></progress> [92/92 00:25]</div>"), evaluate], 19)])
    a = forensics.analyze(tmp_path)
    assert (a.status, a.first_incident) == ("healthy", None)
    assert len(a.timeline.series("loss")) == 6


def test_a_second_training_table_starting_again_is_still_a_new_training(tmp_path):
    """A training table (its Step column first) whose steps start again is another training: only it is judged."""
    _notebook(tmp_path, [("trainer.train()", [_training_table()], 18),
                         ("trainer.train()", [_training_table()], 19)])
    notes = notebook.read(tmp_path / "run.ipynb").notes
    assert any("holds 2 trainings" in note for note in notes)
