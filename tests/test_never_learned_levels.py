"""Random-guess levels beyond ln 2 and a fresh head's: a classifier at ln k, a model stuck at ln(vocabulary)
when the vocabulary is known, and a logged loss no per-token cross-entropy can start at.

Must fire: yuanhuanghuang/quality (4-way multiple choice, loss and eval loss at ln 4, eval accuracy 0.23-0.31),
adwait1-g/Tiny-AI-Assistant (tiny-gpt2, 10.78 and 10.77 at steps 100 and 200, ln 50257 = 10.825),
halilibrahimavsar/mybabyai (loss 174 at step 10 = 16 x ln(Perplex) on every line, vocabulary 50265).
Must stay silent: classifiers that learn, a pre-training run leaving ln(vocabulary), a loss of an unknown
model's vocabulary (aaghaazkhan/law-llm's 285, judged healthy), a run too young to say.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from forensics.analyzers.impossible_loss import detect_loss_beyond_cross_entropy
from forensics.analyzers.never_learned import detect_never_learned
from forensics.analyzers.stuck_at_guess import detect_stuck_at_vocabulary_guess
from forensics.config import Thresholds

LN4 = math.log(4)
STEPS = range(50, 3150, 50)


def _series(points: dict) -> pd.Series:
    return pd.Series(points, dtype="float64")


def _at_ln4(accuracy: float | None = 0.27, eval_loss: float | None = None) -> dict:
    metrics = {"loss": _series({s: LN4 + (0.003 if s % 100 else -0.002) for s in STEPS})}
    if accuracy is not None:
        metrics["eval_accuracy"] = _series({s: accuracy + (0.02 if s % 100 else -0.02) for s in STEPS})
    if eval_loss is not None:
        metrics["eval_loss"] = _series({s: eval_loss for s in STEPS})
    return metrics


def test_a_multiple_choice_model_at_ln_4_with_chance_accuracy_never_learned():
    found = detect_never_learned(_at_ln4(), Thresholds())
    assert [(f.kind, f.severity, f.step) for f in found] == [("never_learned", "error", 50)]
    assert found[0].evidence["choices"] == 4 and "chance for 4 answers" in found[0].message


def test_an_eval_loss_near_ln_k_without_an_accuracy_says_nothing():
    """A language model's loss near 2.48 sits near ln 12 too (the review's counter-example): without an accuracy
    nothing says the model answers k choices."""
    assert detect_never_learned(_at_ln4(accuracy=None, eval_loss=1.3862943649), Thresholds()) == []
    lm = {"loss": _series({s: 2.52 - 0.0006 * s for s in range(1, 101)}),
          "eval_loss": _series({s: 2.486 - 0.0001 * s for s in range(10, 101, 10)})}
    assert detect_never_learned(lm, Thresholds()) == []


@pytest.mark.parametrize("metrics", [
    _at_ln4(accuracy=0.62),  # the evaluation learned: a training loss near ln 4 is not the whole story
    _at_ln4(accuracy=None),  # nothing but the training loss: the level alone does not say "at chance"
    {"loss": _series({s: LN4 * (1 - s / 4000) for s in STEPS}), "eval_accuracy": _series({s: 0.26 for s in STEPS})},
])
def test_classifiers_that_moved_or_cannot_be_told_raise_nothing(metrics):
    assert detect_never_learned(metrics, Thresholds()) == []


def test_two_points_at_ln_vocabulary_after_a_hundred_steps_never_learned():
    found = detect_stuck_at_vocabulary_guess({"loss": _series({100: 10.7825, 200: 10.7671})}, 50257)
    assert [(f.kind, f.severity, f.step, f.end_step) for f in found] == [("never_learned", "error", 100, 200)]
    assert "ln 50257 = 10.82" in found[0].message


@pytest.mark.parametrize("loss, vocab", [
    ({100: 10.7825, 200: 10.7671}, None),  # no vocabulary size: two points cannot say it
    ({10: 10.80, 20: 10.78}, 50257),  # ten updates in: too young to say
    ({100: 10.78, 200: 7.9}, 50257),  # it left the uniform guess
    ({100: 2.1, 200: 2.0}, 50257),  # a fine-tune
])
def test_runs_that_left_the_guess_or_cannot_be_told_are_not_stuck(loss, vocab):
    assert detect_stuck_at_vocabulary_guess({"loss": _series(loss)}, vocab) == []


SUMMED = {s: 16.0 * (10.874 - 4 * s / 2000) for s in range(10, 2010, 10)}
PERPLEX = {s: math.exp(10.874 - 4 * s / 2000) for s in range(10, 2010, 10)}


def test_a_first_loss_sixteen_times_ln_vocabulary_is_no_per_token_cross_entropy():
    found = detect_loss_beyond_cross_entropy({"loss": _series(SUMMED), "Perplex": _series(PERPLEX)}, 50265)
    assert [(f.kind, f.severity, f.step) for f in found] == [("impossible_loss", "warning", 10)]
    assert "the logged loss is 16x it at every line" in found[0].message


@pytest.mark.parametrize("loss, vocab", [
    ({100: 284.9, 200: 161.2, 300: 9.9}, None),  # aaghaazkhan: no vocabulary size known
    ({10: 10.9, 20: 9.8, 30: 8.1}, 50265),  # a fresh head at ln(vocabulary)
    ({10: 25.0, 20: 12.0, 30: 8.0}, 50265),  # a rough start, under 3x ln(vocabulary)
])
def test_losses_a_cross_entropy_can_take_or_cannot_be_judged_raise_nothing(loss, vocab):
    assert detect_loss_beyond_cross_entropy({"loss": _series(loss)}, vocab) == []


def test_a_huge_or_negative_loss_is_no_choice_level():
    for level in (1e6, -3.0, float("1e300")):
        assert detect_never_learned({"loss": _series({s: level for s in STEPS})}, Thresholds()) == []


def _first_epoch(loss, steps=range(20, 700, 20), grad_norm=8.6, lr=5e-5, epoch_from=0.03):
    n = len(steps)
    return {"loss": _series(dict(zip(steps, loss))), "grad_norm": _series({s: grad_norm for s in steps}),
            "learning_rate": _series({s: lr for s in steps}),
            "epoch": _series({s: epoch_from + (1 - epoch_from) * i / (n - 1) for i, s in enumerate(steps)})}


def test_a_fine_tune_whose_loss_never_moved_over_its_first_epoch_never_learned():
    """jmglendenning/phi3-finetune-synthetic: 34 windows over a whole epoch at 4.67-4.71, grad_norm ~8.6, LR 5e-5:
    every batch passed through once and nothing the model predicts changed."""
    flat = [4.69 + 0.012 * math.sin(i * 1.7) for i in range(34)]
    (found,) = detect_never_learned(_first_epoch(flat), Thresholds())
    assert (found.kind, found.severity, found.step) == ("never_learned", "error", 20)
    assert "first epoch" in found.message and "grad_norm" in found.message


@pytest.mark.parametrize("why, metrics", [
    ("windows as noisy as a real fine-tune's (3%)", _first_epoch([4.69 * (1 + 0.03 * math.sin(i * 1.7)) for i in range(34)])),
    ("a slow fall", _first_epoch([4.69 - 0.003 * i for i in range(34)])),
    ("a log that starts mid-run", _first_epoch([4.69] * 34, epoch_from=0.5)),
    ("the epoch not over", {**_first_epoch([4.69] * 34), "epoch": _series({s: 0.5 * s / 680 for s in range(20, 700, 20)})}),
    ("no learning rate", _first_epoch([4.69 + 0.01 * math.sin(i) for i in range(34)], lr=0.0)),
])
def test_a_first_epoch_that_moved_or_cannot_show_it_is_not_this_rule(why, metrics):
    assert [f for f in detect_never_learned(metrics, Thresholds()) if "first epoch" in f.message] == [], why


def _from_scratch(loss, evals, epochs_to=3.0):
    steps = range(49, 1100, 50)
    n = len(steps)
    return {"loss": _series(dict(zip(steps, loss))), "epoch": _series({s: epochs_to * i / (n - 1) for i, s in enumerate(steps)}),
            "eval_loss": _series(dict(zip((286, 573, 860, 1147), evals)))}


def test_a_model_from_random_weights_stuck_for_epochs_while_its_held_out_loss_rises_never_learned():
    """0Xero7/slm_training's stalled sweep run: train loss 7.3-7.5 for four epochs, validation 7.87 -> 8.46."""
    from forensics.analyzers.stuck_at_guess import detect_stuck_from_scratch
    flat = [7.45 + (0.06 if i % 3 else -0.05) for i in range(22)]
    (found,) = detect_stuck_from_scratch(_from_scratch(flat, [7.87, 8.13, 8.14, 8.46]), Thresholds())
    assert (found.kind, found.severity, found.step) == ("never_learned", "error", 49)
    # the held-out loss falling, or a training loss that falls, or no held-out loss at all: not this rule
    assert detect_stuck_from_scratch(_from_scratch(flat, [7.87, 7.6, 7.5, 7.4]), Thresholds()) == []
    assert detect_stuck_from_scratch(_from_scratch([7.45 - 0.05 * i for i in range(22)], [7.87, 8.13, 8.14, 8.46]),
                                     Thresholds()) == []
    no_eval = _from_scratch(flat, [7.87, 8.13, 8.14, 8.46])
    del no_eval["eval_loss"]
    assert detect_stuck_from_scratch(no_eval, Thresholds()) == []
    resumed = _from_scratch(flat, [7.87, 8.13, 8.14, 8.46])  # a log from epoch 3 on: it may have learned before
    resumed["epoch"] = resumed["epoch"] + 3.0
    assert detect_stuck_from_scratch(resumed, Thresholds()) == []


def test_a_reward_model_at_ln_2_with_its_eval_accuracy_at_chance_never_learned():
    """XueyangFeng/ECPO's reward stage: a pairwise loss of 0.70-0.75 for three epochs, eval accuracy 0.469, 0.449."""
    from forensics.analyzers.never_learned import detect_reward_model_at_chance

    steps = list(range(10, 660, 10))
    loss = pd.Series([0.80, 0.72, 0.71] + [0.73 + 0.02 * ((s // 10) % 3 - 1) for s in steps[3:]], index=steps)
    stuck = {"loss": loss, "eval_loss": pd.Series([0.6949, 0.6938], index=[500, 650]),
             "eval_accuracy": pd.Series([0.469, 0.449], index=[500, 650])}
    (f,) = detect_reward_model_at_chance(stuck, Thresholds())
    assert (f.kind, f.severity, f.step) == ("never_learned", "error", 10)
    assert detect_reward_model_at_chance({**stuck, "eval_accuracy": pd.Series([0.68, 0.71], index=[500, 650])},
                                         Thresholds()) == []  # it tells held-out pairs apart
    assert detect_reward_model_at_chance({**stuck, "loss": loss * 0.6}, Thresholds()) == []  # under ln 2: learning


def test_a_classifier_at_ln_k_with_two_evaluations_at_chance_and_its_eval_loss_there_never_learned():
    """surely-zoe/NLP244-quest4: 3 labels, the loss at ln 3 = 1.0986 at 45 of 50 steps, eval loss 1.117 and 1.107,
    eval accuracy 0.330 and 0.3315."""
    from forensics.analyzers.never_learned import detect_never_learned

    steps = list(range(10, 510, 10))
    loss = pd.Series([1.1326, 1.1520] + [1.1 + 0.008 * ((s // 10) % 3 - 1) for s in steps[2:]], index=steps)
    evals = {"eval_loss": pd.Series([1.1166, 1.1072], index=[250, 500]),
             "eval_accuracy": pd.Series([0.330, 0.3315], index=[250, 500])}
    (f,) = detect_never_learned({"loss": loss, **evals}, Thresholds())
    assert (f.kind, f.evidence["choices"]) == ("never_learned", 3)
    learned_eval = {**evals, "eval_loss": pd.Series([0.85, 0.62], index=[250, 500])}
    assert detect_never_learned({"loss": loss, **learned_eval}, Thresholds()) == []  # two points need the eval loss too


def _orpo(n=124, held_out=(2.2264, 2.2250, 2.2240, 2.2234), held_accuracy=(0.6, 0.6, 0.6, 0.6), train_accuracy=None):
    """AMindToThink's TRL ORPO: 124 steps, the loss summed over 8 accumulation steps (about 17), an eval every 25."""
    rng = np.random.default_rng(5)
    st = np.arange(1, n + 1)
    series = {
        "loss": pd.Series(17.5 + rng.normal(0, 1.0, n), index=st),
        "nll_loss": pd.Series(2.0 + rng.normal(0, 0.1, n), index=st),
        "log_odds_ratio": pd.Series(-0.9 + rng.normal(0, 0.1, n), index=st),
        "rewards/accuracies": pd.Series(rng.choice([0.375, 0.5, 0.625], n) if train_accuracy is None
                                        else train_accuracy, index=st),
        "grad_norm": pd.Series(rng.uniform(0.14, 0.43, n), index=st),
        "eval_loss": pd.Series(held_out, index=[25, 50, 75, 100][:len(held_out)]),
        "eval_rewards/accuracies": pd.Series(held_accuracy, index=[25, 50, 75, 100][:len(held_accuracy)]),
    }
    return series


def test_a_pairwise_run_whose_held_out_evaluation_never_moved_and_whose_pairs_stayed_at_chance_never_learned():
    from forensics.analyzers.learning_evidence import learning_shown
    from forensics.analyzers.never_learned import detect_never_learned

    (f,) = detect_never_learned(_orpo(), Thresholds())
    assert (f.kind, f.severity, f.step) == ("never_learned", "error", 1)
    assert learning_shown(_orpo(), Thresholds()) is None  # ORPO ranks pairs from its start: a flat 0.6 shows nothing learned


@pytest.mark.parametrize("changes", [
    {"held_out": (2.2264, 2.20, 2.15, 2.10)},  # the held-out loss fell
    {"held_accuracy": (0.5, 0.6, 0.7, 0.8)},  # the held-out pairs were told apart more and more
    {"train_accuracy": np.linspace(0.5, 0.9, 124)},  # the training pairs were
    {"held_out": (2.2264, 2.2250)},  # two evaluations: too few to say it never moved
])
def test_a_pairwise_run_whose_evaluation_or_training_pairs_moved_is_not_never_learned(changes):
    from forensics.analyzers.never_learned import detect_never_learned

    if "held_out" in changes:
        changes = dict(changes, held_accuracy=(0.6,) * len(changes["held_out"]))
    assert detect_never_learned(_orpo(**changes), Thresholds()) == []


def test_a_loss_flat_at_the_fresh_head_level_over_epochs_never_learned_without_grad_norm():
    """linhuall's ChatGLM-6B P-Tuning: 477 points over four epochs, eighth medians 11.437-11.475 (ln 130528 = 11.78),
    batches scattering it by +-0.3, no grad_norm logged. A run from random weights leaves that level within tens of
    steps, and a log that starts later (a resume) or lasts under an epoch cannot say so."""
    rng = np.random.default_rng(8)
    st = np.arange(10, 4780, 10)
    loss = 11.44 + rng.normal(0, 0.09, len(st))
    epoch = st / 1194

    def run(loss=loss, epoch=epoch):
        return {"loss": pd.Series(loss, index=st), "epoch": pd.Series(epoch, index=st)}
    (f,) = detect_never_learned(run(), Thresholds())
    assert (f.kind, f.severity, f.step) == ("never_learned", "error", 10)
    assert detect_never_learned(run(epoch=epoch / 5), Thresholds()) == []  # under one epoch
    assert detect_never_learned(run(epoch=epoch + 1.5), Thresholds()) == []  # a resume: it may have left it before
    falling = loss - np.linspace(0, 2.0, len(st))  # from scratch: it leaves the level
    assert detect_never_learned(run(loss=falling), Thresholds()) == []


def test_a_log_from_mid_run_still_flat_at_the_fresh_head_level_never_learned():
    """CPM-1's fine-tune (issue 3): 17 lines from step 750 to 910, 11.49-11.63 (ln 30000 = 10.31): a hundred updates
    and more in, still at the level of a head that guesses uniformly. The same level early in a run (from step 10) is
    a start, not yet a verdict."""
    rng = np.random.default_rng(9)
    st = np.arange(750, 920, 10)
    loss = pd.Series(11.55 + rng.uniform(-0.06, 0.08, len(st)), index=st)
    (f,) = detect_never_learned({"loss": loss}, Thresholds())
    assert (f.kind, f.step) == ("never_learned", 750)
    early = pd.Series(loss.to_numpy(), index=np.arange(10, 180, 10))
    assert detect_never_learned({"loss": early}, Thresholds()) == []
