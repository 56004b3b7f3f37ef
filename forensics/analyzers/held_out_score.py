"""A held-out score (BLEU, accuracy, ROUGE, F1: higher is better) still rising at the end of the log.

A log with no eval loss may still evaluate on held-out data by a score. Where that score improves to the end, the
model was still generalising better when the log ends, whatever level its training loss reached: a held-out view that
a memorization judged from the training loss alone lacks (ofrik_Seq2Seq: a seq2seq translator trained from scratch,
train loss 10.89 -> 0.10, validation BLEU 0 -> 0.111 rising at every eighth of its 411 evaluations to the end).
One that stalls or falls while the training loss goes to 0 is no such evidence (29aitch_AIchatbot: ROUGE-1 15.4 ->
13.7 over 28 epochs, memorized). A short log (an evaluation an epoch) says it by a score higher at every one of its
evaluations (ARUNRG3005_Context-Aware-Hashtag-Generation: a multi-label classifier's val F1 0.550, 0.719, 0.755,
0.775, 0.791, 0.792 over six epochs while its Asymmetric Loss went 0.0076 -> 0.00057).
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
_EVERY_ONE_HIGHER = 5  # evaluations at the least, each higher than the one before: fewer than _EVALUATIONS say it so
_REAL_RISE = 0.05  # ... and the last higher than the first by this share of the first: a rise by a hair (0.7910 ->
# 0.7917) is a held-out set's noise, no improvement; the bar held_out_fall sets a held-out loss's fall (_STAYED_DOWN)


def held_out_score_rising(metrics: Metrics, loss: pd.Series) -> str | None:
    """The name of a held-out score that rose to the end of the log: `_EVALUATIONS` or more evaluations, the median
    of its last quarter above the quarter's before it and above its first quarter's, its last value `_NEAR_BEST` of
    its best or more (or `_EVERY_ONE_HIGHER` or more, each higher than the one before), and its last evaluation at
    `_TO_THE_END` of the training loss's last step or later; else None."""
    end = float(loss.index[-1]) if len(loss) else 0.0
    for name in sorted(n for n in metrics if _is_score(n)):
        score = finite(metrics[name])
        if _to_the_end(score, end) and (len(score) >= _EVALUATIONS and _still_rising(score)
                                        or _higher_at_every_one(score)):
            return name
    return None


def held_out_score_higher_at_every_eval(metrics: Metrics, loss: pd.Series) -> str | None:
    """The name of a held-out score logged `_EVERY_ONE_HIGHER` times or more, each higher than the one before and the
    last by `_REAL_RISE` of the first or more, to the end of the log (its last evaluation at `_TO_THE_END` of the
    training loss's last step or later); else None. The strict reading of `held_out_score_rising`: a score that
    peaked and came back (silin3_CS224n_final_project's dev accuracy, best 0.902 at epoch 5 of 10, then 0.865, 0.849,
    0.861, 0.886) is no such score, however its quarters read."""
    end = float(loss.index[-1]) if len(loss) else 0.0
    return next((name for name in sorted(n for n in metrics if _is_score(n))
                 if _to_the_end(score := finite(metrics[name]), end) and _higher_at_every_one(score)), None)


def _to_the_end(score: pd.Series, end: float) -> bool:
    return bool(len(score)) and float(score.index[-1]) >= _TO_THE_END * end


def _higher_at_every_one(score: pd.Series) -> bool:
    values = score.to_numpy(dtype="float64")
    return len(values) >= _EVERY_ONE_HIGHER and bool(np.all(np.diff(values) > 0)) \
        and values[-1] - values[0] >= _REAL_RISE * abs(values[0])


def _is_score(name: str) -> bool:
    words = name.lower().replace("-", "_").replace("/", "_").split("_")
    return is_held_out(name) and any(word in _SCORE_WORDS or word.startswith(("bleu", "rouge")) for word in words[1:])


def _still_rising(score: pd.Series) -> bool:
    quarters = [float(np.median(part)) for part in np.array_split(score.to_numpy(dtype="float64"), 4)]
    best, last = float(score.max()), float(score.iloc[-1])
    return quarters[3] > quarters[2] and quarters[3] > quarters[0] and best > 0 and last >= _NEAR_BEST * best
