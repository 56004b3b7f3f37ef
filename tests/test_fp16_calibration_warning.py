"""Tests of the fp16 scaler's calibration warning before the first logged step.

From the adversarial review of ca9d85f..HEAD (rules 1-8 of the day's second batch). A failing test was a
misfire; passing tests record shapes that held."""
from __future__ import annotations

import json

from support.notebook_and_findings import _analyze, _kinds


def _hf_console(first, last, grad=True):
    return "".join(f"{{'loss': {2.0 - s / 1000:.4f}, " + ("'grad_norm': 1.1, " if grad else "")
                   + f"'learning_rate': 1e-05, 'epoch': {s / 1000:.3f}}}\n" for s in range(first, last + 1, 10))


# ---- (1) tensorboardX's NaN-or-Inf warning ---------------------------------------------------------------------------


def test_fp16_scaler_calibration_warning_before_the_first_logged_step_is_no_warning(tmp_path):
    """A healthy HF Trainer fp16 run reporting to TensorBoard through tensorboardX: the GradScaler's first updates
    overflow (scale 65536 halving), their grad_norm is inf/nan and tensorboardX prints its warning twice before the
    first logged loss; the console (loss only, as a notebook's table or `disable_tqdm` dicts without grad_norm) is
    finite after. The same run whose console shows `'grad_norm': nan` at those steps is judged the scaler
    calibrating (skipped_steps.py); here the tool says status warning / nonfinite_unlogged at the last step.
    Fix: forensics/ingest/stdout.py:console_facts (note where each warning falls: the step lines before it) and
    forensics/analyzers/crash.py:detect_unlogged_nonfinite (warnings all within scaler_warmup_steps of the start of
    an fp16 run are the scaler calibrating)."""
    text = ("Using auto half precision backend\n"
            "WARNING:root:NaN or Inf found in input tensor.\nWARNING:root:NaN or Inf found in input tensor.\n"
            + _hf_console(10, 600, grad=False))
    (tmp_path / "train.log").write_text(text)
    (tmp_path / "training_args.json").write_text(json.dumps({"fp16": True, "bf16": False, "report_to": ["tensorboard"]}))
    a = _analyze(tmp_path)
    assert not [f for f in a.findings if f.kind == "nonfinite_unlogged"], _kinds(a)


def test_the_warning_quoted_inside_a_longer_line_adds_nothing(tmp_path):
    text = _hf_console(10, 300) + "UserWarning: NaN or Inf found in input tensor. (see tensorboardX#123)\n" \
        + "2024-01-01 10:00:00 - INFO - print('NaN or Inf found in input tensor.')\n"
    (tmp_path / "train.log").write_text(text)
    assert not [f for f in _analyze(tmp_path).findings if f.kind == "nonfinite_unlogged"]
