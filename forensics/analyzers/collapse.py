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
* `loss_collapse` too (`_targets_given_away`): a language model's loss at 0.01 nats before the first epoch
  ended that goes on to the floor of a 4-decimal print, with no eval loss: the targets are handed to the
  model (unshifted labels, a missing causal mask). A classification head's is a warning (`for_a_classifier`).

Errors when the stretch lasts to the end of the log; warnings when the loss comes back.
Preference/RL logs (rewards/*, logps/*) are skipped: their loss sits near zero by design; a pairwise
preference loss at ~0 with a vanished grad_norm to the end is reported as saturated pairs (a warning).
"""
from __future__ import annotations

import math

from dataclasses import replace

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .metrics import (EVAL_ACCURACY_KEYS, GRAD_NORM, LOSS, Metrics, finite, first_settled, format_number,
                      is_preference_log, lr_restart_steps, real_loss, true_runs)
from .overfitting import EVAL_LOSS, eval_loss_names


def _held_out_already_at_zero(metrics: Metrics, loss: pd.Series, start: int, stop: int,
                              thresholds: Thresholds) -> bool:
    """Every eval loss logged up to the end of a near-zero stretch is itself near zero, from an evaluation at or
    before its start: the model predicted held-out data as well before the training loss got there, so that loss is
    the model's own fit of an easy task, not a degenerate model nor one that learned its data by heart
    (AndrewMichael2020's text-to-SQL GPT: validation 0.0000 at the end of epoch 1, while the epoch's running training
    mean was still 0.57; Seanaaa0's synthetic grid task: eval 3.4e-4 before the training loss reached 1e-5)."""
    evals = finite(metrics[EVAL_LOSS]) if EVAL_LOSS in metrics else None
    if evals is None or not len(evals):
        return False
    upto = evals[evals.index <= int(loss.index[stop - 1])]
    return bool(len(upto)) and int(upto.index[0]) <= int(loss.index[start]) \
        and bool(np.all(upto.to_numpy() <= thresholds.collapse_abs))


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
_HIGH_LEVEL = 0.1  # ... in a log whose median is at least this: zeros scattered in a loss that is not near zero


def _among_scattered_zeros(loss: pd.Series, start: int, stop: int, thresholds: Thresholds) -> bool:
    """A short run of near-zero losses the log comes back from, in a log where the loss is near zero at
    `_SCATTERED_ZEROS` or more single points elsewhere and its median is `_HIGH_LEVEL` or more: a per-batch loss that
    reaches 0 by itself (a pair loss `1 + neg - pos` at a perfectly separated batch: the RWKV reward loop's 160 zeros
    among 3,728 batches), three in a row by chance, not a collapse or a masked NaN."""
    if stop - start > _SHORT_RUN or stop >= len(loss) or float(loss.median()) < _HIGH_LEVEL:
        return False  # (a loss that hovers near 0 has near-zero points everywhere: a memorized log, judged below)
    low = loss.to_numpy() <= thresholds.collapse_abs
    singles = sum(1 for i, j in true_runs(low) if j - i == 1)
    return singles >= _SCATTERED_ZEROS


def near_zero_runs(loss: pd.Series, thresholds: Thresholds) -> list[tuple[int, int]]:
    """(start, stop) positions of stretches of >= collapse_points losses at or below collapse_abs."""
    low = loss.to_numpy() <= thresholds.collapse_abs
    return [(i, j) for i, j in true_runs(low) if j - i >= thresholds.collapse_points]


def detect_loss_collapse(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """Findings for each genuine collapse, plus one `memorization` warning for the first gradual one."""
    if LOSS not in metrics:
        return []
    if is_preference_log(metrics):
        return _saturated_pairs(metrics, thresholds) or _pairs_memorized(metrics)
    loss = real_loss(metrics)
    grad = metrics.get(GRAD_NORM)
    findings: list[Finding] = []
    low_start = _near_zero_from_the_start(loss, metrics, thresholds)
    runs = near_zero_runs(loss, thresholds)
    held_out_followed = False
    for start, stop in runs:
        if _among_scattered_zeros(loss, start, stop, thresholds):
            continue
        found = _judge(loss, grad, start, stop, thresholds)
        if found.kind in ("loss_collapse", "memorization") \
                and _held_out_already_at_zero(metrics, loss, start, stop, thresholds):
            continue
        if found.kind in _GRADUAL:
            if any(f.kind in _GRADUAL for f in findings) or held_out_followed:
                continue  # one gradual descent: the first finding already spans the later stretches
            found = _extend_span(found, loss, runs, start, thresholds)
            if found.kind == "memorization" and _held_out_followed(metrics, found, thresholds):
                held_out_followed = True  # ... and the later stretches are the same descent
                continue
        if found.kind == "memorization" and not eval_loss_names(metrics):  # with one, overfitting dates the story
            found = _dated_from_settling(found, loss.iloc[:start + 1], float(loss.iloc[start]))
        if found.kind == "zero_loss_unexplained":
            found = _told_by_train_loss(found, metrics)
        if found.kind == "memorization":
            found = _unless_first_epoch(found, metrics)
        findings.append(found)
    given_away = _targets_given_away(loss, metrics, thresholds)
    if given_away or low_start:  # what the start says comes before any later descent
        return [given_away or low_start] + [f for f in findings if f.kind not in _GRADUAL]
    if not findings and not eval_loss_names(metrics):
        level, why = memorization_level(metrics, thresholds)
        epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
        findings += next(([_phase_ends(f, loss) for f in found] for phase in _phases(loss, lr_restart_steps(metrics))
                          if (found := _memorized_without_eval(phase, level, thresholds, epochs, why))), [])
        if not findings and epochs is not None and len(epochs):
            findings += _memorized_in_a_staircase(loss, epochs)
    return findings


_STAIR_LEVEL = 0.2  # nats a token: a pass's median this low, in a staircase ...
_STAIR_FALL = 6.0  # ... and this many times under the first pass's, from the third pass on, to the end
_STAIR_FROM = 2  # the third pass (0-based): the first two may be ordinary learning


def _memorized_in_a_staircase(loss: pd.Series, epochs: pd.Series) -> list[Finding]:
    """A loss that falls at the start of each epoch and stays flat within it (`falls_at_epoch_starts`: it gets better
    on the examples it has seen before), whose median over a pass from the third on is under `_STAIR_LEVEL` and
    `_STAIR_FALL` x under the first pass's, and stays under that level over every whole pass after, with no eval loss:
    the model halves its loss each time the examples come round again, down to a level no new text would get
    (a 13B full fine-tune's pass medians 1.463, 1.128, 0.731, 0.389, 0.191, 0.105). The many-epochs level of
    `memorization_level` waits for the loss to settle under 0.1, which a log cut off in its sixth pass never shows.
    A staircase that ends higher, or that fell less than that over its passes (a LoRA's 0.492, 0.296, 0.173, 0.115
    over four: a task learned well), is left alone. A `memorization` warning from the first step of that pass."""
    if len(loss) < 3 * _EPOCH_POINTS or not falls_at_epoch_starts(loss, epochs):
        return []
    epoch_of = np.floor(epochs.reindex(epochs.index.union(loss.index)).ffill().reindex(loss.index).to_numpy())
    passes = [e for e in np.unique(epoch_of[np.isfinite(epoch_of)]) if (epoch_of == e).sum() >= _EPOCH_POINTS]
    medians = [float(np.median(loss.to_numpy()[epoch_of == e])) for e in passes]
    if len(passes) <= _STAIR_FROM or not medians[0] > 0:
        return []
    low = [m <= _STAIR_LEVEL and m * _STAIR_FALL <= medians[0] for m in medians]
    at = next((i for i in range(_STAIR_FROM, len(passes)) if low[i] and all(m <= _STAIR_LEVEL for m in medians[i:])),
              None)
    if at is None:
        return []
    first, last = int(loss.index[np.flatnonzero(epoch_of == passes[at])[0]]), int(loss.index[-1])
    by_pass = ", ".join(format_number(m) for m in medians[:10])
    message = (f"the loss falls at the start of each epoch and stays flat within it (each pass's median: {by_pass}), "
               f"down to {format_number(medians[at])} over pass {int(passes[at]) + 1} from step {first}, "
               f"{format_number(medians[0] / medians[at])}x under the first pass's, and no eval loss was logged: it "
               "gets better on the examples it has seen before, each time they come round, so the training data is "
               "most likely learned by heart (memorization). Log an eval loss to see whether the model still "
               "generalises; fewer epochs or more data if it does not.")
    return [Finding("memorization", "warning", first, message, end_step=last, metric=LOSS, evidence={
        "value": medians[at], "level": _STAIR_LEVEL, "eval_loss_logged": False, "to_end": True, "settled_step": first,
        "epoch": float(passes[at]), "pass_medians": medians[:20], "staircase": True})]


def _targets_given_away(loss: pd.Series, metrics: Metrics, thresholds: Thresholds) -> Finding | None:
    """A language-model loss (`given_away_start` nats or more at its first point) at `given_away_level` or less
    before the first epoch ended, under `memorization_level` from there to the end of the log, and at the floor of
    a 4-decimal print by its last tenth (`_NOTHING_LEFT`, tenfold under where it first got that low): a collapse,
    not learning. Before any example is seen twice, a per-token loss of 0.01 nats means the model is sure of 99% of
    target tokens it has never seen, and a loss with nothing left uncertain at all means the targets are handed to
    it (labels equal to the inputs, not shifted by one, so each position copies its own token; a causal mask
    missing; the answer copied from the prompt). A real task with templated answers (a VQA's short answers) also
    gets to 0.01 within an epoch but levels off at what is still uncertain in its answers. An error, dated from
    where the fall began (the first point under a tenth of the start).

    Needs an epoch counter that counts passes over the data: logged (or the steps an epoch makes) and reaching
    `_PASSES` by the end; a streaming run's epoch is a fraction of max_steps, under 1 to the end whatever was
    repeated. And no eval loss: where one is logged, `overfitting` judges (one that falls with it says the answers
    are that easy)."""
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
    if epochs is None or not len(epochs) or _passes(epochs) < _PASSES or eval_loss_names(metrics) \
            or len(loss) < thresholds.collapse_points + 1:
        return None
    values = loss.to_numpy()
    start = float(values[0])
    low = np.flatnonzero(values <= thresholds.given_away_level)
    if start < thresholds.given_away_start or not len(low) or len(values) - low[0] < thresholds.collapse_points:
        return None
    at = int(low[0])
    epoch = _epoch_at(epochs, int(loss.index[at]))
    if epoch is None or epoch >= 1.0 or np.any(values[at:] > thresholds.memorization_level):
        return None
    tail = float(np.median(values[-max(1, len(values) // 10):]))
    if tail > min(values[at] / 10, _NOTHING_LEFT):
        return None  # it levels off: what is left uncertain (which answer) is a real task's, templated answers
    fall = int(np.flatnonzero(values <= start / 10)[0])
    first, reached, last = int(loss.index[fall]), int(loss.index[at]), int(loss.index[-1])
    message = (f"loss collapse: the loss falls from {format_number(start)} to {format_number(values[at])} by step "
               f"{reached}, at epoch {epoch:.2g}, before any example was seen twice, and on to {format_number(tail)} "
               f"over the last tenth of the log (step {last}): nothing is left uncertain. A next-token loss this "
               "low on examples the model has not seen means the targets are handed to it, not learned: labels "
               "equal to the inputs and not shifted by one (each position copies its own token), a causal mask "
               "missing, answers copied from the prompt, or every answer the same text. What was trained cannot be "
               "told from this loss; check one batch's labels against its input_ids and the attention mask.")
    return Finding("loss_collapse", "error", first, message, end_step=last, metric=LOSS, evidence={
        "to_end": True, "sudden": False, "first_epoch": True, "epoch": epoch, "value": float(values[at]),
        "level_before": start, "near_zero_step": reached, "tail": tail, "n_points": len(values) - fall})


_START = 0.25  # epochs: a log whose first point is this early shows where training started


def _near_zero_from_the_start(loss: pd.Series, metrics: Metrics, thresholds: Thresholds) -> Finding | None:
    """A language-model loss already under `memorization_level` at its first logged points, within the first
    `_START` of an epoch: before training had done anything, the model was near certain of almost every labelled
    token (charles-wang888's Qwen2.5-7B-Instruct fine-tune: 0.0037 at step 10, epoch 0.05). Nearly every label
    masked (a few easy tokens left), targets that are the model's own outputs or copies of the context: the log
    cannot tell which. A `zero_loss_unexplained` warning at the first step, saying what would."""
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
    if len(loss) < 3 or epochs is None or not len(epochs) or float(epochs.iloc[0]) > _START:
        return None
    head = float(np.median(loss.to_numpy()[:3]))
    if not 0 < float(loss.iloc[0]) <= thresholds.memorization_level or head > thresholds.memorization_level:
        return None
    first = int(loss.index[0])
    message = (f"loss {format_number(float(loss.iloc[0]))} already at the first logged step {first} (epoch "
               f"{format_number(float(epochs.iloc[0]))}), {format_number(head)} over the first three: before training "
               "did anything the model was near certain of almost every labelled token. Nearly every label masked (a "
               "few easy tokens left), or targets that are the model's own outputs or copies of the context; the run "
               "had almost nothing to learn from. Count the unmasked label tokens of a few samples and decode them.")
    return Finding("zero_loss_unexplained", "warning", first, message, end_step=int(loss.index[-1]), metric=LOSS,
                   evidence={"first_loss": float(loss.iloc[0]), "epoch": float(epochs.iloc[0]), "from_the_start": True})


_PASSES = 1.5  # an epoch counter that reaches this counts passes over the data


def _passes(epochs: pd.Series) -> float:
    """The passes over the data a log's epochs show: the last epoch logged, plus the one under way where the log
    counts whole epochs done (a loop printing `Epoch 2` logs 1 for it: one done, the second under way)."""
    last = float(epochs.max())
    return last + 1 if np.all(epochs.to_numpy() == np.floor(epochs.to_numpy())) else last
_NOTHING_LEFT = 2e-4  # a per-token loss at the floor of a 4-decimal print (0.0000 - 0.0002)


# A model class ending in one of these has a classification head (`ViTForImageClassification`, `BertFor...`).
CLASSIFIER_HEADS = ("Classification", "ForMultipleChoice", "ForQuestionAnswering", "ForRegression")
CLASSIFIER_TASKS = ("SEQ_CLS", "TOKEN_CLS", "QUESTION_ANS")


def for_a_classifier(findings: list[Finding], metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """The findings of a run whose model has a classification head (its config says so): its loss is no next-token
    loss, so one at ~0 within the first epoch may be an easy task as well as a label given away by a feature, and
    `_targets_given_away` is a warning that says so rather than a collapse. Where the held-out evaluation tells,
    right on every pair or example at a loss as low (`_held_out_solved`), it was an easy task learned: info."""
    out = []
    for f in findings:
        if f.kind == "loss_collapse" and f.evidence.get("first_epoch"):
            message = (f"loss at {format_number(f.evidence['value'])} by step {f.evidence['near_zero_step']}, at epoch "
                       f"{f.evidence['epoch']:.2g}, before any example was seen twice, on a classification head: an "
                       "easy task, or a feature that gives the label away (an id, the label inside the text). Log an "
                       "eval loss and accuracy on held-out data to tell.")
            f = replace(f, kind="zero_loss_unexplained", severity="warning", message=message)
        if f.kind == "zero_loss_unexplained" and f.evidence.get("epoch", 1.0) < 1.0:
            f = _unless_held_out_solved(f, metrics, thresholds)
        out.append(f)
    return out


_SOLVED = 0.99  # a held-out accuracy this high: every pair or example of the evaluation right


def _unless_held_out_solved(found: Finding, metrics: Metrics, thresholds: Thresholds) -> Finding:
    """A classifier's (a reward model's) loss at ~0 before an epoch ended, with its held-out evaluation right on
    every example (accuracy `_SOLVED` or more at each of its last evaluations) at a loss as low (under
    `memorization_level`): the held-out data says the task is easy and was learned (taehyun-me's reward model: eval
    accuracy 1.0, eval loss 0.003), which the training loss alone could not. Info, which says that a leak both
    splits share would look the same."""
    name = next((key for key in EVAL_ACCURACY_KEYS if key in metrics), None)
    accuracy = finite(metrics[name]) if name else pd.Series(dtype="float64")
    evals = finite(metrics[EVAL_LOSS]) if EVAL_LOSS in metrics else pd.Series(dtype="float64")
    last = accuracy.iloc[-3:]  # one evaluation is enough where it is right on every example (PraveenBarathi-K's)
    if len(last) < 1 or len(evals) < 1 or float(last.min()) < _SOLVED \
            or float(evals.iloc[-1]) >= thresholds.memorization_level:
        return found
    near_zero = int(found.evidence.get("near_zero_step", found.step))
    message = (f"loss near 0 from step {near_zero}, at epoch {found.evidence['epoch']:.2g} (before any example was "
               f"seen twice), on a classification head, and the held-out evaluation agrees: {name} "
               f"{format_number(float(last.min()))} or more at "
               f"{'its last evaluation' if len(last) == 1 else f'each of its last {len(last)} evaluations'}, eval loss "
               f"{format_number(float(evals.iloc[-1]))}: an easy task learned, not memorization (a cue both splits "
               "carry, an id or the label inside the text, would read the same: check a few examples if the task "
               "should be hard).")
    return replace(found, severity="info", message=message, evidence={**found.evidence, "held_out_solved": True})


# The pairwise loss -log sigmoid(z) scales its own gradient by sigmoid(-z), about the loss itself: a loss at ~0
# has next to no gradient, and a grad_norm under this (a LoRA DPO's is 1 to 100) says the pairs teach nothing more.
_VANISHED = 1e-2
_PAIRWISE = ("rewards/margins", "logps/rejected")
_SATURATED = 1e-2  # a pairwise loss this low passes 1% of its gradient on: the pairs are separated


def _saturated_pairs(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """A pairwise preference loss (DPO and kin) at ~0 (`collapse_abs`) with a vanished grad_norm (`_VANISHED`) at the
    last two logged points or more: every pair's margin is so wide that the sigmoid is flat, and the steps from
    there learn nothing. Dated from where the loss went under `_SATURATED` for good with the grad_norm's median
    vanished from there (luke-griggs's DPO: 0.0039 at step 80, never over 0.006 again, the odd batch still ranked
    wrong lifting a grad_norm or two). A warning, with where the margin came from (a DPO margin grows by pushing the
    rejected answers down as well as by raising the chosen ones). GRPO/PPO logs sit at ~0 by construction and are
    left alone."""
    if not any(k in metrics for k in _PAIRWISE) or GRAD_NORM not in metrics:
        return []
    loss, grad = real_loss(metrics), metrics[GRAD_NORM].reindex(real_loss(metrics).index)
    flat = (loss.to_numpy() <= thresholds.collapse_abs) & (np.abs(grad.to_numpy()) <= _VANISHED)
    runs = true_runs(flat)
    if not runs or runs[-1][1] != len(loss) or runs[-1][1] - runs[-1][0] < 2:
        return []
    start = _saturated_from(loss, grad, runs[-1][0])
    first = int(loss.index[start])
    sides = [f"{k} {format_number(float(finite(metrics[k]).iloc[0]))} -> {format_number(float(finite(metrics[k]).iloc[-1]))}"
             for k in ("logps/chosen", "logps/rejected") if k in metrics and len(finite(metrics[k]))]
    where = f" ({', '.join(sides)})" if sides else ""
    message = (f"the preference loss stays under {format_number(_SATURATED)} from step {first} to the end of the log, "
               f"the grad_norm mostly under {format_number(_VANISHED)} from there: every pair is separated so far that "
               f"nothing is left to learn from them{where}. Check that "
               "the chosen answers' log-probs did not fall with the rejected ones; a larger beta, fewer epochs or "
               "harder pairs.")
    return [Finding("loss_collapse", "warning", first, message, end_step=int(loss.index[-1]), metric=LOSS,
                    evidence={"n_points": len(loss) - start, "to_end": True, "saturated_pairs": True})]


def _pairs_memorized(metrics: Metrics) -> list[Finding]:
    """A pairwise preference log over several passes with no held-out pairs whose loss is under `_SATURATED` over
    every pass from the second on (each pass's median): the pairs come round again already separated, and nothing
    shows whether the wider margins carry over to pairs not seen (SteveHong1901's five-epoch DPO: epoch medians
    0.257, 0.0076, 0.0017, 0.00077, 0.00049). A `memorization` warning from the first step of that pass."""
    if not any(k in metrics for k in _PAIRWISE) or "epoch" not in metrics or eval_loss_names(metrics) \
            or any(k.startswith("eval_rewards/") for k in metrics):
        return []
    loss, epochs = real_loss(metrics), finite(metrics["epoch"])
    passes = np.floor(_epochs_at(loss.index, epochs) - 1e-9)  # epoch 1.0: the first pass done
    medians = pd.Series(loss.to_numpy()).groupby(passes).median()
    low = (medians[medians.index >= 1] <= _SATURATED).to_numpy()  # the passes over pairs seen before
    if not len(low) or not low[-1]:
        return []
    high = np.flatnonzero(~low)
    first_pass = float(medians.index[medians.index >= 1][high[-1] + 1 if len(high) else 0])
    first = int(loss.index[int(np.flatnonzero(passes == first_pass)[0])])
    by_pass = ", ".join(format_number(float(v)) for v in medians.to_numpy()[:8])
    margins = finite(metrics["rewards/margins"]) if "rewards/margins" in metrics else None
    grown = (f"; the margins grew {format_number(float(margins.iloc[0]))} -> {format_number(float(margins.iloc[-1]))}"
             if margins is not None and len(margins) >= 2 else "")
    message = (f"the preference loss is under {format_number(_SATURATED)} over every pass from pass {int(first_pass) + 1} "
               f"(step {first}; each pass's median: {by_pass}): the pairs come round again already separated{grown}, "
               "and with no held-out pairs nothing shows whether that carries over to pairs the model has not seen. "
               "Evaluate on held-out pairs; fewer epochs or a larger beta.")
    return [Finding("memorization", "warning", first, message, end_step=int(loss.index[-1]), metric=LOSS,
                    evidence={"pairwise": True, "pass_medians": [float(v) for v in medians.to_numpy()[:20]],
                              "to_end": True})]


def pair_term_memorized(metrics: Metrics, thresholds: Thresholds, rpo_alpha: float) -> list[Finding]:
    """The pairwise checks above on the pair term of a DPO loss with rpo_alpha set (TRL and ms-swift log
    loss = pair term + rpo_alpha x nll_loss): the NLL term keeps the logged loss well above zero however far the pairs
    are separated (zhl-2022's ms-swift DPO: 0.253 = 0.1 x 2.532 with every pair ranked right from step 3, margins
    26-33, 12 pairs over 10 epochs), so they are judged on loss - rpo_alpha x nll_loss."""
    if LOSS not in metrics or "nll_loss" not in metrics or not rpo_alpha > 0 or not is_preference_log(metrics):
        return []
    pair = (metrics[LOSS] - rpo_alpha * metrics["nll_loss"].reindex(metrics[LOSS].index)).clip(lower=0.0)
    found = _saturated_pairs({**metrics, LOSS: pair}, thresholds) or _pairs_memorized({**metrics, LOSS: pair})
    return [replace(f, message=f"with rpo_alpha {format_number(rpo_alpha)}, the pair term of the loss (loss - "
                               f"rpo_alpha x nll_loss) tells: {f.message.replace('the preference loss', 'it')}",
                    evidence={**f.evidence, "rpo_alpha": rpo_alpha}) for f in found]


def _epochs_at(steps: pd.Index, epochs: pd.Series) -> np.ndarray:
    """The epoch at each step: the last logged one before it, or, where the log gives the epoch at under half its
    steps (a notebook table without an Epoch column, its closing `TrainOutput` saying 500 epochs), on a straight line
    from step 0 through the points it gives (an epoch a fixed number of steps)."""
    if len(epochs) * 2 >= len(steps):
        return epochs.reindex(steps, method="ffill").to_numpy()
    known_steps = np.concatenate([[0.0], epochs.index.to_numpy(dtype="float64")])
    known_epochs = np.concatenate([[0.0], epochs.to_numpy(dtype="float64")])
    return np.interp(steps.to_numpy(dtype="float64"), known_steps, known_epochs)


def _saturated_from(loss: pd.Series, grad: pd.Series, flat_from: int) -> int:
    """The first position from which the pairwise loss stays under `_SATURATED` to the end with the grad_norm's
    median from there under `_VANISHED`; `flat_from` (where loss and grad_norm are both ~0 to the end) if later."""
    above = np.flatnonzero(~(loss.to_numpy() <= _SATURATED))
    start = int(above[-1]) + 1 if len(above) else 0
    vanished = np.abs(grad.to_numpy()) <= _VANISHED  # (NaN: not vanished)
    # from each position to the end: how many points, how many of them vanished (a median under: half or more)
    after = np.arange(len(vanished), 0, -1)
    vanished_after = np.cumsum(vanished[::-1])[::-1]
    ok = np.flatnonzero(2 * vanished_after[start:flat_from] >= after[start:flat_from])
    return start + int(ok[0]) if len(ok) else flat_from


def _phase_ends(found: Finding, loss: pd.Series) -> Finding:
    """A memorization judged in one phase lasts to the end of the log only when that phase is the last one."""
    return replace(found, evidence={**found.evidence, "to_end": found.end_step == int(loss.index[-1])})


def _phases(loss: pd.Series, restarts: list[int]) -> list[pd.Series]:
    """The loss cut at each learning-rate restart (a new session on new data): each phase is judged by
    itself, the first one that memorized giving the finding (it stays to the end of its phase)."""
    if loss.empty:
        return []  # not one finite loss (NaN from the first step)
    cuts = [int(loss.index[0])] + sorted(restarts) + [int(loss.index[-1]) + 1]
    return [part for lo, hi in zip(cuts, cuts[1:]) if len(part := loss[(loss.index >= lo) & (loss.index < hi)])]


PRETRAINING_FLOOR = 0.5  # nats a token: no natural text is this predictable to a model that has not learned it by heart


def memorized_from_scratch(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """A model trained from random weights (the run profile says so) whose training loss settles under
    `PRETRAINING_FLOOR` with no eval loss: pre-training text is natural text, and a per-token loss that low on it is
    the training set learned by heart (a small corpus over many passes: tiny Shakespeare trained to 0.1), the same
    `memorization` warning with the level that fits pre-training. [] where the log has an eval loss (overfitting
    judges) or another finding already says memorization."""
    if LOSS not in metrics or eval_loss_names(metrics) or is_preference_log(metrics):
        return []
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
    why = (f" (a model trained from random weights: no natural text is under {format_number(PRETRAINING_FLOOR)} nats a "
           "token unless it was learned by heart)")
    # from random weights the loss falls across orders of magnitude: its descent is judged level on a log scale
    found = _memorized_without_eval(real_loss(metrics), PRETRAINING_FLOOR, thresholds, epochs, why, log_scale=True)
    if found and _low_plateau_in_one_pass(real_loss(metrics), found[0], epochs):
        return []
    return [_phase_ends(f, real_loss(metrics)) for f in found]


_PLATEAU_SHARE = 0.5  # a loss settled under the floor over this share of the log or more ...
_STILL_HALVING = 0.5  # ... whose last tenth is no lower than this x its level where it settled: a plateau


def _low_plateau_in_one_pass(loss: pd.Series, found: Finding, epochs: pd.Series | None) -> bool:
    """A loss from random weights that settles under `PRETRAINING_FLOOR` early (over `_PLATEAU_SHARE` of the log or
    more) and then stays flat there (its last tenth's median over `_STILL_HALVING` x the median of the settled
    stretch's first tenth), in a log that shows no second pass over its data (no epoch counter reaching `_PASSES`): the
    model reached what the data lets it predict and learned nothing more for most of the run, the mark of low-entropy
    text seen once (code, logs, templated records: 0.54 nats by step 1000 of 11,295, then 0.33-0.45 to the end), not
    of a set learned by heart, whose loss goes on falling toward 0 each time the examples come round again."""
    if epochs is not None and len(epochs) and _passes(epochs) >= _PASSES:
        return False
    settled = loss[loss.index >= int(found.evidence.get("settled_step", loss.index[-1]))]
    if len(settled) < _PLATEAU_SHARE * len(loss):
        return False
    smooth = _running_median(settled)
    k = max(1, len(settled) // 10)
    return float(smooth.iloc[-k:].median()) > _STILL_HALVING * float(smooth.iloc[:k].median())


def memorization_level(metrics: Metrics, thresholds: Thresholds) -> tuple[float, str]:
    """The training loss under which a log without eval is memorizing, and the clause that says why when it is
    the looser many-epochs level ("" for `memorization_level`): after `memorization_epochs` epochs over the
    same data (the log's own `epoch`), or where the loss falls in a staircase at the epoch boundaries
    (`falls_at_epoch_starts`)."""
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
    if epochs is None or not len(epochs):
        return thresholds.memorization_level, ""
    if LOSS in metrics and falls_at_epoch_starts(real_loss(metrics), epochs):  # the more telling reason, first
        return thresholds.memorization_level_many_epochs, (
            " (it falls at the start of each epoch and stays flat within it: it gets better on the examples it "
            "has seen before)")
    if float(epochs.max()) >= thresholds.memorization_epochs:
        return thresholds.memorization_level_many_epochs, f" over {format_number(float(epochs.max()))} epochs"
    return thresholds.memorization_level, ""


_EDGE = 0.1  # the share of an epoch's points at each end that its level is read from
_EPOCH_POINTS = 12  # an epoch logged at this many points or more shows where within it the loss falls


def falls_at_epoch_starts(loss: pd.Series, epochs: pd.Series) -> bool:
    """The loss falls in steps at the starts of epochs and stays flat within them: from the second epoch on,
    the batches it gets better on are the ones it has seen before, the signature of a model learning its
    training examples by heart (the 'staircase' of multi-epoch fine-tuning). Needs three whole epochs of
    at least `_EPOCH_POINTS` logged points; the drops at the epoch starts must be at least twice the fall within them."""
    # the epoch in force at each loss step, where the two are logged at different steps
    epoch_of = np.floor(epochs.reindex(epochs.index.union(loss.index)).ffill().reindex(loss.index).to_numpy())
    whole = [e for e in np.unique(epoch_of[np.isfinite(epoch_of)]) if (epoch_of == e).sum() >= _EPOCH_POINTS]
    if len(whole) < 3:
        return False
    ends = []
    for e in whole:
        values = loss.to_numpy()[epoch_of == e]
        k = max(2, int(len(values) * _EDGE))
        ends.append((float(np.median(values[:k])), float(np.median(values[-k:]))))
    within = sum(start - end for start, end in ends[1:])  # the first epoch's own fall is ordinary learning
    drops = [prev_end - start for (_, prev_end), (start, _) in zip(ends, ends[1:])]
    at_starts = sum(drops)
    return at_starts > 0 and at_starts >= 2 * max(within, 0.0) and sum(d > 0 for d in drops) >= 2 * len(drops) / 3


def _settled_from(loss: pd.Series, level: float) -> int | None:
    """Position from which the loss has settled under `level`: it is under it there, in nine of ten points
    after, and at the end of the log; None when it never settles."""
    low = loss.to_numpy() <= level
    return first_settled(low, 0.9) if len(low) and low[-1] else None


def _memorized_without_eval(loss: pd.Series, level: float, thresholds: Thresholds,
                            epochs: pd.Series | None, why_level: str = "", log_scale: bool = False) -> list[Finding]:
    """A loss that fell gradually to a small fraction of where it started and settled under the memorization
    `level` to the end of the log, with no eval loss to say the model generalises: memorization, dated from
    where the descent settled (`_settling_position`).

    Judged on a running median (a fortieth of the log) so that a per-step log's noise does not hide where
    the loss settled. A loss that reached its floor within the first epoch is not memorization: no example
    had been seen twice, the data is simply that easy (templated answers). One whose descent levelled off in the
    first epoch but that still fell several-fold over the passes after it is, dated on those passes
    (`_onset_over_later_epochs`). (With an eval loss, `overfitting` judges: a low eval loss means the task itself
    is that easy.)"""
    smooth = _running_median(loss)
    start = _settled_from(smooth, level)
    if start is None or len(loss) - start < max(thresholds.collapse_points, 0.1 * len(loss)):
        return []  # never settled, or only over the last few points: not yet the run's final state
    k = max(1, len(loss) // 10)
    head = max(float(loss.iloc[:k].median()), float(loss.iloc[0]))
    if start == 0 and (late := _epoch_at(epochs, int(loss.index[0]))) is not None \
            and late >= thresholds.memorization_epochs and float(loss.median()) <= thresholds.memorization_level:
        # (the strict level: without the descent, a loss of a few hundredths may be a regression's or a forecast's)
        return [_memorized_before_the_log(loss, thresholds.memorization_level, late, "")]
    if start == 0 or head < 10 * float(smooth.iloc[start]):
        return []  # no tenfold descent: a loss that is simply small from the start
    floor = float(smooth.iloc[-k:].median())
    onset = _settling_position(smooth, head, floor, log_scale, LOG_SETTLED_SHARE if log_scale else SETTLED_SHARE)
    epoch, levels_off = _epoch_at(epochs, int(loss.index[onset])), "where its descent levels off"
    if epoch is not None and epoch < 1.0:
        onset = _onset_over_later_epochs(smooth, epochs, floor)
        if onset is None:
            return []
        epoch, levels_off = _epoch_at(epochs, int(loss.index[onset])), _STILL_FALLING
    entered = _settled_from(smooth, _MEMORIZED_BAND * level)
    if entered is not None and entered > onset:  # levelled off while still well above the memorized level
        onset = entered
        epoch, levels_off = _epoch_at(epochs, int(loss.index[onset])), _ENTERED.format(_MEMORIZED_BAND)
    first = int(loss.index[onset])
    when = f" (epoch {epoch:.3g})" if epoch is not None else ""
    message = (f"loss falls from about {format_number(head)} to {format_number(smooth.iloc[onset])} by step {first}{when}, "
               f"{levels_off}, and stays under {format_number(level)} from step "
               f"{int(loss.index[start])} to step {int(loss.index[-1])}{why_level}, and no eval loss was logged: the training data is "
               "most likely learned by heart (memorization). Log an eval loss to see whether the model still "
               "generalises; fewer epochs or more data if it does not.")
    # Settled to the end of its phase by construction (`_phase_ends` says whether that is the log's end).
    return [Finding("memorization", "warning", first, message, end_step=int(loss.index[-1]), metric=LOSS, evidence={
        "head": head, "value": float(smooth.iloc[onset]), "level": level, "eval_loss_logged": False,
        "to_end": True, "settled_step": int(loss.index[start]), "epoch": epoch, "why_level": why_level.strip()})]


def _memorized_before_the_log(loss: pd.Series, level: float, epoch: float, why_level: str) -> Finding:
    """A log that begins after `memorization_epochs` passes over the data with the loss already at the memorized
    level (its median at `memorization_level`, settled to its end): the descent happened before what was kept, and
    the state it left is memorization (hiyouga/LlamaFactory issue 569: 0.018-0.022 over epochs 14.7-14.9, no eval
    loss; Time-MoE's forecasting loss of 0.06 falling steadily at epochs 24-34 is not at that level)."""
    first, last = int(loss.index[0]), int(loss.index[-1])
    message = (f"the log begins at epoch {epoch:.3g} with the loss already at {format_number(float(loss.median()))} "
               f"(about {format_number(level)} or less from step {first} to step {last}), and no eval loss was "
               "logged: after that many passes the training data is most likely learned by heart (memorization). "
               "Log an eval loss to see whether the model still generalises; fewer epochs or more data if it does not.")
    return Finding("memorization", "warning", first, message, end_step=last, metric=LOSS, evidence={
        "value": float(loss.median()), "level": level, "eval_loss_logged": False, "to_end": True,
        "settled_step": first, "epoch": epoch, "why_level": why_level.strip(), "log_starts_late": True})


# A descent that levels off (on its own scale) at a loss several times the memorization level is a model still learning
# what it can generalise (a fine-tune falling from near chance that levels off within its first two passes, then keeps
# falling several-fold over the passes after): memorization is dated no earlier than where the loss settles within this
# many times that level, where the examples are being fitted rather than learned
_MEMORIZED_BAND = 1.5
_ENTERED = "where it settles within {:g}x the memorization level"
# a loss this many times its final level at the first epoch's end had not reached its floor there; a fall of 3x over one
# more pass under a decaying LR is still the easy task polished (Ammar's Mistral QLoRA on docker commands, judged
# healthy: 0.040 at epoch 0.93, 0.0132 at the end of its second epoch, the cosine down to 7e-7)
_FELL_AFTER = 4.0
_STILL_FALLING = ("still falling over the passes after its first epoch (halfway down, on a log scale, from its level "
                  "at that epoch's end to its floor)")


def _onset_over_later_epochs(smooth: pd.Series, epochs: pd.Series | None, floor: float) -> int | None:
    """Where a descent that levelled off in the first epoch on a linear scale still went on over the passes after it:
    the first point past the first epoch from which the loss stays (on a log scale) halfway down from its level at the
    first epoch's end to its `floor`; None where that level was under `_FELL_AFTER` x the floor (the loss reached its
    floor before any example was seen twice: the data is that easy). anears' QLoRA SFT of a chart VLM: 5.9 at its
    first point, 0.031 at the end of epoch 1, 0.0053 over the last eighth, each pass over the same examples taking it
    further down; a fall from 5.9 looks level from 0.3 on, within epoch 1, where the repeated passes had not begun.
    None too where the log ends before `_PASSES` passes: a few points past the first epoch's end are over examples
    mostly seen once (a reward model's 1,000 steps = 1.07 epochs, its pairwise loss 0.0043 -> 0.0005 over the two
    points after epoch 1), too little of a second pass to say the fall comes from seeing them again."""
    if epochs is None or not len(epochs) or _passes(epochs) < _PASSES:
        return None
    epoch_of = epochs.reindex(epochs.index.union(smooth.index)).ffill().reindex(smooth.index).to_numpy()
    later = np.flatnonzero(epoch_of >= 1.0)
    if not len(later) or later[0] == 0 or float(smooth.iloc[later[0] - 1]) < _FELL_AFTER * floor:
        return None
    start = int(later[0])
    return start + _settling_position(smooth.iloc[start:], float(smooth.iloc[start - 1]), floor, log_scale=True,
                                      share=_HALFWAY_DOWN)


SETTLED_SHARE = 0.05  # the descent has levelled off within this share of its fall above its floor
# on a log scale, within this share of its fall in orders of magnitude: from 11 nats to a floor of 0.13, under about
# twice the floor (0.25), where a descent from random weights has done what is left to see (pmgarg's GPT-2 on
# Shakespeare: 0.25 at step 2000 of a loss still creeping to 0.13 by 3500; at a twentieth, 0.16 at 2900)
LOG_SETTLED_SHARE = 0.15


def _settling_position(loss: pd.Series, head: float, floor: float, log_scale: bool = False,
                       share: float = SETTLED_SHARE) -> int:
    """Where a descent from `head` to `floor` levels off: the first point from which the loss stays (in nine
    of ten points, and at the last) within `SETTLED_SHARE` of the fall above the floor; the settling time of
    a step response. Memorization is dated from there: by then the data is learned, the rest is polishing.

    On a log scale (`log_scale`, a positive floor) the share is of the fall in ln(loss): a fall from 8.5 nats to
    0.13 looks level at 0.6 on a linear scale while the loss still halves twice more; on a log scale it settles
    at 0.25."""
    if log_scale and floor > 0 and head > floor:
        bar = math.exp(math.log(floor) + share * (math.log(head) - math.log(floor)))
    else:
        bar = floor + share * max(head - floor, 0.0)
    found = _settled_from(loss, bar)
    return len(loss) - 1 if found is None else found


_LOG_FLOOR = 1e-4  # the floor a loss rounded to 4 decimals can show (0.0 is read as this on a log scale)
_HALFWAY_DOWN = 0.5  # a memorizing descent is dated where it has come half its way down on a log scale


def _dated_from_settling(found: Finding, descent: pd.Series, floor: float) -> Finding:
    """A memorization finding dated from where its descent to near zero levelled off, which can be well before
    the loss reached the near-zero bar (`collapse_abs`); that first near-zero step stays in the evidence."""
    k = max(1, len(descent) // 10)
    head = max(float(descent.iloc[:k].median()), float(descent.iloc[0]))
    # on a log scale, from where it has come half its way down in orders of magnitude (the geometric mean of its start
    # and its floor): a fine-tune's loss drops from 5 to 0.02 in its first steps and then takes epochs to reach ~0,
    # which on a linear scale reads as levelled off from the first steps (MERCATOR: step 15 at 0.34; guohuiyuan: 680)
    onset = _settling_position(_running_median(descent), head, max(floor, _LOG_FLOOR), log_scale=True,
                               share=_HALFWAY_DOWN)
    step = int(descent.index[onset])
    if step >= found.step:
        return found
    message = found.message.replace(f" at step {found.step} ", f" at step {found.step} (its descent levelled off from "
                                    f"step {step}) ", 1)
    return replace(found, step=step, message=message, evidence={**found.evidence, "near_zero_step": found.step})


def _unless_first_epoch(found: Finding, metrics: Metrics) -> Finding:
    """A loss at ~0 before the first epoch ended cannot be memorization (no example was seen twice): the log
    cannot say what it is, so it is `zero_loss_unexplained` with what to check."""
    # judged where the loss reached ~0, not where its descent levelled off (which can be a little earlier)
    near_zero = int(found.evidence.get("near_zero_step", found.step))
    epoch = _epoch_at(finite(metrics["epoch"]) if "epoch" in metrics else None, near_zero)
    if epoch is None or epoch >= 1.0:
        return found
    message = (f"loss near 0 from step {near_zero}, at epoch {epoch:.2g}: no example had been seen twice, so this "
               "is not memorization. Trivially predictable targets (the answer inside the prompt, a fixed template) "
               "or a loss computed over too few tokens give this; check a few training examples and their labels.")
    return replace(found, kind="zero_loss_unexplained", message=message, evidence={**found.evidence, "epoch": epoch})


PAIRWISE_ALGORITHMS = ("dpo", "simpo")  # a loss -log sigmoid(beta x margin) of each pair, with no NLL term in it
_PAIRS_SEEN = 2.0  # epochs: a pairwise loss that reaches 0 this late has seen every pair at least twice


def for_a_pairwise_loss(findings: list[Finding], metrics: Metrics) -> list[Finding]:
    """The findings of a pairwise preference run (DPO, SimPO: the run profile says so) whose log has only its loss
    (no rewards/* nor logps/* columns to judge it as a preference log): a `zero_loss_unexplained` from a gradual
    descent that reached ~0 at epoch `_PAIRS_SEEN` or later is `memorization`. Of the causes an exact 0.0 has in an
    SFT log, labels all masked leave a pairwise loss at ln 2 (both answers' log-probabilities 0, a margin of 0), not
    at 0, and a loss that came down smoothly to 0 over epochs is no NaN: at 0.000000 every pair's margin is so wide
    that the sigmoid is 1, the pairs the run has seen again and again separated completely (a DPO run over a hundred
    pairs for some thirty epochs: ln 2, then 0.1, 0.001, and 0.000000 from its twelfth epoch to the end). Kept
    where the loss got there within the first passes (too few to call it learned by heart), from the first step,
    or in one sudden drop."""
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
    held_out = (": check the held-out pairs' loss" if eval_loss_names(metrics) else ", and with no held-out pairs "
                "nothing shows whether the preference carries over to pairs the model has not seen: evaluate on some")
    out = []
    for f in findings:
        near_zero = int(f.evidence.get("near_zero_step", f.step))
        epoch = _epoch_at(epochs, near_zero)
        if f.kind != "zero_loss_unexplained" or f.evidence.get("from_the_start") or f.evidence.get("sudden") \
                or f.evidence.get("level_before") is None or epoch is None or epoch < _PAIRS_SEEN:
            out.append(f)
            continue
        last = format_number(float(epochs.max()))
        message = (f"the pairwise preference loss descends gradually to {format_number(f.evidence.get('value', 0.0))} "
                   f"at step {f.step}, at epoch {format_number(epoch)}, and stays near 0 "
                   f"{'to the end of the log' if f.evidence.get('to_end') else f'until step {f.end_step}'} (epoch "
                   f"{last} at the last point): every pair's margin is so wide that the sigmoid is 1. Labels all "
                   "masked would leave this loss at ln 2 (a margin of 0), not at 0: the pairs, seen again and again, "
                   f"are learned by heart (memorization){held_out}. Fewer epochs, more pairs or a larger beta.")
        out.append(replace(f, kind="memorization", message=message,
                           evidence={**f.evidence, "pairwise": True, "epoch": epoch}))
    return out


TRAIN_LOSS = "train_loss"  # the Trainer's closing summary: the mean of every step's loss over the run
_ROUNDING = 5e-5  # the Trainer logs each window's mean loss rounded to 4 decimals


def _told_by_train_loss(found: Finding, metrics: Metrics) -> Finding:
    """Exact 0.0 windows that the run's own `train_loss` says held real loss: memorization, not a NaN.

    The closing `train_loss` times the last step is the sum of every step's loss. A window whose steps were
    all NaN (HF's filter) or had every label masked adds exactly 0 to it; a window of tiny real losses,
    rounded to 0.0 when logged, adds a little. So when that sum exceeds what the logged windows account for
    (each window's mean times its length) by more than their rounding can, the 0.0 windows held real loss.
    Only a log that covers the run from its first step to the summary's (no resume, no unlogged tail) can tell."""
    surplus = _unlogged_loss(metrics)
    if surplus is None:
        return found
    message = (f"loss descends to 0.0 (as logged, 4 decimals) at step {found.step} and stays there "
               f"{'to the end of the log' if found.evidence.get('to_end') else f'until step {found.end_step}'}, and "
               f"the run's own train_loss says those windows held real, tiny losses: its sum over the run is "
               f"{format_number(surplus)} more than the logged windows account for, where NaN steps hidden by HF's "
               "filter or fully masked labels would add nothing. The training data is learned by heart "
               "(memorization). Check the eval loss and the dataset size.")
    return replace(found, kind="memorization", message=message, evidence={**found.evidence, "unlogged_loss": surplus})


def _unlogged_loss(metrics: Metrics) -> float | None:
    """How much more loss the closing `train_loss` holds than the logged windows, when more than rounding can
    explain; None when it cannot be told or is not more."""
    summary, loss = finite(metrics.get(TRAIN_LOSS, pd.Series(dtype="float64"))), metrics.get(LOSS)
    if summary.empty or loss is None or not np.all(np.isfinite(loss.to_numpy())):
        return None
    steps = loss.index.to_numpy(dtype="int64")
    end = int(summary.index[-1])
    windows = np.diff(np.concatenate([[0], steps]))
    if steps[-1] != end or np.any(windows <= 0) or windows[0] != np.median(windows):
        return None  # an unlogged tail, a resume or a first window of its own length: the sums do not line up
    values = loss.to_numpy()
    logged = float(np.sum(values * windows))
    surplus = float(summary.iloc[-1]) * end - logged
    # a non-zero window's rounding goes either way; a 0.0 window's true mean is >= 0: that is what is measured
    doubt = _ROUNDING * float(np.sum(windows[values != 0.0])) + 1e-6 * abs(logged)
    return surplus if surplus > doubt else None


def _running_median(loss: pd.Series) -> pd.Series:
    """The loss under a centred running median over a fortieth of the log (itself when that is one point)."""
    window = max(1, len(loss) // 40)
    return loss if window == 1 else loss.rolling(window, center=True, min_periods=1).median()


def _epoch_at(epochs: pd.Series | None, step: int) -> float | None:
    """The logged epoch at or just before `step`, or None where the log has none."""
    if epochs is None or not len(epochs):
        return None
    before = epochs[epochs.index <= step]
    return float(before.iloc[-1]) if len(before) else float(epochs.iloc[0])


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


def _judge(loss: pd.Series, grad: pd.Series | None, start: int, stop: int, thresholds: Thresholds) -> Finding:
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
            "check the eval loss", first, last, evidence)
    # Logged values above 0 are real losses: HF's NaN filter and all-masked labels both log exactly 0.0.
    why = "with a finite non-zero grad_norm" if grad is not None else "with values above 0 (real losses)"
    message = (f"loss descends gradually to {format_number(loss.iloc[start])} at step {first} {why} "
               f"and stays near 0 {{span}}: the training data is learned by heart (memorization; "
               f"a 4.x Trainer rounds such a loss to 0.0). Check the eval loss and the dataset size.")
    return Finding("memorization", "warning", first, message, end_step=last, metric=LOSS, evidence=evidence)


_LEVEL_WINDOWS = 10  # the level a loss fell from is read over this many `collapse_window`s too


def _held_its_level(loss: pd.Series, start: int, thresholds: Thresholds) -> bool:
    """Whether the loss stood at a sudden fall's height over the `_LEVEL_WINDOWS` x `collapse_window` points before
    the near-zero stretch (their median `collapse_drop_factor` x `collapse_abs` or more), not only over the last
    `collapse_window`: a loss already near 0 whose hard examples lift a few steps to 0.1-0.4 (a small dataset
    learned by heart, on batches of 4) comes back to its floor after them; it does not collapse."""
    before = loss.iloc[max(0, start - _LEVEL_WINDOWS * thresholds.collapse_window):start]
    return float(before.median()) >= thresholds.collapse_drop_factor * thresholds.collapse_abs


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
