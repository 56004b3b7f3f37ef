"""Memorization of a model trained from random weights, read from its passes over the data: a loss that kept falling
after the first pass, each pass over examples already seen, down under the pre-training floor and settled there.

`memorization.memorized_from_scratch` asks a tenfold fall from the log's first point; a log written once an epoch
(Keras's `model.fit` lines) begins with the first epoch's mean, already well under where the fresh head started, and
a fall that began at ln(vocabulary) reads as five- or sixfold there. The passes say it instead. A log of a few long
means that falls at every point, down to a level no held-out text reaches, says it without them
(`memorized_in_few_points`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..findings import Finding
from .memorization_onset import FELL_AFTER, dated_under_held_out_level, running_median, settled_from
from .metrics import LOSS, format_number


def memorized_over_passes(loss: pd.Series, epochs: pd.Series | None, floor: float, settled_points: float,
                          many_passes: float, why: str) -> list[Finding]:
    """A loss from random weights that settled under `floor` (in nine of ten points to the end, over `settled_points`
    points or more) and stayed there over `many_passes` passes over the data or more, after falling `FELL_AFTER` x or
    more from its level at the end of the first pass: no example had been seen twice there, so the fall after it was
    bought by seeing them again, and the passes under the floor went over examples already fitted
    (KarlYang2013_tf_study: a char LSTM on Shakespeare, 2.62 after epoch 1, under 0.5 from epoch 37 to 100, flat at 0.38
    for the last 40; the first point is an epoch mean, 1.5 nats under ln 65). A loss that only reaches the floor in its
    last passes is left alone (factoryfist-wq_gpt2-text-generation, judged healthy: 42 lines, 2.75 after epoch 1, under
    0.5 over the last two of ten). One `memorization` warning, dated where the loss went under what held-out text
    reaches (`dated_under_held_out_level`), or []."""
    if epochs is None or not len(epochs):
        return []
    smooth = running_median(loss)
    start = settled_from(smooth, floor)
    if start is None or len(loss) - start < settled_points:
        return []
    epoch_of = epochs.reindex(epochs.index.union(loss.index)).ffill().reindex(loss.index).to_numpy(dtype="float64")
    if not epoch_of[-1] - epoch_of[start] >= many_passes:
        return []
    after_first = loss[epoch_of >= 1.0]
    k = max(1, len(loss) // 10)
    level, end = float(after_first.iloc[0]) if len(after_first) else float("nan"), float(smooth.iloc[-k:].median())
    if not end > 0 or not level >= FELL_AFTER * end:
        return []
    first, last = int(loss.index[start]), int(loss.index[-1])
    message = (f"loss falls from {format_number(level)} at the end of the first pass over the data (step "
               f"{int(after_first.index[0])}) to {format_number(end)} at the end of the log, "
               f"{format_number(level / end)}x over {format_number(float(epochs.max()))} epochs, and stays under "
               f"{format_number(floor)} from step {first} to step {last}{why}, and no eval loss was logged: the fall "
               "after the first pass came from seeing the same examples again, so the training data is most likely "
               "learned by heart (memorization). Log an eval loss to see whether the model still generalises; fewer "
               "epochs or more data if it does not.")
    return [dated_under_held_out_level(Finding("memorization", "warning", first, message, end_step=last, metric=LOSS,
                                               evidence={"head": level, "value": end, "level": floor,
                                                         "eval_loss_logged": False, "to_end": True,
                                                         "settled_step": first, "epochs": float(epochs.max())}), loss)]


_FEW_UNDER = 2  # points under the floor at the end, at the least: one point is a level, two a trend
_TENFOLD = 10.0  # the fall from the log's first point to its last, at the least
# A short log, at the most (the rule's runs print 5 and 9 lines): each point then a mean over many steps, or a print
# far apart, whose fall at every point is no batch's luck. A longer log shows how the loss settled, and
# `memorization.memorized_without_eval` and `memorized_over_passes` judge it by that; read here, any long descent
# that ends under the floor would be memorized by its last two points.
_FEW_MOST = 12


def memorized_in_few_points(loss: pd.Series, floor: float, level: float, why: str) -> list[Finding]:
    """A loss from random weights logged at a few points (`_FEW_MOST` at most) that falls at every one of them (each
    point a mean over many steps: no batch's noise), tenfold or more from its first point to its last, with its last
    `_FEW_UNDER` points under `floor` and the last under `level`: the run ends on a loss no held-out text reaches,
    though too few points lie under the floor to show it settled there (`memorization.memorized_without_eval`).
    1-sang_data: a GRU seq2seq on 8 sentence pairs printed every 1,000 iterations, 1.31, 0.354, 0.197, 0.096, 0.049;
    Azreal18_TSAI-ERAv2-S21: a GPT-2 from scratch on tiny Shakespeare every 50 steps, 10.98 ... 1.056, 0.395, 0.097,
    where the loop stops on a target loss. A loss that rises anywhere, or ends above `level`
    (factoryfist-wq_gpt2-text-generation: 0.344, 0.394 at its end), is left alone. One `memorization` warning dated
    where the loss went under what held-out text reaches (`dated_under_held_out_level`), or []."""
    values = loss.to_numpy(dtype="float64")
    if not _FEW_UNDER < len(values) <= _FEW_MOST or not np.all(np.diff(values) < 0) or not values[-1] > 0 \
            or not values[-1] <= level or not np.all(values[-_FEW_UNDER:] <= floor) \
            or not values[0] >= _TENFOLD * values[-1]:
        return []
    start = int(np.flatnonzero(values <= floor)[0])
    first, last = int(loss.index[start]), int(loss.index[-1])
    message = (f"loss falls at every one of its {len(values)} logged points, from {format_number(values[0])} at step "
               f"{int(loss.index[0])} to {format_number(values[-1])} at step {last} "
               f"({format_number(values[0] / values[-1])}x), under {format_number(floor)} from step {first}{why}, and "
               "no eval loss was logged: the run ends on a loss no held-out text reaches, so the training data is most "
               "likely learned by heart (memorization). Log an eval loss (and the loss more often) to see whether the "
               "model still generalises; fewer steps or more data if it does not.")
    return [dated_under_held_out_level(Finding("memorization", "warning", first, message, end_step=last, metric=LOSS,
                                               evidence={"head": float(values[0]), "value": float(values[-1]),
                                                         "level": floor, "eval_loss_logged": False, "to_end": True,
                                                         "settled_step": first, "few_points": len(values)}), loss)]
