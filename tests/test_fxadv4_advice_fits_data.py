"""Advice and evidence that say only what the run's data show: grad_norm quoted as it was logged beside a hidden NaN
loss; no recipe range for a stage that trains only a projector; no clipping advice for a gradient that was NaN at the
break out of a steady one; a banner's trainable count named where the method stays unknown."""
from __future__ import annotations

import math

import forensics
from forensics.findings import Finding
from tests.test_causes import by_id, causes, config, timeline

NAN = math.nan
STEPS = range(1, 18)


def _all_zero_fp16(**cfg):
    """DeepSpeed fp16, every step overflowed: loss, grad_norm and rate all logged as 0.0, the scale at its floor."""
    zeros = {s: 0.0 for s in STEPS}
    tl = timeline(loss=zeros, grad_norm=zeros, learning_rate=zeros, loss_scale_at_minimum={17: 1.0})
    findings = [Finding("masked_nan_loss", "error", 1, "every step overflowed", metric="loss",
                        evidence={"grad_norm": 0.0}),
                Finding("loss_scale_overflow", "error", 18, "scale at the floor", metric="loss_scale")]
    return by_id(causes(config(fp16=True, **cfg), tl, findings))


def test_a_masked_loss_beside_grad_norm_zero_is_not_said_to_sit_beside_a_nan():
    fp16 = _all_zero_fp16()["fp16_overflow"]
    assert not any("non-finite grad_norm" in e for e in fp16.evidence), fp16.evidence
    assert any("grad_norm logged as 0" in e for e in fp16.evidence), fp16.evidence


def test_a_masked_loss_beside_a_nan_grad_norm_still_says_so():
    """Not fire: grad_norm NaN beside the 0.0 losses."""
    tl = timeline(loss={s: 2.0 if s < 5 else 0.0 for s in STEPS},
                  grad_norm={s: 1.0 if s < 5 else NAN for s in STEPS}, learning_rate={s: 1e-4 for s in STEPS})
    masked = Finding("masked_nan_loss", "error", 5, "masked", metric="loss", evidence={"grad_norm": NAN})
    fp16 = by_id(causes(config(fp16=True), tl, [masked]))["fp16_overflow"]
    assert any("next to a non-finite grad_norm" in e for e in fp16.evidence), fp16.evidence


def test_a_projector_only_stage_gets_no_recipe_range():
    """freeze_backbone / tune_mm_mlp_adapter: only the projector trains (LLaVA's stage 1), at 1e-3 and up."""
    advice = _all_zero_fp16(freeze_backbone=True, tune_mm_mlp_adapter=True, learning_rate=2e-3)["fp16_overflow"]
    assert "1e-05 to 2e-05" not in advice.suggestion and "0.0001 to 0.0002" not in advice.suggestion
    assert "language model is frozen" in advice.suggestion


def test_a_run_that_trains_the_language_model_still_gets_its_range():
    """Not fire: the same run with nothing frozen."""
    advice = _all_zero_fp16(learning_rate=2e-3)["fp16_overflow"]
    assert "1e-05 to 2e-05" in advice.suggestion


def _nan_at(step: int, climbing: bool):
    steps = range(10, 210, 10)
    grad = {s: (0.5 * 3 ** max(0, (s - step) // 10 + 4) if climbing and s >= step - 40 else 0.5) if s < step else NAN
            for s in steps}
    tl = timeline(grad_norm=grad, learning_rate={s: 1e-3 for s in steps},
                  loss={s: 1.5 if s < step else 0.0 for s in steps})
    return by_id(causes(config(method="full"), tl, [Finding("nonfinite_metric", "error", step, "NaN",
                                                              metric="grad_norm")]))


def test_a_gradient_nan_out_of_a_steady_one_is_not_told_to_be_clipped():
    lr = _nan_at(100, climbing=False)["lr_too_high"]
    assert "clip with" not in lr.suggestion, lr.suggestion
    assert "clipping is no fix" in lr.suggestion


def test_a_gradient_that_climbed_before_its_nan_is_still_told_to_be_clipped():
    """Not fire: grad_norm climbing many-fold over the points before the NaN: clipping would have held it."""
    lr = _nan_at(100, climbing=True)["lr_too_high"]
    assert "clip with" in lr.suggestion, lr.suggestion


BANNER = "[INFO|trainer.py:1821] 2024-03-12 11:24:23,878 >>   Number of trainable parameters = 4,194,304\n"


def _console(tmp_path, banner: str):
    lines = [banner] if banner else []
    lines += ["{'loss': %s, 'grad_norm': %s, 'learning_rate': 0.05, 'epoch': %.2f}\n"
              % ("1.2" if i == 1 else "0.0", "1.0" if i == 1 else "nan", i / 100) for i in range(1, 6)]
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "train.log").write_text("".join(lines))
    return by_id(forensics.analyze(folder, check_checkpoints=False).causes)


def test_a_trainable_count_without_the_model_size_is_named_not_denied(tmp_path):
    lr = _console(tmp_path, BANNER)["lr_too_high"]
    method = next(e for e in lr.evidence if e.startswith("fine-tuning method unknown"))
    assert "4,194,304 trainable" in method and "banner" in method, method
    assert "no adapter files, framework config, banner or name says it" not in method


def test_a_log_without_a_count_still_says_nothing_names_the_method(tmp_path):
    """Not fire: the same log without the banner line."""
    lr = _console(tmp_path, "")["lr_too_high"]
    assert any("no adapter files, framework config, banner or name says it" in e for e in lr.evidence)
