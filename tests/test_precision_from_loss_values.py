"""The precision a run's model ran in, read from its logged eval_loss values where the arguments do not say it: the
loss of a model run in float16 is itself a float16 number (11 significant bits), which a float32 loss is by chance only
once in 2**13, and one that also needs more bits than bfloat16's 8 is no bf16 loss."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import forensics

CORPUS = Path(__file__).parent / "realworld"


def _run(tmp_path, eval_losses, args=None):
    """trainer_state.json with a train loss (rounded to 4 places, as the Trainer logs it) every 10 steps and the
    eval losses every 50."""
    log = [{"step": 10 * i, "epoch": i / 20, "loss": round(2.0 - 0.05 * i, 4), "learning_rate": 1e-4}
           for i in range(1, 21)]
    log += [{"step": 50 * (i + 1), "epoch": (i + 1) / 4, "eval_loss": v} for i, v in enumerate(eval_losses)]
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 200, "log_history": log}))
    if args is not None:
        (folder / "args.json").write_text(json.dumps(args))  # (ms-swift's arguments file)
    return forensics.analyze(folder).run_profile


def _fp16(values):
    return [float(np.float16(v)) for v in values]


@pytest.mark.parametrize("values", [[0.9892578125], _fp16([1.4321, 1.2217, 1.1093])])
def test_float16_eval_losses_give_fp16(tmp_path, values):
    """HanGyeol-Yoo_sentence_interpolation_AiMalpyeong: one evaluation, eval_loss 0.9892578125 = 1013/1024."""
    p = _run(tmp_path, values)
    assert p.precision == "fp16", p.evidence
    assert "float16" in p.evidence["precision"] and "eval_loss" in p.evidence["precision"]


@pytest.mark.parametrize("values", [
    [0.98926], [1.4321, 1.2217, 1.1093],  # float32 losses, as they print
    [0.98828125, 1.25],  # bfloat16 numbers (8 significant bits): every one a float16 number too
    _fp16([1.4321, 1.2217]) + [1.1093],  # one float32 value among them
    [0.5, 0.75],  # a rounded log's short values
])
def test_other_eval_losses_say_no_precision(tmp_path, values):
    assert _run(tmp_path, values).precision == "unknown"


def test_a_stated_precision_wins_over_float16_eval_losses(tmp_path):
    assert _run(tmp_path, [0.9892578125], args={"bf16": True}).precision == "bf16"


def test_the_corpus_run_with_a_float16_eval_loss_is_fp16():
    p = forensics.analyze(CORPUS / "HanGyeol-Yoo_sentence_interpolation_AiMalpyeong").run_profile
    assert p.precision == "fp16" and "0.9892578125" in p.evidence["precision"]


def _skipping_run(tmp_path, lr_held: bool):
    """trainer_state.json logged every 10 steps: grad_norm NaN at steps 100, 200 and 300 with a finite loss, the
    learning rate decaying linearly; `lr_held`: the scheduler did not step at those steps (a GradScaler's skip), so
    the logged rate lags one step per skip from there on."""
    skips = (100, 200, 300)
    log = []
    for step in range(10, 410, 10):
        lag = sum(s <= step for s in skips) if lr_held else 0
        log.append({"step": step, "epoch": step / 400, "loss": round(2.0 - step / 400, 4),
                    "grad_norm": float("nan") if step in skips else 1.0 + 0.01 * (step % 30),
                    "learning_rate": 1e-4 * (1 - (step - lag) / 1000)})
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 400, "log_history": log}))
    return forensics.analyze(folder).run_profile


def test_skips_that_held_the_learning_rate_back_are_an_fp16_scaler_s(tmp_path):
    p = _skipping_run(tmp_path, lr_held=True)
    assert p.precision == "fp16" and "loss scaler" in p.evidence["precision"]


def test_non_finite_grad_norms_under_a_rate_that_went_on_are_no_scaler_s_skips(tmp_path):
    """A GradScaler's skip holds the scheduler back too (the Trainer steps it only where the optimizer ran): where the
    rate advanced in full at most of them, the NaN norms were no skipped updates (kuotunyu_tw-med-llm-qlora, a QLoRA
    stated BF16 in its run manifest: 15 of its 18 NaN grad_norms under a rate that went on)."""
    assert _skipping_run(tmp_path, lr_held=False).precision == "unknown"


def test_the_corpus_bf16_run_with_nan_grad_norms_is_not_called_fp16():
    assert forensics.analyze(CORPUS / "kuotunyu_tw-med-llm-qlora").run_profile.precision != "fp16"


def _train_loss_run(tmp_path, losses, args=None):
    """trainer_state.json with the given train losses every 10 steps and nothing else that tells a precision."""
    log = [{"step": 10 * (i + 1), "epoch": 0.1 * (i + 1), "loss": v, "learning_rate": 1e-5}
           for i, v in enumerate(losses)]
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 10 * len(log), "log_history": log}))
    if args is not None:
        (folder / "args.json").write_text(json.dumps(args))
    return forensics.analyze(folder).run_profile


# Manfredss_Qwen-3B-SFT---DPO's ten printed losses: `loss.item()` of a model loaded in bfloat16, trained by plain SGD
_BF16_TRAIN_LOSSES = [4.75, 1.0546875, 0.12451171875, 0.10791015625, 0.0927734375, 0.0908203125, 0.08349609375,
                      0.0830078125, 0.08251953125, 0.0751953125]


def test_bfloat16_train_losses_give_bf16(tmp_path):
    """The loss of a model run in bfloat16 is a bfloat16 tensor (under autocast the cross-entropy is float32)."""
    p = _train_loss_run(tmp_path, _BF16_TRAIN_LOSSES)
    assert p.precision == "bf16", p.evidence
    assert "bfloat16" in p.evidence["precision"] and "loss" in p.evidence["precision"]


@pytest.mark.parametrize("losses", [
    [2.1234567, 1.7654321, 1.5432109, 1.4012345, 1.3098765, 1.2345678, 1.1987654, 1.1456789, 1.1012345, 1.0876543],
    [2.5, 1.75, 1.5, 1.25, 1.125, 1.0, 0.875, 0.75, 0.625, 0.5],  # a rounded log's short values
    _BF16_TRAIN_LOSSES[:5],  # too few to rule out chance
    _BF16_TRAIN_LOSSES[:9] + [0.0751953],  # one float32 value among them
])
def test_other_train_losses_say_no_precision(tmp_path, losses):
    assert _train_loss_run(tmp_path, losses).precision == "unknown"


def test_a_stated_precision_wins_over_bfloat16_train_losses(tmp_path):
    assert _train_loss_run(tmp_path, _BF16_TRAIN_LOSSES, args={"fp16": True}).precision == "fp16"


def test_the_corpus_loop_over_a_bfloat16_model_is_bf16():
    p = forensics.analyze(CORPUS / "Manfredss_Qwen-3B-SFT---DPO").run_profile
    assert p.precision == "bf16" and "0.12451171875" in p.evidence["precision"]


def test_a_loss_stuck_at_one_bfloat16_value_says_no_precision(tmp_path):
    """Vision-CAIR_MiniGPT-4_issue67: 10.375 at every line is one number, which any precision prints."""
    assert _train_loss_run(tmp_path, [10.375] * 10).precision == "unknown"
