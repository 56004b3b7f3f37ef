"""A held-out score (BLEU, accuracy, ROUGE, F1: higher is better) still rising at the end of the log.

A log with no eval loss may still evaluate on held-out data by a score. Where that score improves to the end, the
model was still generalising better when the log ends, whatever level its training loss reached: a held-out view that
a memorization judged from the training loss alone lacks (ofrik_Seq2Seq: a seq2seq translator trained from scratch,
train loss 10.89 -> 0.10, validation BLEU 0 -> 0.111 rising at every eighth of its 411 evaluations to the end).
One that stalls or falls while the training loss goes to 0 is no such evidence (29aitch_AIchatbot: ROUGE-1 15.4 ->
13.7 over 28 epochs, memorized).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .metrics import Metrics, finite
from ..metric_names import is_held_out

# The words a held-out score's name holds (eval_bleu, eval_accuracy, eval_rouge-1, eval_f1): higher is better
_SCORE_WORDS = ("bleu", "accuracy", "acc", "rouge", "f1", "exact_match", "chrf", "meteor")
_EVALUATIONS = 8  # evaluations at the least: its quarters are two points or more
_NEAR_BEST = 0.95  # its last evaluation at this share of its best or more: still on its rise
_TO_THE_END = 0.9  # its last evaluation at this share of the training loss's last step or later: logged to the end


def held_out_score_rising(metrics: Metrics, loss: pd.Series) -> str | None:
    """The name of a held-out score that rose to the end of the log: `_EVALUATIONS` or more evaluations, the median
    of its last quarter above the quarter's before it and above its first quarter's, its last value `_NEAR_BEST` of
    its best or more, and its last evaluation at `_TO_THE_END` of the training loss's last step or later; else None."""
    end = float(loss.index[-1]) if len(loss) else 0.0
    for name in sorted(n for n in metrics if _is_score(n)):
        score = finite(metrics[name])
        if len(score) >= _EVALUATIONS and float(score.index[-1]) >= _TO_THE_END * end and _still_rising(score):
            return name
    return None


def _is_score(name: str) -> bool:
    words = name.lower().replace("-", "_").replace("/", "_").split("_")
    return is_held_out(name) and any(word in _SCORE_WORDS or word.startswith(("bleu", "rouge")) for word in words[1:])


def _still_rising(score: pd.Series) -> bool:
    quarters = [float(np.median(part)) for part in np.array_split(score.to_numpy(dtype="float64"), 4)]
    best, last = float(score.max()), float(score.iloc[-1])
    return quarters[3] > quarters[2] and quarters[3] > quarters[0] and best > 0 and last >= _NEAR_BEST * best
