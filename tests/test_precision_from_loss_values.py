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
