"""When a memorizing descent began: where the loss levelled off on its way down (on a linear or a log scale), on the
passes after the first epoch where it had levelled off within it, and no earlier than where it settled near the
memorization level. `memorization` and `collapse` judge whether the run memorized; this module dates it.
"""
from __future__ import annotations

import math

from dataclasses import replace

import numpy as np
import pandas as pd

from ..findings import Finding
from .metrics import PASSES, epoch_at, first_settled, format_number, passes_over_data


def settled_from(loss: pd.Series, level: float) -> int | None:
    """Position from which the loss has settled under `level`: it is under it there, in nine of ten points
    after, and at the end of the log; None when it never settles."""
    low = loss.to_numpy() <= level
    return first_settled(low, 0.9) if len(low) and low[-1] else None


# A descent that levels off (on its own scale) at a loss several times the memorization level is a model still learning
# what it can generalise (a fine-tune falling from near chance that levels off within its first two passes, then keeps
# falling several-fold over the passes after): memorization is dated no earlier than where the loss settles within this
# many times that level, where the examples are being fitted rather than learned
_MEMORIZED_BAND = 1.5
_ENTERED = "where it settles within {:g}x the memorization level"
# a loss this many times its final level at the first epoch's end had not reached its floor there; a fall of 3x over one
# more pass under a decaying LR is still the easy task polished (Ammar's Mistral QLoRA on docker commands, judged
# healthy: 0.040 at epoch 0.93, 0.0132 at the end of its second epoch, the cosine down to 7e-7)
FELL_AFTER = 4.0
_STILL_FALLING = ("still falling over the passes after its first epoch (halfway down, on a log scale, from its level "
                  "at that epoch's end to its floor)")


def memorizing_onset(smooth: pd.Series, head: float, floor: float, level: float, epochs: pd.Series | None,
                     log_scale: bool) -> tuple[int, float | None, str] | None:
    """(position, epoch, how it is dated in words) where a memorizing descent from `head` to `floor` began, on the
    running median `smooth` of the loss: where it levelled off (`_settling_position`); past the first epoch where it
    levelled off within it (`_onset_over_later_epochs`), None where it did not go on falling there; and no earlier than
    where it settled within `_MEMORIZED_BAND` x the memorization `level`."""
    onset = _settling_position(smooth, head, floor, log_scale, LOG_SETTLED_SHARE if log_scale else SETTLED_SHARE)
    epoch, levels_off = epoch_at(epochs, int(smooth.index[onset])), "where its descent levels off"
    if epoch is not None and epoch < 1.0:
        onset = _onset_over_later_epochs(smooth, epochs, floor)
        if onset is None:
            return None
        epoch, levels_off = epoch_at(epochs, int(smooth.index[onset])), _STILL_FALLING
    entered = settled_from(smooth, _MEMORIZED_BAND * level)
    if entered is not None and entered > onset:  # levelled off while still well above the memorized level
        onset = entered
        epoch, levels_off = epoch_at(epochs, int(smooth.index[onset])), _ENTERED.format(_MEMORIZED_BAND)
    return onset, epoch, levels_off


def _onset_over_later_epochs(smooth: pd.Series, epochs: pd.Series | None, floor: float) -> int | None:
    """Where a descent that levelled off in the first epoch on a linear scale still went on over the passes after it:
    the first point past the first epoch from which the loss stays (on a log scale) halfway down from its level at the
    first epoch's end to its `floor`; None where that level was under `FELL_AFTER` x the floor (the loss reached its
    floor before any example was seen twice: the data is that easy). anears' QLoRA SFT of a chart VLM: 5.9 at its
    first point, 0.031 at the end of epoch 1, 0.0053 over the last eighth, each pass over the same examples taking it
    further down; a fall from 5.9 looks level from 0.3 on, within epoch 1, where the repeated passes had not begun.
    None too where the log ends before `PASSES` passes: a few points past the first epoch's end are over examples
    mostly seen once (a reward model's 1,000 steps = 1.07 epochs, its pairwise loss 0.0043 -> 0.0005 over the two
    points after epoch 1), too little of a second pass to say the fall comes from seeing them again."""
    if epochs is None or not len(epochs) or passes_over_data(epochs) < PASSES:
        return None
    epoch_of = epochs.reindex(epochs.index.union(smooth.index)).ffill().reindex(smooth.index).to_numpy()
    later = np.flatnonzero(epoch_of >= 1.0)
    if not len(later) or later[0] == 0 or float(smooth.iloc[later[0] - 1]) < FELL_AFTER * floor:
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
    found = settled_from(loss, bar)
    return len(loss) - 1 if found is None else found


_LOG_FLOOR = 1e-4  # the floor a loss rounded to 4 decimals can show (0.0 is read as this on a log scale)
_HALFWAY_DOWN = 0.5  # a memorizing descent is dated where it has come half its way down on a log scale


def levelled_off_position(descent: pd.Series, floor: float) -> int:
    """Where a descent to `floor` levelled off: the first point from which it stays (in nine of ten points, and at the
    last) half its way down in orders of magnitude, under the geometric mean of its start and its floor (read as
    `_LOG_FLOOR` or more: a 4-decimal print's 0.0). On a linear scale a fine-tune's loss that drops from 5 to 0.02 in
    its first steps and then takes epochs to reach ~0 reads as levelled off from the first steps (MERCATOR: step 15
    at 0.34; guohuiyuan: 680)."""
    k = max(1, len(descent) // 10)
    head = max(float(descent.iloc[:k].median()), float(descent.iloc[0]))
    return _settling_position(running_median(descent), head, max(floor, _LOG_FLOOR), log_scale=True,
                              share=_HALFWAY_DOWN)


def dated_from_settling(found: Finding, descent: pd.Series, floor: float, level: float) -> Finding:
    """A memorization finding dated from where its descent to near zero levelled off, which can be well before
    the loss reached the near-zero bar (`collapse_abs`); that first near-zero step stays in the evidence. As for a
    loss settled under the memorization `level` (`memorized_without_eval`), no earlier than where the loss settles
    within `_MEMORIZED_BAND` x that level: a descent that comes half its way down (on a log scale) at a few hundredths
    still has a tenfold fall ahead (Artin200912's ReFT run over ~300 epochs: 0.04 at step 2280, halfway from 2.4 to
    0.001 on a log scale; under 0.03 from 2760, 0.006 at 3300, 0.001 at 3420)."""
    step, said = int(descent.index[levelled_off_position(descent, floor)]), "its descent levelled off from"
    entered = settled_from(running_median(descent), _MEMORIZED_BAND * level)
    if entered is not None and int(descent.index[entered]) > step:
        step, said = int(descent.index[entered]), f"it settles under {format_number(_MEMORIZED_BAND * level)} from"
    if step >= found.step:
        return found
    message = found.message.replace(f" at step {found.step} ", f" at step {found.step} ({said} step {step}) ", 1)
    return replace(found, step=step, message=message, evidence={**found.evidence, "near_zero_step": found.step})


def running_median(loss: pd.Series) -> pd.Series:
    """The loss under a centred running median over a fortieth of the log (itself when that is one point)."""
    window = max(1, len(loss) // 40)
    return loss if window == 1 else loss.rolling(window, center=True, min_periods=1).median()


# nats a token: a model from random weights whose loss is under this is past what any model generalises to on held-out
# natural text, even a character at a time (~1.0-1.5 nats a character on held-out Shakespeare; a BPE token holds 3-4
# characters); once its run is judged memorized, the learning by heart began there
HELD_OUT_LEVEL = 1.0


def dated_under_held_out_level(found: Finding, loss: pd.Series) -> Finding:
    """A fresh model's memorization dated from where its loss settled under `HELD_OUT_LEVEL` (in nine of ten points to
    the end, on the running median), where that is before the finding's own step, where the loss settled under the
    pre-training floor, long after it had passed what held-out text reaches (G9999_char-rnn-demo's char GRU: under 1
    nat at epoch 31, under 0.5 at 51; mrunmayee3108_deep-learning's word LSTM on ten sentences: 158 and 213)."""
    if found.kind != "memorization":
        return found
    return dated_where_settled_under(found, loss, HELD_OUT_LEVEL, "held_out_level_step",
                                     "a model trained from random weights that low is past what held-out text reaches, "
                                     "even a character at a time.")


def dated_where_settled_under(found: Finding, loss: pd.Series, level: float, key: str, reason: str) -> Finding:
    """`found` dated from where `loss` settled under `level` (the running median, in nine of ten points to the end)
    where that is before its own step, the new step in `evidence[key]` and the old in `rule_step`, the message saying
    why (`reason`); else `found` as it is."""
    start = settled_from(running_median(loss), level)
    if start is None or int(loss.index[start]) >= found.step:
        return found
    step = int(loss.index[start])
    message = (f"{found.message} Dated from step {step}, where the loss settled under {format_number(level)} "
               f"{_unit(level)}: {reason}")
    return replace(found, step=step, message=message, evidence={**found.evidence, key: step, "rule_step": found.step})


def _unit(level: float) -> str:
    return "nat a token" if level == 1 else "nats a token"
