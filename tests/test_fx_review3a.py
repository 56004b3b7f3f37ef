"""Review of session 22's analyzer changes (branch fx-review3a): each rule kept to the runs it was written for. Each
behaviour test FAILS on main at 57e0ca20 and passes after; its control ('stays silent', 'keeps') holds before and after.

Run with `python -m pytest -q tests/test_fx_review3a.py`.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

import forensics
from forensics.analyzers import run_all
from forensics.config import Thresholds
from forensics.timeline import LogRecords, build_timeline


def _timeline(points: dict[str, dict[int, float]]):
    """A trainer_state timeline of `points` {metric: {step: value}}."""
    rows = sorted((step, metric, value) for metric, series in points.items() for step, value in series.items())
    frame = pd.DataFrame({"step": pd.Series([r[0] for r in rows], dtype="int64"), "metric": [r[1] for r in rows],
                          "value": pd.Series([r[2] for r in rows], dtype="float64"), "wall_time": float("nan")})
    return build_timeline([LogRecords(source="trainer_state.json", format="trainer_state", frame=frame)])


def _kinds(points) -> list[tuple[str, str, int]]:
    return [(f.kind, f.severity, f.step) for f in run_all(_timeline(points), Thresholds())]


# ---- 1. one or two evaluations far above the first epoch's training loss: every one within that epoch ----------------

# alex-jk_SE-reddit-analysis's shape: embedding_loss 0.427 -> 0.0022 over one pass, its one eval 0.344
ONE_PASS_TRAIN = {1: 0.4267, 50: 0.2274, 100: 0.0769, 150: 0.0074, 200: 0.0033, 250: 0.0024, 300: 0.0022}


def test_two_evals_far_above_the_training_loss_the_second_past_the_first_epoch_are_no_first_pass_mismatch():
    """The first eval inside the first pass, the second after the second: the training batches beside the second were
    seen before, so the rule's premise (each batch new when scored) holds for one of the two only."""
    train = {**ONE_PASS_TRAIN, 350: 0.0020, 400: 0.0019, 450: 0.0018, 500: 0.0017, 550: 0.0016, 600: 0.0015}
    epochs = {s: s / 300 for s in train}
    found = _kinds({"loss": train, "eval_loss": {150: 0.3436, 600: 0.3400}, "epoch": epochs})
    assert not [k for k in found if k[0] == "train_eval_mismatch"], found


def test_two_evals_far_above_the_training_loss_both_in_the_first_epoch_are_a_mismatch():
    epochs = {s: s / 300 for s in ONE_PASS_TRAIN}
    found = _kinds({"loss": ONE_PASS_TRAIN, "eval_loss": {150: 0.3436, 300: 0.3400}, "epoch": epochs})
    assert ("train_eval_mismatch", "warning", 150) in found, found


def test_the_one_eval_mismatch_does_not_say_the_eval_loss_does_not_rise():
    """One evaluation has nothing to rise from: the message says why it is no overfitting in words that fit one."""
    epochs = {s: s / 300 for s in ONE_PASS_TRAIN}
    findings = run_all(_timeline({"loss": ONE_PASS_TRAIN, "eval_loss": {300: 0.3436}, "epoch": epochs}), Thresholds())
    message = next(f.message for f in findings if f.kind == "train_eval_mismatch")
    assert "does not rise" not in message and "the one evaluation comes before any example was seen twice" in message
    two = run_all(_timeline({"loss": ONE_PASS_TRAIN, "eval_loss": {150: 0.3436, 300: 0.3400}, "epoch": epochs}),
                  Thresholds())
    assert "the eval loss does not rise" in next(f.message for f in two if f.kind == "train_eval_mismatch")


# ---- 2. the pre-training floor dates a memorization only from random weights -----------------------------------------


def _pretraining_run(tmp_path, name: str, base: str | None):
    """A LLaMA-Factory `stage: pt` full run, one point an epoch over 100 epochs from 3.0 (a trained model's start, far
    under ln(vocabulary)) to ~0.003, no eval loss; `base` its model_name_or_path (None: none named)."""
    run = tmp_path / name
    run.mkdir()
    epochs = np.arange(1, 101)
    loss = 0.003 + 3.0 * 0.8 ** (epochs - 1)
    history = [{"epoch": float(e), "step": int(e) * 10, "loss": float(v), "learning_rate": 1e-5}
               for e, v in zip(epochs, loss)]
    (run / "trainer_state.json").write_text(json.dumps({"log_history": history, "global_step": 1000}))
    args = ["stage: pt", "finetuning_type: full", "learning_rate: 1.0e-05", "num_train_epochs: 100.0"]
    (run / "training_args.yaml").write_text("\n".join(args + ([f"model_name_or_path: {base}"] if base else [])) + "\n")
    return forensics.analyze(run)


def test_continued_pretraining_of_a_named_base_keeps_the_memorization_date_its_rule_gave(tmp_path):
    continued = _pretraining_run(tmp_path, "continued", "Qwen/Qwen2.5-0.5B")
    assert (continued.run_profile.objective, continued.run_profile.method) == ("pretrain", "full")
    found = next(f for f in continued.findings if f.kind == "memorization")
    assert "pretraining_floor_step" not in found.evidence, found


def test_pretraining_that_names_no_base_is_still_dated_under_the_pretraining_floor(tmp_path):
    scratch = _pretraining_run(tmp_path, "scratch", None)
    found = next(f for f in scratch.findings if f.kind == "memorization")
    assert found.evidence.get("pretraining_floor_step") == found.step, found


# ---- 5. two equal evaluations are no rise ---------------------------------------------------------------------------


def test_a_second_eval_equal_to_the_first_while_the_training_loss_fell_a_third_is_no_overfitting():
    """jonathanbgn_slogan-generator's shape (epoch-mean training cost 4.1394 -> 2.6903) with the validation cost the
    same at both evaluations: +0% is no rise, so no overfitting onset."""
    found = _kinds({"loss": {1: 4.139444, 2: 2.690343}, "eval_loss": {1: 3.255028, 2: 3.255028},
                    "epoch": {1: 1.0, 2: 2.0}})
    assert "overfitting" not in [k[0] for k in found], found


def test_a_second_eval_above_the_first_while_the_training_loss_fell_a_third_is_still_overfitting():
    found = _kinds({"loss": {1: 4.139444, 2: 2.690343}, "eval_loss": {1: 3.255028, 2: 3.277905},
                    "epoch": {1: 1.0, 2: 2.0}})
    assert ("overfitting", "warning", 2) in found, found


# ---- 4. memorized in a few points: a short log only ------------------------------------------------------------------

_WHY = " (from random weights)"


def _falling(n: int) -> pd.Series:
    """`n` points, lower at each one: from 10.98 (ln 50304, a fresh GPT-2) down to 0.6, then 0.395 and 0.097."""
    return pd.Series(np.concatenate([np.linspace(10.98, 0.6, n - 2), [0.395, 0.097]]), index=np.arange(n) * 50)


def test_a_long_log_falling_at_every_point_to_under_the_floor_is_left_to_the_other_rules():
    """Forty prints falling at each, only the last two under 0.5: the rule for a short log (5 and 9 prints) would call
    any long descent memorized by its last two points; a long log shows whether the loss settled, and the other
    rules read that (here: it had not)."""
    from forensics.analyzers.fresh_passes import memorized_in_few_points
    from forensics.analyzers.memorization import PRETRAINING_FLOOR, STAIR_LEVEL, memorized_from_scratch
    loss = _falling(40)
    assert memorized_in_few_points(loss, PRETRAINING_FLOOR, STAIR_LEVEL, _WHY) == []
    assert not [f for f in memorized_from_scratch({"loss": loss}, Thresholds()) if "few_points" in f.evidence]


def test_nine_prints_falling_at_every_point_to_under_the_floor_are_still_memorized():
    """Azreal18_TSAI-ERAv2-S21's length: nine prints every 50 steps, 10.98 ... 0.395, 0.097."""
    from forensics.analyzers.fresh_passes import memorized_in_few_points
    from forensics.analyzers.memorization import PRETRAINING_FLOOR, STAIR_LEVEL
    found = memorized_in_few_points(_falling(9), PRETRAINING_FLOOR, STAIR_LEVEL, _WHY)
    assert [(f.kind, f.evidence["few_points"]) for f in found] == [("memorization", 9)]


# ---- 3. a PPO policy's entropy, summed over a response's tokens, read per token where the length is logged -----------


def _ppo_log(entropy_sum, length=None, n: int = 64) -> dict:
    """A TRL PPO log of `n` updates: objective/entropy `entropy_sum(t)` (t from 0 to 1), objective/kl 1 -> 16 nats,
    objective/rlhf_reward 1.4 -> 8.2, and `tokens/responses_len_mean` `length(t)` where given."""
    t = np.linspace(0.0, 1.0, n)
    steps = np.arange(1, n + 1)
    log = {"objective/entropy": pd.Series(entropy_sum(t), index=steps),
           "objective/kl": pd.Series(1.0 + 15.0 * t, index=steps),
           "objective/rlhf_reward": pd.Series(1.4 + 6.8 * t, index=steps)}
    if length is not None:
        log["tokens/responses_len_mean"] = pd.Series(length(t), index=steps)
    return log


def test_a_summed_entropy_that_fell_with_the_response_length_is_no_collapse():
    """The entropy summed over a response fell 48 -> 4.8 because responses went 120 -> 12 tokens: 0.4 a token
    throughout, the policy no narrower. Read as logged, the same entropy is a collapse (the control)."""
    from forensics.analyzers.policy_collapse import detect_policy_collapse
    log = _ppo_log(lambda t: 0.4 * (120 - 108 * t), length=lambda t: 120 - 108 * t)
    assert detect_policy_collapse(log, Thresholds()) == []
    unmeasured = {k: v for k, v in log.items() if k != "tokens/responses_len_mean"}
    assert [f.kind for f in detect_policy_collapse(unmeasured, Thresholds())] == ["policy_collapse"]


def test_an_entropy_that_fell_per_token_at_a_steady_length_is_a_collapse_read_per_token():
    from forensics.analyzers.policy_collapse import detect_policy_collapse
    log = _ppo_log(lambda t: 48 * (1 - 0.85 * t), length=lambda t: 120 + 0 * t)
    found = detect_policy_collapse(log, Thresholds())
    assert [(f.kind, f.evidence["per_token_by"]) for f in found] == [("policy_collapse", "tokens/responses_len_mean")]
    assert "objective/entropy per token (objective/entropy / tokens/responses_len_mean) fell from about 0.3811" \
        in found[0].message and "got shorter" not in found[0].message
    assert "objective/rlhf_reward rose from about" in found[0].message


def test_an_entropy_fall_without_a_logged_length_says_the_responses_may_have_got_shorter():
    """ukhan1219_pychess_ppo's keys (TRL 0.20 PPO logs no response length): the collapse stands, worded with the
    other reading the sum allows."""
    from forensics.analyzers.policy_collapse import detect_policy_collapse
    found = detect_policy_collapse(_ppo_log(lambda t: 48 * (1 - 0.85 * t)), Thresholds())
    assert [f.kind for f in found] == ["policy_collapse"] and "or the responses got shorter" in found[0].message
    assert "objective/entropy fell from about" in found[0].message


# ---- 6. the 2.5-SE line to the lowest point: only over the lengths its false rate was simulated on --------------------


def test_six_points_of_flat_noise_ending_on_their_lowest_show_no_learning():
    """Six draws of flat noise (seeded, sd 0.03 about 1.0) whose last is the lowest, the line through them falling
    2.5 units: the 2.5-unit rule's false rate was simulated on 10 to 20 points (bench/lowest_end_trend.py: 1.2% at
    10 points beside the 3-unit line's 2.1%; at 6 points the line alone already passes 5% of flat logs)."""
    from forensics.analyzers.fall_measure import fell_clearly
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence
    flat = pd.Series([1.0036, 1.0201, 1.0137, 1.0148, 1.0046, 0.9769], index=[10, 20, 30, 40, 50, 60])
    assert not fell_clearly(flat, Thresholds())[0]
    assert [f.kind for f in detect_no_learning_evidence({"loss": flat}, Thresholds())] == ["no_learning_evidence"]


def test_fourteen_points_falling_two_and_a_half_units_to_their_lowest_still_show_learning():
    """SavinovSergey_shad_homeworks' 14 window means (tests/test_trend_to_its_lowest.py): over the simulated floor."""
    from forensics.analyzers.fall_measure import fell_clearly
    fresh_files = [0.6569, 0.6642, 0.6210, 0.5956, 0.6176, 0.6078, 0.6197, 0.6475, 0.6590, 0.6172, 0.6270, 0.5992,
                   0.5881, 0.5787]
    assert fell_clearly(pd.Series(fresh_files, index=[10 * (k + 1) for k in range(14)]), Thresholds())[0]
