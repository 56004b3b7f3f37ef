"""Memorization without an eval loss: the level a training loss is memorized under, and when it got there.

A log with no eval loss cannot show whether the model still generalises; a training loss that fell gradually to a
small fraction of where it started and settled under the memorization level to the end is the training data learned
by heart (a `memorization` warning, VERDICTS.md). This module holds that level (`memorization_level`, looser after
many epochs or where the loss falls at the epoch starts, `falls_at_epoch_starts`), the judgements that read it
(`memorized_without_eval`, `memorized_in_a_staircase`, `memorized_from_scratch` for a model trained from random
weights, and `dated_under_pretraining_floor`, which dates such a model's memorization found at a fine-tune's level), and
the exact 0.0 windows that the run's own `train_loss` says held real loss (`told_by_train_loss`).
`collapse.detect_loss_collapse` calls them; the near-zero stretch itself is judged there, and where a memorizing
descent began is dated in `memorization_onset`. A staircase whose drops outdo the first pass's fall is memorization at
any level (`epoch_staircase`, which reads the passes with `whole_passes` and `pass_edges`).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .fresh_passes import memorized_in_few_points, memorized_over_passes
from .held_out_score import held_out_score_rising
from .memorization_onset import (dated_under_held_out_level, dated_where_settled_under, memorizing_onset,
                                 running_median, settled_from)
from .metrics import (LOSS, PASSES, TRAIN_LOSS, Metrics, epoch_at, finite, format_number, is_preference_log,
                      passes_over_data, real_loss)
from .overfitting import eval_loss_names


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
        # (the epoch the log ends at, not a span: "from step 425 to step 1500 over 55.57 epochs" read as one)
        return thresholds.memorization_level_many_epochs, (
            f" (by epoch {format_number(float(epochs.max()))}: many passes over the same examples)")
    return thresholds.memorization_level, ""


_EDGE = 0.1  # the share of an epoch's points at each end that its level is read from
_EPOCH_POINTS = 12  # an epoch logged at this many points or more shows where within it the loss falls


def falls_at_epoch_starts(loss: pd.Series, epochs: pd.Series) -> bool:
    """The loss falls in steps at the starts of epochs and stays flat within them: from the second epoch on,
    the batches it gets better on are the ones it has seen before, the signature of a model learning its
    training examples by heart (the 'staircase' of multi-epoch fine-tuning). Needs three whole epochs of
    at least `_EPOCH_POINTS` logged points; the drops at the epoch starts must be at least twice the fall within them.
    Each epoch's start is read after the point that straddles its boundary (`_epoch_of_points`)."""
    epoch_of, whole = whole_passes(loss, epochs)
    if len(whole) < 3:
        return False
    ends = pass_edges(loss, epoch_of, whole)
    within = sum(start - end for start, end in ends[1:])  # the first epoch's own fall is ordinary learning
    drops = [prev_end - start for (_, prev_end), (start, _) in zip(ends, ends[1:])]
    at_starts = sum(drops)
    return at_starts > 0 and at_starts >= 2 * max(within, 0.0) and sum(d > 0 for d in drops) >= 2 * len(drops) / 3


def whole_passes(loss: pd.Series, epochs: pd.Series) -> tuple[np.ndarray, list[float]]:
    """The whole epoch of each loss point (`_epoch_of_points`) and the epochs logged at `_EPOCH_POINTS` points or
    more, in order: the passes whose level can be read."""
    epoch_of = _epoch_of_points(loss, epochs)
    return epoch_of, [e for e in np.unique(epoch_of[np.isfinite(epoch_of)]) if (epoch_of == e).sum() >= _EPOCH_POINTS]


def pass_edges(loss: pd.Series, epoch_of: np.ndarray, passes: list[float]) -> list[tuple[float, float]]:
    """Each pass's (start, end) level: the medians of its first and last `_EDGE` of points (two at the least)."""
    ends = []
    for e in passes:
        values = loss.to_numpy()[epoch_of == e]
        k = max(2, int(len(values) * _EDGE))
        ends.append((float(np.median(values[:k])), float(np.median(values[-k:]))))
    return ends


def _epoch_of_points(loss: pd.Series, epochs: pd.Series) -> np.ndarray:
    """The whole epoch each loss point was logged in (the epoch in force at its step, where the two are logged at
    different steps), NaN at the first point of each epoch after the first. A logged loss is the mean over the steps
    since the point before, and the epoch a fraction that reaches the next whole number at an epoch's last step: the
    first point counted in an epoch holds steps of the epoch before, all of them where the logging interval divides
    the epoch, some where it does not (logging every 50 over epochs of 1320 steps, the point at 1350 is 20 steps of
    the old level and 30 of the new), so it belongs to neither level and would blur the step between them."""
    epoch_of = np.floor(epochs.reindex(epochs.index.union(loss.index)).ffill().reindex(loss.index).to_numpy())
    straddles = np.flatnonzero(np.diff(epoch_of) > 0) + 1  # (NaN before the first epoch logged compares False)
    epoch_of[straddles] = np.nan
    return epoch_of


STAIR_LEVEL = 0.2  # nats a token: a pass's median this low, in a staircase ...
_STAIR_FALL = 6.0  # ... and this many times under the first pass's, from the third pass on, to the end
_STAIR_FROM = 2  # the third pass (0-based): the first two may be ordinary learning


def memorized_in_a_staircase(loss: pd.Series, epochs: pd.Series) -> list[Finding]:
    """A loss that falls at the start of each epoch and stays flat within it (`falls_at_epoch_starts`: it gets better
    on the examples it has seen before), whose median over a pass from the third on is under `STAIR_LEVEL` and
    `_STAIR_FALL` x under the first pass's, and stays under that level over every whole pass after, with no eval loss:
    the model halves its loss each time the examples come round again, down to a level no new text would get
    (a 13B full fine-tune's pass medians 1.463, 1.128, 0.731, 0.389, 0.191, 0.105). The many-epochs level of
    `memorization_level` waits for the loss to settle under 0.1, which a log cut off in its sixth pass never shows.
    A staircase that ends higher, or that fell less than that over its passes (a LoRA's 0.492, 0.296, 0.173, 0.115
    over four: a task learned well), is left alone. A `memorization` warning from the first step of that pass."""
    if len(loss) < 3 * _EPOCH_POINTS or not falls_at_epoch_starts(loss, epochs):
        return []
    epoch_of, passes = whole_passes(loss, epochs)
    medians = [float(np.median(loss.to_numpy()[epoch_of == e])) for e in passes]
    if len(passes) <= _STAIR_FROM or not medians[0] > 0:
        return []
    low = [m <= STAIR_LEVEL and m * _STAIR_FALL <= medians[0] for m in medians]
    at = next((i for i in range(_STAIR_FROM, len(passes)) if low[i] and all(m <= STAIR_LEVEL for m in medians[i:])),
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
        "value": medians[at], "level": STAIR_LEVEL, "eval_loss_logged": False, "to_end": True, "settled_step": first,
        "epoch": float(passes[at]), "pass_medians": medians[:20], "staircase": True})]


_MOST_OF_TENFOLD = 5.0  # ... `to_the_end` counts only a crossing that came most of that way (an RL policy loss that
# starts near 0, 0.064 -> 0.0035, crosses the level from a start only three times it: no descent to a memorized set)


def memorized_without_eval(loss: pd.Series, level: float, thresholds: Thresholds, epochs: pd.Series | None,
                            why_level: str = "", log_scale: bool = False, to_the_end: bool = False) -> list[Finding]:
    """A loss that fell gradually to a small fraction of where it started and settled under the memorization
    `level` to the end of the log, with no eval loss to say the model generalises: memorization, dated from
    where the descent settled (`memorization_onset.memorizing_onset`).

    Judged on a running median (a fortieth of the log) so that a per-step log's noise does not hide where
    the loss settled. A loss that reached its floor within the first epoch is not memorization: no example
    had been seen twice, the data is simply that easy (templated answers). One whose descent levelled off in the
    first epoch but that still fell several-fold over the passes after it is, dated on those passes
    (`memorization_onset`). (With an eval loss, `overfitting` judges: a low eval loss means the task itself
    is that easy.) `to_the_end`: the tenfold descent may reach the loss's last level, not the level where it first
    settled (0.71 -> 0.076 at the crossing, 0.01 at the end, over five epochs); for a log with no eval loss at all,
    where nothing else could show the same."""
    smooth = running_median(loss)
    start = settled_from(smooth, level)
    if start is None or len(loss) - start < _settled_points(loss, thresholds):
        return []  # never settled, or only over the last few points: not yet the run's final state
    k = max(1, len(loss) // 10)
    head = max(float(loss.iloc[:k].median()), float(loss.iloc[0]))
    floor = float(smooth.iloc[-k:].median())
    no_tenfold_descent = start == 0 or head < 10 * float(smooth.iloc[start])
    settled = loss.iloc[start:]
    if no_tenfold_descent and (late := epoch_at(epochs, int(loss.index[0]))) is not None \
            and late >= thresholds.memorization_epochs and float(settled.median()) <= thresholds.memorization_level:
        # (the strict level: without the descent, a loss of a few hundredths may be a regression's or a forecast's;
        # a log kept from a late epoch may show the descent's last point or two, short of tenfold: still before it)
        return [_memorized_before_the_log(settled, thresholds.memorization_level, late, "", loss.iloc[:start])]
    if no_tenfold_descent and not (to_the_end and start > 0 and head >= 10 * floor
                                   and head >= _MOST_OF_TENFOLD * float(smooth.iloc[start])):
        return []  # no tenfold descent: a loss that is simply small from the start
    dated = memorizing_onset(smooth, head, floor, level, epochs, log_scale)
    if dated is None:
        return []
    onset, epoch, levels_off = dated
    first = int(loss.index[onset])
    when = f" (epoch {epoch:.3g})" if epoch is not None else ""
    message = (f"loss falls from about {format_number(head)} to {format_number(smooth.iloc[onset])} by step "
               f"{first}{when}, {levels_off}, and stays under {format_number(level)} from step "
               f"{int(loss.index[start])} to step {int(loss.index[-1])}{why_level}, and no eval loss was logged: the "
               "training data is most likely learned by heart (memorization). Log an eval loss to see whether the "
               "model still generalises; fewer epochs or more data if it does not.")
    # Settled to the end of its phase by construction (`phase_ends` says whether that is the log's end).
    return [Finding("memorization", "warning", first, message, end_step=int(loss.index[-1]), metric=LOSS, evidence={
        "head": head, "value": float(smooth.iloc[onset]), "level": level, "eval_loss_logged": False,
        "to_end": True, "settled_step": int(loss.index[start]), "epoch": epoch, "why_level": why_level.strip()})]


def _settled_points(loss: pd.Series, thresholds: Thresholds) -> float:
    """The points a loss must stay under its level over to be the run's final state, not a passing dip."""
    return max(thresholds.collapse_points, 0.1 * len(loss))


MANY_PASSES = 10.0  # epochs over the same examples, after which a held-out loss has parted from the training loss
_NO_GAP = 1.1  # an eval loss within a tenth of the training loss over the epoch before it is at that loss's own level
_TRACKED_EVALS = 3  # ... at every one of this many evaluations or more
_LEVEL_POINTS = 10  # training points the level beside an eval is read from at the least: a few are a few batches


def eval_like_training(metrics: Metrics, name: str) -> bool:
    """Whether the eval loss `name` cannot be told from the training set: after `MANY_PASSES` epochs or more over
    the same examples, it sits at or under the training loss of the epoch before it (within `_NO_GAP`) at every one of
    `_TRACKED_EVALS` or more evaluations (the training loss's level read over the last `_LEVEL_POINTS` points where a
    coarse log holds fewer in that epoch). Held-out text opens a gap over that many passes (the training loss goes
    under it); an eval that keeps pace cannot be told from the training set scored again (a script passing the train
    split as eval_dataset: 50 epochs over ~104 examples, eval 0.198 -> 0.047 at the training loss's level)."""
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
    evals = finite(metrics[name]) if name in metrics else None
    if LOSS not in metrics or epochs is None or not len(epochs) or float(epochs.max()) <= 0 or evals is None \
            or len(evals) < _TRACKED_EVALS or passes_over_data(epochs) < MANY_PASSES:
        return False
    loss, steps_an_epoch = real_loss(metrics), float(epochs.index[-1]) / float(epochs.max())
    for step, value in evals.items():
        epoch_before = loss[(loss.index > step - steps_an_epoch) & (loss.index <= step)]
        if len(epoch_before) < _LEVEL_POINTS:  # (logged every 30 steps of a 52-step epoch: 1-2 batches' noise)
            epoch_before = loss[loss.index <= step].iloc[-_LEVEL_POINTS:]
        if not len(epoch_before) or float(value) > _NO_GAP * float(epoch_before.median()):
            return False
    return True


def eval_advice(eval_logged: bool) -> str:
    """What to check beside a training set learned by heart: the eval loss where one was logged; where none was,
    that one be logged (no "check the eval loss" of a run that has none)."""
    if eval_logged:
        return "Check the eval loss and the dataset size."
    return "No eval loss was logged: log one to see whether the model still generalises, and check the dataset size."


def held_out_loss_names(metrics: Metrics) -> list[str]:
    """The log's eval losses (`eval_loss_names`) less those that look like the training set (`eval_like_training`):
    the ones that can show whether the model still generalises."""
    return [name for name in eval_loss_names(metrics) if not eval_like_training(metrics, name)]


def with_eval_like_training(found: Finding, metrics: Metrics) -> Finding:
    """A memorization judged as if no eval loss was logged, where the one logged looks like the training set: its
    message says so, in place of "no eval loss was logged"."""
    names = [name for name in eval_loss_names(metrics) if eval_like_training(metrics, name)]
    if not names:
        return found
    said = (f"and its {names[0]} keeps pace with the training loss at each of its {len(finite(metrics[names[0]]))} "
            "evaluations, with no gap")
    # the log cannot tell the two apart: memorized if that eval is the training data, generalising if it is held out
    message = found.message.replace("and no eval loss was logged", said, 1).replace(
        "most likely learned by heart (memorization)",
        "learned by heart (memorization) if that eval is the training data scored again (or text so like it that it "
        "cannot show generalisation); were it held out, the model would generalise as well as it fits: the log cannot "
        "tell which", 1).replace(
        "Log an eval loss", "Check the eval_dataset and evaluate on held-out examples", 1)
    return replace(found, message=message, evidence={**found.evidence, "eval_like_training": names[0]})


def _memorized_before_the_log(loss: pd.Series, level: float, epoch: float, why_level: str,
                              before: pd.Series | None = None) -> Finding:
    """A log that begins after `memorization_epochs` passes over the data with the loss already at the memorized
    level (its median at `memorization_level`, settled to its end): the descent happened before what was kept, and
    the state it left is memorization (hiyouga/LlamaFactory issue 569: 0.018-0.022 over epochs 14.7-14.9, no eval
    loss; Time-MoE's forecasting loss of 0.06 falling steadily at epochs 24-34 is not at that level). `before`: the
    log's points ahead of `loss` (the last of the descent, short of tenfold), said in the message."""
    first, last = int(loss.index[0]), int(loss.index[-1])
    lead = (f" at {format_number(float(before.iloc[0]))}, the last of a descent, and from step {first} the loss is at "
            if before is not None and len(before) else " with the loss already at ")
    message = (f"the log begins at epoch {epoch:.3g}{lead}{format_number(float(loss.median()))} "
               f"(about {format_number(level)} or less from step {first} to step {last}), and no eval loss was "
               "logged: after that many passes the training data is most likely learned by heart (memorization). "
               "Log an eval loss to see whether the model still generalises; fewer epochs or more data if it does not.")
    return Finding("memorization", "warning", first, message, end_step=last, metric=LOSS, evidence={
        "value": float(loss.median()), "level": level, "eval_loss_logged": False, "to_end": True,
        "settled_step": first, "epoch": epoch, "why_level": why_level.strip(), "log_starts_late": True})


def phase_ends(found: Finding, loss: pd.Series) -> Finding:
    """A memorization judged in one phase lasts to the end of the log only when that phase is the last one."""
    return replace(found, evidence={**found.evidence, "to_end": found.end_step == int(loss.index[-1])})


def phases(loss: pd.Series, restarts: list[int]) -> list[pd.Series]:
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
    judges) or another finding already says memorization, and where a held-out score still rose to the end (the model
    was still generalising better: `held_out_score_rising`). A log short of the tenfold fall from its first point (an
    epoch mean, already well under where the fresh head began) is read by its passes (`memorized_over_passes`), and one
    of a few long means falling at every point by where it ends (`memorized_in_few_points`)."""
    if LOSS not in metrics or eval_loss_names(metrics) or is_preference_log(metrics) \
            or held_out_score_rising(metrics, real_loss(metrics)):
        return []
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
    why = (f" (a model trained from random weights: no natural text is under {format_number(PRETRAINING_FLOOR)} nats a "
           "token unless it was learned by heart)")
    # from random weights the loss falls across orders of magnitude: its descent is judged level on a log scale
    found = memorized_without_eval(real_loss(metrics), PRETRAINING_FLOOR, thresholds, epochs, why, log_scale=True)
    if found and _low_plateau_in_one_pass(real_loss(metrics), found[0], epochs):
        return []
    if not found:  # a log that begins after the first pass, well under where the fresh head started
        loss = real_loss(metrics)
        found = memorized_over_passes(loss, epochs, PRETRAINING_FLOOR, _settled_points(loss, thresholds), MANY_PASSES,
                                      why) or memorized_in_few_points(loss, PRETRAINING_FLOOR, STAIR_LEVEL, why)
    return [phase_ends(f, real_loss(metrics)) for f in found]


def dated_under_pretraining_floor(found: Finding, loss: pd.Series, built_here: bool = False) -> Finding:
    """A memorization of a model trained from random weights, judged against a level stricter than `PRETRAINING_FLOOR`
    (the fine-tune levels: 0.1 after many epochs, `STAIR_LEVEL` over late passes), dated no later than where its `loss`
    settled under that floor (the running median, in nine of ten points to the end): from there it was past what any
    natural text reaches, and the stricter level came passes later (Roy19921010's MiniGPT on one repeated window: under
    0.5 from epoch 10, within 1.5x of 0.1 at 13, judged 8 +- 4; sdeepthikumar's 135M GPT on tiny Shakespeare: under
    0.5 from step 2110, under 0.2 from 2381, judged 1960 +- 400). A finding judged at the floor itself keeps the date
    its descent levelled off (Jayant-Guru-Shrivastava's GPT-2: under 0.5 from 4030, levelled off at 4170, judged
    4350 +- 250 where it went under 0.2). A finding of the late passes (`late_passes`: a fall over passes made on
    examples already seen many times) of a model the run's code builds from random weights (`built_here`) is dated
    as `fresh_passes` dates its own, from where the loss went under what held-out text reaches
    (`dated_under_held_out_level`): the passes bought the fall from there on (stopstressingmeout_Next-Word-
    Prediction-Using-LSTM's word LSTM on one story, per batch: under 1 nat from epoch 20, under 0.5 from 26, judged
    20 +- 5). Not where only the loss's level says the run started from random weights: that may be a fine-tune whose
    held-out loss goes under 1 nat (Miki-Palmisano_BLOOMZ-Solidity_Train's BLOOMZ on Solidity: under 1 nat from
    epoch 10, judged 18 +- 3 where it leaves the 0.1-1 range)."""
    level = found.evidence.get("level")
    if found.kind != "memorization" or not isinstance(level, (int, float)) or level >= PRETRAINING_FLOOR:
        return found
    if built_here and found.evidence.get("late_passes"):
        return dated_under_held_out_level(found, loss)
    return dated_where_settled_under(found, loss, PRETRAINING_FLOOR, "pretraining_floor_step",
                                     "a model trained from random weights that low is past what any natural text "
                                     "reaches unless it was learned by heart.")


_PLATEAU_SHARE = 0.5  # a loss settled under the floor over this share of the log or more ...
_STILL_HALVING = 0.5  # ... whose last tenth is no lower than this x its level where it settled: a plateau


def _low_plateau_in_one_pass(loss: pd.Series, found: Finding, epochs: pd.Series | None) -> bool:
    """A loss from random weights that settles under `PRETRAINING_FLOOR` early (over `_PLATEAU_SHARE` of the log or
    more) and then stays flat there (its last tenth's median over `_STILL_HALVING` x the median of the settled
    stretch's first tenth), in a log that shows no second pass over its data (no epoch counter reaching `PASSES`): the
    model reached what the data lets it predict and learned nothing more for most of the run, the mark of low-entropy
    text seen once (code, logs, templated records: 0.54 nats by step 1000 of 11,295, then 0.33-0.45 to the end), not
    of a set learned by heart, whose loss goes on falling toward 0 each time the examples come round again."""
    if epochs is not None and len(epochs) and passes_over_data(epochs) >= PASSES:
        return False
    settled = loss[loss.index >= int(found.evidence.get("settled_step", loss.index[-1]))]
    if len(settled) < _PLATEAU_SHARE * len(loss):
        return False
    smooth = running_median(settled)
    k = max(1, len(settled) // 10)
    return float(smooth.iloc[-k:].median()) > _STILL_HALVING * float(smooth.iloc[:k].median())


_ROUNDING = 5e-5  # the Trainer logs each window's mean loss rounded to 4 decimals


def told_by_train_loss(found: Finding, metrics: Metrics) -> Finding:
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
               f"(memorization). {eval_advice(bool(eval_loss_names(metrics)))}")
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


