"""No update at all (no_learning_signal from a grad_norm of exactly 0 at every step, with nothing learned).

Must fire: justdtip/self-directed-training (tests/realworld), a TRL GRPO LoRA run whose grad_norm is 0.0 at all
200 steps while reward_std is 0.22-0.26 and the reward stays at about 0.55. Must stay silent: a run whose loss
falls though its logged grad_norm is 0 (a reporting bug, not a frozen model), a short log, and the runs other
detectors name (loss and grad_norm both 0: masked labels).
"""
from __future__ import annotations

import pandas as pd
import pytest

from forensics.analyzers import run_all, status_of
from forensics.analyzers.frozen import detect_no_gradient, detect_rl_gradient_gone
from forensics.config import Thresholds
from forensics.timeline import LogRecords, build_timeline

STEPS = range(1, 201)


def _metrics(**series) -> dict:
    return {name: pd.Series(points, dtype="float64") for name, points in series.items()}


GRPO_FROZEN = _metrics(grad_norm={s: 0.0 for s in STEPS}, loss={s: 0.002 * (-1) ** s for s in STEPS},
                       reward={s: 0.55 + 0.03 * ((s * 7) % 5 - 2) / 2 for s in STEPS},
                       reward_std={s: 0.24 for s in STEPS}, frac_reward_zero_std={s: 0.125 for s in STEPS})


def test_a_grpo_run_with_no_gradient_at_any_step_never_learned():
    found = detect_no_gradient(GRPO_FROZEN, Thresholds())
    assert [(f.kind, f.severity, f.step, f.end_step) for f in found] == [("no_learning_signal", "error", 1, 200)]
    assert "exactly 0 at every one of the 200 logged steps" in found[0].message


def test_an_sft_run_whose_loss_never_moves_with_no_gradient_never_learned():
    found = detect_no_gradient(_metrics(grad_norm={s: 0.0 for s in range(1, 21)},
                                        loss={s: 2.31 + 0.01 * (s % 2) for s in range(1, 21)}), Thresholds())
    assert [f.kind for f in found] == ["no_learning_signal"]


@pytest.mark.parametrize("metrics", [
    _metrics(grad_norm={s: 0.0 for s in range(1, 21)}, loss={s: 2.5 - s / 10 for s in range(1, 21)}),  # it learned
    _metrics(grad_norm={s: 0.0 if s % 3 else 0.4 for s in range(1, 21)}, loss={s: 2.3 for s in range(1, 21)}),
    _metrics(grad_norm={s: 0.0 for s in range(1, 21)}, loss={s: 0.0 for s in range(1, 21)}),  # masked labels
])
def test_learning_runs_and_other_detectors_cases_are_left_alone(metrics):
    assert detect_no_gradient(metrics, Thresholds()) == []


def test_a_short_log_with_no_gradient_is_a_warning_not_a_frozen_model():
    # three points are too few to call the model frozen (an error), but they are every step the log shows
    found = detect_no_gradient(_metrics(grad_norm={s: 0.0 for s in range(1, 4)}, loss={s: 2.3 for s in range(1, 4)}),
                               Thresholds())
    assert [(f.kind, f.severity, f.step, f.end_step) for f in found] == [("no_learning_signal", "warning", 1, 3)]


def test_the_frozen_run_is_broken_by_one_finding():
    rows = sorted((s, name, float(v)) for name, series in GRPO_FROZEN.items() for s, v in series.items())
    frame = pd.DataFrame({"step": pd.Series([r[0] for r in rows], dtype="int64"), "metric": [r[1] for r in rows],
                          "value": pd.Series([r[2] for r in rows], dtype="float64"), "wall_time": float("nan")})
    findings = run_all(build_timeline([LogRecords(source="trainer_state.json", format="trainer_state",
                                                  frame=frame)]), Thresholds())
    assert status_of(findings) == "broken"
    assert [f.kind for f in findings if f.severity == "error"] == ["no_learning_signal"]


def test_a_kl_that_rises_says_the_policy_moved_whatever_grad_norm_says():
    """ms-swift#5890: a DeepSpeed release logged grad_norm 0 while the GRPO run trained; its KL to the reference
    rising shows the weights changed."""
    moved = dict(GRPO_FROZEN, kl=pd.Series({s: 1e-5 + 2e-5 * s for s in STEPS}, dtype="float64"))
    assert detect_no_gradient(moved, Thresholds()) == []
    still = dict(GRPO_FROZEN, kl=pd.Series({s: 0.0 for s in STEPS}, dtype="float64"))
    assert [f.kind for f in detect_no_gradient(still, Thresholds())] == ["no_learning_signal"]


def _epochs_of_batches(first_epoch: list[float], second_epoch: list[float]) -> dict:
    """A loop that logs every micro batch, eight an epoch, its epoch as epochs done."""
    losses = first_epoch + second_epoch
    return _metrics(loss={s: v for s, v in enumerate(losses)},
                    epoch={s: float(s // len(first_epoch)) for s in range(len(losses))})


TRACE_EPOCH = [0.9741, 1.3742, 1.2390, 0.9670, 1.0386, 1.1681, 1.2240, 0.9610]  # BeyonderXX/TRACE issue 5


def test_an_epoch_that_repeats_the_losses_of_the_one_before_batch_for_batch_never_changed_the_weights():
    from forensics.analyzers.frozen import detect_repeated_epoch_losses

    (f,) = detect_repeated_epoch_losses(_epochs_of_batches(TRACE_EPOCH, TRACE_EPOCH[:6]), Thresholds())
    assert (f.kind, f.severity, f.step, f.evidence["repeated_from"]) == ("no_learning_signal", "error", 0, 8)
    assert "0.9741, 1.3742, 1.239, 0.967, 1.0386" in f.message


def test_losses_that_learned_or_batches_that_were_shuffled_are_no_repeated_epoch():
    from forensics.analyzers.frozen import detect_repeated_epoch_losses

    learned = [round(v * 0.8, 4) for v in TRACE_EPOCH]  # the same batches, each lower after an epoch of updates
    shuffled = TRACE_EPOCH[3:] + TRACE_EPOCH[:3]  # the same model on the batches in another order
    flat = [0.6931] * 8  # one value over and over says nothing about which batch gave it
    for second in (learned, shuffled):
        assert detect_repeated_epoch_losses(_epochs_of_batches(TRACE_EPOCH, second), Thresholds()) == []
    assert detect_repeated_epoch_losses(_epochs_of_batches(flat, flat), Thresholds()) == []
    only_four = TRACE_EPOCH[:4] + [1.5, 1.6, 1.7, 1.8]  # four in a row could still be rounding luck: not enough
    assert detect_repeated_epoch_losses(_epochs_of_batches(TRACE_EPOCH, only_four), Thresholds()) == []


def test_a_memorized_runs_rounded_losses_are_no_repeated_epoch():
    """P4P4N1CK/whisper-large-v2-japanese (tests/realworld): 0.0001, 0.0001, 0.0002, ... in two epochs in a row."""
    from forensics.analyzers.frozen import detect_repeated_epoch_losses

    tiny = [0.0001, 0.0001, 0.0002, 0.0001, 0.0001, 0.0002, 0.0001, 0.0001]
    assert detect_repeated_epoch_losses(_epochs_of_batches(tiny, tiny), Thresholds()) == []


def test_a_run_that_learned_and_repeats_a_coarse_print_in_later_epochs_is_no_repeated_epoch():
    """A converged word_language_model console printing two decimals: epochs 5 and 6 print the same 5.53, 5.41, ...
    after four epochs of learning. Only the first two epochs say whether the weights ever changed."""
    from forensics.analyzers.frozen import detect_repeated_epoch_losses

    late = [5.53, 5.41, 5.62, 5.48, 5.55, 5.50]
    losses = [9.0, 8.0, 7.5, 7.0, 6.8, 6.6] + [6.3, 6.1, 6.0, 5.9, 5.8, 5.7] + late + late
    m = _metrics(loss=dict(enumerate(losses)), epoch={s: float(s // 6) for s in range(len(losses))})
    assert detect_repeated_epoch_losses(m, Thresholds()) == []


# JuncyLu's TRL GRPO on Qwen2.5-VL-3B (tests/realworld), its shape: a dict every 10 steps, grad_norm 47.75 at step 10,
# then 0.0 at 42 of the 48 points after it (a few huge ones between: 404, 122.5, 218, 77, 63, 112), reward flat
_JUNCY_GRAD = [47.75, 0, 404, 0, 0, 122.5, 218, 0, 77, 0, 0, 63] + [0] * 13 + [112] + [0] * 23
_JUNCY_REWARD = [1.75, 3.6, 2.7, 2.0, 3.7, 2.9, 3.1, 3.3, 2.5, 1.8, 2.2, 2.0, 2.6, 2.4, 2.0, 2.4, 2.0, 2.6, 2.8, 1.4,
                 2.4, 2.2, 3.0, 2.6, 2.6, 2.0, 3.0, 1.8, 1.8, 2.6, 2.4, 2.6, 2.6, 2.8, 2.2, 2.6, 3.0, 2.0, 1.8, 3.0,
                 2.4, 2.6, 2.4, 2.4, 2.2, 2.4, 2.6, 1.2, 2.6]


def _grpo(grad, reward):
    steps = [10 * (i + 1) for i in range(len(grad))]
    return _metrics(grad_norm=dict(zip(steps, grad)), reward=dict(zip(steps, reward)),
                    loss={s: 0.0 for s in steps}, frac_reward_zero_std={s: 0.9 for s in steps})


def test_an_rl_log_whose_gradient_went_to_zero_for_good_lost_its_learning_signal():
    found = detect_rl_gradient_gone(_grpo(_JUNCY_GRAD, _JUNCY_REWARD), Thresholds())
    assert [(f.kind, f.severity, f.step) for f in found] == [("no_learning_signal", "error", 20)]
    assert "exactly 0 at 42 of the 48 logged steps from step 20 on" in found[0].message


@pytest.mark.parametrize("metrics", [
    _grpo(_JUNCY_GRAD, [1.0 + i / 20 for i in range(49)]),  # the reward kept rising: a signal got through
    _grpo([0.0] * 30 + [1.5] * 19, _JUNCY_REWARD),  # zero for a stretch, then the gradient came back
    _grpo([0.0 if i % 3 else 0.5 for i in range(49)], _JUNCY_REWARD),  # zero at two points in three: under 80%
    {k: v for k, v in _grpo(_JUNCY_GRAD, _JUNCY_REWARD).items() if k != "reward"},  # no reward: not an RL log
])
def test_an_rl_log_with_a_gradient_or_a_rising_reward_keeps_its_signal(metrics):
    assert detect_rl_gradient_gone(metrics, Thresholds()) == []
