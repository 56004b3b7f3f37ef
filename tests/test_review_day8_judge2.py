"""Session 8 judging rules (second batch), each from a real run the corpus holds (tests/realworld/PROVENANCE.md).

* A preference trainer's diagnostic mean (logits/*, logps/*) NaN in a few logging windows, finite between them, while
  the training loss is finite and falling, is a warning even when the last window is one of them
  (FugueZ/Qwen2.5-0.5B-SFT-DPO: logits/chosen NaN at 3 of 62 windows, the last included, eval loss falling throughout).
* A learning rate exactly 0 for the first several logged points, then at once at its level, is an LR anomaly: no
  update was made there (QwenLM/Qwen issue 672: LR 0 for six logs over five epochs, then a constant 3e-4).
* A loss of exactly 0.0 while DeepSpeed's own `skipped=` count says the fp16 scaler skipped nearly every update is a
  NaN loss hidden by HF's filter, and DeepSpeed's progress line does not split the console into attempts
  (huggingface/transformers issue 14531: T5-11B, loss 6.26 then 0.0 at every log, `step=2000, skipped=1995`).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from forensics.analyzers.nonfinite import detect_nonfinite_metrics
from forensics.config import Thresholds

NAN = math.nan


def _dpo(logits: list[float], loss: list[float] | None = None) -> dict:
    """A DPO history logged every 100 steps: the loss falling from ln 2, logits/chosen as given."""
    n = len(logits)
    steps = list(range(100, 100 * n + 1, 100))
    if loss is None:
        loss = list(np.linspace(0.692, 0.633, n))
    return {"loss": pd.Series(loss, index=steps, dtype="float64"),
            "logps/chosen": pd.Series(np.linspace(-300, -290, n), index=steps, dtype="float64"),
            "logits/chosen": pd.Series(logits, index=steps, dtype="float64")}


def _logits(n: int, nan_at: tuple[int, ...]) -> list[float]:
    return [NAN if i in nan_at else -2.1 + 0.01 * i for i in range(n)]


def test_a_logits_mean_nan_now_and_then_with_a_finite_loss_is_a_warning_even_when_the_last_point_is_nan():
    (found,) = detect_nonfinite_metrics(_dpo(_logits(40, (1, 15, 39))), Thresholds())
    assert (found.kind, found.severity, found.step) == ("nonfinite_metric", "warning", 200)
    assert "3 points of 40" in found.message


def test_a_logits_mean_nan_to_the_end_from_its_first_nan_stays_an_error():
    (found,) = detect_nonfinite_metrics(_dpo(_logits(40, tuple(range(30, 40)))), Thresholds())
    assert (found.severity, found.step) == ("error", 3100)


def test_a_logits_mean_nan_in_more_than_a_quarter_of_the_points_stays_an_error():
    (found,) = detect_nonfinite_metrics(_dpo(_logits(40, tuple(range(3, 40, 3)))), Thresholds())
    assert found.severity == "error"


def test_a_sporadic_logits_nan_beside_a_loss_at_exactly_zero_stays_an_error():
    loss = list(np.linspace(0.692, 0.633, 40))
    loss[20] = 0.0  # HF's NaN filter: the loss itself went NaN there
    (found,) = detect_nonfinite_metrics(_dpo(_logits(40, (1, 15, 39)), loss), Thresholds())
    assert found.severity == "error"


def test_a_dpo_run_with_finite_metrics_has_no_nonfinite_finding():
    assert detect_nonfinite_metrics(_dpo(_logits(40, ())), Thresholds()) == []


def _lr(values: list[float]) -> dict:
    return {"learning_rate": pd.Series(values, index=list(range(1, len(values) + 1)), dtype="float64")}


def test_a_learning_rate_at_zero_for_the_first_points_then_at_its_level_at_once_is_an_lr_anomaly():
    from forensics.analyzers.lr_anomaly import detect_lr_anomalies
    (found,) = detect_lr_anomalies(_lr([0.0] * 6 + [3e-4] * 4), Thresholds())
    assert (found.kind, found.severity, found.step, found.end_step) == ("lr_anomaly", "warning", 1, 6)


@pytest.mark.parametrize("values", [
    [0.0] + [1e-5 * k for k in range(1, 20)] + [2e-4] * 20,  # a warm-up ramp from 0 at its first step
    [0.0] * 6 + [1e-5 * k for k in range(1, 21)] + [2e-4] * 20,  # a ramp that starts late (fp16 scaler calibrating)
    [0.0] * 7 + [1e-6] * 2,  # a ramp printed at fixed precision: 0.000000, then 0.000001
    [0.0] * 2 + [3e-4] * 38,  # two points at 0: too short a stretch
])
def test_a_learning_rate_that_ramps_up_from_zero_has_no_lr_anomaly(values):
    from forensics.analyzers.lr_anomaly import detect_lr_anomalies
    assert detect_lr_anomalies(_lr(values), Thresholds()) == []


def _ds_console(tmp_path, losses: list[float], skipped: int, ds_step: int = 3000) -> object:
    """An HF Trainer console under DeepSpeed fp16: a loss dict a logging window, DeepSpeed's `step=N, skipped=K`
    progress line after the third, a tqdm bar at the step before it."""
    lines = []
    for k, loss in enumerate(losses, 1):
        lines.append(str({"loss": loss, "learning_rate": 0.0005, "epoch": round(0.03 * k, 2)}))
        if k == 3:
            lines.append(f" 10%|#####     | {ds_step - 1}/30000 [2:00:00<18:00:00,  3.60s/it]"
                         f"[2022-01-01 00:00:00,000] [INFO] [logging.py:69:log_dist] [Rank 0] step={ds_step}, "
                         f"skipped={skipped}, lr=[0.0005, 0.0005], mom=[0.0, 0.0]")
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    import forensics
    return forensics.analyze(tmp_path)


def test_a_loss_at_exactly_zero_while_deepspeed_skipped_nearly_every_update_is_a_masked_nan_loss(tmp_path):
    """huggingface/transformers issue 14531 (T5-11B, DeepSpeed fp16): loss 6.26, then 0.0 at every log, and
    `step=2000, skipped=1995`."""
    a = _ds_console(tmp_path, [5.9, 0.0, 0.0, 0.0, 0.0, 0.0], skipped=2990)
    assert a.status == "broken"
    assert a.first_incident.kind == "masked_nan_loss"
    assert "skipped 2990 of 3000" in a.first_incident.message


def test_a_deepspeed_progress_line_past_the_next_dict_s_estimated_step_is_no_resume(tmp_path):
    a = _ds_console(tmp_path, [5.9, 0.0, 0.0, 0.0, 0.0, 0.0], skipped=2990)
    assert not any(f.abandoned for f in a.findings)
    assert not any("resume" in f.message for f in a.findings)


def test_a_loss_at_zero_with_few_updates_skipped_is_not_a_masked_nan_loss(tmp_path):
    a = _ds_console(tmp_path, [5.9, 0.0, 0.0, 0.0, 0.0, 0.0], skipped=12)
    assert not any(f.kind == "masked_nan_loss" for f in a.findings)


def test_a_falling_loss_with_a_few_skipped_updates_has_no_masked_nan_loss(tmp_path):
    a = _ds_console(tmp_path, [5.9, 4.1, 3.2, 2.8, 2.5, 2.3], skipped=12)
    assert a.status != "broken"
    assert not any(f.kind in ("masked_nan_loss", "zero_loss_unexplained") for f in a.findings)
