"""A hand-written loop's held-out line with no counter, printed after the training line it evaluates
(jananjahedd_Group-12-LLM, corpus batch AS107: `Epoch 1/1 - Loss: 0.0203, Accuracy: 0.6141`, then `Validation Loss:
0.0191, Validation Accuracy: 0.6615`): its eval loss at that line's step (`console_lines.stepless.held_out_line`)."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.discover.run import discover

_FOLD = """2024-10-25 09:{m:02d}:34,415 - root - INFO - Fold {k}/8
2024-10-25 09:{m:02d}:34,907 - root - INFO - Starting training...
2024-10-25 09:{m:02d}:45,025 - root - INFO - Epoch 1/1 - Loss: {loss:.4f}, Accuracy: 0.6141
2024-10-25 09:{m:02d}:45,026 - root - INFO - Starting validation...
2024-10-25 09:{m:02d}:04,696 - root - INFO - Validation Loss: {val:.4f}, Validation Accuracy: 0.6615
2024-10-25 09:{m:02d}:04,696 - root - INFO - Training complete. Final average validation accuracy: 0.6615
"""


def _folds(n: int = 8) -> str:
    return "".join(_FOLD.format(m=5 * k, k=k, loss=0.0215 - 0.0003 * k, val=0.0214 - 0.0002 * k)
                   for k in range(1, n + 1))


def test_a_held_out_line_after_a_training_line_is_that_steps_evaluation(tmp_path):
    (tmp_path / "distilbert.log").write_text(_folds())
    timeline = forensics.analyze(tmp_path).timeline
    loss, eval_loss = timeline.series("loss"), timeline.series("eval_loss")
    assert len(eval_loss) == 8 and eval_loss.index.tolist() == loss.index.tolist()
    assert round(eval_loss.iloc[0], 4) == 0.0212


def test_a_held_out_line_before_any_training_line_is_no_log(tmp_path):
    """The guard: an evaluation-only report of such lines (no training line before them) is no training log."""
    (tmp_path / "eval.log").write_text("".join(f"2024-10-25 09:0{k}:04,696 - root - INFO - Validation Loss: "
                                               f"0.02{k}, Validation Accuracy: 0.66\n" for k in range(6)))
    assert discover(tmp_path).text_logs == []


def test_a_closing_test_report_is_no_evaluation_at_the_last_step(tmp_path):
    """The guard: `Test Loss: X, Test Accuracy: Y` after the last epoch is the closing evaluation of the model the
    run kept (often its best, not its last): not placed at the last training line as a validation point."""
    (tmp_path / "train.log").write_text("".join(f"Epoch {e}/5 - Loss: {0.7 - e / 20:.4f}, Accuracy: 0.6\n"
                                                for e in range(1, 6)) + "Test Loss: 0.9000, Test Accuracy: 0.55\n")
    assert "eval_loss" not in forensics.analyze(tmp_path).timeline.metrics


def test_the_wandb_run_summary_after_the_training_is_no_evaluation(tmp_path):
    """The guard (Msingi-AI_msingi1's notebook): W&B's closing summary prints each metric's last value again
    (`wandb:      val_loss 0.04445`): no evaluation of the loop's own to place at its last step."""
    bars = "".join(f"Epoch {e}/25: 100% 334/334 [01:10<00:00,  4.7it/s, loss={10.0 / e ** 2:.4f}, lr=3.00e-04]\n"
                   for e in range(1, 26))
    (tmp_path / "train.log").write_text(bars + "wandb: Run summary:\nwandb:    train_loss 0.02278\n"
                                               "wandb:      val_loss 0.04445\n")
    assert "eval_loss" not in forensics.analyze(tmp_path).timeline.metrics


def test_the_real_notebook_whose_wandb_summary_names_a_val_loss_stays_memorized():
    a = forensics.analyze(Path(__file__).parent / "realworld" / "Msingi-AI_msingi1")
    assert a.status == "warning" and a.first_incident.kind == "memorization"
