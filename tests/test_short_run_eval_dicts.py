"""Trainer eval dicts of a run shorter than its logging interval (forensics/ingest/stdout.py, notebook.py):
the eval dicts a run, dated at their epochs.

From corpus batch AS49: a Seq2SeqTrainer run shorter than its logging interval (248 steps under the default
logging_steps 500) prints only its per-epoch eval dicts and the closing summary (ANURAGMN_benchmarkingRougeBLEU): the
cell is a run, its eval dicts dated at their epochs x the steps an epoch made (the TrainOutput's global step over its
epoch), as a trainer_state.json of the same run dates them. The notebooks are written in nbformat 4's shape with the
outputs as the Trainer prints them.
"""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

import forensics
from forensics.errors import NotARunDirectory
from forensics.ingest.stdout import read_console


_EVAL_LOSSES = (2.8460168838500977, 2.6353065967559814, 2.572197437286377, 2.5564796924591064)
_STEPS, _EPOCHS = 248, 4


def _eval_dict(epoch: int, loss: float) -> str:
    return (f"{{'eval_loss': {loss}, 'eval_rouge1': 0.13, 'eval_gen_len': 19.0, 'eval_runtime': 639.4, "
            f"'eval_samples_per_second': 0.388, 'eval_steps_per_second': 0.025, 'epoch': {float(epoch)}}}\n")


def _summary() -> str:
    return ("{'train_runtime': 8010.71, 'train_samples_per_second': 0.494, 'train_steps_per_second': 0.031, "
            "'total_flos': 1070824333246464.0, 'train_loss': 3.0183575537896927, 'epoch': 4.0}")


def _write(folder: Path, cells: list) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=[new_code_cell("import transformers")] + cells), folder / "run.ipynb")
    return folder


def _short_run_cell(losses=_EVAL_LOSSES, closed: bool = True):
    """trainer.train() of a run shorter than logging_steps: an eval dict an epoch, the summary, the TrainOutput."""
    outputs = [new_output("stream", name="stdout", text=_eval_dict(e, loss)) for e, loss in enumerate(losses, 1)]
    if closed:
        outputs += [new_output("stream", name="stdout", text=_summary() + "\n"),
                    new_output("execute_result", execution_count=2, data={"text/plain": (
                        f"TrainOutput(global_step={_STEPS}, training_loss=3.0183575537896927, metrics={_summary()})")})]
    return new_code_cell("trainer.train()", outputs=outputs)


def test_a_run_shorter_than_its_logging_interval_is_judged_on_its_eval_loss(tmp_path):
    a = forensics.analyze(_write(tmp_path / "short", [_short_run_cell()]))
    assert a.status == "healthy" and a.first_incident is None
    frame = a.timeline.frame
    evals = frame[frame["metric"] == "eval_loss"]
    per_epoch = _STEPS // _EPOCHS
    assert list(evals["step"]) == [per_epoch * e for e in range(1, _EPOCHS + 1)]
    assert list(evals["value"]) == list(_EVAL_LOSSES)


def test_the_short_runs_notebook_is_judged_as_its_trainer_state_is(tmp_path):
    """The same run's trainer_state.json (log_history: the four evaluations at their steps, then the summary)."""
    per_epoch = _STEPS // _EPOCHS
    history = [{"eval_loss": loss, "epoch": float(e), "step": per_epoch * e} for e, loss in enumerate(_EVAL_LOSSES, 1)]
    history.append({"train_runtime": 8010.71, "train_loss": 3.0183575537896927, "epoch": 4.0, "step": _STEPS})
    state = tmp_path / "state"
    state.mkdir()
    (state / "trainer_state.json").write_text(json.dumps({"global_step": _STEPS, "max_steps": _STEPS,
                                                          "num_train_epochs": _EPOCHS, "log_history": history}))
    by_state = forensics.analyze(state)
    by_notebook = forensics.analyze(_write(tmp_path / "short", [_short_run_cell()]))
    assert (by_notebook.status, by_notebook.first_incident) == (by_state.status, by_state.first_incident)


def test_eval_dicts_without_a_closing_summary_are_no_run(tmp_path):
    """trainer.evaluate() alone (no train() summary): an evaluation, not a training."""
    with pytest.raises(NotARunDirectory):
        forensics.analyze(_write(tmp_path / "evaluate", [_short_run_cell(closed=False)]))


def test_eval_dicts_after_train_dicts_keep_the_train_dicts_step():
    """A console that logs its training loss: its eval dicts stay at the train dict before them."""
    text = ("{'loss': 2.9, 'learning_rate': 1e-05, 'epoch': 1.0}\n" + _eval_dict(1, 2.8) +
            "{'loss': 2.7, 'learning_rate': 5e-06, 'epoch': 2.0}\n" + _eval_dict(2, 2.6) + _summary() + "\n"
            f"TrainOutput(global_step=20, training_loss=2.8, metrics={_summary()})\n")
    frame = read_console(text, Path("console.log"), []).frame
    train = list(frame[frame["metric"] == "loss"]["step"])
    assert list(frame[frame["metric"] == "eval_loss"]["step"]) == train
