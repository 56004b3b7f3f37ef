"""Stepless loss lines dated by a worded epoch header (ingest.console_lines.stepless, ingest.stepless_dating):
BlayvasD_GPT-Histories' loop prints `Training epoch N` before each epoch's `Validation Loss: X` / `Training Loss: Y`,
an evaluation of both before the first epoch, and a `Test Loss: X` after the last."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest import stdout

CORPUS = Path(__file__).parent / "realworld"
_VAL = (2.90, 2.70, 2.60, 2.65, 2.80, 3.00)
_TRAIN = (2.50, 2.10, 1.60, 1.00, 0.50, 0.20)


def _series(path: Path, metric: str) -> dict[int, float]:
    frame = stdout.read(path).frame
    rows = frame[frame.metric == metric]
    return dict(zip(rows.step.astype(int), rows.value))


def _worded_log(header: str = "Training epoch {e}", before: bool = True, test: bool = True) -> str:
    text = f"Validation Loss: {_VAL[0]}\nTraining Loss: {_TRAIN[0]}\nSaved initial\n" if before else ""
    for e in range(1, len(_VAL)):
        text += f"{header.format(e=e)}\n100%|##########| 11/11 [00:00<00:00, 18.43it/s]\n"
        text += f"Validation Loss: {_VAL[e]}\nTraining Loss: {_TRAIN[e]}\n"
    return text + ("Test Loss: 2.37\n" if test else "")


def test_loss_lines_under_a_training_epoch_header_are_that_epochs(tmp_path: Path):
    (tmp_path / "train.log").write_text(_worded_log())
    assert _series(tmp_path / "train.log", "eval_loss") == dict(enumerate(_VAL))
    assert _series(tmp_path / "train.log", "loss") == dict(enumerate(_TRAIN))


def test_an_evaluation_before_the_first_header_is_step_zero_and_the_test_after_is_left_out(tmp_path: Path):
    (tmp_path / "train.log").write_text(_worded_log())
    held_out = _series(tmp_path / "train.log", "eval_loss")
    assert held_out[0] == _VAL[0] and 2.37 not in held_out.values()


def test_a_worded_header_that_ends_an_epoch_dates_nothing(tmp_path: Path):
    (tmp_path / "train.log").write_text(_worded_log(header="Finished epoch {e}", before=False, test=False))
    assert _series(tmp_path / "train.log", "loss") == {}


def test_a_single_worded_header_is_no_section_shape(tmp_path: Path):
    text = "Training epoch 1\nValidation Loss: 2.9\nTraining Loss: 2.5\n"
    (tmp_path / "train.log").write_text(text)
    assert _series(tmp_path / "train.log", "loss") == {}


def test_the_real_gpt2_histories_notebook_overfits_from_epoch_27():
    a = forensics.analyze(CORPUS / "BlayvasD_GPT-Histories")
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("warning", "overfitting", 27)
    assert len(a.timeline.series("eval_loss")) == 101
