"""Non-finite metrics: the first step where a loss, grad_norm or reward went NaN/Inf.

One finding per metric. It is an error when the metric never comes back to a finite value
(to the end of its history: the model is damaged), a warning when it does. Non-finite
grad_norms that are skipped fp16 steps (see `skipped_steps`) are left to that detector.
"""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding, plural
from .metrics import EXPLODED_LOSS, GRAD_NORM, LOSS, Metrics, format_number, true_runs

_WATCHED_PREFIXES = ("rewards/", "logps/", "logits/")
# `printed_tensor`: a scalar a hand-written loop printed each step with no name (ingest.pretrain_lines), most often
# its loss; whatever it is, a NaN there is trouble.
_WATCHED_NAMES = (GRAD_NORM, "kl", "reward", "printed_tensor")


def is_watched(name: str) -> bool:
    """True for metrics whose NaN/Inf means trouble: losses, grad_norm, preference rewards/logps/logits.

    >>> [is_watched(n) for n in ("loss", "eval_loss", "grad_norm", "rewards/chosen", "learning_rate", "rewards/r/std")]
    [True, True, True, True, False, False]
    """
    if name.endswith("/std"):
        return False  # TRL's per-reward std is NaN by design when a group has a single completion
    return (name.endswith("loss") or name in _WATCHED_NAMES or name.startswith(_WATCHED_PREFIXES)
            or _WATCHED_PARTS.search(name) is not None)


# RL trainers' own names: TRL PPOTrainer's `loss/value_avg`, `objective/kl`, verl's `actor/pg_loss`, `actor/ppo_kl`
_WATCHED_PARTS = re.compile(r"(?:^|/)loss/|(?:^|/)(?:ppo_)?kl$|_loss$")


def detect_nonfinite_metrics(metrics: Metrics, thresholds: Thresholds,
                             skipped_steps: Iterable[int] = ()) -> list[Finding]:
    """A `nonfinite_metric` finding for each watched metric that has a NaN/Inf point.

    `skipped_steps` (grad_norm points explained as skipped fp16 steps) are not counted.
    Returns findings in metric-name order.
    """
    skipped = set(int(s) for s in skipped_steps)
    findings = []
    for name in sorted(metrics):
        if not is_watched(name):
            continue
        series = metrics[name]
        bad = ~np.isfinite(series.to_numpy())
        if name == GRAD_NORM and skipped:
            bad &= ~series.index.isin(list(skipped))
        if bad.any():
            found = _sporadic_diagnostic(_only_the_evaluation(_finding(name, series, bad), metrics), series, bad,
                                         metrics)
            passed = len(skipped.intersection(int(x) for x in series.index)) if name == GRAD_NORM else 0
            findings.append(_skipped_at_the_end(found, series, bad, metrics, passed))
    return findings


# Per-batch means a preference trainer logs beside its loss: a NaN there is a mean over an empty selection (a
# completion that kept no token after truncation) as often as a broken model.
_DIAGNOSTIC_PREFIXES = ("logits/", "logps/")
_SPORADIC_SHARE = 0.25  # at most this share of the metric's points non-finite


def _sporadic_diagnostic(found: Finding, series: pd.Series, bad: np.ndarray, metrics: Metrics) -> Finding:
    """A diagnostic mean (logits/*, logps/*) non-finite now and then - finite again between its non-finite points, at
    most a quarter of them non-finite - while the training loss is finite and sound (no exact 0.0, nothing above
    `EXPLODED_LOSS`) at every point from the first one on: a warning even when the last point happens to be one of
    them. The loss the weights were trained on says they are sound; the NaN is a batch the mean had nothing to
    average over."""
    if found.severity != "error" or not found.metric.startswith(_DIAGNOSTIC_PREFIXES) or LOSS not in metrics:
        return found
    first = int(np.argmax(bad))
    if bad[first:].all() or bad.sum() > _SPORADIC_SHARE * len(bad):
        return found  # non-finite to the end from its first bad point, or too often to be a stray batch
    loss = metrics[LOSS]
    after = loss[loss.index >= found.step].to_numpy(dtype="float64")
    if len(after) < 3 or not np.all(np.isfinite(after)) or np.any(after == 0.0) or np.any(after > EXPLODED_LOSS):
        return found
    steps = [int(s) for s in series.index.to_numpy()[bad]]
    listed = ", ".join(str(s) for s in steps[:6]) + (", ..." if len(steps) > 6 else "")
    message = (f"{found.metric} is {format_number(series.to_numpy()[first])} at {plural(len(steps), 'point')} of "
               f"{len(bad)} (steps {listed}) and finite in between, while the training loss stays finite: a batch "
               "whose mean had no tokens to average over (a completion cut to nothing by max_length / "
               "max_prompt_length) rather than broken weights. Check the truncation settings.")
    return replace(found, severity="warning", message=message, evidence={**found.evidence, "sporadic": True})


_SHORT_END = 2  # at most this many non-finite grad norms ending the log: too few to say the run never got past them
_FINITE_BEFORE = 3  # ... after at least this many finite ones


def _skipped_at_the_end(found: Finding, series: pd.Series, bad: np.ndarray, metrics: Metrics,
                        skipped_before: int = 0) -> Finding:
    """A grad_norm non-finite at only the last `_SHORT_END` points of a log where it was finite before, while the
    training loss logged at a later step is finite and sound (not exactly 0.0, which HF's NaN filter logs for a
    window of NaN losses; not exploded): a warning. Weights a NaN gradient reached give a NaN loss at the next step, so
    a finite loss after it says the update was skipped (a loss scaler, a skip-on-NaN optimizer wrapper); the log ends
    too soon after to tell a passing burst from updates skipped for good (InternLM/xtuner issue 187: grad_norm NaN at
    iterations 240 and 250 of a paste ending there, the loss 2.51 then 2.46). Where `_RECOVERED_BURSTS` earlier
    bursts came before it (`skipped_before`: those read as skipped updates), each followed by finite norms, see
    `_burst_again_at_the_end`."""
    if found.severity != "error" or found.metric != GRAD_NORM or LOSS not in metrics:
        return found
    runs = true_runs(bad)
    first = runs[-1][0]  # the stretch non-finite to the end
    if len(bad) - first > _SHORT_END or first < _FINITE_BEFORE:
        return found
    loss = metrics[LOSS]
    since = loss[loss.index >= int(series.index[runs[0][0]])].to_numpy(dtype="float64")
    if not np.all(np.isfinite(since)) or np.any(since == 0.0) or np.any(since > EXPLODED_LOSS):
        return found
    later = loss[loss.index > int(series.index[first])].to_numpy(dtype="float64")
    if len(runs) - 1 + skipped_before >= _RECOVERED_BURSTS:
        return _burst_again_at_the_end(found, series, runs, since, skipped_before)
    if len(later) == 0:
        return found
    message = (f"{found.message} The training loss logged after it stays finite ({format_number(float(later[-1]))} at "
               f"step {int(loss.index[-1])}): the non-finite gradients did not reach the weights (those updates were "
               f"skipped), and the log ends {_ends_after(len(bad) - first - 1)}: whether the run got past it does not "
               "show. A longer log (or the loss scale / skipped-step count) tells a passing burst from a run that "
               "stopped updating.")
    return replace(found, severity="warning", message=message, evidence={**found.evidence, "skipped_at_end": True})


_RECOVERED_BURSTS = 3  # earlier bursts the run came back from: a pattern, not one lucky recovery


def _burst_again_at_the_end(found: Finding, series: pd.Series, runs: list, loss_since: np.ndarray,
                            skipped_before: int) -> Finding:
    """A grad_norm that went non-finite in earlier bursts, finite again after each, the training loss finite and sound
    from the first of them to the end, and non-finite again at only the last `_SHORT_END` points: the same event once
    more (the earlier ones did not reach the weights: the loss stayed sound after each), not weights shown broken;
    a warning, saying that whether the run got past the last one does not show (a bf16 QLoRA with NaN norms at 23
    scattered steps through its last, the loss falling throughout)."""
    end = int(series.index[runs[-1][0]])
    message = (f"{found.message} The training loss stays finite from the first of them to the end "
               f"({format_number(float(loss_since[-1]))} last), through "
               f"{plural(len(runs) - 1 + skipped_before, 'earlier burst')} the run came back from (skipped updates "
               f"counted): those updates did not reach the weights. The burst at step {end} looks like "
               "another; the log ends before showing the run got past it. Check the last checkpoint's weights and why "
               "the gradient norm overflows (a batch of extreme length, gradients past the precision's range).")
    return replace(found, severity="warning", message=message,
                   evidence={**found.evidence, "recurring": True, "bursts": len(runs) + skipped_before})


def _ends_after(points: int) -> str:
    return "there" if points == 0 else f"{plural(points, 'logged point')} after it"


def _only_the_evaluation(found: Finding, metrics: Metrics) -> Finding:
    """An eval metric non-finite to the end while the training loss stays finite after it (three points or more, the
    last one finite): the evaluation broke, not the weights (a QA eval whose answers were cut off has no label
    tokens: a NaN mean). A warning that says so; the weights are judged by the training metrics. Not where that training
    loss is itself unsound: exactly 0.0 somewhere (what HF's NaN filter logs) or above `EXPLODED_LOSS` (mT5 in fp16:
    163, 0.0, 155 beside an eval loss NaN at every evaluation)."""
    if found.severity != "error" or not found.metric.startswith("eval_") or LOSS not in metrics:
        return found
    loss = metrics[LOSS]
    after = loss[loss.index >= found.step].to_numpy(dtype="float64")
    if len(after) < 3 or not np.all(np.isfinite(after)):
        return found
    if np.any(after == 0.0) or np.any(after > EXPLODED_LOSS):
        return found  # a training loss at exactly 0 (HF's NaN filter) or past any cross-entropy is no sound training
    message = (found.message + " The training loss stays finite through the end of the log: the evaluation is "
               "what breaks (eval examples with no label tokens left after truncation, a metric over an empty set), "
               "not the weights. Check the eval data and compute_metrics.")
    return replace(found, severity="warning", message=message, evidence={**found.evidence, "training_finite": True})


# The timeline's format of a W&B run's wandb-summary.json: each metric's last value only.
_SUMMARY_FORMAT = "wandb_summary"


def told_by_a_summary_alone(findings: list[Finding], final: pd.DataFrame) -> list[Finding]:
    """Non-finite findings whose metric the standing history (`final`, Timeline.final()) holds only from a W&B
    summary, said as what they are: the last value. A summary keeps each metric's last value, so "never finite
    before" is not known there, nor the step it went non-finite; the message says so and where the history is."""
    out = []
    for f in findings:
        rows = final[final["metric"] == f.metric] if f.kind == "nonfinite_metric" else final.iloc[:0]
        if rows.empty or f.evidence.get("last_finite") is not None or (rows["format"] != _SUMMARY_FORMAT).any():
            out.append(f)
            continue
        message = (f"{f.metric} is {format_number(f.evidence['value'])} in the run's W&B summary "
                   f"({Path(str(rows['source'].iloc[-1])).name}, step {f.step}): a summary holds only each metric's "
                   f"last value, so when it went non-finite, and whether it was ever finite, does not show. The run's "
                   f"history says: its .wandb log (run-*.wandb beside the files/ folder), "
                   f"wandb.Api().run(path).history(), or the console in files/output.log.")
        out.append(replace(f, message=message, evidence={**f.evidence, "summary_only": True}))
    return out


def _finding(name: str, series: pd.Series, bad: np.ndarray) -> Finding:
    steps, values = series.index.to_numpy(), series.to_numpy()
    first = int(np.argmax(bad))
    last_bad = int(len(bad) - 1 - np.argmax(bad[::-1]))
    before = np.isfinite(values[:first])
    last_finite = (float(values[:first][before][-1]), int(steps[:first][before][-1])) if before.any() else None
    after = np.isfinite(values[last_bad + 1:])
    recovered_at = int(steps[last_bad + 1:][after][0]) if after.any() else None
    ends_finite = bool(np.isfinite(values[-1]))
    word = format_number(values[first])
    prior = (f"last finite {format_number(last_finite[0])} at step {last_finite[1]}" if last_finite
             else "never finite before" if first else "already at its first logged value")  # none before it
    tail_start = true_runs(bad)[-1][0]
    if ends_finite:
        message = (f"{name} is {word} at step {int(steps[first])} ({plural(int(bad.sum()), 'non-finite point')} "
                   f"through step {int(steps[last_bad])}, {prior}) and finite again from step {recovered_at}.")
    elif tail_start > first:  # non-finite now and then, finite in between, and again at the end
        message = (f"{name} is {word} at step {int(steps[first])} ({prior}), at "
                   f"{plural(int(bad.sum()), 'non-finite point')} in all, finite again between them, and non-finite "
                   f"at the end of the log from step {int(steps[tail_start])} on.")
    else:
        message = f"{name} is {word} from step {int(steps[first])} on ({prior})."
    evidence = {
        "metric": name, "value": float(values[first]), "n_nonfinite": int(bad.sum()),
        "last_finite": last_finite[0] if last_finite else None,
        "last_finite_step": last_finite[1] if last_finite else None,
        "recovered": ends_finite, "recovered_at": recovered_at if ends_finite else None,
    }
    return Finding("nonfinite_metric", "warning" if ends_finite else "error", int(steps[first]), message,
                   end_step=int(steps[last_bad]), metric=name, evidence=evidence)
