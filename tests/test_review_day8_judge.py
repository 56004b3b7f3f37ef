"""Session 8 judging rules, each from a real run the corpus holds (tests/realworld/PROVENANCE.md).

* A loss flat on ln 2 with an eval loss flat there too is a two-way guess even without an accuracy
  (TsinghuaAI/CPM-2-Finetune issue 11: train 0.699 -> 0.695, eval 0.702 -> 0.714 over 100 iterations).
"""
from __future__ import annotations

import math

import pandas as pd
import pytest

from forensics.analyzers.never_learned import detect_never_learned
from forensics.config import Thresholds

LN2 = math.log(2)


def _flat_at(level: float, eval_losses: list[float] | None) -> dict:
    steps = range(1360, 1460, 10)
    wobble = [0.006, -0.004, 0.005, 0.002, 0.008, -0.006, 0.001, 0.004, -0.002, 0.003]
    metrics = {"loss": pd.Series([level + w for w in wobble], index=list(steps), dtype="float64")}
    if eval_losses is not None:
        metrics["eval_loss"] = pd.Series(eval_losses, index=[1400, 1450][:len(eval_losses)], dtype="float64")
    return metrics


def test_a_loss_and_an_eval_loss_both_flat_on_ln_2_never_learned():
    (found,) = detect_never_learned(_flat_at(LN2, [0.7021, 0.7143]), Thresholds())
    assert (found.kind, found.severity, found.step) == ("never_learned", "error", 1360)
    assert "eval loss stays there too" in found.message


@pytest.mark.parametrize("eval_losses", [
    None,  # the training loss alone: a converged language model can sit at 0.69
    [0.7021],  # one evaluation says nothing about a level
    [0.93, 0.95],  # the held-out loss is elsewhere: not a two-way guess
    [0.72, 0.69],  # the held-out loss fell: something was learned
])
def test_a_loss_near_ln_2_without_a_held_out_loss_flat_there_is_not_never_learned(eval_losses):
    assert detect_never_learned(_flat_at(LN2, eval_losses), Thresholds()) == []


def _one_eval_an_epoch(evals: list[float], levels: tuple[float, float, float] = (0.12, 0.05, 0.02)) -> dict:
    """Three epochs of 176 steps, the training loss logged every 5 steps from 0.63 at the first point, then at each
    epoch's level of `levels`, an eval at the end of each epoch."""
    steps = list(range(5, 529, 5))
    train = [0.63 if s == 5 else levels[min(2, (s - 1) // 176)] * (1.05 if s % 10 else 0.95) for s in steps]
    return {"loss": pd.Series(train, index=steps, dtype="float64"),
            "eval_loss": pd.Series(evals, index=[176, 352, 528], dtype="float64")}


def test_evals_rising_after_the_first_while_the_training_loss_keeps_falling_is_overfitting():
    """Obychenkov/CSE234-hardneg: eval 0.301, 0.322, 0.346 at the end of epochs 1-3 (the first the best, the last
    just under 15% above it) while the training loss's epoch medians fell 0.122 -> 0.049 -> 0.021."""
    from forensics.analyzers.overfitting import detect_overfitting
    (found,) = detect_overfitting(_one_eval_an_epoch([0.3011, 0.3224, 0.3459]), Thresholds())
    assert (found.kind, found.severity, found.step) == ("overfitting", "warning", 352)


@pytest.mark.parametrize("evals, levels", [
    ([0.3011, 0.2950, 0.2900], (0.12, 0.05, 0.02)),  # the held-out loss kept falling: learning
    ([0.3011, 0.3030, 0.3020], (0.12, 0.05, 0.02)),  # within 1% of the best: flat, not a rise
    ([0.3011, 0.3224, 0.3459], (0.12, 0.12, 0.115)),  # the training loss stopped falling too: no gap opening
])
def test_a_first_eval_best_without_a_gap_opening_is_not_overfitting(evals, levels):
    from forensics.analyzers.overfitting import detect_overfitting
    assert detect_overfitting(_one_eval_an_epoch(evals, levels), Thresholds()) == []


def test_a_final_evaluation_soon_after_the_last_periodic_one_still_shows_the_gap():
    """gjurdzinski/Open-Assistant's reward model: evals 0.547, 0.510, 0.363 (best), 0.575, 0.771 at steps 0, 50, 100,
    150 and a final one at 175, with only two training points (160, 170) after the eval at 150: the training loss's
    last three points after the best stand for the end."""
    from forensics.analyzers.overfitting import detect_overfitting
    train = [0.4815, 0.3131, 0.2958, 0.2475, 0.1941, 0.1775, 0.1793, 0.2513, 0.2078, 0.1141, 0.1665, 0.1217, 0.2322,
             0.1437, 0.1615, 0.0965, 0.1168]
    metrics = {"loss": pd.Series(train, index=range(10, 171, 10), dtype="float64"),
               "eval_loss": pd.Series([0.5467, 0.5101, 0.3625, 0.5746, 0.7710], index=[0, 50, 100, 150, 175])}
    (found,) = detect_overfitting(metrics, Thresholds())
    assert (found.kind, found.step) == ("overfitting", 150)
    held = {**metrics, "loss": pd.Series([0.48, 0.31, 0.30, 0.25, 0.19] + [0.18] * 12, index=range(10, 171, 10))}
    assert detect_overfitting(held, Thresholds()) == []  # the training loss stopped falling too: no gap opening


def _scale_halving_from(start: float, halvings: int, steps: int, late: tuple[int, ...] = ()) -> dict:
    """A loss scale logged every step from 1: halved at each of the first `halvings` steps from `start`, then steady,
    with one more halving at each step of `late`."""
    scale, values = start, []
    for step in range(1, steps + 1):
        if 2 <= step <= halvings + 1 or step in late:
            scale /= 2
        values.append(scale)
    return {"loss_scale": pd.Series(values, index=range(1, steps + 1), dtype="float64")}


def test_the_scalers_start_up_search_is_skipped_steps_not_a_storm():
    """NVIDIA/Megatron-LM's gpt3-357m TensorBoard: the scale halves at every one of the first 15 iterations from
    2**32 (Megatron's initial scale) to 2**18, then the run trains on for 85 iterations."""
    from forensics.analyzers.overflow import detect_loss_scale_overflow
    (found,) = detect_loss_scale_overflow(_scale_halving_from(2.0 ** 32, 15, 100), Thresholds())
    assert (found.kind, found.severity, found.step) == ("skipped_steps", "warning", 2)
    assert "searching down from its initial scale" in found.message


@pytest.mark.parametrize("metrics", [
    _scale_halving_from(65536.0, 0, 100, late=tuple(range(50, 56))),  # six in a row mid-run: a storm
    _scale_halving_from(2.0 ** 32, 15, 60),  # the search takes a quarter of the log: not just a start
    _scale_halving_from(2.0 ** 32, 15, 100, late=(40, 60, 80)),  # overflows go on after it
])
def test_overflows_in_a_row_past_the_start_are_still_a_storm(metrics):
    from forensics.analyzers.overflow import detect_loss_scale_overflow
    (found,) = detect_loss_scale_overflow(metrics, Thresholds())
    assert found.kind == "loss_scale_overflow"


def _nan_grad_norms_at_the_start(nan_steps: list[int], every: int = 1) -> dict:
    steps = list(range(every, 40 * every + 1, every))
    grad = [float("nan") if s in nan_steps else 4.0 - s / (20 * every) for s in steps]
    return {"loss": pd.Series([2.8 - s / (40 * every) for s in steps], index=steps, dtype="float64"),
            "grad_norm": pd.Series(grad, index=steps, dtype="float64"),
            "learning_rate": pd.Series([5e-5 * (1 - s / (41 * every)) for s in steps], index=steps)}


def test_nan_grad_norms_at_the_first_logged_steps_are_a_fresh_scaler_skipping():
    """chenkx612/local-roleplay-llm (ms-swift, fp16): grad_norm NaN at steps 1-6 with a finite loss at each, finite
    from step 7 on: a fresh GradScaler halving down from 2**16, not a run that broke."""
    from forensics.analyzers.skipped_steps import detect_skipped_steps
    (found,) = detect_skipped_steps(_nan_grad_norms_at_the_start([1, 2, 3, 4, 5, 6]), Thresholds())
    assert (found.kind, found.step, found.evidence["count"]) == ("skipped_steps", 1, 6)
    assert found.evidence["at_restart"]


@pytest.mark.parametrize("nan_steps, every", [
    ([10, 11, 12, 13, 14, 15], 1),  # six in a row mid-run: more than a scaler's isolated skips
    ([10, 20, 30, 40], 10),  # logged every 10 steps: four NaN points hide up to 40 skipped steps
])
def test_long_nan_grad_norm_stretches_past_the_start_or_between_logs_are_not_scaler_skips(nan_steps, every):
    from forensics.analyzers.skipped_steps import detect_skipped_steps
    assert detect_skipped_steps(_nan_grad_norms_at_the_start(nan_steps, every), Thresholds()) == []


def _grpo_log(blow_ups: dict[int, tuple[float, float]]) -> dict:
    """250 GRPO steps: the loss beta x KL near 0 and rising slowly, the reward rising, with `blow_ups` {step: (loss,
    kl)} replacing those steps' values."""
    steps = range(1, 251)
    kl = {s: 0.005 + 0.0001 * s for s in steps}
    loss = {s: 0.04 * kl[s] for s in steps}
    for s, (bad_loss, bad_kl) in blow_ups.items():
        loss[s], kl[s] = bad_loss, bad_kl
    return {"loss": pd.Series(loss, dtype="float64"), "kl": pd.Series(kl, dtype="float64"),
            "reward": pd.Series({s: 0.05 + s / 200 for s in steps}, dtype="float64")}


def test_a_grpo_loss_and_kl_blowing_up_at_one_step_is_a_loss_spike():
    """siddhartth04's Unsloth GRPO notebook: loss 234.5 and kl 5,864 at step 97 (KL median 0.018), 12.6 / 316 at 250."""
    from forensics.analyzers.loss_spike import detect_loss_spikes
    (found,) = detect_loss_spikes(_grpo_log({97: (234.5492, 5863.73), 250: (12.6385, 315.96)}), Thresholds())
    assert (found.kind, found.severity, found.step, found.end_step) == ("loss_spike", "warning", 97, 250)
    assert "blew up against its reference" in found.message


@pytest.mark.parametrize("blow_ups", [
    {},  # a healthy GRPO log: the loss near 0 throughout
    {97: (0.05, 1.2)},  # a KL jump with a loss still under a nat: a noisy batch, not a blow-up
    {97: (1.5, 0.02)},  # a loss jump the KL does not share (another loss term): not the policy leaving the reference
])
def test_grpo_logs_without_a_joint_loss_and_kl_blow_up_raise_no_spike(blow_ups):
    from forensics.analyzers.loss_spike import detect_loss_spikes
    assert detect_loss_spikes(_grpo_log(blow_ups), Thresholds()) == []


def _evals_after_a_best(evals: list[float], train_levels: list[float], wobble: float = 0.01) -> dict:
    """Evaluations every 200 steps from 200, the training loss logged every 10 steps at `train_levels[i]` (with a
    small wobble) over the interval that ends at eval i."""
    eval_steps = [200 * (i + 1) for i in range(len(evals))]
    train = {}
    for i, level in enumerate(train_levels):
        for s in range(200 * i + 10, 200 * (i + 1) + 1, 10):
            train[s] = level * (1 + wobble if s % 20 else 1 - wobble)
    return {"loss": pd.Series(train, dtype="float64"), "eval_loss": pd.Series(evals, index=eval_steps, dtype="float64")}


def test_three_evals_climbing_after_the_best_while_the_training_loss_falls_is_overfitting():
    """zjzheng0410's Qwen2.5-7B QLoRA (LLaMA-Factory, 4 epochs): eval 1.7255 at its best, then 1.7275, 1.7348, 1.7610
    (+2.1%) while the training loss fell from 1.83 to 1.73."""
    from forensics.analyzers.overfitting import detect_overfitting
    metrics = _evals_after_a_best([1.95, 1.7255, 1.7275, 1.7348, 1.7610], [2.1, 1.83, 1.80, 1.76, 1.726])
    (found,) = detect_overfitting(metrics, Thresholds())
    assert (found.kind, found.step) == ("overfitting", 600) and "keeps falling" in found.message


def test_three_evals_climbing_while_the_training_loss_holds_level_is_not_this_rule():
    from forensics.analyzers.overfitting import detect_overfitting
    metrics = _evals_after_a_best([1.95, 1.7255, 1.7275, 1.7348, 1.7610], [2.1, 1.83, 1.83, 1.835, 1.83])
    assert detect_overfitting(metrics, Thresholds()) == []


def test_an_overfitting_message_does_not_say_the_training_loss_fell_where_it_held_level():
    """matt7salomon's Mistral-7B LoRA: the eval loss rose while the training loss held at about 1.34; the message said
    'while the training loss keeps falling'."""
    from forensics.analyzers.overfitting import detect_overfitting
    metrics = _evals_after_a_best([1.9, 1.5, 1.75, 1.95, 2.1, 2.3], [2.0, 1.34, 1.338, 1.338, 1.338, 1.338], wobble=0)
    (found,) = detect_overfitting(metrics, Thresholds())
    assert "keeps falling" not in found.message and "did not improve either" in found.message


def _late_log(losses: list[float], first_epoch: float, per_point: float = 0.025) -> dict:
    steps = list(range(1, len(losses) + 1))
    return {"loss": pd.Series(losses, index=steps, dtype="float64"),
            "epoch": pd.Series([first_epoch + per_point * i for i in range(len(losses))], index=steps)}


def test_a_log_that_begins_many_epochs_in_at_a_memorized_loss_is_memorization():
    """hiyouga/LlamaFactory issue 569: seven lines at epochs 14.71-14.86, loss 0.0178-0.022, no eval loss."""
    from forensics.analyzers.collapse import detect_loss_collapse
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence
    metrics = _late_log([0.0199, 0.0184, 0.0196, 0.0185, 0.0178, 0.022, 0.0201], 14.71)
    (found,) = detect_loss_collapse(metrics, Thresholds())
    assert (found.kind, found.severity, found.step) == ("memorization", "warning", 1)
    assert "begins at epoch 14.7" in found.message
    assert detect_no_learning_evidence(metrics, Thresholds()) == []  # a loss that low learned its data


@pytest.mark.parametrize("metrics", [
    # Time-MoE's forecasting loss at epochs 24-34: 0.066 falling steadily, not a memorized cross-entropy
    _late_log([0.0656, 0.0643, 0.0633, 0.0623, 0.0614, 0.0605, 0.0596, 0.0588, 0.0580, 0.0572, 0.0564], 24.0, 1.0),
    # 0.02 in the first epoch: no example seen twice, the data is simply that easy
    _late_log([0.0199, 0.0184, 0.0196, 0.0185, 0.0178, 0.022, 0.0201], 0.3),
])
def test_a_low_loss_early_or_above_the_memorized_level_is_not_memorization_before_the_log(metrics):
    from forensics.analyzers.collapse import detect_loss_collapse
    assert detect_loss_collapse(metrics, Thresholds()) == []


def _easy_task(eval_losses: list[float]) -> dict:
    """A descent from 2.0 to about 1e-5 over 400 steps (logged every 10) with grad_norm finite, and evaluations every
    100 steps from step 100."""
    steps = list(range(10, 401, 10))
    loss = [max(2.0 * 0.6 ** (s / 10 - 1), 1e-5) for s in steps]
    return {"loss": pd.Series(loss, index=steps, dtype="float64"),
            "grad_norm": pd.Series([0.5] * len(steps), index=steps, dtype="float64"),
            "eval_loss": pd.Series(eval_losses, index=[100, 200, 300, 400], dtype="float64")}


def test_a_training_loss_near_zero_with_the_held_out_loss_there_first_is_no_memorization():
    """Seanaaa0/GPT-CoT (a synthetic grid task, phi-2 4-bit LoRA): train and eval loss both reach ~1e-5, the eval loss
    3.4e-4 at the evaluation before the training loss got there: the task is that easy, not learned by heart."""
    from forensics.analyzers.collapse import detect_loss_collapse
    assert [f.kind for f in detect_loss_collapse(_easy_task([3.4e-4, 6e-5, 2e-5, 1.2e-5]), Thresholds())] == []


def test_a_training_loss_near_zero_while_the_held_out_loss_stays_up_is_still_memorization():
    from forensics.analyzers.collapse import detect_loss_collapse
    assert [f.kind for f in detect_loss_collapse(_easy_task([0.9, 1.1, 1.3, 1.5]), Thresholds())] == ["memorization"]


def _by_turns(first: float, high: float, low: float, n: int = 20) -> dict:
    losses = [first] + [high if i % 2 else low for i in range(1, n)]
    return {"loss": pd.Series(losses, index=range(25, 25 * n + 1, 25), dtype="float64")}


def test_a_loss_swinging_by_turns_after_a_high_start_learned():
    """AhmedNabil03/llama2-7b-finetune-dolly (group_by_length): 2.43 at the first point, then about 1.27 and 0.85 by
    turns: the swing's steps read as noise so large that the fall from 2.43 was called noise."""
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence
    assert detect_no_learning_evidence(_by_turns(2.4265, 1.136, 0.93), Thresholds()) == []


def test_a_loss_swinging_by_turns_around_one_level_has_no_evidence_of_learning():
    """MuQlanyu/2025-Project-178's SFT: 1.30, 1.24, 1.30, 1.25 ... by turns over three epochs, its pairs flat."""
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence
    (found,) = detect_no_learning_evidence(_by_turns(1.305, 1.244, 1.30), Thresholds())
    assert found.kind == "no_learning_evidence"


def test_a_held_out_pair_loss_under_ln_2_is_not_said_to_sit_at_ln_2():
    """prchigoyal01/Reasoning-Bias's DPO (the corpus case): the message said 'the held-out loss stayed at about ln 2
    (0.4891, 0.5281, 0.5452, 0.4756)', values well under 0.6931; the held-out pair accuracy, 0.50-0.57, is what
    stayed at chance."""
    from pathlib import Path
    import forensics
    case = Path(__file__).parent / "realworld" / "prchigoyal01_Reasoning-Bias_dpo"
    (found,) = [f for f in forensics.analyze(case).findings if f.kind == "no_learning_evidence"]
    assert "about ln 2 (" not in found.message and "held-out reward accuracy stayed near chance (0.5" in found.message


def _dpo_log(train_level: float, eval_losses: list[float], eval_accuracy: list[float]) -> dict:
    steps = list(range(10, 891, 10))
    wobble = [0.05 if i % 3 == 0 else -0.03 if i % 3 == 1 else 0.0 for i in range(len(steps))]
    evals = list(range(50, 50 * len(eval_losses) + 1, 50))
    return {"loss": pd.Series([train_level + w for w in wobble], index=steps, dtype="float64"),
            "rewards/accuracies": pd.Series([0.5 - w for w in wobble], index=steps),
            "eval_loss": pd.Series(eval_losses, index=evals, dtype="float64"),
            "eval_rewards/accuracies": pd.Series(eval_accuracy, index=evals, dtype="float64")}


def test_a_dpo_run_never_under_ln_2_with_held_out_pairs_at_chance_never_learned():
    """rlyCarlson/cs234's DPO: training loss 0.70-0.87 at all 89 points, eval loss 0.798 -> 0.746 (above ln 2), eval
    reward accuracy 0.4808 at all 17 evaluations."""
    losses = [0.7977 - 0.003 * i for i in range(17)]
    (found,) = detect_never_learned(_dpo_log(0.78, losses, [0.4808] * 17), Thresholds())
    assert (found.kind, found.severity, found.step) == ("never_learned", "error", 10)


@pytest.mark.parametrize("train_level, eval_losses, eval_accuracy", [
    (0.55, [0.60 - 0.005 * i for i in range(17)], [0.62] * 17),  # under ln 2, pairs ranked right: it learned
    (0.78, [0.7977 - 0.003 * i for i in range(17)], [0.4808] * 16 + [0.58]),  # the held-out pairs came right at last
    (0.78, [0.70, 0.69, 0.68, 0.67] + [0.66] * 13, [0.48] * 17),  # the held-out loss went under ln 2
])
def test_a_dpo_run_whose_held_out_pairs_moved_the_right_way_is_not_never_learned(train_level, eval_losses,
                                                                                  eval_accuracy):
    assert detect_never_learned(_dpo_log(train_level, eval_losses, eval_accuracy), Thresholds()) == []
