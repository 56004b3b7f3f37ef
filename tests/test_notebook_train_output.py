"""train()'s TrainOutput in a notebook (forensics/ingest/notebook.py, closing_summary.py): a sign that a training ran.

A notebook whose only number is train()'s TrainOutput (corpus batch AS50, Onemaeus97_yifanbot).

A 2-step run under logging_steps 10 shows the Trainer's progress table with its Step / Training Loss headers and no
row, then `TrainOutput(global_step=2, training_loss=4.645, metrics={...})`; recent transformers print no
`***** Running training *****` banner in a notebook. The TrainOutput (or the empty table beside a closing summary) is
itself the sign that a training ran: the closing summary is read and dated at its global step, and one run-mean over
the run cannot show that the loss fell (warning, no_learning_evidence at 2). The notebooks are written in nbformat 4's
shape with the outputs as the Trainer prints them.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

import forensics
from forensics.errors import NotARunDirectory
from forensics.ingest import notebook

_METRICS = ("{'train_runtime': 2.7204, 'train_samples_per_second': 0.735, 'train_steps_per_second': 0.735, "
            "'total_flos': 6911881611264.0, 'train_loss': 4.644827842712402, 'epoch': 2.0}")
_TRAIN_OUTPUT = f"TrainOutput(global_step=2, training_loss=4.644827842712402, metrics={_METRICS})"
# the Trainer's notebook table of a run that logged no row: the progress line, then the headers only
_EMPTY_TABLE = ("<div><progress value='2' max='2' style='width:300px; height:20px; vertical-align: middle;'></progress>"
                " [2/2 00:01, Epoch 2/2]</div><table border=\"1\" class=\"dataframe\"><thead><tr style=\"text-align: "
                "left;\"><th>Step</th><th>Training Loss</th></tr></thead><tbody></tbody></table><p>")


def _write(folder: Path, cells: list) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=[new_code_cell("import transformers")] + cells), folder / "run.ipynb")
    return folder


def _table() -> dict:
    return new_output("display_data", data={"text/html": _EMPTY_TABLE,
                                            "text/plain": "<IPython.core.display.HTML object>"})


def _result(text: str) -> dict:
    return new_output("execute_result", execution_count=3, data={"text/plain": text})


def _logged_run_cell() -> object:
    """A run that logs its loss each step and falls: 3.0 -> 1.2 over 40 steps, then its summary."""
    lines = "".join(f"{{'loss': {3.0 - 1.8 * s / 40:.4f}, 'learning_rate': 0.0002, 'epoch': {s / 20:.2f}}}\n"
                    for s in range(1, 41))
    summary = ("{'train_runtime': 40.0, 'train_samples_per_second': 8.0, 'train_steps_per_second': 1.0, "
               "'total_flos': 1.0, 'train_loss': 2.1, 'epoch': 2.0}")
    return new_code_cell("result = trainer.train()", outputs=[new_output("stream", name="stdout", text=lines + summary
                                                                         + "\n")]), summary


def test_a_train_output_beside_an_empty_trainer_table_is_a_run_with_no_evidence_of_learning(tmp_path):
    cell = new_code_cell("trainer.train()", outputs=[_table(), _result(_TRAIN_OUTPUT)])
    a = forensics.analyze(_write(tmp_path / "nb", [cell]))
    assert a.status == "warning"
    assert (a.first_incident.kind, a.first_incident.step) == ("no_learning_evidence", 2)


def test_a_train_output_alone_is_read_as_the_runs_closing_summary(tmp_path):
    """No table, no banner: the TrainOutput is the run."""
    folder = _write(tmp_path / "nb", [new_code_cell("trainer.train()", outputs=[_result(_TRAIN_OUTPUT)])])
    frame = notebook.read(folder / "run.ipynb").frame
    assert frame.set_index("metric").loc["train_loss", "step"] == 2


def test_an_empty_trainer_table_beside_the_printed_summary_is_a_run(tmp_path):
    """Older transformers print the summary dict on stdout; train()'s value not shown (`trainer.train();`)."""
    cell = new_code_cell("trainer.train();", outputs=[_table(), new_output("stream", name="stdout", text=_METRICS + "\n")])
    a = forensics.analyze(_write(tmp_path / "nb", [cell]))
    assert a.status == "warning" and a.first_incident.kind == "no_learning_evidence"


def test_a_printed_summary_with_no_sign_of_a_trainer_is_still_nothing_readable(tmp_path):
    """A dict of train_* numbers printed alone (no TrainOutput, no Trainer table) is not taken for a training."""
    cell = new_code_cell("print(metrics)", outputs=[new_output("stream", name="stdout", text=_METRICS + "\n")])
    with pytest.raises(NotARunDirectory):
        forensics.analyze(_write(tmp_path / "nb", [cell]))


def test_a_train_output_shown_after_a_logged_run_is_that_runs_close(tmp_path):
    """`result = trainer.train()`, then `result` in a cell of its own: the TrainOutput closes the run before it, it is
    no new training judged alone (the run logged its loss falling: healthy)."""
    run, summary = _logged_run_cell()
    shown = new_code_cell("result", outputs=[_result(f"TrainOutput(global_step=40, training_loss=2.1, "
                                                     f"metrics={summary})")])
    a = forensics.analyze(_write(tmp_path / "nb", [run, shown]))
    assert a.status == "healthy" and a.first_incident is None
    assert a.timeline.frame["metric"].eq("loss").sum() == 40


def test_a_notebook_whose_only_sign_of_training_is_a_train_output_is_found_and_judged(tmp_path):
    """The run finder takes the notebook on its TrainOutput alone (no table, no banner, no log line), and the one
    run-mean it holds shows no learning either way."""
    folder = _write(tmp_path / "nb", [new_code_cell("trainer.train()", outputs=[_result(_TRAIN_OUTPUT)])])
    a = forensics.analyze(folder)
    assert a.status == "warning"
    assert (a.first_incident.kind, a.first_incident.step) == ("no_learning_evidence", 2)


def test_a_train_output_only_in_a_notebooks_code_is_no_sign_of_a_run(tmp_path):
    """The class's name in the source (a comment, an import) is not train()'s shown value."""
    cell = new_code_cell("from transformers.trainer_utils import TrainOutput  # TrainOutput(global_step=2, training_loss=1)")
    with pytest.raises(NotARunDirectory):
        forensics.analyze(_write(tmp_path / "nb", [cell]))
