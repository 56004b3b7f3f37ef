"""A run from random weights whose loss shoots up in its first steps: the optimizer overshooting.

A language model at random initialisation predicts every token about alike, so its first loss sits near ln V, the
uniform guess over its vocabulary (10.37 for 32000 tokens). Training from there brings the loss down, or lifts it a
few percent for a step or two while the first updates settle. A loss that rises well above both its start and ln V
(`overshoot_factor`, 1.2x) with grad_norm rising with it (`overshoot_grad_factor` x its first value, where logged)
has been thrown off by an update too big for the model's start (a learning rate too high, a warm-up too short):
a spike, however short the log before it. The spike rules cannot see it there: before `spike_min_history` points
they ask for `loss_spike_early_factor` (3x) over the first points, which a loss starting at ln V never reaches.

    detect_early_overshoot(metrics, vocab_size, thresholds)   # -> [] or one `loss_spike` warning
"""
from __future__ import annotations

import math

import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .metrics import GRAD_NORM, Metrics, finite, format_number, real_loss

# A first loss in this range of ln V is a model at (or near) random initialisation: a fresh model starts about at
# the guess, a poor initialisation somewhat above it; a trained model starts far under it.
_AT_RANDOM_INIT = (0.8, 1.5)


def detect_early_overshoot(metrics: Metrics, vocab_size: int | None, thresholds: Thresholds) -> list[Finding]:
    """One `loss_spike` warning where a run from random weights rose `overshoot_factor` x over its start and ln V
    within its first `spike_min_history` points (module docstring), or []."""
    loss = real_loss(metrics)
    if not (isinstance(vocab_size, int) and vocab_size > 1) or len(loss) < 3:
        return []
    guess, first = math.log(vocab_size), float(loss.iloc[0])
    if not _AT_RANDOM_INIT[0] * guess <= first <= _AT_RANDOM_INIT[1] * guess:
        return []
    bar = thresholds.overshoot_factor * max(first, guess)
    early = loss.iloc[1:thresholds.spike_min_history]
    risen = early[early > bar]
    if risen.empty or not _grad_norm_rose(metrics, loss.index[0], early.loc[risen.index[0]:], thresholds):
        return []
    return [_finding(loss, risen, first, guess, vocab_size, bar, metrics)]


def _grad_norm_rose(metrics: Metrics, first_step: int, risen: pd.Series, thresholds: Thresholds) -> bool:
    """Whether grad_norm, where logged at the first step, rose `overshoot_grad_factor` x over it while the loss was up
    (a log without grad_norm there is read on its loss alone)."""
    grad = finite(metrics[GRAD_NORM]) if GRAD_NORM in metrics else pd.Series(dtype="float64")
    if first_step not in grad.index or not grad[first_step] > 0:
        return True
    during = grad.reindex(risen.index).dropna()
    return during.empty or float(during.max()) >= thresholds.overshoot_grad_factor * float(grad[first_step])


def _finding(loss: pd.Series, risen: pd.Series, first: float, guess: float, vocab_size: int, bar: float,
             metrics: Metrics) -> Finding:
    start, peak_step = int(risen.index[0]), int(risen.idxmax())
    peak = float(risen.max())
    after = loss.loc[peak_step:]
    back = after[after <= bar]
    came_back = (f"back under {format_number(bar)} by step {int(back.index[0])}" if len(back)
                 else f"still over {format_number(bar)} at the log's end")
    grad = finite(metrics[GRAD_NORM]) if GRAD_NORM in metrics else pd.Series(dtype="float64")
    grad_said = (f" with grad_norm {format_number(float(grad[loss.index[0]]))} -> "
                 f"{format_number(float(grad[peak_step]))}"
                 if loss.index[0] in grad.index and peak_step in grad.index else "")
    message = (f"the loss rose from {format_number(first)} at step {int(loss.index[0])} to {format_number(peak)} at "
               f"step {peak_step} ({peak / first:.2f}x; {format_number(peak - guess)} nats above ln {vocab_size} = "
               f"{format_number(guess)}, the uniform guess a model at random initialisation starts at){grad_said}: "
               f"the optimizer overshot in the first steps (a learning rate too high or a warm-up too short for this "
               f"start); {came_back}.")
    return Finding("loss_spike", "warning", start, message, end_step=int(back.index[0]) if len(back) else None,
                   metric="loss", evidence={"first_loss": first, "peak": peak, "peak_step": peak_step,
                                            "uniform_guess_loss": guess, "vocab_size": vocab_size, "early": True})
