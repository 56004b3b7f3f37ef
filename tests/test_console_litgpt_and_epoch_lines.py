"""Tests of the console readers: LitGPT iteration lines, `epoch: N loss: X` lines, late excerpts.

Console lines of real pastes (tests/realworld, batch AL2) the tool did not read: LitGPT's per-iteration line, a
hand-written loop's `epoch: N loss: X`, and an excerpt that starts late in a run keeping the run's own epochs."""
from __future__ import annotations

import pytest

import forensics
from forensics.errors import NotARunDirectory


def _log(tmp_path, lines):
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_text("".join(line + "\n" for line in lines))
    return run


def test_litgpt_iteration_lines_are_a_training_log(tmp_path):
    """litgpt/finetune/lora.py's `Epoch 1 | iter N step S | loss train: X, val: n/a | iter time: T ms` (Lightning-AI/
    litgpt issue 1224), with its `iter N: val loss X` lines: the file was not taken for a log at all."""
    lines = []
    for i in range(1, 41):
        lines.append(f"Epoch 1 | iter {i} step {i // 4} | loss train: {3.0 - i / 50:.3f}, val: n/a | "
                     f"iter time: 45.73 ms{' (step)' if i % 4 == 0 else ''}")
        if i % 20 == 0:
            lines.append(f"iter {i}: val loss {2.9 - i / 100:.4f}, val ppl 17.0, val time: 1234.00 ms")
    a = forensics.analyze(_log(tmp_path, lines))
    assert len(a.timeline.series("loss")) == 40
    assert list(a.timeline.series("eval_loss").index) == [20, 40]


def test_epoch_colon_loss_colon_lines_are_read(tmp_path):
    """`epoch: 3442 loss: 0.2105` (vpetren/gradnorm_tf issue 17): they start like comma-separated `key: value` pairs
    with a step counter, whose reader cannot read them; a hand-written loop's per-epoch print, read as one, not as
    nothing."""
    losses = [0.2105, 0.2061, 0.2040, 0.2098, 0.2115, 0.2120, 0.2105, 0.2075, 0.2106]
    lines = [f"epoch: {3442 + i} loss: {v}" for i, v in enumerate(losses)] + [f"epoch: {e} loss: nan" for e in range(3451, 3459)]
    a = forensics.analyze(_log(tmp_path, lines))
    assert a.status == "broken"
    assert (a.first_incident.kind, a.first_incident.step) == ("nonfinite_metric", 3451), a.first_incident


def test_epoch_lines_of_a_loop_counting_from_zero_stay_one_based(tmp_path):
    lines = [f"epoch: {e} loss: {2.0 - e / 10}" for e in range(10)]
    a = forensics.analyze(_log(tmp_path, lines))
    assert list(a.timeline.series("loss").index) == list(range(1, 11))


def test_prose_with_one_loss_is_still_no_log(tmp_path):
    with pytest.raises(NotARunDirectory):
        forensics.analyze(_log(tmp_path, ["We trained for a while; at epoch: 3 loss: 0.2 it looked fine."]))


def _trainer_tensorboard(folder, model_config: dict, steps: range):
    """What the HF Trainer's TensorBoard callback writes: its `args` and `model_config` texts, then the losses."""
    import json

    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(folder))
    writer.add_text("args", json.dumps({"learning_rate": 2e-4, "logging_steps": 5}))
    writer.add_text("model_config", json.dumps(model_config))
    for step in steps:
        writer.add_scalar("train/loss", 2.0 - step / 1000, step)
    writer.close()


def test_the_model_config_is_the_final_runs_not_an_abandoned_attempts(tmp_path):
    """A runs/ folder keeps the TensorBoard file of every attempt, each with the model it was started with
    (TobyYang7/Quant-GPT, tests/realworld: a 14B tried first, the run that stands on a 7B): the size is the final
    run's (it said ~14.2B, the first file's)."""
    pytest.importorskip("torch")
    big = {"model_type": "llama", "hidden_size": 5120, "num_hidden_layers": 40, "intermediate_size": 13824,
           "vocab_size": 32000, "num_attention_heads": 40}
    small = {**big, "hidden_size": 4096, "num_hidden_layers": 32, "intermediate_size": 11008, "num_attention_heads": 32}
    _trainer_tensorboard(tmp_path / "run" / "runs" / "May04_12-16-27_host", big, range(5, 30, 5))
    _trainer_tensorboard(tmp_path / "run" / "runs" / "May04_13-50-34_host", small, range(5, 505, 5))
    a = forensics.analyze(tmp_path / "run")
    assert 6.4e9 < a.run_profile.model_params < 7.0e9, a.run_profile.evidence
