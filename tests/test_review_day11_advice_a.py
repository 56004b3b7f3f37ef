"""Review of the causes' advice, day 11 (group A): the fp16 cause read from the run profile, "likely" only on a
precursor in the run's own metrics, ranges that say what they are for, the hider ranked after what it hid, and resume
advice only where there is a checkpoint to resume from. Each test builds the smallest run that shows it, the way the
analysis builds one (the analyzers' findings, the run profile, then the causes), and a run of the same shape where the
rule must stay silent."""
from __future__ import annotations

import math

from forensics.analyzers import run_all
from forensics.causes import infer_causes
from forensics.config import RunConfig, Thresholds
from forensics.profile import RunProfile, run_profile
from tests.test_causes import by_id, config, error, timeline

NAN = math.nan
STEPS = range(1, 41)


def judged(tl, cfg=None, checkpoints=(), profile=None):
    """The causes as `analyze` infers them: the analyzers' findings, the run profile read from them, the rules."""
    cfg = cfg or RunConfig()
    findings = run_all(tl, Thresholds())
    profile = profile or run_profile(None, cfg, tl, findings)
    return infer_causes(cfg, tl, findings, list(checkpoints), Thresholds(), profile), profile


# ---- 1. an fp16 run told by its loss scaler gets the fp16 cause, not the learning rate alone --------------------------

def _scaler_falls_to_the_floor():
    """BERT pre-training at lr 6e-3 (NVIDIA's LAMB recipe): the loss falls, then the fp16 loss scale halves on every
    overflow from step 30 down to 1e-12 and the loss goes NaN; no config file says fp16."""
    scale = {s: 65536.0 if s < 30 else 65536.0 / 2 ** (8 * (s - 29)) for s in STEPS}
    return timeline(learning_rate={s: 6e-3 for s in STEPS}, loss_scale=scale,
                    loss={s: 9.0 - s / 10 if s < 30 else NAN for s in STEPS})


def test_fp16_told_by_the_loss_scaler_alone_is_named_as_the_overflow():
    found, profile = judged(_scaler_falls_to_the_floor())
    assert profile.precision == "fp16"
    assert found[0].cause == "fp16_overflow" and found[0].confidence == "likely", [c.cause for c in found]
    assert "loss scale" in found[0].evidence[0]
    assert by_id(found)["lr_too_high"].confidence == "possible"


def test_an_fp16_run_that_learned_with_its_scale_steady_gives_no_fp16_cause():
    """The loss scale logged at 32768 throughout while the loss falls: fp16, and nothing overflowed."""
    scale = {s: 32768.0 for s in STEPS}
    tl = timeline(learning_rate={s: 2e-5 for s in STEPS}, loss_scale=scale, loss={s: 3.0 - s / 20 for s in STEPS},
                  grad_norm={s: 1.0 for s in STEPS})
    found, profile = judged(tl)
    assert profile.precision == "fp16" and "fp16_overflow" not in by_id(found)


# ---- "likely" only where the run's own metrics show a precursor --------------------------------------------------------

def _nan_at(step, grad):
    return timeline(learning_rate={s: 3e-3 for s in STEPS}, loss={s: 2.0 if s < step else NAN for s in STEPS},
                    grad_norm={s: grad(s) if s < step else NAN for s in STEPS})


def test_a_rate_far_out_of_range_without_a_precursor_is_only_possible():
    """A full fine-tune at 3e-3 (150x the 7B row's top) whose grad_norm sat at 1.0 until it went NaN: a sudden break.
    The rate is out of every recipe, but nothing in the log points at it: possible, not likely."""
    lr = by_id(infer_causes(config(method="full"), _nan_at(30, lambda s: 1.0), [error(step=30)], [], Thresholds()))
    assert lr["lr_too_high"].confidence == "possible"


def test_the_same_rate_with_grad_norm_climbing_before_the_break_is_likely():
    lr = by_id(infer_causes(config(method="full"), _nan_at(30, lambda s: 1.0 if s < 26 else 4.0 ** (s - 25)),
                            [error(step=30)], [], Thresholds()))
    assert lr["lr_too_high"].confidence == "likely"
    assert any("grad_norm climbed" in e for e in lr["lr_too_high"].evidence)


# ---- a range says what it is for ----------------------------------------------------------------------------------------

def test_a_range_judged_for_an_unknown_objective_and_size_says_so():
    found = by_id(infer_causes(config(method="full"), _nan_at(30, lambda s: 1.0), [error(step=30)], [], Thresholds(),
                               profile=RunProfile(method="full")))
    lr = found["lr_too_high"]
    assert "supervised fine-tuning recipes for a 7B-class model" in lr.suggestion, lr.suggestion
    assert any("objective is not known" in e and "pre-training" in e for e in lr.evidence), lr.evidence


def test_a_range_for_a_known_objective_and_size_says_nothing_more():
    found = by_id(infer_causes(config(method="full"), _nan_at(30, lambda s: 1.0), [error(step=30)], [], Thresholds(),
                               profile=RunProfile(method="full", objective="sft", model_params=7_000_000_000)))
    lr = found["lr_too_high"]
    assert "not known" not in lr.suggestion and not any("not known" in e for e in lr.evidence)
