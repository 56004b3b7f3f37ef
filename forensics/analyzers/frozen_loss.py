"""A frozen loss: the logged training loss the same to every printed digit at each of its points, and the held-out
loss still to within a ten-thousandth of itself.

A training loss logged as a mean over a window of steps wobbles from one window to the next, in its third or fourth
digit at least, while the model learns or while it sits on a plateau; a held-out loss over a fixed set moves with any
change of the weights. Both standing still, the mean repeating exactly over `_REPEATS` windows or more and the eval
loss within `_STILL_EVAL` of its level over `_EVALS` evaluations or more, say the updates do not change what the model
outputs: a `no_learning_signal` error from the first logged point (amordo_Iris: a QLoRA Llama-3.2-1B on FineTome rows
formatted from absent keys, every example the same empty prompt; Training Loss 1.577000 at five 200-step evaluations,
Validation Loss 1.577014 -> 1.577002 over 800 steps at LR 2e-4). A loss printed with few decimals repeats on a plateau
by its rounding (PraveenBarathi-K's 26 equal points in a healthy run): its eval loss moves, and nothing is said.
"""
from __future__ import annotations

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .metrics import GRAD_NORM, LOSS, LR, Metrics, finite, format_number, real_loss, repeats_at_the_end

_REPEATS = 4  # logged training losses, every one of the log's, exactly equal
_EVALS = 3  # evaluations of the held-out loss ...
_STILL_EVAL = 1e-4  # ... all within this share of their median
_ABOVE_ROUNDING = 0.01  # a loss under this repeats by a print's rounding (0.0001, 0.0002), not because nothing changed
EVAL_LOSS = "eval_loss"


def detect_frozen_loss(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `no_learning_signal` error where the training loss repeats exactly at every one of `_REPEATS` or more
    logged points and the eval loss is still (`_still_eval`), or []. A learning rate logged as 0 throughout, or a
    grad_norm exactly 0 throughout, is left to the detectors of those."""
    loss = real_loss(metrics)
    values = loss.to_numpy()
    if len(values) < _REPEATS or repeats_at_the_end(values) < len(values) or abs(float(values[0])) < _ABOVE_ROUNDING:
        return []
    if _all_zero(metrics, LR) or _all_zero(metrics, GRAD_NORM):
        return []
    spread = _still_eval(metrics)
    if spread is None:
        return []
    evals = finite(metrics[EVAL_LOSS])
    first, last = int(loss.index[0]), int(loss.index[-1])
    message = (f"the training loss is {format_number(float(values[0]))} at every one of its {len(values)} logged "
               f"points (steps {first} to {last}), the same to every printed digit, and the eval loss moved by "
               f"{spread:.1g} of itself over {len(evals)} evaluations ({float(evals.iloc[0]):.7g} -> "
               f"{float(evals.iloc[-1]):.7g}): a loss averaged over many steps does not repeat exactly "
               "while the weights change what the model outputs, so the updates change nothing. Check the training "
               "examples (a formatter that reads keys the rows lack makes every example the same text), that the "
               "trainable parameters (the adapter) are in the forward pass and reach the optimizer, and that the "
               "learning rate is not 0.")
    return [Finding("no_learning_signal", "error", first, message, end_step=last, metric=LOSS,
                    evidence={"frozen_loss": float(values[0]), "points": int(len(values)), "eval_spread": spread,
                              "frozen": True})]


def _still_eval(metrics: Metrics) -> float | None:
    """The eval loss's spread as a share of its median where `_EVALS` or more evaluations all sit within `_STILL_EVAL`
    of it; else None."""
    evals = finite(metrics[EVAL_LOSS]).to_numpy() if EVAL_LOSS in metrics else np.array([])
    if len(evals) < _EVALS or float(np.median(evals)) <= 0:
        return None
    spread = float((evals.max() - evals.min()) / np.median(evals))
    return spread if spread < _STILL_EVAL else None


def _all_zero(metrics: Metrics, name: str) -> bool:
    series = finite(metrics[name]) if name in metrics else None
    return series is not None and len(series) > 0 and bool(np.all(series.to_numpy() == 0))
