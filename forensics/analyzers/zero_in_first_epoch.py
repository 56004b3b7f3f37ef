"""A loss at ~0 before any example was seen twice: not memorization, and sometimes not learning at all.

Within the first epoch no example has come round again, so a loss near zero there is no training set learned by
heart. A language model's loss at 0.01 nats before the first epoch ended that goes on to the floor of a 4-decimal
print is the targets handed to the model (`targets_given_away`, a `loss_collapse`); one already near 0 at the first
logged points is nearly every label masked or targets copied (`near_zero_from_the_start`); one that settles tenfold
lower, under 0.01, in its first pass is a `loss_collapse` too, an error where it ends at that floor and a warning
where it stays above it (`collapsed_in_first_pass`; from under 1 nat where the run profile says it is a language
model: `for_a_language_model`); one already under 0.05 nats at a first-pass point and near 0 from the next to
the end, in a log too sparse for those (a point every 500-2000 steps), is a `loss_collapse` warning too
(`too_low_on_unseen_text`; for a one-epoch run whose configuration sets its length in epochs:
`for_epochs_over_a_sized_dataset`); any other near-zero stretch reached within the first epoch is
`zero_loss_unexplained` (`unless_first_epoch`). On a classification head
the loss is no next-token loss, and the same findings say so (`for_a_classifier`).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .memorization_onset import levelled_off_position
from .metrics import (EVAL_ACCURACY_KEYS, GRAD_NORM, LOSS, PASSES, Metrics, epoch_at, finite, format_number,
                      is_preference_log, passes_over_data, real_loss, true_runs)
from .overfitting import EVAL_LOSS, eval_loss_names


_NOTHING_LEFT = 2e-4  # a per-token loss at the floor of a 4-decimal print (0.0000 - 0.0002)


def targets_given_away(loss: pd.Series, metrics: Metrics, thresholds: Thresholds) -> Finding | None:
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
    `PASSES` by the end; a streaming run's epoch is a fraction of max_steps, under 1 to the end whatever was
    repeated. And no eval loss: where one is logged, `overfitting` judges (one that falls with it says the answers
    are that easy)."""
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
    if epochs is None or not len(epochs) or passes_over_data(epochs) < PASSES or eval_loss_names(metrics) \
            or len(loss) < thresholds.collapse_points + 1:
        return None
    values = loss.to_numpy()
    start = float(values[0])
    low = np.flatnonzero(values <= thresholds.given_away_level)
    if start < thresholds.given_away_start or not len(low) or len(values) - low[0] < thresholds.collapse_points:
        return None
    at = int(low[0])
    epoch = epoch_at(epochs, int(loss.index[at]))
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


_CUT_SHORT = 0.5  # epochs: a counter that ends this early was stopped (max_steps) well inside its first pass
_SETTLED = 0.9  # ... share of the points after the loss got there that stay under `memorization_level`


def _counts_passes(epochs: pd.Series) -> bool:
    """Whether an epoch counter counts passes over the data: it reaches `PASSES`, or it ends under `_CUT_SHORT`
    (max_steps stopped the run early in its first pass: 60 steps of 8 over 100,000 examples end at 0.0048). A
    streaming run's epoch is a fraction of max_steps that ends near 1 whatever was repeated."""
    return passes_over_data(epochs) >= PASSES or float(epochs.iloc[-1]) <= _CUT_SHORT


def collapsed_in_first_pass(loss: pd.Series, metrics: Metrics, thresholds: Thresholds,
                            language_model: bool = False) -> Finding | None:
    """A language model's loss (`given_away_start` nats or more at its first point, or a run its profile calls
    supervised fine-tuning or pre-training: `language_model`) that falls tenfold and more, through real values (not
    an exact 0.0), to `given_away_level` or less before the first epoch ended, and stays under `memorization_level`
    (`_SETTLED` of its points) from there to the end, with no eval loss: a whole-sequence loss that low on text not
    yet seen measures targets trivial or given away (pad tokens as labels, a prompt-masking bug, a constant answer),
    not the task. A `loss_collapse` dated where its descent levelled off (`levelled_off_position`, on a log scale):
    an error where its last tenth sits at the floor of a 4-decimal print (`_NOTHING_LEFT`: nothing left to learn,
    no gradient); a warning where it stays small but above it (repeated texts in the data would make that low loss
    real), and only where no grad_norm shows a gradient still alive (`_gradient_alive`). Needs an epoch counter that
    counts passes (`_counts_passes`)."""
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
    if epochs is None or not len(epochs) or not _counts_passes(epochs) or eval_loss_names(metrics) \
            or len(loss) < thresholds.collapse_points + 1:
        return None
    values = loss.to_numpy()
    start = float(values[0])
    if not (language_model or start >= thresholds.given_away_start) or start <= thresholds.given_away_level:
        return None
    low = np.flatnonzero(values <= min(thresholds.given_away_level, start / 10))
    if not len(low) or values[low[0]] == 0.0 or len(values) - low[0] < thresholds.collapse_points:
        return None  # (a fall straight to an exact 0.0 is a masked NaN as well: `_zero_without_grad_norm` says so)
    at = int(low[0])
    epoch = epoch_at(epochs, int(loss.index[at]))
    if epoch is None or epoch >= 1.0 or np.mean(values[at:] <= thresholds.memorization_level) < _SETTLED:
        return None
    tail = float(np.median(values[-max(1, len(values) // 10):]))
    at_floor = tail <= _NOTHING_LEFT
    if not at_floor and _gradient_alive(metrics, loss.index[at:], thresholds):
        return None
    onset = levelled_off_position(loss, tail)
    first, reached, last = int(loss.index[onset]), int(loss.index[at]), int(loss.index[-1])
    return Finding("loss_collapse", "error" if at_floor else "warning", first,
                   _first_pass_message(start, float(values[onset]), first, float(values[at]), reached, epoch, tail,
                                       last, at_floor),
                   end_step=last, metric=LOSS, evidence={
                       "to_end": True, "sudden": False, "first_epoch": True, "epoch": epoch, "value": float(values[at]),
                       "level_before": start, "near_zero_step": reached, "tail": tail, "n_points": len(values) - onset})


def _gradient_alive(metrics: Metrics, steps: pd.Index, thresholds: Thresholds) -> bool:
    """A grad_norm logged over these steps, its median above `collapse_abs`: the loss, small as it is, still carries
    a gradient, the mark of a regular target learned (a t5-small's 0.005 nats on templated outputs in its first epoch,
    grad_norm 0.21; a LoRA's 0.0035 on knowledge-graph paths, 0.12-0.44), not of labels with nothing left in them."""
    grad = finite(metrics[GRAD_NORM]) if GRAD_NORM in metrics else pd.Series(dtype="float64")
    seen = grad[(grad.index >= steps[0]) & (grad.index <= steps[-1])]
    return bool(len(seen)) and float(seen.median()) > thresholds.collapse_abs


_EXPLAINED = ("memorization", "zero_loss_unexplained", "no_learning_evidence")  # what such a collapse says instead


def for_a_language_model(findings: list[Finding], metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """The findings of a run whose profile says it trains a language model (supervised fine-tuning, pre-training),
    where its loss collapsed in its first pass (`collapsed_in_first_pass`) from under `given_away_start` nats, which
    the log alone cannot show to be a language model's: that collapse in place of the near-zero loss judged without
    it (not memorization, 'unexplained') and of 'no evidence it learned'."""
    if LOSS not in metrics or is_preference_log(metrics) or any(f.kind == "loss_collapse" for f in findings):
        return findings  # (a preference or RL loss sits near 0 by design)
    found = collapsed_in_first_pass(real_loss(metrics), metrics, thresholds, language_model=True)
    if found is None:
        return findings
    return [found] + [f for f in findings if f.kind not in _EXPLAINED or f.metric not in (LOSS, None)]


def _first_pass_message(start: float, levelled: float, first: int, value: float, reached: int, epoch: float,
                        tail: float, last: int, at_floor: bool) -> str:
    ends = ("at the floor of a 4-decimal print: nothing is left to learn and no gradient is left to learn from"
            if at_floor else "small but not 0: were the training texts repeats of one another, this low loss could "
            "be real; nothing in the log says so")
    return (f"loss collapse: the loss falls from {format_number(start)} to {format_number(value)} by step {reached}, "
            f"at epoch {epoch:.2g}, before any example was seen twice (its descent levels off, on a log scale, at step "
            f"{first}: {format_number(levelled)}), and ends at {format_number(tail)} over the last tenth of the log "
            f"(step {last}), {ends}. "
            "A whole-sequence next-token loss this low on text the model has not seen measures targets that are "
            "trivial or handed to it, not the task: pad tokens counted as labels, a prompt-masking bug that leaves "
            "only template tokens, the same answer for every example, labels equal to the inputs. Decode the "
            "unmasked labels of one batch and compare them with its input_ids.")


_UNSEEN_TEXT_LEVEL = 0.05  # nats a token: no text a model has not yet seen is this predictable to it, unless trivial
_SECOND_PASS_OVER = 2.0  # epochs: near zero before this, no example had been seen more than twice


def too_low_on_unseen_text(loss: pd.Series, metrics: Metrics, thresholds: Thresholds,
                           counts_passes: bool = False) -> Finding | None:
    """A loss at `_UNSEEN_TEXT_LEVEL` or less at a point inside the first epoch (on batches the model had not yet
    seen), and near zero (`collapse_abs` or less, real values) at every point after it to the end of the log, the
    first of those before a second pass was over: a `loss_collapse` warning dated at that first-pass point. What a
    log this sparse shows (a point every 500-2000 steps: too few for `collapsed_in_first_pass`) is enough: a per-token
    loss of 0.002 on examples never seen means p = 0.998 on every target token, which no task of real text gives;
    targets trivial (pad tokens counted as labels) or handed over (labels leaking into the inputs, a near-copy task)
    do. Vanh253333's bert2bert, one epoch, no eval: 0.715 (epoch 0.30), 0.0020 (0.61), 0.0004 (0.91); qwu01's
    Reformer on protein sequences (30 symbols, ln 30 = 3.4 nats): 0.042 at its first point (epoch 0.73), 1e-4 from
    epoch 1.47, eval 3e-5. Silent where grad_norm shows a gradient still alive over that stretch (`_gradient_alive`:
    a regular target learned, PraveenBarathi-K's and taehyun-me's classifiers), and where a logged eval loss ends
    above `memorization_level` (held-out text not as predictable: another story, which `overfitting` tells).
    Needs an epoch counter that counts passes (`_counts_passes`, or `counts_passes`: the run's configuration says
    so)."""
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
    if epochs is None or not len(epochs) or not (counts_passes or _counts_passes(epochs)) \
            or not _held_out_as_low(metrics, thresholds):
        return None
    values = loss.to_numpy()
    runs = true_runs((values > 0) & (values <= thresholds.collapse_abs))
    after = runs[-1][0] if runs and runs[-1][1] == len(values) else 0
    if after == 0 or not 0 < values[after - 1] <= _UNSEEN_TEXT_LEVEL:
        return None  # (no near-zero end, or one from the first point: nothing shows the first pass above it)
    at = after - 1
    epoch, reached = epoch_at(epochs, int(loss.index[at])), epoch_at(epochs, int(loss.index[after]))
    if epoch is None or epoch >= 1.0 or reached is None or reached >= _SECOND_PASS_OVER \
            or _gradient_alive(metrics, loss.index[at:], thresholds):
        return None
    first, last = int(loss.index[at]), int(loss.index[-1])
    return Finding("loss_collapse", "warning", first, _unseen_text_message(loss, at, after, epoch, metrics),
                   end_step=last, metric=LOSS, evidence={
                       "to_end": True, "sudden": False, "first_epoch": True, "epoch": epoch,
                       "value": float(values[at]), "level_before": float(values[0]),
                       "near_zero_step": int(loss.index[after]), "tail": float(np.median(values[after:])),
                       "n_points": len(values) - at})


def _held_out_as_low(metrics: Metrics, thresholds: Thresholds) -> bool:
    """No eval loss logged, or the last one under `memorization_level`: held-out text as predictable as the
    training batches (qwu01's eval 3e-5, perplexity 1.00003), the same trivial targets on both splits."""
    names = eval_loss_names(metrics)
    evals = finite(metrics[names[0]]) if names else pd.Series(dtype="float64")
    return not names or (len(evals) > 0 and float(evals.iloc[-1]) <= thresholds.memorization_level)


def _unseen_text_message(loss: pd.Series, at: int, after: int, epoch: float, metrics: Metrics) -> str:
    names = eval_loss_names(metrics)
    held_out = (f" The held-out {names[0]} is as low ({format_number(float(finite(metrics[names[0]]).iloc[-1]))}): "
                "both splits hold the same trivially predictable targets." if names else " No eval loss was logged.")
    return (f"loss collapse: the loss is {format_number(float(loss.iloc[at]))} at step {int(loss.index[at])}, at "
            f"epoch {epoch:.2g}, inside the first pass over the data (on examples the model had not yet seen), and "
            f"near 0 from step {int(loss.index[after])} to the end of the log ({format_number(float(loss.iloc[-1]))} "
            f"at step {int(loss.index[-1])}). No text a model has not seen is that predictable to it: the loss counts "
            "targets that are trivial or handed to it, not the task (pad tokens counted as labels, labels leaking "
            f"into the inputs, a near-copy task), and this log cannot say which.{held_out} Decode the unmasked labels "
            "of one batch and compare them with its input_ids.")


def for_epochs_over_a_sized_dataset(findings: list[Finding], metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """The findings of a run whose configuration sets its length in epochs (max_steps unset: the HF Trainer refuses
    that for a dataset without a length, so its epoch counter counts passes over the data even where it ends between
    `_CUT_SHORT` and `PASSES`, as one planned epoch does), where its loss was too low on unseen text
    (`too_low_on_unseen_text`): that collapse in place of what was said of the same near-zero loss without it."""
    if LOSS not in metrics or is_preference_log(metrics) or any(f.kind == "loss_collapse" for f in findings):
        return findings
    found = too_low_on_unseen_text(real_loss(metrics), metrics, thresholds, counts_passes=True)
    if found is None:
        return findings
    return [found] + [f for f in findings if f.kind not in _EXPLAINED or f.metric not in (LOSS, None)]


_START = 0.25  # epochs: a log whose first point is this early shows where training started


def near_zero_from_the_start(loss: pd.Series, metrics: Metrics, thresholds: Thresholds) -> Finding | None:
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


def unless_first_epoch(found: Finding, metrics: Metrics) -> Finding:
    """A loss at ~0 before the first epoch ended cannot be memorization (no example was seen twice): the log
    cannot say what it is, so it is `zero_loss_unexplained` with what to check."""
    # judged where the loss reached ~0, not where its descent levelled off (which can be a little earlier)
    near_zero = int(found.evidence.get("near_zero_step", found.step))
    epoch = epoch_at(finite(metrics["epoch"]) if "epoch" in metrics else None, near_zero)
    if epoch is None or epoch >= 1.0:
        return found
    levelled = f" (its descent levelled off from step {found.step})" if found.step < near_zero else ""
    message = (f"loss near 0 from step {near_zero}{levelled}, at epoch {epoch:.2g}: no example had been seen twice, so "
               "this is not memorization. Trivially predictable targets (the answer inside the prompt, a fixed "
               "template) or a loss computed over too few tokens give this; check a few training examples and their "
               "labels.")
    return replace(found, kind="zero_loss_unexplained", message=message, evidence={**found.evidence, "epoch": epoch})


# A model class ending in one of these has a classification head (`ViTForImageClassification`, `BertFor...`).
CLASSIFIER_HEADS = ("Classification", "ForMultipleChoice", "ForQuestionAnswering", "ForRegression")
CLASSIFIER_TASKS = ("SEQ_CLS", "TOKEN_CLS", "QUESTION_ANS")


def for_a_classifier(findings: list[Finding], metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """The findings of a run whose model has a classification head (its config says so): its loss is no next-token
    loss, so one at ~0 within the first epoch may be an easy task as well as a label given away by a feature, and
    `targets_given_away` is a warning that says so rather than a collapse. Where the held-out evaluation tells,
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
