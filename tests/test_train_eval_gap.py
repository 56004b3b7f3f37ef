"""A training loss that is not the eval loss's quantity (train_eval_mismatch) and the cause the config names.

The must-fire shape is AbhijeetAnand23's phi-2 QLoRA classifier (tests/realworld): transformers 4.46.0 with
gradient_accumulation_steps 8 logged train loss 17.1 -> 5.4 while the eval loss went 1.76 -> 0.72. The
must-stay-silent shapes are what healthy runs log: a training loss a little above or below the eval loss,
an epoch's running average well above the first eval, and two losses near zero.
"""
from __future__ import annotations

import pandas as pd
import pytest

from forensics.analyzers import first_incident_of, run_all, status_of
from forensics.analyzers.train_eval_gap import detect_train_eval_mismatch, train_eval_pairs
from forensics.causes import infer_causes
from forensics.config import RunConfig, Thresholds
from forensics.timeline import LogRecords, build_timeline

PHI2_TRAIN = {4: 17.1136, 8: 11.7810, 12: 8.2236, 16: 6.7152, 20: 5.3803}
PHI2_EVAL = {4: 1.758603, 8: 1.171289, 12: 0.997068, 16: 0.836440, 20: 0.717982}
PHI2_GRAD = {4: 15568504.0, 8: 8291862.0, 12: 4414371.5, 16: 1146013.375, 20: 1517196.0}


def _metrics(train: dict, evals: dict) -> dict:
    return {"loss": pd.Series(train, dtype="float64"), "eval_loss": pd.Series(evals, dtype="float64")}


def _timeline(train: dict, evals: dict, grad: dict | None = None):
    rows = sorted([(s, "loss", v) for s, v in train.items()] + [(s, "eval_loss", v) for s, v in evals.items()]
                  + [(s, "grad_norm", v) for s, v in (grad or {}).items()])
    frame = pd.DataFrame({"step": pd.Series([r[0] for r in rows], dtype="int64"), "metric": [r[1] for r in rows],
                          "value": pd.Series([r[2] for r in rows], dtype="float64"), "wall_time": float("nan")})
    return build_timeline([LogRecords(source="trainer_state.json", format="trainer_state", frame=frame)])


def test_a_training_loss_eight_times_the_eval_loss_at_every_eval_is_flagged():
    found = detect_train_eval_mismatch(_metrics(PHI2_TRAIN, PHI2_EVAL), Thresholds())
    assert [(f.kind, f.severity, f.step, f.end_step) for f in found] == [("train_eval_mismatch", "info", 4, 20)]
    assert found[0].evidence["median_ratio"] == pytest.approx(8.248, abs=0.01)
    assert "17.11 against 1.759 at step 4" in found[0].message


@pytest.mark.parametrize("train, evals", [
    ({s: 2.0 - s / 100 for s in range(10, 101, 10)}, {s: 1.9 - s / 100 for s in range(20, 101, 20)}),  # close
    ({10: 3.2, 20: 1.6, 30: 1.2}, {10: 1.0, 20: 1.1, 30: 1.15}),  # an epoch average above the first eval only
    ({10: 0.04, 20: 0.03, 30: 0.02}, {10: 0.01, 20: 0.008, 30: 0.006}),  # near zero: ratios, no gap
    ({4: 17.1, 8: 11.8}, {4: 1.76, 8: 1.17}),  # two evaluations cannot say "every"
])
def test_healthy_train_and_eval_losses_raise_nothing(train, evals):
    assert detect_train_eval_mismatch(_metrics(train, evals), Thresholds()) == []


def test_each_eval_is_paired_with_the_last_training_loss_since_the_eval_before():
    pairs = train_eval_pairs(_metrics({1: 5.0, 2: 4.0, 5: 3.0, 9: 2.0}, {2: 1.0, 6: 0.9, 7: 0.8, 10: 0.7}))
    assert pairs.to_dict("index") == {2: {"train": 4.0, "eval": 1.0}, 6: {"train": 3.0, "eval": 0.9},
                                      10: {"train": 2.0, "eval": 0.7}}  # step 7 has no training loss of its own


def test_the_mismatch_is_a_note_about_the_log_that_leaves_a_run_that_learned_healthy():
    """aaghaazkhan/law-llm, judged healthy: train loss 285 -> 5.0 against eval loss 15.4 -> 0.30."""
    findings = run_all(_timeline(PHI2_TRAIN, PHI2_EVAL), Thresholds())
    assert [f.kind for f in findings] == ["train_eval_mismatch"]
    assert status_of(findings) == "healthy" and first_incident_of(findings) is None


def _causes(accumulation, version=None):
    config = RunConfig()
    config.add("gradient_accumulation_steps", accumulation, "TensorBoard 'args' text")
    if version:
        config.add("model.transformers_version", version, "TensorBoard 'model_config' text")
    # the run's grad_norm in the millions (its grad_norm_huge warning): a healthy run, with only the mismatch's info,
    # is given no cause (tests/test_causes_no_incident.py)
    timeline = _timeline(PHI2_TRAIN, PHI2_EVAL, PHI2_GRAD)
    return {c.cause: c for c in infer_causes(config, timeline, run_all(timeline, Thresholds()), [], Thresholds())}


def test_a_ratio_near_the_accumulation_steps_names_a_summed_loss_and_the_transformers_release():
    cause = _causes(8, "4.46.0")["accumulation_scaled_loss"]
    assert cause.confidence == "possible"  # nothing broke: a cause of a warning is never more
    assert "summed over 8 accumulation steps" in cause.title and "Divide the logged training loss by 8" in cause.suggestion
    assert any("huggingface/transformers#35204" in line for line in cause.evidence)
    assert not any("#35204" in line for line in _causes(8, "4.49.0")["accumulation_scaled_loss"].evidence)


@pytest.mark.parametrize("accumulation", [1, 2, 32])
def test_no_summed_loss_cause_where_the_accumulation_does_not_match_the_ratio(accumulation):
    assert "accumulation_scaled_loss" not in _causes(accumulation)


# --- a gradient norm in the millions at every step (AbhijeetAnand23's phi-2 classifier) -----------------



def test_a_grad_norm_in_the_millions_at_every_step_is_a_warning():
    from forensics.analyzers.grad_norm_level import detect_huge_grad_norm

    found = detect_huge_grad_norm({"grad_norm": pd.Series(PHI2_GRAD)}, Thresholds())
    assert [(f.kind, f.severity, f.step, f.end_step) for f in found] == [("grad_norm_huge", "warning", 4, 20)]
    assert found[0].evidence["median"] == 4414371.5


# grokfast issue 9: 3.8e12 growing 1.5x a line, the loss flat at 11.1-11.4 after a 5% drop
GROKFAST_GRAD = [3.79e12 * 1.5 ** i for i in range(10)]
GROKFAST_LOSS = [11.675, 11.429, 11.319, 11.249, 11.111, 11.235, 11.378, 11.233, 11.391, 11.278]


def test_a_huge_grad_norm_that_keeps_growing_while_the_loss_stopped_falling_is_an_error():
    from forensics.analyzers.grad_norm_level import detect_huge_grad_norm

    steps = range(1, 11)
    (f,) = detect_huge_grad_norm({"grad_norm": pd.Series(GROKFAST_GRAD, index=steps),
                                  "loss": pd.Series(GROKFAST_LOSS, index=steps)}, Thresholds())
    assert (f.severity, f.step, f.evidence["blowing_up"]) == ("error", 1, True) and "9 of 9" in f.message
    falling = [11.7 - 0.3 * i for i in range(10)]  # the same norms on a loss that still falls: the scale warning
    (f,) = detect_huge_grad_norm({"grad_norm": pd.Series(GROKFAST_GRAD, index=steps),
                                  "loss": pd.Series(falling, index=steps)}, Thresholds())
    assert f.severity == "warning"
    level = [3.79e12 * (1.5 if i % 2 else 1.0) for i in range(10)]  # huge, but not growing: the scale warning
    (f,) = detect_huge_grad_norm({"grad_norm": pd.Series(level, index=steps),
                                  "loss": pd.Series(GROKFAST_LOSS, index=steps)}, Thresholds())
    assert f.severity == "warning"


@pytest.mark.parametrize("grad", [
    {s: 2.0 + (s % 3) for s in range(1, 101)},  # an ordinary run
    {1: 2.2e7, 2: 5.0, 3: 4.0, 4: 3.0, 5: 2.0},  # one blow-up among ordinary norms: a spike, judged elsewhere
    {100: 197.5, 200: 422.0, 300: 3.3, 400: 2.2},  # aaghaazkhan: hundreds early, then small
    {1: 5e4, 2: 6e4},  # two points
])
def test_ordinary_or_spiking_grad_norms_are_not_huge(grad):
    from forensics.analyzers.grad_norm_level import detect_huge_grad_norm

    assert detect_huge_grad_norm({"grad_norm": pd.Series(grad, dtype="float64")}, Thresholds()) == []


def _resumed(train_after: float):
    """Pratic2001's resumed pre-training: 1.4684 at the resume step 47700, then every 10 steps, val_loss every 500."""
    train = {47700: 1.4684, **{s: train_after + 0.2 * ((s // 10) % 3 - 1) for s in range(47710, 57360, 10)}}
    evals = {s: 4.15 - (s - 48000) / 60000 for s in range(48000, 57001, 500)}  # 4.15 -> 4.0, slowly
    return train, evals


def test_a_training_loss_that_jumped_for_good_to_a_mismatch_with_a_steady_eval_loss_is_the_mismatch_from_the_jump():
    """The eval loss at 4.0 before (none logged) and after says the model did not break: the logged training loss
    changed what it measures at 47710, a warning there, not an unrecovered loss spike blamed on the learning rate."""
    findings = run_all(_timeline(*_resumed(13.8)), Thresholds())
    first = first_incident_of(findings)
    assert (first.kind, first.severity, first.step) == ("train_eval_mismatch", "warning", 47710)
    assert not [f for f in findings if f.kind == "loss_spike"]


def test_a_jump_whose_eval_loss_followed_it_stays_a_loss_spike():
    train, evals = _resumed(13.8)
    evals = {s: 13.0 for s in evals}  # the eval loss is as high: the model did break
    assert first_incident_of(run_all(_timeline(train, evals), Thresholds())).kind != "train_eval_mismatch"
