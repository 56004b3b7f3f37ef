"""The Trainer's closing summary, printed as a dict with no step, is dated by the `TrainOutput(global_step=N, ...)`
that train() returns and a notebook cell shows after it: a run whose `logging_steps` outlasted it logs nothing else,
and at the position rule's step 0 its summary read as if no optimizer step had run
(yangoos57_Bert_For_Domain_Adaptation: two steps, train_loss 3.283 the mean of the two). The notebooks are written
here in nbformat 4's shape, the outputs as the Trainer prints them."""
from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

import forensics
from forensics.ingest.console_scan import scan

_BANNER = ("***** Running training *****\n  Num examples = 10\n  Num Epochs = 2\n  Instantaneous batch size per device = 16\n"
           "  Total train batch size (w. parallel, distributed & accumulation) = 16\n  Gradient Accumulation steps = 1\n"
           "  Total optimization steps = 2\n")


def _summary(train_loss: float, steps: int = 2) -> str:
    return (f"{{'train_runtime': 5.0572, 'train_samples_per_second': 3.955, 'train_steps_per_second': "
            f"{round(steps / 5.0572, 3)}, 'train_loss': {train_loss}, 'epoch': 2.0}}")


def _notebook(folder: Path, global_step: int, train_loss: float, logs: str = "", banner: str = _BANNER) -> Path:
    """One trainer.train() cell: the banner, the dicts logged, the closing summary and the TrainOutput it returns."""
    cell = new_code_cell("trainer.train()", outputs=[
        new_output("stream", name="stderr", text=banner),
        new_output("stream", name="stdout", text=logs + "\n\nTraining completed. Do not forget to share your model on "
                                                        "huggingface.co/models =)\n\n\n"),
        new_output("stream", name="stdout", text=_summary(train_loss, max(global_step, 2)) + "\n"),
        new_output("execute_result", execution_count=1, data={"text/plain": (
            f"TrainOutput(global_step={global_step}, training_loss={train_loss}, metrics="
            f"{_summary(train_loss, max(global_step, 2))})")}),
    ])
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=[new_code_cell("from transformers import Trainer"), cell]), folder / "run.ipynb")
    return folder


def test_a_trainoutputs_metrics_are_at_its_global_step():
    line = f"TrainOutput(global_step=2, training_loss=3.2832515239715576, metrics={_summary(3.2832515239715576)})"
    assert [(e[1], e[2]["train_loss"]) for e in scan(line + "\n") if e[0] == "dict"] == [(2, 3.2832515239715576)]


def test_a_summary_dated_by_its_trainoutput_is_a_mean_over_real_steps(tmp_path):
    """Two steps ran, logging_steps 5: the summary's train_loss is the mean of the two, not a sum over 0.001."""
    a = forensics.analyze(_notebook(tmp_path / "demo", 2, 3.2832515239715576))
    summary = a.timeline.frame[a.timeline.frame["metric"] == "train_runtime"]
    assert set(summary["step"]) == {2}
    assert a.status == "warning"
    assert (a.first_incident.kind, a.first_incident.step) == ("no_learning_evidence", 2)
    assert "no optimizer step ran" not in a.first_incident.message
    assert "3.283" in a.first_incident.message and "mean" in a.first_incident.message


def test_a_trainoutput_at_global_step_zero_still_says_no_step_ran(tmp_path):
    """The TrainOutput says step 0: no update ran, the train_loss a sum over the Trainer's floor of 0.001."""
    a = forensics.analyze(_notebook(tmp_path / "none", 0, 13600.0))
    assert (a.first_incident.kind, a.first_incident.step) == ("no_learning_evidence", 0)
    assert "no optimizer step ran" in a.first_incident.message


def test_a_healthy_runs_summary_sits_at_its_last_step(tmp_path):
    """A run that logged every step: its summary at the TrainOutput's step 20, the run healthy, nothing about the
    summary said."""
    logs = "".join(f"{{'loss': {2.6 - k * 0.07:.4f}, 'learning_rate': 2e-05, 'epoch': {k / 10:.2f}}}\n"
                   for k in range(1, 21))
    banner = _BANNER.replace("Total optimization steps = 2", "Total optimization steps = 20").replace(
        "Num examples = 10", "Num examples = 160")
    a = forensics.analyze(_notebook(tmp_path / "fine", 20, 1.9, logs=logs, banner=banner))
    summary = a.timeline.frame[a.timeline.frame["metric"] == "train_runtime"]
    assert set(summary["step"]) == {20}
    assert a.status == "healthy", [f.message for f in a.findings]
    assert not any(f.kind == "no_learning_evidence" for f in a.findings)
