"""The `overfitting` rules that set the eval loss against the training loss.

A held-out loss that stopped improving, or climbed a little, is overfitting when the training loss kept falling
over the same evaluations: the gap between the seen and the held-out data grew. Each rule returns the best eval's
position (or the climb's ends) for `overfitting` to date and tell; `training_loss` is the series they compare with.
"""
from __future__ import annotations

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .eval_levels import CLIMB, LONG, NOISE_UNITS, SMALL_RISE, back_at_the_level_before
from .held_out_stall import interval_ending, median_rise_clears, train_levels_around
from .metrics import PASSES, Metrics, epoch_at, finite, format_number, point_noise, real_loss


TRAIN_SPLIT_LOSS = "train_split_loss"


def training_loss(metrics: Metrics):
    """The training loss the eval loss is set against: the loss logged as the run trained, or, where none was logged,
    the loss estimated on the train split at each evaluation (nanoGPT's `step N: train loss T, val loss V`, the only
    lines Shilpaj1994's notebook of Karpathy's GPT on tiny Shakespeare prints): the model's fit to its training data
    either way, which is what a held-out loss that turned is compared with."""
    loss = real_loss(metrics)
    return finite(metrics[TRAIN_SPLIT_LOSS]) if loss.empty and TRAIN_SPLIT_LOSS in metrics else loss


_TRAIN_FELL = 0.02  # the training loss after the best eval this share under its level there: it kept falling


def train_fell_since(train, best_step: int) -> bool:
    """Whether the training loss after `best_step` (its median) sits `_TRAIN_FELL` or more under its level at that
    step (the median of its last three points up to it; where none was logged by then, as when the training loss is
    logged more sparsely than the evals, the first point after it): a flat loss with noise is no fall."""
    at_best, later = train_around(train, best_step)
    return at_best is not None and later <= (1 - _TRAIN_FELL) * at_best


def train_rose_since(train, best_step: int) -> bool:
    """Whether the training loss after `best_step` (its median) sits above its level at that step, as
    `train_fell_since` measures both, by `_TRAIN_FELL` or by `NOISE_UNITS` x its own point-to-point noise from there
    on (AlexCheema_RetroInference: a loss that rose at each of 11 epochs, 1.2% by their median): a flat loss with
    noise did not get worse."""
    at_best, later = train_around(train, best_step)
    if at_best is None or later <= at_best:
        return False
    noise = point_noise(train[train.index >= best_step].to_numpy())
    return later >= (1 + _TRAIN_FELL) * at_best or later - at_best > NOISE_UNITS * noise


def train_around(train, best_step: int) -> tuple[float | None, float | None]:
    """The training loss's level at `best_step` and its median after it (see `train_fell_since`); (None, None) where
    it has no point after it to compare."""
    at_best = train[train.index <= best_step].iloc[-3:]
    later = train[train.index > best_step]
    if at_best.empty:
        at_best, later = later.iloc[:1], later.iloc[1:]
    if at_best.empty or later.empty:
        return None, None
    return float(at_best.median()), float(later.median())


def few_evals_climbing(evals, train, thresholds: Thresholds) -> int | None:
    """In a log of three or four evals, the best eval's position when the two or more evals after it each climb on
    the one before to end `overfit_steady_rise` above it (haomingdouranggouqil's Qwen2-7B LoRA: 0.538, 0.416, then
    0.478 and 0.526 while the training loss fell to 0.07), or `CLIMB` above it while the training loss fell away
    (`FELL_AWAY` under its level at the best, over the last evaluation interval: a ChatGLM2-6B QLoRA's 20 epochs on
    72 examples, 1.4668, 1.4736, 1.5020 while the training loss went 1.0 -> 0.4). Else None."""
    values, steps = evals.to_numpy(), evals.index
    best_pos = int(np.argmin(values[:-1]))
    after, best = values[best_pos + 1:], float(values[best_pos])
    if best <= 0 or len(after) < 2 or not np.all(np.diff(values[best_pos:]) > 0):
        return None
    if float(after[-1]) > best * (1 + thresholds.overfit_steady_rise):
        return best_pos
    if float(after[-1]) <= best * (1 + CLIMB):
        return None
    at_best = _training_at_the_best(train, steps, best_pos)
    at_end = interval_ending(train, steps, len(values) - 1)
    if len(at_best) < 3 or len(at_end) < 3:
        return None
    return best_pos if float(at_end.median()) <= (1 - FELL_AWAY) * float(at_best.median()) else None


FELL_AWAY = 0.1  # the training loss fell this share below its level at the best eval while the eval loss rose


def train_fell_away(evals, train, thresholds: Thresholds) -> int | None:
    """In a log of fewer than `LONG` evals (a long one's lowest eval may be a lucky batch: its noise judges it), the
    best eval's position when every eval after it (two or more) sits `SMALL_RISE` or more above it while the
    training loss fell away: its median over the last evaluation interval `FELL_AWAY` or more below its median over
    the interval that ended at the best; and every eval after the best above each of the `overfit_points` before it
    (not back at the level the evals held before a lucky low). Few evals (one or two an epoch) cannot show a climb
    or a noise level, but a held-out loss that stopped improving while the training loss kept dropping is the gap
    between them growing: the model fits the seen examples, not the task. Else None."""
    values = evals.to_numpy()
    best_pos = int(np.argmin(values))
    after, best = values[best_pos + 1:], float(values[best_pos])
    held = values[max(0, best_pos - thresholds.overfit_points):best_pos]
    if len(values) >= LONG or best <= 0 or len(after) < 2 \
            or not np.all(after > best * (1 + SMALL_RISE)) or len(held) and float(after.min()) <= float(held.max()):
        return None  # (back among the evals just before the best: that best was a lucky low, not a turn)
    steps = evals.index
    at_best = _training_at_the_best(train, steps, best_pos)
    at_end = train[(train.index > steps[-2]) & (train.index <= steps[-1])]
    if len(at_end) < 3:  # a short last interval (a final evaluation soon after the last periodic one)
        at_end = train[train.index > steps[best_pos]].iloc[-3:]
    if len(at_best) < 3 or len(at_end) < 3:
        return None
    return best_pos if float(at_end.median()) <= (1 - FELL_AWAY) * float(at_best.median()) else None


STILL_FELL = 0.05  # the training loss over the later evals this share under its level at the best eval


def held_above_while_train_fell(evals, train, thresholds: Thresholds) -> int | None:
    """The best eval's position when every eval after it (`overfit_points` + 1 or more) sits above it, their median
    `SMALL_RISE` and `NOISE_UNITS` x the eval loss's own noise (in the later half of the log) above it, while the
    training loss kept falling: its median over the later half of the evaluations after the best `STILL_FELL` or
    more under its level at the best (the interval ending there). A quiet held-out loss that turned at its best and
    never came back while the seen data's loss went on down (P-Zande's Gemma-2B LoRA: 1.8792 at its best, then
    0.5-1.5% above it for six evals, the training loss 8% lower in its second epoch); a first eval after the best
    less than 1% above it is what `overfitting`'s `_clear_small_rise` will not take. Only `overfit_points` evals
    after the best count where each of them, not their median, clears that bar (`_each_clears`). Else None."""
    values, steps = evals.to_numpy(), evals.index
    best_pos = int(np.argmin(values))
    after, best = values[best_pos + 1:], float(values[best_pos])
    if best <= 0 or len(after) < thresholds.overfit_points or not np.all(after > best):
        return None
    if back_at_the_level_before(values, best_pos):
        return None
    if len(after) == thresholds.overfit_points and not _each_clears(values, best_pos):
        return None
    if not median_rise_clears(values, best_pos, SMALL_RISE, NOISE_UNITS):
        return None
    levels = train_levels_around(train, steps, best_pos)
    return best_pos if levels is not None and levels[1] <= (1 - STILL_FELL) * levels[0] else None


def _each_clears(values: np.ndarray, best_pos: int) -> bool:
    """Whether every eval after the best sits `SMALL_RISE` and `NOISE_UNITS` x the eval loss's own point-to-point
    noise (in the later half of the log, where it can be measured) above it: a plateau of three evals that high is
    the held-out loss moved to a new level, which evals wobbling around the old one do not all reach (dolphin-2.9's
    card: 0.6168 at epoch 1.99, then 0.6646, 0.6619, 0.6602 through epoch 3, 13 times its noise, while the training
    loss fell 0.52 -> 0.40; wangd12rpi's FinLoRA card, judged healthy: three evals 2.7-3.7% above its best, under
    twice its noise on a 2% split)."""
    noise = point_noise(values[len(values) // 2:])
    lowest_rise = float(values[best_pos + 1:].min()) - float(values[best_pos])
    return noise > 0 and lowest_rise >= max(SMALL_RISE * float(values[best_pos]), NOISE_UNITS * noise)


def climbed_clear_of_noise(evals, train, thresholds: Thresholds) -> int | None:
    """The best eval's position when every one of the `overfit_points` + 1 or more evals after it is higher than the
    one before, each `NOISE_UNITS` x the eval loss's own noise (in the later half of the log) above the best and the
    last `SMALL_RISE` above it, while the training loss fell `STILL_FELL` or more (`train_levels_around`). Evals that
    wobble around a level rise at each of k evals in a row once in (k + 1)! tries - once in 24 for three, too often
    over the many eval series a user's runs hold (a NeMo fine-tune's 1.900, then 1.912, 1.915, 1.921, is read as the
    wobble it is), once in 120 for four - and a first rise already out of the noise is no wobble, however small in per
    cent (bert2bert-bbc's card: 0.6659 at epoch 4, then 0.6706, 0.6711, 0.6718, 0.6733, the first 22 times its noise,
    while the training loss fell 0.505 -> 0.380; codeparrot-ds's three rises, +0.8% to +1.7%, stay a recorded miss).
    Healthy-judged climbs start inside the noise (Jaong's continued pre-training: four rises to +1.3%, the first 2.1
    times; Umang-Shikarvar's QLoRA: +0.25%). Else None."""
    values, steps = evals.to_numpy(), evals.index
    best_pos = int(np.argmin(values))
    after, best = values[best_pos + 1:], float(values[best_pos])
    if best <= 0 or len(after) < thresholds.overfit_points + 1 or not np.all(np.diff(values[best_pos:]) > 0):
        return None
    noise = point_noise(values[len(values) // 2:])
    if noise <= 0 or float(after[0]) - best < NOISE_UNITS * noise or float(after[-1]) < best * (1 + SMALL_RISE):
        return None
    levels = train_levels_around(train, steps, best_pos)
    return best_pos if levels is not None and levels[1] <= (1 - STILL_FELL) * levels[0] else None


def held_above_as_train_fell_at_each(evals, train, thresholds: Thresholds) -> int | None:
    """The best eval's position when every one of the `overfit_points` + 2 or more evals after it sits above it, the
    last `NOISE_UNITS` x the eval loss's own noise (in the later half of the log) above it and above the evals just
    before it (not back at the level a lucky low sat in), while the training loss fell at each of those evaluations
    (its median over each evaluation interval under the one before, from the interval ending at the best) and by
    `STILL_FELL` or more in all. A training loss that falls at every one of six intervals in a row is a trend, not
    batches' luck, and a held-out loss that never came back to its best beside it is the gap growing, however small
    the rise: 070705gavrilovaanna's word-level LSTM, val 5.478 at epoch 10, then 5.484, 5.485, 5.484, 5.496, 5.505
    (+0.5%, five times its noise) while the epoch-mean train loss fell at each epoch 4.69 -> 4.32. A held-out loss at a
    plateau beside a training loss that does not fall at each interval stays healthy (khoayang63's DPO: +1% after its
    best while the per-interval training loss went 0.58, 0.55, 0.57, 0.59, 0.60), and so does a plateau too short to
    tell (Umang-Shikarvar's QLoRA: three evals 0.25% above the best). Else None."""
    values, steps = evals.to_numpy(), evals.index
    best_pos = int(np.argmin(values))
    after, best = values[best_pos + 1:], float(values[best_pos])
    just_before = values[max(0, best_pos - 2):best_pos]
    if best <= 0 or len(after) < thresholds.overfit_points + 2 or not np.all(after > best):
        return None
    last = float(after[-1])
    if last - best < NOISE_UNITS * point_noise(values[len(values) // 2:]) \
            or len(just_before) and last <= float(just_before.max()):
        return None
    levels = [interval_ending(train, steps, i) for i in range(best_pos, len(values))]
    if any(level.empty for level in levels):
        return None
    medians = np.array([float(level.median()) for level in levels])
    fell_at_each = bool(np.all(np.diff(medians) < 0))
    return best_pos if fell_at_each and medians[-1] <= (1 - STILL_FELL) * medians[0] else None


TURN_RISE = 0.03  # a last eval or two this share above the best: over the 2% a two-eval climb needs (`CLIMB`)


def turned_up_at_the_end(evals, train, epochs) -> int | None:
    """In a log of fewer than `LONG` evals, the best eval's position when the one or two evals after it, the last of
    the log, each sit `TURN_RISE` above it, and above it by more than any rise the evals showed before the best (their
    own wobble: each eval against the lowest one before it), while the training loss fell `STILL_FELL` or more
    (its median over the evaluation interval ending at the last eval against the one ending at the best), at an eval
    `PASSES` or more epochs in, after the training examples were seen again. A held-out loss over a fixed eval set
    that turned up by a clear margin as the training loss kept falling on data seen before is overfitting from its
    first eval above the best, though too few evals follow to show a climb (HenryECA's Llama-3.1-8B LoRA, two evals
    an epoch apart: 1.4221 then 1.4870, +4.6%, while the epoch-mean train loss fell 1.391 -> 1.074; Approvalize's
    Llama-2 LoRA: 0.7558 down to 0.6009 at step 40, 0.6300 at the last eval in the fourth epoch as the training loss
    fell 0.500 -> 0.449); two evals after the best that climb need only the last that high, the first `CLIMB`
    (`_climbed_to_the_turn`), and, set against single training points, those to fall at each. Healthy-judged logs
    whose last evals rose stay under it (Ishihara-Masabumi's Llama SFT: +0.8%, Thanh097698's chatbot: +1.3%), or
    rose no more than they had wobbled before (cyanisthecolor's +2.5% after a +9% wobble, smhavens's after a fourfold
    one), or saw their data once (taehyun-me's +12% at epoch 0.98). One last eval set against single training points
    needs those to fall at each (`_falls_at_each_point`). Else None."""
    values, steps = evals.to_numpy(), evals.index
    best_pos = int(np.argmin(values))
    after, best = values[best_pos + 1:], float(values[best_pos])
    if len(values) >= LONG or best <= 0 or not 1 <= len(after) <= 2:
        return None
    wobble = _own_wobble(values[:best_pos + 1])
    climbed = _climbed_to_the_turn(after, best, wobble)
    if not (climbed or np.all(after > best * (1 + max(TURN_RISE, wobble)))):
        return None
    passes = epoch_at(epochs, int(steps[best_pos + 1]))
    at_best = _training_at_the_best(train, steps, best_pos)
    at_end = interval_ending(train, steps, len(values) - 1)
    if passes is None or passes < PASSES or at_best.empty or at_end.empty:
        return None
    if (len(after) == 1 or climbed) and min(len(at_best), len(at_end)) == 1 \
            and not _falls_at_each_point(train, steps[-1]):
        return None  # one rising eval, or a climb from under the turn, set against single points: no trend shown
    return best_pos if float(at_end.median()) <= (1 - STILL_FELL) * float(at_best.median()) else None


_FELL_A_QUARTER = 0.25  # the training loss this share under its level at the first of two evals: far more than noise


def stopped_as_train_fell_a_quarter(evals, train, epochs) -> int | None:
    """In a log of two evals, 0 (the first is the best) when the second sits above the first, past the first
    pass over the data (`PASSES`), while the training loss fell by `_FELL_A_QUARTER` or more between the evaluation
    intervals ending at the two, from above the first eval to below the second, each point lower than the one before
    (`_falls_at_each_point`). The second pass bought nothing on held-out data while the fit to the training data kept
    improving fast and crossed under the held-out loss: the onset of overfitting, however small the rise
    (jonathanbgn's distilgpt2 slogans: validation cost 3.2550 then 3.2779, +0.7%, as the epoch-mean training cost fell
    4.1394 -> 2.6903, -35%). A plateau at the end of a schedule has a training loss that barely moves
    (Ishihara-Masabumi's +0.8% with the training loss near 0.60 at both evals stays healthy). Else None."""
    values, steps = evals.to_numpy(), evals.index
    if len(values) != 2 or values[1] <= values[0] or values[0] <= 0:  # equal evaluations: no rise, +0%
        return None
    passes = epoch_at(epochs, int(steps[1]))
    at_first, at_end = interval_ending(train, steps, 0), interval_ending(train, steps, 1)
    if passes is None or passes < PASSES or at_first.empty or at_end.empty:
        return None
    first_level, end_level = float(at_first.median()), float(at_end.median())
    crossed = first_level > values[0] and end_level < values[1]
    fell = end_level <= (1 - _FELL_A_QUARTER) * first_level and _falls_at_each_point(train, int(steps[1]))
    return 0 if crossed and fell else None


def _climbed_to_the_turn(after: np.ndarray, best: float, wobble: float) -> bool:
    """Whether the two evals after the best climb, the first `CLIMB` and the second `TURN_RISE` above it, both above
    the log's own earlier wobble: a turn told over two evals, its first step under the 3% one eval alone needs.
    Evals that wobble around a level climb at two in a row once in six tries, but not from a first rise of 2%: no
    healthy-judged short log of the corpus climbs its last two evals from 2% (afletcher53's shARC, +0.43% then
    +4.6%, and the +0.2% and less of the others), where Anjoe's Bundestag-gpt2-large card went 2.6749 at epoch 2,
    then 2.7354 (+2.3%) and 2.8236 (+5.6%) as the training loss fell at each epoch 2.44 -> 2.21 -> 1.95."""
    return len(after) == 2 and float(after[1]) > float(after[0]) > best * (1 + max(CLIMB, wobble)) \
        and float(after[1]) > best * (1 + max(TURN_RISE, wobble))


def _falls_at_each_point(train, last_step: int) -> bool:
    """Whether the training loss logged up to `last_step` is lower at each point than at the one before: where one
    training point stands for an evaluation interval, only a loss that falls at every one is a trend and not a batch's
    luck. A single last eval above the best against such single points is no overfitting where they wobble
    (soureeshdalal_finetuned-phi2: one-step losses 0.609, 0.804, 0.919, 0.706, 0.471 at five evaluations, the last
    eval 3.5% over the best; judged healthy), and is where they fall at each (Approvalize's 1.025 ... 0.449 beside an
    eval 4.9% over its best, Pautovv's and HenryECA's epoch means)."""
    values = train[train.index <= last_step].to_numpy()
    return len(values) >= 2 and bool(np.all(np.diff(values) < 0))


def _own_wobble(values: np.ndarray) -> float:
    """The largest share by which an eval sat above the lowest one before it: how far the eval loss rose by chance
    (or by a change of the run) before it turned for good; 0 for a loss that only fell."""
    running_min = np.minimum.accumulate(values)
    rises = values[1:] / running_min[:-1] - 1
    return float(rises.max()) if len(rises) and float(rises.max()) > 0 else 0.0


def climb_while_train_fell(evals, train, thresholds: Thresholds) -> tuple[int, int] | None:
    """(best, top) positions of the first stretch where the eval loss, from its best so far, climbed on each eval
    `overfit_points` or more evals in a row to end `CLIMB` and `NOISE_UNITS` x its own noise (in the later half
    of the log) above that best, while the training loss fell `FELL_AWAY` or more (its median over the evaluation
    interval ending at the top against the one ending at the best): the gap between the seen and the held-out data
    growing eval after eval, which is overfitting for as long as it lasts though later evals fall again (a later drop
    of both is a change in the run, not a cure of the first). Else None."""
    values, steps = evals.to_numpy(), evals.index
    noise = point_noise(values[len(values) // 2:])
    for best in range(len(values) - thresholds.overfit_points):
        if values[best] > float(values[:best + 1].min()) or values[best] <= 0:
            continue  # not the best so far
        top = best
        while top + 1 < len(values) and values[top + 1] > values[top]:
            top += 1
        rise = float(values[top] - values[best])
        if top - best < thresholds.overfit_points or rise <= max(CLIMB * values[best], NOISE_UNITS * noise):
            continue
        at_best, at_top = interval_ending(train, steps, best), interval_ending(train, steps, top)
        if len(at_best) >= 3 and len(at_top) >= 3 \
                and float(at_top.median()) <= (1 - FELL_AWAY) * float(at_best.median()):
            return best, top
    return None


def _training_at_the_best(train, steps, best_pos: int):
    """The training losses the best eval is compared with: those of the evaluation interval ending at it, or, where
    the first eval is the best, the later half of the run up to it (past the first steep fall)."""
    at_best = interval_ending(train, steps, best_pos)
    return at_best.iloc[len(at_best) // 2:] if best_pos == 0 else at_best


def passing_overfit(name: str, evals, train, best: int, top: int) -> Finding:
    """The `overfitting` warning of a climb of the eval loss from its best so far, dated at the eval after that best,
    whether or not later evals fell again."""
    values, steps = evals.to_numpy(), evals.index
    at_best, at_top = interval_ending(train, steps, best), interval_ending(train, steps, top)
    last = f"{format_number(float(values[-1]))} at step {int(steps[-1])}"
    after = (f"later evals fall below that best again ({last}): check what changed there, and keep a checkpoint from "
             "before the rise if the later fall is not real learning" if values[-1] < values[best] else
             f"later evals stay above that best ({last}): the checkpoint near step {int(steps[best])} generalises best")
    message = (f"{name} is lowest so far at step {int(steps[best])} ({format_number(float(values[best]))}) and rises "
               f"at each of the next {top - best} evaluations to {format_number(float(values[top]))} at step "
               f"{int(steps[top])} ({format_number(float(values[top] / values[best]))}x) while the training loss keeps "
               f"falling (its median {format_number(float(at_best.median()))} over the evaluation interval ending at "
               f"the best, {format_number(float(at_top.median()))} over the one ending at the top): overfitting; "
               f"{after}.")
    return Finding("overfitting", "warning", int(steps[best + 1]), message, end_step=int(steps[top]), metric=name,
                   evidence={"best_eval_loss": float(values[best]), "best_step": int(steps[best]),
                             "end_eval_loss": float(values[top]), "passing": True})
