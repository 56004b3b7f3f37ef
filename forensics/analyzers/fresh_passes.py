"""Memorization of a model trained from random weights, read from its passes over the data: a loss that kept falling
after the first pass, each pass over examples already seen, down under the pre-training floor and settled there.

`memorization.memorized_from_scratch` asks a tenfold fall from the log's first point; a log written once an epoch
(Keras's `model.fit` lines) begins with the first epoch's mean, already well under where the fresh head started, and
a fall that began at ln(vocabulary) reads as five- or sixfold there. The passes say it instead.
"""
from __future__ import annotations

import pandas as pd

from ..findings import Finding
from .memorization_onset import FELL_AFTER, dated_under_held_out_level, running_median, settled_from
from .metrics import LOSS, format_number


def memorized_over_passes(loss: pd.Series, epochs: pd.Series | None, floor: float, settled_points: float,
                          many_passes: float, why: str) -> list[Finding]:
    """A loss from random weights that settled under `floor` (in nine of ten points to the end, over `settled_points`
    points or more) and stayed there over `many_passes` passes over the data or more, after falling `FELL_AFTER` x or
    more from its level at the end of the first pass: no example had been seen twice there, so the fall after it was
    bought by seeing them again, and the passes under the floor went over examples already fitted (KarlYang2013_tf_study:
    a char LSTM on Shakespeare, 2.62 after epoch 1, under 0.5 from epoch 37 to 100, flat at 0.38 for the last 40; the
    first point is an epoch mean, 1.5 nats under ln 65). A loss that only reaches the floor in its last passes is left
    alone (factoryfist-wq_gpt2-text-generation, judged healthy: 42 lines, 2.75 after epoch 1, under 0.5 over the last
    two of ten). One `memorization` warning, dated where the loss went under what held-out text reaches
    (`dated_under_held_out_level`), or []."""
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
