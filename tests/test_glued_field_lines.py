"""A loop's step line of fields joined by `-`, each number glued to its name, and the evaluation lines between them
(ingest.console_lines.glued_fields): zssyqpgdll_TAG's TF1 code-comment model prints `Epoch1-train_step1-loss=30.305149`
each step and `Epoch 1 Dev Bleu is: 0.0` after each evaluation."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest import stdout

CORPUS = Path(__file__).parent / "realworld"


def _log(losses: list[float], per_epoch: int, bleu: list[float]) -> str:
    lines = []
    for i, loss in enumerate(losses, start=1):
        epoch = (i - 1) // per_epoch + 1
        lines += [f"Epoch{epoch}-train_step{i}-loss={loss:.6f}", f"current dev bleu: {bleu[epoch - 2] if epoch > 1 else 0}",
                  "l2 weight: 3e-05  best dev bleu: 0", "*" * 64, ""]
        if i % per_epoch == 0:
            lines += ["Evaluation------", f"Epoch {epoch} Dev Bleu is: {bleu[epoch - 1]}", "best dev bleu: 0"]
    return "\n".join(["Training Mode Starts !"] + lines) + "\n"


def _series(frame, metric: str) -> dict[int, float]:
    rows = frame[frame.metric == metric]
    return dict(zip(rows.step.astype(int), rows.value))


def test_the_glued_step_and_loss_are_read_and_each_evaluation_dated_at_the_step_before_it(tmp_path: Path):
    (tmp_path / "train.log").write_text(_log([30.3, 25.1, 20.2, 18.7], per_epoch=2, bleu=[0.0, 0.05]))
    frame = stdout.read(tmp_path / "train.log").frame
    assert _series(frame, "loss") == {1: 30.3, 2: 25.1, 3: 20.2, 4: 18.7}
    assert _series(frame, "eval_bleu") == {2: 0.0, 4: 0.05}


def test_the_repeated_current_bleu_is_no_evaluation_of_its_own(tmp_path: Path):
    (tmp_path / "train.log").write_text(_log([30.3, 25.1, 20.2, 18.7, 17.0, 16.1], per_epoch=2, bleu=[0.0, 0.05, 0.07]))
    assert len(_series(stdout.read(tmp_path / "train.log").frame, "eval_bleu")) == 3


def test_a_file_name_of_that_shape_alone_is_not_read(tmp_path: Path):
    (tmp_path / "notes.log").write_text("saved Epoch1-step2-loss=3.2\nEpoch 1 Dev Bleu is: 0.1\n")
    assert stdout.read(tmp_path / "notes.log").frame.empty


def test_a_learning_run_of_such_lines_stays_healthy(tmp_path: Path):
    losses = [4.0 * 0.97 ** i + 1.0 for i in range(60)]
    (tmp_path / "train.log").write_text(_log(losses, per_epoch=10, bleu=[0.05, 0.1, 0.14, 0.17, 0.19, 0.2]))
    a = forensics.analyze(tmp_path)
    assert a.status == "healthy", [f.message for f in a.findings]


def test_the_real_tag_log_is_read_as_a_run_that_learned():
    a = forensics.analyze(CORPUS / "zssyqpgdll_TAG")
    assert a.status == "warning" and (a.first_incident is None or a.first_incident.severity == "warning")
    assert a.timeline.series("loss").index.max() == 1370
