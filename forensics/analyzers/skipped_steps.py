"""Skipped optimizer steps: the fp16 loss scaler throwing away a step whose gradients overflowed.

With fp16 (no DeepSpeed) Accelerate's GradScaler skips the optimizer step on an overflow and
the Trainer then skips the scheduler too; nothing is logged about it. What shows: `grad_norm`
is inf/NaN at a logging step while `loss` is finite (and not HF's masked 0.0), the learning
rate stalls, and the next grad_norm is finite again. Megatron counts them itself: `number of
skipped iterations` per logging interval (`skipped_iterations`). That is the scaler working, not
a broken run, but updates were thrown away: a warning (VERDICTS.md), whose message says when the
skips are a fresh scaler calibrating (it starts at 2**16, or 2**32 in Megatron, and halves on each
overflow, so a few skips right after a (re)start are expected).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import THROWN_AWAY, Finding, plural
from .metrics import (DEEPSPEED_SKIPPED, GRAD_NORM, LOSS, LR, Metrics, format_number, lr_restart_steps, position_of,
                      true_runs)
from .overflow import OVERFLOW, SCALE
from .reward_decline import reward_metric


def skipped_step_points(metrics: Metrics, thresholds: Thresholds) -> list[int]:
    """Steps whose non-finite grad_norm is a skipped step: short run, finite loss, finite grad_norm after.

    Returns the steps in order (empty when grad_norm or loss was never logged).
    """
    grad, loss = metrics.get(GRAD_NORM), metrics.get(LOSS)
    if grad is None or loss is None:
        return []
    bad = ~np.isfinite(grad.to_numpy())
    steps = grad.index.to_numpy()
    out: list[int] = []
    for i, j in true_runs(bad):
        run = [int(s) for s in steps[i:j]]
        recovers = j < len(bad)  # a finite grad_norm follows
        short = len(run) <= thresholds.skipped_max_run or i == 0 and _fresh_scaler_search(run)
        if recovers and short and all(_real_finite_loss(loss, s) for s in run):
            out.extend(run)
    return out


_SCALER_HALVINGS = 16  # a fresh GradScaler starts at 2**16: at most this many halvings in a row reach a scale of 1


def _fresh_scaler_search(run: list[int]) -> bool:
    """Whether non-finite grad norms from the log's first point on are a fresh scaler halving its way down: every
    step logged (one point a step: a longer logging interval would hide that many more skips each) and no more of them
    than halvings from its initial scale (ms-swift's fp16 QLoRA: NaN at steps 1-6, finite from 7 on)."""
    return len(run) <= _SCALER_HALVINGS and run[-1] - run[0] == len(run) - 1


def _real_finite_loss(loss: pd.Series, step: int) -> bool:
    if step not in loss.index:
        return False
    value = float(loss.loc[step])
    return bool(np.isfinite(value)) and value != 0.0


def lr_stalled(metrics: Metrics, step: int) -> bool | None:
    """Whether the learning rate advanced less than usual into `step` (None when it cannot be told).

    With logging every N steps one skipped step leaves the rate (N-1)/N of the way, so the
    change is compared with the mean of its neighbours' changes.
    """
    lr = metrics.get(LR)
    if lr is None or step not in lr.index or len(lr) < 3:
        return None
    i = position_of(lr, step)
    if i == 0:
        return bool(lr.iloc[0] == 0.0) or None
    delta = abs(float(lr.iloc[i] - lr.iloc[i - 1]))
    around = [abs(float(lr.iloc[k] - lr.iloc[k - 1])) for k in (i - 1, i + 1) if 1 <= k < len(lr)]
    expected = float(np.mean(around)) if around else 0.0
    if expected == 0.0:
        return None  # constant schedule around here (Time-MoE's 1e-4 at every line): a stall cannot be seen
    if delta == 0.0:
        return True
    interval = max(int(lr.index[i] - lr.index[i - 1]), 1)
    return bool(delta < expected * (1 - 0.5 / interval))


def _near_restart(step: int, starts: list[int], window: int) -> bool:
    return any(0 <= step - s < window for s in starts)


def detect_skipped_steps(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `skipped_steps` warning for all skipped optimizer steps, or [] when there are none; its message
    says whether every skip is within `scaler_warmup_steps` of the run's first step or a learning-rate
    restart (the scaler calibrating)."""
    steps = skipped_step_points(metrics, thresholds)
    if not steps:
        return _counted_skips(metrics) or _deepspeed_skips(metrics)
    grad = metrics[GRAD_NORM]
    starts = [int(grad.index[0])] + lr_restart_steps(metrics)
    calibrating = all(_near_restart(s, starts, thresholds.scaler_warmup_steps) for s in steps)
    stalls = [lr_stalled(metrics, s) for s in steps]
    shown = ", ".join(str(s) for s in steps[:8]) + (" ..." if len(steps) > 8 else "")
    lr_note = " and a learning rate that did not advance" if any(stalls) else ""
    message = (f"grad_norm was non-finite at {plural(len(steps), 'isolated step')} ({shown}) with a finite loss"
               f"{lr_note}: {_scaler_verdict(calibrating, len(steps))}.")
    evidence = {
        "steps": steps, "count": len(steps), "grad_norm": [format_number(grad.loc[s]) for s in steps],
        "loss": [float(metrics[LOSS].loc[s]) for s in steps], "lr_stalled": stalls, "at_restart": calibrating,
    }
    return [Finding("skipped_steps", "warning", steps[0], message,
                    end_step=steps[-1] if len(steps) > 1 else None, metric=GRAD_NORM, evidence=evidence)]


def _scaler_verdict(calibrating: bool, count: int) -> str:
    """What the skips were; `count` of them, so that one skip is said as one ("that optimizer step")."""
    steps, updates = ("that optimizer step", "that update") if count == 1 else \
        ("those optimizer steps", "those updates")
    if calibrating:
        return (f"the fp16 loss scaler calibrating after a (re)start skipped {steps} (expected of a "
                f"fresh scaler, but {updates} did not happen)")
    return f"the fp16 loss scaler skipped {steps} and the run went on"


SKIPPED_COUNT = "skipped_iterations"


def _counted_skips(metrics: Metrics) -> list[Finding]:
    """The skips a Megatron log counts itself (`number of skipped iterations` per logging interval)."""
    counts = metrics.get(SKIPPED_COUNT)
    if counts is None:
        return []
    counted = counts[np.isfinite(counts.to_numpy()) & (counts.to_numpy() > 0)]
    if counted.empty:
        return []
    steps = [int(s) for s in counted.index]
    # A fresh scaler (Megatron's starts at 2**32) skips every interval from the first log line on until it
    # has halved far enough: calibrating when no skip comes after the first interval without one.
    clean = np.flatnonzero(counts.to_numpy() == 0)
    calibrating = steps[0] == int(counts.index[0]) and (not len(clean) or steps[-1] < int(counts.index[clean[0]]))
    total = int(counted.sum())
    shown = ", ".join(f"{int(n)} by step {s}" for s, n in zip(steps[:6], counted.to_numpy()[:6]))
    message = (f"{plural(total, 'optimizer update')} skipped, as the log counts them ({shown}"
               f"{' ...' if len(steps) > 6 else ''}): {_scaler_verdict(calibrating, total)}.")
    return [Finding("skipped_steps", "warning", steps[0], message, end_step=steps[-1] if len(steps) > 1 else None,
                    metric=SKIPPED_COUNT, evidence={"steps": steps, "count": total, "at_restart": calibrating,
                                                    "counted_by_the_log": True})]


# Updates in a row all skipped that no fresh scaler explains: one starting at 2**32 with hysteresis 2 skips at most 64
# while it halves down to its level; past this every update the stretch holds was thrown away, the weights untouched.
_ALL_SKIPPED_STRETCH = 100


def _deepspeed_skips(metrics: Metrics) -> list[Finding]:
    """The skips DeepSpeed's progress lines count (`step=10, skipped=10`, a running total): an error where every
    update was skipped over `_ALL_SKIPPED_STRETCH` steps or more in a row (the weights did not change there: a
    run whose scaler never found a level), from the first progress line of that stretch; else one warning. Left
    to overflow.py where the console also printed DeepSpeed's OVERFLOW lines."""
    counts = metrics.get(DEEPSPEED_SKIPPED)
    if counts is None or OVERFLOW in metrics or SCALE in metrics:
        return []  # the console's own overflow lines tell the skips one by one (overflow.py)
    counts = counts[np.isfinite(counts.to_numpy())]
    if counts.empty or float(counts.iloc[-1]) <= 0:
        return []
    steps = counts.index.to_numpy(dtype="int64")
    done = np.diff(np.concatenate([[0], steps]))
    skipped = np.diff(np.concatenate([[0.0], counts.to_numpy()]))
    every = (skipped >= done) & (done > 0)
    for i, j in true_runs(every):
        if int(steps[j - 1]) - (int(steps[i - 1]) if i else 0) >= _ALL_SKIPPED_STRETCH:
            return [_all_skipped(counts, int(steps[i]), int(steps[j - 1]), j == len(steps))]
    total, last = int(counts.iloc[-1]), int(steps[-1])
    first = int(steps[np.flatnonzero(skipped > 0)[0]])
    message = (f"DeepSpeed counted {plural(total, 'skipped optimizer update')} of {last} (first by step {first}): "
               f"{_scaler_verdict(first == int(steps[0]) and total <= _ALL_SKIPPED_STRETCH // 2, total)}.")
    return [Finding("skipped_steps", "warning", first, message, end_step=last, metric=DEEPSPEED_SKIPPED,
                    evidence={"count": total, "of_steps": last, "counted_by_the_log": True})]


def _all_skipped(counts: pd.Series, start: int, end: int, to_the_end: bool) -> Finding:
    span = f"from step {start} to the end of the log (step {end})" if to_the_end else f"from step {start} to {end}"
    message = (f"DeepSpeed skipped every optimizer update {span} ({int(counts.iloc[-1])} of {int(counts.index[-1])} "
               "in all, by its own `skipped=` count): the loss scaler overflowed at each step, so the weights did not "
               "change there and nothing was learned. Look for inf/NaN in the forward or backward pass (fp16 range, a "
               "custom kernel), or train in bf16.")
    return Finding("skipped_steps", "error", start, message, end_step=end, metric=DEEPSPEED_SKIPPED,
                   evidence={"count": int(counts.iloc[-1]), "of_steps": int(counts.index[-1]),
                             "every_update_from": start, "counted_by_the_log": True})


_EMPTY_MAX_RUN = 2  # logged windows in a row with loss and grad_norm both 0: more is a collapse (collapse.py)


def _empty_batches(loss, grad) -> list[Finding]:
    """Logged windows with loss and grad_norm both exactly 0, one or two at a time, in a log whose loss is well above
    0 elsewhere: nothing in those batches was learned from (every label masked, an answer cut off by truncation, or
    a loss half precision rounds to 0), and the log cannot tell which: a `zero_loss_unexplained` warning from the
    first (cloud-zhoubingye's ChatGLM3 LoRA: four such windows in a fifth of an epoch, grad_norm 0 at 168 of 300)."""
    both = pd.concat([loss.rename("loss"), grad.rename("grad")], axis=1, join="inner").dropna()
    if len(both) < 10 or float(both["loss"].median()) < 0.01:
        return []
    empty = ((both["loss"] == 0.0) & (both["grad"] == 0.0)).to_numpy()
    runs = true_runs(empty)
    if not runs or any(j - i > _EMPTY_MAX_RUN for i, j in runs) or empty[-1]:
        return []  # a run of zeros to the end, or a long one, is a collapse
    steps = [int(both.index[k]) for i, j in runs for k in range(i, j)]
    share = float((both["grad"] == 0.0).mean())
    also = (f"; grad_norm is exactly 0 at {int((both['grad'] == 0.0).sum())} of the {len(both)} logged steps, so more "
            "than half the updates carried no gradient" if share > 0.5 else "")
    message = (f"loss and grad_norm are both exactly 0 at {plural(len(steps), 'logged step')} "
               f"({', '.join(str(s) for s in steps[:6])}{' ...' if len(steps) > 6 else ''}) while the loss is about "
               f"{format_number(float(both['loss'].median()))} elsewhere{also}: those batches gave nothing to learn "
               "from (every label masked, answers cut off by truncation, or a loss half precision rounds to 0), and "
               "the log cannot tell which. Check the labels of those batches after truncation (max_length / "
               "cutoff_len).")
    return [Finding("zero_loss_unexplained", "warning", steps[0], message, end_step=steps[-1], metric=LOSS,
                    evidence={"steps": steps, "grad_norm_zero_share": share, "grad_norm_zero": True})]


_INTERLEAVED_RUNS = 3  # stretches of grad_norm 0 with non-zero values between them: not one stretch to the end


def _mostly_zero_between(grad: pd.Series, loss: pd.Series, zero: np.ndarray) -> list[Finding]:
    """grad_norm exactly 0 at more than half the logged steps, in several stretches with non-zero values between them
    and after the first, while the loss there is finite and non-zero: more than half the updates carried no gradient
    (cloud-zhoubingye's ChatGLM3 LoRA logged every 50 steps: 37 of 60, its loss at 0.2 and learning). A grad_norm at 0
    to the end (a collapse) or throughout (a frozen model) is judged elsewhere: []."""
    runs = true_runs(zero)
    if len(runs) < _INTERLEAVED_RUNS or runs[-1][1] == len(zero) and (
            runs[-1][1] - runs[-1][0] > len(zero) // 4 or not _real_finite_loss(loss, int(grad.index[-1]))):
        return []  # too few stretches, or the log ends at grad_norm 0 for long or with its loss gone too: a collapse
    steps = [int(s) for s in grad.index[zero] if _real_finite_loss(loss, int(s))]
    if len(steps) <= len(zero) // 2:
        return []
    message = (f"grad_norm is exactly 0 at {len(steps)} of the {len(zero)} logged steps (from step {steps[0]}), "
               "between non-zero values, while the loss there is finite and non-zero: more than half the updates "
               "carried no gradient. Batches with nothing to learn from (every label masked, answers cut off by "
               "truncation) or a loss scaler that reports a skipped step as 0 give this; check the labels of a batch "
               "after truncation (max_length / cutoff_len) and the run's fp16 overflow messages.")
    return [Finding("skipped_steps", "warning", steps[0], message, end_step=steps[-1], metric=GRAD_NORM,
                    evidence={"steps": steps, "count": len(steps), "grad_norm_zero": True,
                              "grad_norm_zero_share": float(zero.mean()), "at_restart": False})]


# A grad_norm below this share of the run's median positive grad_norm is no gradient at all: a batch with labelled
# tokens gives a norm of the same order as its neighbours, not one a million times smaller (a loss scaler reports a
# skipped step as 0 or NaN, never as 1e-9).
_VANISHING = 1e-6


def scaler_shown(metrics: Metrics, thresholds: Thresholds) -> bool:
    """Whether the log itself shows a loss scaler at work: a logged loss scale, overflow lines, counted skips, or a
    non-finite grad_norm beside a finite loss that the run went on from."""
    return any(name in metrics for name in (SCALE, OVERFLOW, SKIPPED_COUNT, DEEPSPEED_SKIPPED)) \
        or bool(skipped_step_points(metrics, thresholds))


def detect_zero_grad_steps(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """grad_norm exactly 0 (or vanishingly small) at isolated logged steps whose loss is finite and non-zero, between
    ordinary values: no gradient reached the weights there. Where the log shows a loss scaler (a loss scale, overflow
    lines, skips counted, a non-finite grad_norm the run went on from), the exact zeros are steps it skipped: a
    `skipped_steps` warning. Where it does not, nothing says a scaler was there to skip them: those batches carried no
    learning signal (every label masked, an example that tokenizes to nothing): a `no_learning_signal` warning, which
    `as_scaler_skips` turns back into skipped steps where the run's configuration says fp16; an info where the log
    shows those batches to be few (`_surely_few`). [] when there are none."""
    grad, loss = metrics.get(GRAD_NORM), metrics.get(LOSS)
    if grad is None or loss is None or reward_metric(metrics) is not None:
        return []  # in GRPO/PPO a zero gradient is a batch whose groups all scored alike, not a skipped update
    values = grad.to_numpy(dtype="float64")
    zero = values == 0.0
    empty = _empty_batches(loss, grad)
    if empty:
        return empty
    if zero.mean() > 0.5:
        return _mostly_zero_between(grad, loss, zero)
    positive = values[np.isfinite(values) & (values > 0)]
    tiny = np.isfinite(values) & (values > 0) & (values < _VANISHING * float(np.median(positive))) \
        if len(positive) else np.zeros_like(zero)
    if not (zero | tiny).any():
        return []
    steps = grad.index.to_numpy()
    found: list[int] = []
    for i, j in true_runs(zero | tiny):
        run = [int(s) for s in steps[i:j]]
        if 0 < i and j < len(values) and len(run) <= thresholds.skipped_max_run \
                and all(_real_finite_loss(loss, s) for s in run):
            found.extend(run)
    if not found:
        return []
    zeros = [s for s in found if float(grad.loc[s]) == 0.0]
    vanishing = [s for s in found if s not in zeros]
    if zeros and scaler_shown(metrics, thresholds):
        return [_zero_grad_skips(metrics, thresholds, zeros, vanishing)]
    shown = ", ".join(str(s) for s in found[:8]) + (" ..." if len(found) > 8 else "")
    counted = " and ".join(part for part in (
        f"exactly 0 at {plural(len(zeros), 'isolated step')}" if zeros else "",
        f"{'below' if zeros else 'vanishingly small, below'} "
        f"{format_number(float(max(grad.loc[s] for s in vanishing)))} at "
        f"{len(vanishing) if zeros else plural(len(vanishing), 'isolated step')}{' more' if zeros else ''}"
        if vanishing else "") if part)
    message = (f"grad_norm is {counted} ({shown}) while the loss there is finite and ordinary and grad_norm is about "
               f"{format_number(float(np.median(positive)))} around them: those batches gave the model no gradient, "
               "so they taught it nothing. The log shows no loss scaler (no fp16 loss scale, overflow message or "
               "non-finite grad_norm) that would have skipped them; most likely every label of those batches was "
               "masked (examples that tokenize to nothing, answers cut off by truncation). Count the examples whose "
               "labels are all -100 after tokenization and truncation (max_length / cutoff_len).")
    few = _surely_few(len(found), len(values))
    if few:
        message += (f" They are {len(found)} of the {len(values)} logged steps: by that sample at most "
                    f"{few:.1%} of the batches, a share of the compute and nothing the weights suffer from.")
    return [Finding("no_learning_signal", "info" if few else "warning", found[0], message,
                    end_step=found[-1] if len(found) > 1 else None, metric=GRAD_NORM,
                    evidence={"steps": found, "count": len(found), "zero_steps": zeros, "vanishing_steps": vanishing,
                              "no_gradient_batches": True})]


# A logged grad_norm is one step's (the Trainer logs the norm of the last update of each logging window), so the share
# of logged steps without gradient estimates the share of all batches without it. A few empty examples (blank lines of
# a raw text corpus, an answer truncated away) are in most data sets and cost their share of the compute; one batch in
# twenty or more is a data-preparation fault worth fixing. The bound is the one-sided 95% Wilson upper bound of that
# share, so a short log whose few zeros allow more stays a warning (no "few" without the evidence for it).
_FEW_SHARE = 0.05
_Z_95 = 1.645


def _surely_few(count: int, logged: int) -> float | None:
    """The upper bound of the share of batches without gradient, where it is under `_FEW_SHARE`; else None."""
    share, z2 = count / logged, _Z_95 ** 2
    spread = _Z_95 * np.sqrt(share * (1 - share) / logged + z2 / (4 * logged ** 2))
    bound = (share + z2 / (2 * logged) + spread) / (1 + z2 / logged)
    return float(bound) if bound < _FEW_SHARE else None


def _zero_grad_skips(metrics: Metrics, thresholds: Thresholds, found: list[int], vanishing: list[int]) -> Finding:
    """The `skipped_steps` warning for grad_norms of exactly 0 at isolated steps of a run with a loss scaler."""
    grad = metrics[GRAD_NORM]
    starts = [int(grad.index[0])] + lr_restart_steps(metrics)
    calibrating = all(_near_restart(s, starts, thresholds.scaler_warmup_steps) for s in found)
    shown = ", ".join(str(s) for s in found[:8]) + (" ..." if len(found) > 8 else "")
    message = (f"grad_norm is exactly 0 at {plural(len(found), 'isolated step')} ({shown}) while the loss there is "
               "finite and non-zero and grad_norm is not 0 around them: no gradient reached the weights, so those "
               "updates did not happen (a loss scaler that reports a skipped step as 0, or batches with nothing "
               "to learn). Check the fp16 / DeepSpeed overflow messages of the run.")
    return Finding("skipped_steps", "warning", found[0], message,
                   end_step=found[-1] if len(found) > 1 else None, metric=GRAD_NORM,
                   evidence={"steps": found, "count": len(found), "grad_norm_zero": True, "at_restart": calibrating,
                             "vanishing_steps": vanishing})


def as_scaler_skips(findings: list[Finding], metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """For a run whose configuration says fp16 (a loss scaler there, though its log does not show it): the isolated
    exact-0 grad_norms `detect_zero_grad_steps` named batches without a learning signal are the scaler's skipped steps
    (`skipped_steps`); the findings otherwise unchanged, in order."""
    out = []
    for f in findings:
        zeros = f.evidence.get("zero_steps") if f.kind == "no_learning_signal" else None
        if zeros and GRAD_NORM in metrics:
            skips = _zero_grad_skips(metrics, thresholds, list(zeros), list(f.evidence.get("vanishing_steps", [])))
            if f.abandoned:
                skips = replace(skips, abandoned=True,
                                message=skips.message.rstrip(".") + THROWN_AWAY)
            f = skips
        out.append(f)
    return out
