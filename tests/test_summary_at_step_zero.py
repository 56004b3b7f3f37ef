"""The HF Trainer's closing summary written at global step 0 says no optimizer step ran: its train_loss is the summed
loss over a step count floored at 0.001, not a loss (`no_training_loss.summary_at_step_zero`); with the eval loss of
the model as loaded at the uniform guess over its vocabulary, the run never learned
(`stuck_at_guess.detect_no_update_at_the_guess`). Runs are TensorBoard folders written as the Trainer's
TensorBoardCallback writes them."""
from __future__ import annotations

import json
import math

import pytest

from forensics import analyze
from forensics.metric_names import tracker_metric_names
from support.hf_tensorboard import write_hf_tensorboard

pytest.importorskip("torch")


def _gpt2_run(tmp_path, summary_step: int, train_loss: float, eval_loss: float, steps: dict | None = None):
    """A full fine-tune of gpt2 (config.json beside the logs) with logging_steps 500, longer than the run."""
    write_hf_tensorboard(tmp_path / "logs", steps or {}, summary_step=summary_step, train_loss=train_loss,
                         evaluation={"loss": eval_loss, "runtime": 2.1, "samples_per_second": 3.0})
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "config.json").write_text(json.dumps({
        "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12,
        "vocab_size": 50257, "transformers_version": "4.48.0"}))
    return tmp_path


def test_a_summary_at_step_zero_with_the_eval_at_the_guess_never_learned(tmp_path):
    # 3 micro-batches an epoch under 4 of accumulation: no step; the summed loss 13.1 / 0.001
    a = analyze(_gpt2_run(tmp_path, 0, 13100.0, 11.0))
    assert 11.0 > math.log(50257)
    assert a.status == "broken"
    assert (a.first_incident.kind, a.first_incident.step) == ("never_learned", 0)
    assert not any(f.kind in ("impossible_loss", "divergence") for f in a.findings)


def test_a_summary_at_step_zero_with_a_trained_models_eval_says_no_step_ran(tmp_path):
    """No update, but the model as loaded reads the eval data (3.4 nats): not at the guess, so not broken; no step
    ran, so no learning either."""
    a = analyze(_gpt2_run(tmp_path, 0, 13600.0, 3.4))
    assert a.status == "warning"
    assert (a.first_incident.kind, a.first_incident.step) == ("no_learning_evidence", 0)
    assert "no optimizer step ran" in a.first_incident.message


def test_a_summary_after_real_steps_is_no_step_zero_summary(tmp_path):
    """A run of 30 steps with logging_steps longer than it: the summary at step 30 is the run's mean, 3.3, and an eval
    of 3.1; nothing says no update ran, and nothing is at the guess."""
    a = analyze(_gpt2_run(tmp_path, 30, 3.3, 3.1))
    assert a.status != "broken"
    assert not any(f.kind in ("never_learned", "impossible_loss", "divergence") for f in a.findings)
    assert "no optimizer step ran" not in " ".join(f.message for f in a.findings)


def test_a_closing_summarys_train_loss_is_not_the_loss_but_a_sole_per_step_train_loss_is():
    assert tracker_metric_names(["train/train_runtime", "train/train_loss", "eval/loss"]) == [
        "train_runtime", "train_loss", "eval_loss"]
    assert tracker_metric_names(["train_loss", "val_loss"]) == ["loss", "eval_loss"]


def test_a_tensorboard_file_holding_only_the_closing_summary_is_the_hf_trainers(tmp_path):
    """No step reached logging_steps, so no train/learning_rate: the summary's train/train_runtime beside train/epoch
    are the Trainer's tags still."""
    a = analyze(_gpt2_run(tmp_path, 0, 13100.0, 11.0))
    assert a.run_profile.framework == "hf_trainer"
