"""Masked NaN loss: `loss` logged as exactly 0.0 next to a non-finite `grad_norm` (or, with no grad_norm
logged, right after a loss no sane model gives, while a decaying learning rate has stopped dead, the fp16
scaler skipping every update, or where DeepSpeed's own count says it skipped nearly every update: see
`masked_loss_steps`).

With `logging_nan_inf_filter=True` (the default) the Trainer leaves NaN/Inf step losses out
of its running sum; when a whole logging window is NaN the sum stays 0 and the logged loss is
exactly 0.0 (see INCIDENTS.md). So 0.0 next to a NaN grad_norm is a NaN loss, not a perfect
fit. Loss 0.0 with a finite grad_norm is something else (`collapse`: no learning signal or a
rounded tiny loss), and is not reported here.
"""
from __future__ import annotations

import numpy as np

from ..config import Thresholds
from ..findings import Finding, plural
from .metrics import (DEEPSPEED_SKIPPED, GRAD_NORM, LOSS, Metrics, format_number, lr_frozen_after_decay,
                      masked_loss_steps, mostly_skipped_zeros)


def detect_masked_nan_loss(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `masked_nan_loss` finding from the first masked step, or [].

    Severity error when the masking lasts to the last logged loss (the run never recovered),
    warning when real losses come back.
    """
    masked = masked_loss_steps(metrics)
    if masked.empty:
        return []
    loss, grad = metrics[LOSS], metrics.get(GRAD_NORM)
    first, last = int(masked.min()), int(masked.max())
    to_end = bool(loss.index[-1] in masked)
    real_before = loss[(loss.index < first) & np.isfinite(loss.to_numpy()) & (loss.to_numpy() != 0.0)]
    prior = (f"last real loss {format_number(real_before.iloc[-1])} at step {int(real_before.index[-1])}"
             if len(real_before) else "no real loss logged before")
    span = "to the end of the log" if to_end else f"through step {last}"
    frozen = lr_frozen_after_decay(metrics) if grad is None else None
    frozen = frozen if frozen and frozen[0] < first <= frozen[1] else None
    if frozen and frozen[1] >= int(loss.index[-1]):
        to_end = True  # no optimizer update from the freeze to the end of the log: the run stopped training
    if grad is not None and grad.loc[first] == 0.0:  # `masked_loss_steps`: overflowed from the start
        message = (f"loss, grad_norm and the learning rate are logged as 0.0 from step {first} {span} "
                   f"({plural(len(masked), 'point')}) before DeepSpeed stopped the run with its fp16 loss scale at the "
                   "floor: every step overflowed, so no optimizer step was ever taken (the warm-up never started, "
                   "DeepSpeed logs grad_norm 0 for a skipped step) and HF's NaN filter logged each NaN/Inf loss as "
                   "0.0. Train in bf16, or find what overflows in fp16 (the inputs, an fp16-unsafe layer).")
    elif grad is not None:
        message = (f"loss is logged as 0.0 from step {first} {span} while grad_norm is "
                   f"{format_number(grad.loc[first])} ({plural(len(masked), 'point')}, {prior}): HF's NaN filter is "
                   f"hiding a NaN loss.")
    elif _nan_eval_at(metrics, first):
        message = (f"loss is logged as exactly 0.0 from step {first} {span} ({plural(len(masked), 'point')}, {prior}) "
                   f"while the eval loss at step {first} is NaN: the evaluation ran NaN weights, so the training loss "
                   "was NaN too, hidden as 0.0 by HF's NaN filter (grad_norm was not logged; "
                   "logging_nan_inf_filter=False would show the NaN).")
    elif first in mostly_skipped_zeros(metrics):
        counts = metrics[DEEPSPEED_SKIPPED].dropna()
        message = (f"loss is logged as exactly 0.0 from step {first} {span} ({plural(len(masked), 'point')}, {prior}) "
                   f"while DeepSpeed's own count says the fp16 loss scaler skipped {int(counts.iloc[-1])} of "
                   f"{int(counts.index[-1])} optimizer updates: the gradients overflowed at nearly every step, so the "
                   "losses were NaN/Inf, hidden as 0.0 by HF's NaN filter, and the few updates left cannot fit "
                   "anything to exactly 0. Train in bf16, or find what overflows in fp16 (logging_nan_inf_filter=False "
                   "would show the NaN).")
    elif frozen:
        lasts = "to the end of the log" if frozen[1] >= int(loss.index[-1]) else f"to step {frozen[1]}"
        message = (f"loss is logged as exactly 0.0 at {plural(len(masked), 'step')} from step {first} ({prior}) while "
                   f"the decaying learning rate has not moved since step {frozen[0]}, {lasts}: the scheduler steps "
                   "only when the optimizer did, so the fp16 loss scaler skipped every update from there (the "
                   "gradients overflowed), and the 0.0s are NaN losses hidden by HF's NaN filter (grad_norm was not "
                   "logged to confirm; logging_nan_inf_filter=False would show the NaN).")
    else:
        message = (f"loss is logged as 0.0 from step {first} {span} ({plural(len(masked), 'point')}, {prior}, above "
                   f"the random-guess loss of any vocabulary): no loss falls from there to exactly 0 in one logging "
                   "window, so every step of it was most likely NaN, hidden by HF's NaN filter (grad_norm was not "
                   "logged to confirm; logging_nan_inf_filter=False would show the NaN).")
    evidence = {
        "n_points": int(len(masked)), "grad_norm": float(grad.loc[first]) if grad is not None else None,
        "to_end": to_end,
        "last_real_loss": float(real_before.iloc[-1]) if len(real_before) else None,
        "last_real_loss_step": int(real_before.index[-1]) if len(real_before) else None,
        "lr_frozen_since": frozen[0] if frozen else None,
    }
    return [Finding("masked_nan_loss", "error" if to_end else "warning", first, message,
                    end_step=last, metric=LOSS, evidence=evidence)]


def _nan_eval_at(metrics: Metrics, step: int) -> bool:
    evals = metrics.get("eval_loss")
    return evals is not None and step in evals.index and not np.isfinite(float(evals.loc[step]))
