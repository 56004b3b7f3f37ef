"""Overfitting: the eval loss climbs well above its best while the training loss keeps falling.

A warning (VERDICTS.md lists memorization, its extreme): the weights are finite and training
"works", but the checkpoints after the eval minimum generalise worse. It fires when the last
`overfit_points` eval losses all sit more than `overfit_rise` above the best eval loss before
them, or climbed over the last `overfit_points` + 1 evals to end `overfit_steady_rise` above it
(the message says whether the training loss kept falling: overfitting proper). A log with only three or
four evals (one an epoch, say) fires when every eval after its first one sits `overfit_steady_rise`
above that first, best one, or when the evals after a later best climb, each on the one before, to end that far
above it. A quiet eval loss (one that fell by a few thousandths an eval) also fires
when every one of four or more evals after its best sits 1% and three times its own noise above it, and a log of
few evals when the two or more after its best sit 1% above it while the training loss fell 10% below its level there.
A climb of `overfit_points` or more evals in a row from the best so far, 2% and three times its noise above it, while
the training loss fell 10%, is overfitting from the eval after that best even where later evals fall again. A climb
at each of `overfit_points` + 2 or more evals after the best needs only 1% while the training loss fell, and eight or
more evals after the best none of which comes back to it, 2% and 2.5 times its noise above it in their median, while
the training loss fell a fifth, is overfitting too (`held_out_stall`), and so, in a log of as few as two evals, is a
last eval or two 3% above the best and above any rise the evals showed before it (or two that climb from 2% to
3%), past the first pass over the data, while the training loss fell 5% (`turned_up_at_the_end`); a second of two
evals no lower than the first while the training loss fell a quarter, from above the one to below the other, is
its onset (`stopped_as_train_fell_a_quarter`). A rise under 1% counts where the run's own eval noise says it is real:
a drift of eight or more evals ending `QUIET_UNITS` x that noise above a best none of them came back to, while the
training loss fell 5% (`_quiet_drift`), or five or more evals above the best, the last three times the noise
above it, while the training loss fell at each of those evaluations (`held_above_as_train_fell_at_each`); three
evals after the best, each 1% and three times the noise above it while the training loss fell 5%, are a plateau
above it, overfitting too (`held_above_while_train_fell`), and so is a climb at each of four or more evals after the
best, the first of them three times the noise above it and the last 1%, while the training loss fell 5%
(`climbed_clear_of_noise`). The rules
that set the eval loss against the training loss live in `overfit_train_rules`; that training loss is the one logged
as the run trained, or, where none was, the loss estimated on the train split at each evaluation (`training_loss`).
A log with no training loss fires when the eval loss climbs at each of the `overfit_points` + 1 or more evals after its
best (the message saying that the gap between the two cannot be seen). None fires where the rise stayed under 2% while
a held-out accuracy beside it kept improving, or rose further while that accuracy (an exact match too) set a new best
at every eval after the loss's best (`overfit_accuracy`): a model growing confident, not a worse one.
"""
from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .eval_levels import CLIMB, NOISE_UNITS, QUIET_UNITS, SMALL_RISE, back_at_the_level_before, best_level
from .held_out_stall import stalled_overfit, train_levels_around
from .metrics import Metrics, finite, format_number, format_ratio, point_noise, real_loss
from .overfit_accuracy import accuracy_kept_improving
from .overfit_train_rules import (STILL_FELL, climb_while_train_fell, climbed_clear_of_noise, few_evals_climbing,
                                  held_above_as_train_fell_at_each, held_above_while_train_fell, passing_overfit,
                                  stopped_as_train_fell_a_quarter,
                                  train_around, train_fell_away, train_fell_since, train_rose_since, training_loss,
                                  turned_up_at_the_end)

EVAL_LOSS = "eval_loss"


# HF Trainer with several eval sets (eval_dataset={"g0": ..., ...}) logs eval_<name>_loss for each.
_NAMED_EVAL_LOSS = re.compile(r"^eval_.+_loss$")


def eval_loss_names(metrics: Metrics) -> list[str]:
    """The eval losses of the log: `eval_loss`, then each named eval set's `eval_<name>_loss`."""
    named = sorted(m for m in metrics if _NAMED_EVAL_LOSS.match(m) and m != EVAL_LOSS)
    return ([EVAL_LOSS] if EVAL_LOSS in metrics else []) + named


def detect_overfitting(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `overfitting` warning from the first eval after the best one, where the rise is first seen (of
    the eval set that shows it first, where there are several), or []."""
    found = [f for name in eval_loss_names(metrics) for f in _overfitting(metrics, name, thresholds)
             if not _one_pass_still_learning(metrics, f) and not accuracy_kept_improving(metrics, f)]
    return [min(found, key=lambda f: f.step)] if found else []


_ONE_PASS = 1.05  # an epoch counter that ends at or under this has not come back to a training example
# A small eval set's mean loss wobbles by a few hundredths of a nat between checkpoints; a rise past this (the eval
# perplexity up 5%) is more than that wobble, and a one-pass run is told about it as any other.
_ONE_PASS_WOBBLE = 0.05


def _one_pass_still_learning(metrics: Metrics, found: Finding) -> bool:
    """A rise of the eval loss of `_ONE_PASS_WOBBLE` nats or less in a run that saw its data once (`_one_pass`) while
    its training loss over the last half of the stretch after the best eval sits no higher than over as many steps up
    to the best: every training batch was new when it was scored, so the training loss is itself a held-out estimate,
    and it says the model did not get worse; overfitting needs an example seen twice (matyasosvath's one-epoch DPO of
    GPT-2: a 40-pair val loss 0.094 -> 0.106 while the training loss went 0.166 -> 0.148). A larger rise is no
    wobble of the eval set: the owner should look, one pass or not."""
    train = real_loss(metrics)  # the loss of each batch as it was trained on, not a train-split estimate
    rise = float(found.evidence["end_eval_loss"]) - float(found.evidence["best_eval_loss"])
    if train.empty or rise > _ONE_PASS_WOBBLE or not _one_pass(metrics):
        return False
    best, last = int(found.evidence["best_step"]), int(found.end_step or found.step)
    half = (last - best) / 2
    at_best = train[(train.index > best - half) & (train.index <= best)]
    at_end = train[train.index > last - half]
    return len(at_best) > 0 and len(at_end) > 0 and float(at_end.median()) <= float(at_best.median())


def _one_pass(metrics: Metrics) -> bool:
    """Whether the log's epoch counter shows one pass over the data: a fraction of the epoch (the HF Trainer's) that
    ends at `_ONE_PASS` or under, or a loop's own epoch label that reads the same on every line (`Ep 1`, `Epoch 0`).
    Whole numbers that change (0, 1; 1, 2) are labels of two epochs, and a counter that starts over (RapidFire's
    chunks, each printed with its own epoch 0.03-1.0) counts passes it does not show. False where no epoch is
    logged."""
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
    if epochs is None or epochs.empty or float(epochs.max()) > _ONE_PASS or bool(np.any(np.diff(epochs) < 0)):
        return False
    labels = bool(np.all(epochs.to_numpy() == np.round(epochs.to_numpy())))
    return not labels or epochs.nunique() == 1


def _overfitting(metrics: Metrics, name: str, thresholds: Thresholds) -> list[Finding]:
    evals = without_best_reevaluated(finite(metrics.get(name, real_loss(metrics).iloc[:0])))
    k = thresholds.overfit_points
    train = training_loss(metrics)
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
    if len(evals) < 3:
        turn = turned_up_at_the_end(evals, train, epochs) if len(evals) == 2 and not train.empty else None
        turn = stopped_as_train_fell_a_quarter(evals, train, epochs) if turn is None and not train.empty else turn
        return [] if turn is None else [_overfit_finding(name, evals, train, turn, float(evals.iloc[turn]), 1)]
    if train.empty:
        return _climbing_alone(name, evals, thresholds)
    values = evals.to_numpy()
    few_evals = len(values) < k + 2  # three or four evals (one an epoch): every one after the best well above it
    if few_evals:
        k = len(values) - 1
    best_pos = int(np.argmin(values[:-k]))
    best = best_level(values, best_pos)
    few = few_evals and np.all(values[-k:] > best * (1 + thresholds.overfit_steady_rise))
    quiet = _clear_small_rise(values, thresholds)
    quiet = _climbing(values, thresholds, evals, train) if quiet is None else quiet
    quiet = _settled_above(values, thresholds) if quiet is None else quiet
    quiet = few_evals_climbing(evals, train, thresholds) if quiet is None and few_evals else quiet
    quiet = train_fell_away(evals, train, thresholds) if quiet is None else quiet
    quiet = held_above_while_train_fell(evals, train, thresholds) if quiet is None else quiet
    quiet = held_above_as_train_fell_at_each(evals, train, thresholds) if quiet is None else quiet
    quiet = climbed_clear_of_noise(evals, train, thresholds) if quiet is None else quiet
    quiet = turned_up_at_the_end(evals, train, epochs) if quiet is None else quiet
    if quiet is not None:
        best_pos, best, k = quiet, best_level(values, quiet), len(values) - quiet - 1
    elif best <= 0 or not (few or np.all(values[-k:] > best * (1 + thresholds.overfit_rise))
                           or _steady_rise(values, best, thresholds)):
        drift = _rising_trend(values, thresholds, evals, train)
        if drift is None:
            episode = climb_while_train_fell(evals, train, thresholds)
            if episode is not None:
                return [passing_overfit(name, evals, train, *episode)]
            return stalled_overfit(name, evals, train, thresholds)
        # a drift is told by where it ended: its last quarter
        best_pos, best, k = drift, float(values[drift]), max(2, (len(values) - drift - 1) // 4)
    return [_overfit_finding(name, evals, train, best_pos, best, k)]


def _overfit_finding(name: str, evals, train, best_pos: int, best: float, k: int) -> Finding:
    """The `overfitting` warning of an eval loss at its best (`best`, its level there) at `best_pos` and about the
    median of its last `k` evals at the end, dated at the first eval after the best."""
    values = evals.to_numpy()
    best_step, last_step = int(evals.index[best_pos]), int(evals.index[-1])
    rise_step = int(evals.index[best_pos + 1])  # the best checkpoint itself is the one to keep, not the incident
    train_fell = train_fell_since(train, best_step)
    end = float(np.median(values[-k:]))
    trend = ("while the training loss keeps falling: overfitting" if train_fell else
             "and the training loss did not improve either: the later updates made the model worse")
    lowest = float(values[best_pos])
    level = "" if best == lowest else f"; about {format_number(best)} around it"  # a long series' best is its level
    # `end` is the median of the last k evals: said as such where the last one is not it
    span = (f"about {format_number(end)} by step {last_step} ({format_ratio(end, best)})"
            if k == 1 or float(values[-1]) == end else
            f"about {format_number(end)} over its last {k} evaluations ({format_ratio(end, best)}; "
            f"{format_number(float(values[-1]))} at step {last_step})")
    rises = (f"rises to {format_number(end)} at step {last_step}, its last evaluation ({format_ratio(end, best)}),"
             if rise_step == last_step else f"rises from step {rise_step} to {span}")
    message = (f"{name} is lowest at step {best_step} ({format_number(lowest)}{level}) and {rises} {trend}. The "
               f"checkpoint near step {best_step} generalises best; {_remedy(train, best_step)}")
    return Finding("overfitting", "warning", rise_step, message, end_step=last_step, metric=name,
                   evidence={"best_eval_loss": best, "best_step": best_step, "end_eval_loss": end})


def _remedy(train, best_step: int) -> str:
    """What would help: the cures of overfitting where the training loss fell on; where it fitted its training data
    no better (flat within 2%, or worse) more data or regularisation (which make that fit harder) cure
    nothing, and what is left is to stop sooner or take smaller steps (AlexCheema_RetroInference: both losses rose
    for 15 epochs). "Got worse" only where the training loss rose past that noise; where it has no point after the
    best, nothing is said of its fit."""
    at_best, later = train_around(train, best_step)
    if at_best is None:
        return "fewer epochs or a lower (or decaying) learning rate would help."
    if train_fell_since(train, best_step):
        return "fewer epochs, a lower learning rate, more data or regularisation would help."
    fit = ("got worse on it too" if train_rose_since(train, best_step) else
           f"fitted it no better after step {best_step}")
    return ("fewer epochs or a lower (or decaying) learning rate would help, not more data or regularisation: those "
            f"cure a model that fits its training data too well, and this one {fit}.")


def _climbing_alone(name: str, evals, thresholds: Thresholds) -> list[Finding]:
    """A log with an eval loss and no training loss (logging_steps past the run's end, an evaluation-only history):
    the `overfitting` warning where the eval loss climbs at every one of the `overfit_points` + 1 or more evals after
    its best, each above the one before, to end `CLIMB` and `NOISE_UNITS` x its own noise above it (`_climbing`,
    which a held-out loss does not do by chance); dated at the first eval after the best. Without the training loss
    the gap between the two cannot be seen, and the message says so (a seq2seq model trained for ten epochs on two
    examples, its one held-out example's loss lowest at epoch 5 and 4-22% above it at each later epoch). [] else."""
    values = evals.to_numpy()
    best_pos = _climbing(values, thresholds, evals, evals.iloc[:0])
    if best_pos is None:
        return []
    best_step, rise_step, last_step = (int(evals.index[i]) for i in (best_pos, best_pos + 1, -1))
    best, last = float(values[best_pos]), float(values[-1])
    message = (f"{name} is lowest at step {best_step} ({format_number(best)}) and rises at each of the "
               f"{len(values) - best_pos - 1} evaluations after it, to {format_number(last)} at step {last_step} "
               f"({format_number(last / best)}x). The training loss is not logged, so the gap between the two cannot "
               "be seen: the run either fits its training data at the expense of held-out data (overfitting) or "
               f"got worse on both. The checkpoint near step {best_step} generalises best; log the training loss "
               "(logging_steps under the run's length) to tell, and fewer epochs, more data or regularisation.")
    return [Finding("overfitting", "warning", rise_step, message, end_step=last_step, metric=name,
                    evidence={"best_eval_loss": best, "best_step": best_step, "end_eval_loss": last,
                              "train_loss_logged": False})]


def without_best_reevaluated(evals):
    """The eval series less a last eval exactly equal to the best before it: the same weights evaluated again, the
    Trainer's load_best_model_at_end evaluating the best checkpoint it reloaded (a held-out loss does not repeat to
    every digit otherwise). It is no point of the curve: kept, it reads as the eval loss back at its best."""
    last = float(evals.iloc[-1]) if len(evals) else 0.0
    if len(evals) >= 3 and last == float(evals.iloc[:-1].min()) and _full_precision(last):
        return evals.iloc[:-1]
    return evals


def _full_precision(value: float) -> bool:
    """A value as a float prints it (1.466796875), not one rounded for a table (1.15, 1.1500): only those repeat
    to every digit by the same weights alone."""
    return len(repr(value).split(".")[-1].rstrip("0")) > _TABLE_DECIMALS


_TABLE_DECIMALS = 5  # a model card's or notebook's table rounds to 4 decimals


def _clear_small_rise(values: np.ndarray, thresholds: Thresholds) -> int | None:
    """The best eval's position when every one of the `overfit_points` + 1 or more evals after it sits above it
    by `SMALL_RISE` and by `NOISE_UNITS` x the eval loss's own noise: a small rise, but one a quiet eval loss
    (one that fell by a few thousandths an eval) does not make by chance. Else None."""
    best_pos = int(np.argmin(values))
    after, best = values[best_pos + 1:], float(values[best_pos])
    if best <= 0 or len(after) < thresholds.overfit_points + 1 or back_at_the_level_before(values, best_pos):
        return None
    floor = max(best * SMALL_RISE, NOISE_UNITS * point_noise(values))
    return best_pos if bool(np.all(after - best > floor)) else None


def _climbing(values: np.ndarray, thresholds: Thresholds, evals, train) -> int | None:
    """The best eval's position when every eval after it (`overfit_points` + 1 or more, or `overfit_points` while
    the training loss fell since the best) is higher than the one before, and the last ends `CLIMB` above the best
    (`SMALL_RISE` for a long climb while the training loss fell: `_long_climb`) and `NOISE_UNITS` x the eval
    loss's own noise (in the later half of the log) above it: a
    climb eval after eval, which chance does not make, though its first step is small (jzystar's small GPT on one
    short story: 6.151, 6.201, 6.225, 6.269, 6.296 while the training loss fell 2.4 -> 0.9; zjzheng0410's Qwen2.5-7B
    QLoRA: 1.7255, then 1.7275, 1.7348, 1.7610 while the training loss fell 5%). Else None."""
    best_pos = int(np.argmin(values))
    after, best = values[best_pos + 1:], float(values[best_pos])
    if best <= 0 or len(after) < thresholds.overfit_points or not np.all(np.diff(values[best_pos:]) > 0):
        return None
    train_fell = train_fell_since(train, int(evals.index[best_pos]))
    if len(after) == thresholds.overfit_points and not train_fell:
        return None
    rise = float(after[-1]) - best
    least = SMALL_RISE if train_fell and _long_climb(after, thresholds) else CLIMB
    settled = values[len(values) // 2:]  # the noise of the log's later half: its early descent is no noise
    return best_pos if rise > max(least * best, NOISE_UNITS * point_noise(settled)) else None


def _long_climb(after: np.ndarray, thresholds: Thresholds) -> bool:
    """A climb at each of `overfit_points` + 2 or more evals after the best: six or more evals in rising order, which
    evals that only wobble around a level put in that order once in 720 tries. So long a climb is overfitting from a
    rise of `SMALL_RISE` (ytkinroman's m2m100 LoRA: eval 5.1882 at its first evaluation, the run's own
    best_model_checkpoint, then higher at each of the next six, +1.3% by the last, while the training loss fell
    5.80 -> 5.62 over 43 more epochs); a shorter one needs `CLIMB` (Jaong's continued pre-training: 0.4853 at epoch
    6, then three rises to +1.1% while the training loss fell - judged healthy)."""
    return len(after) >= thresholds.overfit_points + 2


def _settled_above(values: np.ndarray, thresholds: Thresholds) -> int | None:
    """The best eval's position when every eval after it (`overfit_points` or more) sits `overfit_steady_rise`
    above it: what a four-eval log is judged by (three evals after its first), said of any log whose best came
    `overfit_points` evals before its end (ozguozkan's classifier: 0.417 at epoch 2, then 0.551, 0.540, 0.528, 27-32%
    above it, while the training loss fell fivefold); not where the evals after it, not climbing, are back at the
    level of the evals just before it (a lucky low eval among noisy ones). Else None."""
    best_pos = int(np.argmin(values))
    before, after, best = values[:best_pos], values[best_pos + 1:], best_level(values, best_pos)
    if best <= 0 or len(after) < thresholds.overfit_points:
        return None
    climbing = bool(np.all(np.diff(after) > 0))
    held = before[-thresholds.overfit_points:]
    if len(held) >= thresholds.overfit_points and not climbing \
            and float(np.median(after)) <= float(np.median(held)) * (1 + thresholds.overfit_steady_rise / 2):
        return None  # back near the level it held just before: the best was a lucky low, not a turn
    return best_pos if bool(np.all(after > best * (1 + thresholds.overfit_steady_rise))) else None


def _rising_trend(values: np.ndarray, thresholds: Thresholds, evals, train) -> int | None:
    """The best eval's position when the many evals after it (twice `overfit_points` + 1 or more) climb on a
    least-squares line by `_TREND_Z` standard errors and end (their last quarter's median) `SMALL_RISE` above the
    best, or less where that is a quiet drift (`_quiet_drift`): a slow drift up that single evals hovering near the
    best hide from `_clear_small_rise`. Else None."""
    best_pos = int(np.argmin(values))
    after, best = values[best_pos + 1:], float(values[best_pos])
    n = len(after)
    if best <= 0 or n < 2 * (thresholds.overfit_points + 1):
        return None
    x = np.arange(n, dtype="float64")
    slope = float(np.polyfit(x, after, 1)[0])
    sigma = point_noise(values)
    se = sigma / np.sqrt(n * (n * n - 1) / 12) if sigma > 0 else 0.0
    end = float(np.median(after[-max(2, n // 4):]))
    if not (slope > 0 and (se == 0.0 or slope > _TREND_Z * se)):
        return None
    return best_pos if end > best * (1 + SMALL_RISE) or _quiet_drift(values, best_pos, end, evals, train) else None


def _quiet_drift(values: np.ndarray, best_pos: int, end: float, evals, train) -> bool:
    """Whether a drift that ends (`end`) under `SMALL_RISE` above the best is still a turn: every eval after the
    best sits above it and above the level the evals held just before it (no lucky low), the end is `QUIET_UNITS` x
    the eval loss's own noise (in the later half of the log) above it, and the training loss fell `STILL_FELL` or
    more beside it (its level over the later evals against the one at the best). Bhattars1's BioGPT: eval 2.0413 at
    step 110, then none of the 29 evals after it back at it, 0.77% above it by the end, forty times its noise, while
    the training loss fell 2.09 -> 1.90; jaipkapoor99's pre-training drifts as far out of its noise with a training
    loss that did not fall (healthy)."""
    best = float(values[best_pos])
    if not np.all(values[best_pos + 1:] > best) or back_at_the_level_before(values, best_pos):
        return False
    if end - best < QUIET_UNITS * point_noise(values[len(values) // 2:]):
        return False
    levels = train_levels_around(train, evals.index, best_pos)
    return levels is not None and levels[1] <= (1 - STILL_FELL) * levels[0]


_TREND_Z = 3.0


def _steady_rise(values: np.ndarray, best: float, thresholds: Thresholds) -> bool:
    """The last `overfit_points` + 1 evals sit `overfit_steady_rise` above the best in their median and all at
    least half that far above it: the eval loss settled well above its best, noise allowed."""
    tail = values[-(thresholds.overfit_points + 1):]
    rise = thresholds.overfit_steady_rise
    return bool(np.all(tail > best * (1 + rise / 2))) and float(np.median(tail)) > best * (1 + rise)


def fold_memorization(findings: list[Finding]) -> list[Finding]:
    """With an eval loss that rose, a training loss gone to ~0 is the same story told from the other side
    (VERDICTS.md: memorization is train loss near 0 with the eval loss rising): one finding. Where the training loss
    was near 0 already at the best eval, every rise of the eval loss came after the training data was learned by
    heart: one `memorization` finding at its own step, that names the eval turn (hyeonggeonkim-berkeley's t5-small,
    fifth training in a row: train 0.0009 from its first evaluation, the eval loss's best, above it from the second).
    Else one `overfitting` finding, dated where the eval loss turned, that names where the training loss reached ~0."""
    over = next((f for f in findings if f.kind == "overfitting"), None)
    memo = next((f for f in findings if f.kind == "memorization"), None)
    if over is None or memo is None:
        return findings
    if memo.step <= over.evidence.get("best_step", -1):
        turned = replace(memo, message=memo.message.rstrip(".") + f"; the eval loss rose from step {over.step} "
                         f"({over.message.rstrip('.')}).", evidence={**memo.evidence, "overfitting_step": over.step})
        return [turned if f is memo else f for f in findings if f is not over]
    value = memo.evidence.get("value")
    reached = f" at {format_number(value)}" if isinstance(value, float) else ""
    merged = replace(over, message=over.message.rstrip(".") + f"; the training loss was near 0{reached} from step "
                     f"{memo.step}: the training data was learned by heart.",
                     evidence={**over.evidence, "memorization_step": memo.step})
    return [merged if f is over else f for f in findings if f is not memo]
