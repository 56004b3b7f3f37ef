"""Loss at (near) zero: a genuine collapse, no learning signal at all, or plain memorization.

A stretch of at least `collapse_points` logged losses at or below `collapse_abs` (masked NaN
zeros and NaN/Inf left out) is judged by how the loss got there:

* `no_learning_signal`: loss and grad_norm both exactly 0 from the first logged point: the
  model never had anything to learn from (every label masked to -100, an empty target).
* `loss_collapse`: the loss fell suddenly -- from a level of at least
  `collapse_drop_factor * collapse_abs` (median of the `collapse_window` points before) to the
  floor in one logging interval -- or grad_norm went to exactly 0 with it. Memorization never
  makes grad_norm exactly 0 and descends through the levels in between. "early" when it starts
  within the first `early_collapse_points` logged points (INCIDENTS.md case 5).
* `memorization` (warning, VERDICTS.md): a gradual descent to ~0 with a finite non-zero
  grad_norm, such as a small dataset learned by heart; a 4.x Trainer rounds such a loss to 0.0
  (4 decimals). Its span runs over every near-zero stretch that follows while the loss stays
  low in between (under `memorization_gap_level`, or for no more than `collapse_points` points),
  so it ends where the memorization ends.
* `zero_loss_unexplained` (warning): the same gradual descent to exactly 0.0 with no grad_norm
  logged. Memorization, a NaN hidden by HF's filter and labels all masked all log 0.0; without
  grad_norm the log cannot tell them apart, and the finding says what to log to tell. Also a loss near 0
  before the first epoch ended that is not the collapse below (the log cannot say what it is).
* `loss_collapse` too (`targets_given_away`): a language model's loss at 0.01 nats before the first epoch
  ended that goes on to the floor of a 4-decimal print, with no eval loss: the targets are handed to the
  model (unshifted labels, a missing causal mask). A classification head's is a warning (`for_a_classifier`).
  And one that settles tenfold lower, under 0.01, in its first pass (`collapsed_in_first_pass`): an error where it
  ends at a 4-decimal print's floor, a warning where it stays above it; from under 1 nat only where the run profile
  says it is a language model (`for_a_language_model`). And a warning where a sparse log is under 0.05 nats at a
  first-pass point and near 0 from the next one to the end (`too_low_on_unseen_text`).

Errors when the stretch lasts to the end of the log; warnings when the loss comes back.
Preference/RL logs (rewards/*, logps/*) are skipped: their loss sits near zero by design; a pairwise
preference loss at ~0 with a vanished grad_norm to the end is reported as saturated pairs (a warning).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .epoch_staircase import memorized_at_the_epoch_starts
from .held_out_score import held_out_score_higher_at_every_eval
from .late_passes import memorized_over_late_passes
from .memorization import (eval_advice, held_out_loss_names, memorization_level, memorized_in_a_staircase,
                           memorized_without_eval, phase_ends, phases, told_by_train_loss, with_eval_like_training)
from .memorization_onset import dated_from_settling
from .metrics import (GRAD_NORM, LOSS, Metrics, finite, format_number, is_preference_log, lr_restart_steps, real_loss,
                      true_runs)
from .overfitting import EVAL_LOSS, eval_loss_names
from .pairwise_loss import pairs_memorized, pairs_separated_on_return, saturated_pairs
from .zero_in_first_epoch import (collapsed_in_first_pass, near_zero_from_the_start, targets_given_away,
                                  too_low_on_unseen_text, unless_first_epoch)


def _held_out_level(found: Finding, thresholds: Thresholds) -> float:
    """The eval loss under which held-out data counts as predicted as well as the training data: near zero beside a
    collapse; beside a gradual descent (memorization), the level a memorized training loss is judged under."""
    return thresholds.memorization_level if found.kind == "memorization" else thresholds.collapse_abs


def _held_out_already_at_zero(metrics: Metrics, loss: pd.Series, start: int, stop: int, level: float) -> bool:
    """Every eval loss logged from the last evaluation at or before a near-zero stretch's start to its end is itself
    under `level`: the model predicted held-out data as well before the training loss got there, so that loss is
    the model's own fit of an easy task, not a degenerate model nor one that learned its data by heart
    (AndrewMichael2020's text-to-SQL GPT: validation 0.0000 at the end of epoch 1, while the epoch's running training
    mean was still 0.57; Seanaaa0's synthetic grid task: eval 3.4e-4 before the training loss reached 1e-5;
    smhavens' one-word category answers: eval 0.0014-0.0089 at every epoch while the training loss went 0.39 ->
    0.0008). Evaluations before that one, while the training loss was still up too, say nothing against it
    (QuinnAho_csc-5991-hw1's deterministic seq2seq task: val 1.91, 0.33, 0.012, then 7.3e-5 at epoch 4 while the
    training loss was 0.0033, before it fell to 3.4e-5 at epoch 5)."""
    evals = finite(metrics[EVAL_LOSS]) if EVAL_LOSS in metrics else None
    if evals is None or not len(evals):
        return False
    upto = evals[evals.index <= int(loss.index[stop - 1])]
    by_start = np.flatnonzero(upto.index < int(loss.index[start]))
    return bool(len(by_start)) and bool(np.all(upto.to_numpy()[by_start[-1]:] <= level))


_FOLLOWING_EVALS = 2  # evaluations inside a near-zero stretch that say whether held-out data went there too


def _held_out_followed(metrics: Metrics, found: Finding, thresholds: Thresholds) -> bool:
    """The eval loss came down with the training loss: at every evaluation inside the near-zero span (two or more)
    under `memorization_level` and no higher at its last than at its first there. Held-out data the model predicts
    as well as its training data is a task learned, not examples learned by heart (rishab-pulugurta's peptide masked
    LM: eval 0.0003 at 1000, 1e-4 from 1300, 4.8e-5 at 2000, at or under the training loss throughout); a leak both
    splits share would read the same, which no loss curve can tell."""
    evals = finite(metrics[EVAL_LOSS]) if EVAL_LOSS in metrics else None
    if evals is None:
        return False
    end = found.end_step if found.end_step is not None else found.step
    inside = evals[(evals.index >= found.step) & (evals.index <= end)]
    return len(inside) >= _FOLLOWING_EVALS and float(inside.max()) < thresholds.memorization_level \
        and float(inside.iloc[-1]) <= float(inside.iloc[0])


_SCATTERED_ZEROS = 10  # near-zero points standing alone elsewhere in the log: the loss takes that value now and then
_SHORT_RUN = 5  # ... so a run this short of them, with the loss back at its level after, is chance, not a collapse
_HIGH_LEVEL = 0.1  # ... where the loss's median before the run is at least this: zeros scattered in a loss not near 0


def _among_scattered_zeros(loss: pd.Series, start: int, stop: int, thresholds: Thresholds) -> bool:
    """A short run of near-zero losses the log comes back from, in a log where the loss is near zero at
    `_SCATTERED_ZEROS` or more single points elsewhere and its median is `_HIGH_LEVEL` or more: a per-batch loss that
    reaches 0 by itself (a pair loss `1 + neg - pos` at a perfectly separated batch: the RWKV reward loop's 160 zeros
    among 3,728 batches), three in a row by chance, not a collapse or a masked NaN. The level is the median before the
    run, not the whole log's: one example a step (gessi-chatbots_RE-Miner-Hub, an OpenAI fine-tune's 69 examples x 3
    epochs), three easy examples in a row at 66-68 of a first pass that scatters from 7 nats to 1e-4 (median 1.19)
    are the model certain on examples it has not yet seen; the later passes, near 0, lower the whole log's median."""
    if stop - start > _SHORT_RUN or stop >= len(loss) or not float(loss.iloc[:start].median()) >= _HIGH_LEVEL:
        return False  # (a loss hovering near 0 - or a run at the first point - is judged below: a memorized log)
    low = loss.to_numpy() <= thresholds.collapse_abs
    singles = sum(1 for i, j in true_runs(low) if j - i == 1)
    return singles >= _SCATTERED_ZEROS


def near_zero_runs(loss: pd.Series, thresholds: Thresholds) -> list[tuple[int, int]]:
    """(start, stop) positions of stretches of >= collapse_points losses at or below collapse_abs; in a log too short
    for that many (a launch cut after three prints), a stretch of two or more that holds every point after the first:
    shresthakamal's DialoGPT loop, 5.59, 1.5e-9, 0.0, and no more."""
    low = loss.to_numpy() <= thresholds.collapse_abs
    n = len(low)
    return [(i, j) for i, j in true_runs(low)
            if j - i >= thresholds.collapse_points or n <= thresholds.collapse_points and i == 1 and j == n >= 3]


def detect_loss_collapse(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """Findings for each genuine collapse, plus one `memorization` warning for the first gradual one."""
    if LOSS not in metrics:
        return []
    if is_preference_log(metrics):
        return saturated_pairs(metrics, thresholds) or pairs_memorized(metrics) or pairs_separated_on_return(metrics)
    loss = real_loss(metrics)
    grad = metrics.get(GRAD_NORM)
    findings: list[Finding] = []
    low_start = near_zero_from_the_start(loss, metrics, thresholds)
    runs = near_zero_runs(loss, thresholds)
    held_out_followed = False
    for start, stop in runs:
        if _among_scattered_zeros(loss, start, stop, thresholds):
            continue
        found = _judge(loss, grad, start, stop, thresholds, _held_out_above(metrics, thresholds),
                       eval_logged=bool(eval_loss_names(metrics)))
        if found.kind in ("loss_collapse", "memorization") \
                and _held_out_already_at_zero(metrics, loss, start, stop, _held_out_level(found, thresholds)):
            continue
        if found.kind in _GRADUAL:
            if any(f.kind in _GRADUAL for f in findings) or held_out_followed:
                continue  # one gradual descent: the first finding already spans the later stretches
            found = _extend_span(found, loss, runs, start, thresholds)
            if found.kind == "memorization" and _held_out_followed(metrics, found, thresholds):
                held_out_followed = True  # ... and the later stretches are the same descent
                continue
        if found.kind == "memorization" and not held_out_loss_names(metrics):  # with one, overfitting dates the story
            # (the strict level: a loss that went on to ~0 got under it, whatever the epochs)
            found = dated_from_settling(found, loss.iloc[:start + 1], float(loss.iloc[start]),
                                        thresholds.memorization_level)
        if found.kind == "zero_loss_unexplained":
            found = told_by_train_loss(found, metrics)
        if found.kind == "memorization":
            found = unless_first_epoch(found, metrics)
        findings.append(found)
    given_away = targets_given_away(loss, metrics, thresholds) or collapsed_in_first_pass(loss, metrics, thresholds) \
        or too_low_on_unseen_text(loss, metrics, thresholds)
    if given_away or low_start:  # what the start says comes before any later descent
        return [given_away or low_start] + [f for f in findings if f.kind not in _GRADUAL]
    if not findings and not held_out_loss_names(metrics):
        level, why = memorization_level(metrics, thresholds)
        epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
        findings += next(([phase_ends(f, loss) for f in found] for phase in phases(loss, lr_restart_steps(metrics))
                          if (found := memorized_without_eval(phase, level, thresholds, epochs, why,
                                                              to_the_end=not eval_loss_names(metrics)))), [])
        if not findings and epochs is not None and len(epochs):
            findings += memorized_in_a_staircase(loss, epochs) or memorized_over_late_passes(loss, epochs, thresholds)
        findings = [with_eval_like_training(f, metrics) for f in findings]
    if not findings:  # a staircase at any level, where no eval is held out or the one logged moves with the passes
        findings = [with_eval_like_training(f, metrics) for f in memorized_at_the_epoch_starts(metrics)]
    return _unless_held_out_score_rose(findings, metrics, loss)


def _unless_held_out_score_rose(findings: list[Finding], metrics: Metrics, loss: pd.Series) -> list[Finding]:
    """`findings` less memorization where no held-out loss is logged and a held-out score was higher at every
    evaluation to the end of the log (`held_out_score_higher_at_every_eval`): the model was still getting better on
    examples it had not seen, the opposite of a training set learned by heart, whatever the training loss's scale (a
    multi-label classifier's per-label loss is small from its first epoch). A held-out loss, where logged, judges
    instead (overfitting)."""
    if held_out_loss_names(metrics) or not any(f.kind == "memorization" for f in findings) \
            or not held_out_score_higher_at_every_eval(metrics, loss):
        return findings
    return [f for f in findings if f.kind != "memorization"]


_GRADUAL = ("memorization", "zero_loss_unexplained")


def _extend_span(found: Finding, loss: pd.Series, runs: list[tuple[int, int]], start: int,
                 thresholds: Thresholds) -> Finding:
    """The gradual finding stretched over the near-zero stretches after it, while the loss stays low between them."""
    values = loss.to_numpy()
    stop = next(j for i, j in runs if i == start)
    for i, j in runs:
        brief = i - stop <= thresholds.collapse_points  # a batch or two that the model had not learned yet
        if i >= stop and (brief or np.all(values[stop:i] < thresholds.memorization_gap_level)):
            stop = j
    end = int(loss.index[stop - 1])
    to_end = stop == len(loss)
    evidence = {**found.evidence, "n_points": stop - start, "to_end": to_end}
    return replace(found, end_step=end, evidence=evidence,
                   message=found.message.replace("{span}", "to the end of the log" if to_end else f"until step {end}"))


def _held_out_above(metrics: Metrics, thresholds: Thresholds) -> bool:
    """Whether a held-out loss stays above `memorization_level`: the model does not find every text that easy, so a
    training loss near 0 is its training set learned (hyeonggeonkim-berkeley's fifth training of one T5 in a notebook:
    train 0.0009 from its first epoch, validation 0.034), not a target leaked into the input or labels masked."""
    return any(float(finite(metrics[name]).min()) >= thresholds.memorization_level
               for name in held_out_loss_names(metrics) if len(finite(metrics[name])))


def _judge(loss: pd.Series, grad: pd.Series | None, start: int, stop: int, thresholds: Thresholds,
           held_out_above: bool = False, eval_logged: bool = True) -> Finding:
    steps = loss.index
    first, last = int(steps[start]), int(steps[stop - 1])
    to_end = stop == len(loss)
    zero_grad = _grad_all_zero(grad, steps[start:stop])
    before = loss.iloc[max(0, start - thresholds.collapse_window):start]
    level = float(before.median()) if len(before) else None
    sudden = level is not None and level >= thresholds.collapse_drop_factor * thresholds.collapse_abs \
        and _held_its_level(loss, start, thresholds)
    severity = "error" if to_end else "warning"
    span = "to the end of the log" if to_end else f"through step {last}"
    evidence = {"n_points": stop - start, "to_end": to_end, "grad_norm_zero": zero_grad,
                "level_before": level, "value": float(loss.iloc[start]), "position": start}
    all_zero = bool(np.all(loss.iloc[start:stop].to_numpy() == 0.0))
    if level is None and zero_grad:
        message = (f"loss and grad_norm are exactly 0 from the first logged step {first} {span}: "
                   f"the model has nothing to learn from (labels all masked?).")
        return Finding("no_learning_signal", severity, first, message, end_step=last, metric=LOSS, evidence=evidence)
    if level is None and all_zero and grad is None:
        # VERDICTS.md: exactly 0.0 with no grad_norm cannot be told apart, from the first step as after a fall
        return _zero_without_grad_norm(
            f"loss is exactly 0 from the first logged step {first} {{span}}", "every label masked, a NaN hidden by "
            "HF's NaN filter and a default the logging code wrote where it was given no loss",
            "count the unmasked label tokens of a batch", first, last, evidence)
    if sudden and grad is None and all_zero:
        # VERDICTS.md: exactly 0.0 with no grad_norm cannot be told apart (a NaN HF's filter hid, every label masked,
        # or a tiny dataset fitted exactly): a warning that says what would tell, never a verdict either way
        return _zero_without_grad_norm(
            f"loss fell from about {format_number(level)} to exactly 0 at step {first} and stays 0 {span}",
            "a NaN hidden by HF's NaN filter, labels all masked and a tiny dataset fitted exactly", "log an eval loss",
            first, last, {**evidence, "sudden": True})
    if sudden or zero_grad:
        early = start < thresholds.early_collapse_points
        how = (f"fell from about {format_number(level)} to {format_number(loss.iloc[start])}" if sudden
               else f"reached {format_number(loss.iloc[start])}")
        grad_note = " with grad_norm exactly 0" if zero_grad else ""
        if grad is None and all_zero:
            # Without grad_norm an exact 0.0 cannot be told from HF's NaN filter (masked_nan).
            grad_note = " (grad_norm not logged: an exact 0.0 may be HF's NaN filter hiding a NaN loss)"
        message = (f"{'early ' if early else ''}loss collapse: loss {how} at step {first}{grad_note} "
                   f"and stays at or below {format_number(thresholds.collapse_abs)} {span}.")
        evidence.update(early=early, sudden=sudden, grad_norm_logged=grad is not None)
        return Finding("loss_collapse", severity, first, message, end_step=last,
                       metric=LOSS, evidence=evidence)
    if grad is None and bool(np.any(loss.iloc[start:stop].to_numpy() == 0.0)):  # exact zeros: NaN filter or memorized?
        return _zero_without_grad_norm(
            f"loss descends to {format_number(loss.iloc[start])} at step {first} and stays near 0 {{span}}",
            "memorization of a small dataset, a NaN hidden by HF's NaN filter and labels all masked",
            "check the eval loss" if eval_logged else "log an eval loss", first, last, evidence)
    near_zero = loss.iloc[start:stop].to_numpy()
    if level is None and not held_out_above and np.all(near_zero > 0):
        # near 0 (a negative loss is impossible_loss's) from the first logged point: no descent is logged, and no
        # held-out loss shows the training set learned apart from other text
        return _near_zero_from_the_first_point(loss, first, last, evidence)
    # Logged values above 0 are real losses: HF's NaN filter and all-masked labels both log exactly 0.0.
    why = "with a finite non-zero grad_norm" if grad is not None else "with values above 0 (real losses)"
    message = (f"loss descends gradually to {format_number(loss.iloc[start])} at step {first} {why} "
               f"and stays near 0 {{span}}: the training data is learned by heart (memorization; "
               f"a 4.x Trainer rounds such a loss to 0.0). {eval_advice(eval_logged)}")
    return Finding("memorization", "warning", first, message, end_step=last, metric=LOSS, evidence=evidence)


_LEVEL_WINDOWS = 10  # the level a loss fell from is read over this many `collapse_window`s too


def _held_its_level(loss: pd.Series, start: int, thresholds: Thresholds) -> bool:
    """Whether the loss stood at a sudden fall's height over the `_LEVEL_WINDOWS` x `collapse_window` points before
    the near-zero stretch (their median `collapse_drop_factor` x `collapse_abs` or more), not only over the last
    `collapse_window`: a loss already near 0 whose hard examples lift a few steps to 0.1-0.4 (a small dataset
    learned by heart, on batches of 4) comes back to its floor after them; it does not collapse."""
    before = loss.iloc[max(0, start - _LEVEL_WINDOWS * thresholds.collapse_window):start]
    return float(before.median()) >= thresholds.collapse_drop_factor * thresholds.collapse_abs


def _near_zero_from_the_first_point(loss: pd.Series, first: int, last: int, evidence: dict) -> Finding:
    """A `zero_loss_unexplained` warning for a loss near 0 (not exactly 0) from its first logged point on: memorization
    is a descent to ~0 from a real level, and none is logged (goldensam777_BissiMamba: an epoch mean of 3e-6 from the
    first epoch, no eval loss, no grad_norm)."""
    message = (f"loss is {format_number(loss.iloc[0])} already at the first logged step {first} and stays near 0 "
               f"{{span}}; no higher loss is logged, so the log shows no descent to it. A target that leaks into the "
               f"input (labels not shifted), nearly every label masked, trivially repetitive data or a loss divided by "
               f"the wrong count all give this. To tell: log the loss at step 0 (about ln(vocabulary) for a fresh "
               f"model), an eval loss, or decode a few training examples and their labels.")
    return Finding("zero_loss_unexplained", "warning", first, message, end_step=last, metric=LOSS,
                   evidence={**evidence, "from_the_start": True})


def _zero_without_grad_norm(what: str, causes: str, check: str, first: int, last: int,
                            evidence: dict) -> Finding:
    """A `zero_loss_unexplained` warning: `what` the loss did (a `{span}` in it is filled in by `_extend_span`), the
    `causes` that all log an exact 0.0, and the `check` that tells them apart beside logging grad_norm."""
    message = (f"{what}, and grad_norm was not logged: {causes} all log 0.0, and this log cannot tell them apart. "
               f"To tell: log grad_norm (transformers 4.38 and later do), set logging_nan_inf_filter=False, and "
               f"{check}.")
    return Finding("zero_loss_unexplained", "warning", first, message, end_step=last, metric=LOSS, evidence=evidence)


def _grad_all_zero(grad: pd.Series | None, steps: pd.Index) -> bool:
    """True when grad_norm was logged at these steps and is exactly 0 at every one of them."""
    if grad is None:
        return False
    seen = grad.reindex(steps).dropna()
    return bool(len(seen)) and bool(np.all(seen.to_numpy() == 0.0))
