"""Whether a held-out (eval) loss fell, or never did: the mean over one fixed set, which no batch drawn at random moves
between evaluations, read by rules of its own beside `fall_measure.fell_clearly` (a training loss's measure, whose
noise is its batches').
"""
from __future__ import annotations

import numpy as np

_HELD_OUT_EVALS = 3  # evaluations of a held-out loss, each lower than the one before ...
_HELD_OUT_FALL = 0.01  # ... and the last this share under the first (above the 0.63% of the non-learning ones)


def lower_at_every_evaluation(evals) -> bool:
    """Whether a held-out (eval) loss was lower at each of `_HELD_OUT_EVALS` or more evaluations than at the one before,
    the last `_HELD_OUT_FALL` or more under the first. An eval loss is the mean over the same held-out set each time:
    no batch drawn at random moves it between evaluations, only the weights do, so a loss that steps down at every
    evaluation is the model getting better, not noise, however few the evaluations; their differences are the fall
    itself, which `fell_clearly` would read as noise (DaryaYu's distilgpt2 over 1,000 held-out texts: 1.6723, 1.6039,
    1.5782, -5.6%). The floor is measured on the corpus's fixed-set eval losses that do not learn: they move a median
    0.005-0.05% from one evaluation to the next (tradingwithme, MuQlanyu, EricPeter, AMindToThink), 0.8% at most
    (ananyakaligal), and the two that were lower at every evaluation fell 0.13% over four (AMindToThink) and 0.63% over
    three (jbmanasa); the floor of 1% sits above both, and under the 1.27% over three (-1.05%, then -0.22%) of
    AkshayPethe's T5-small LoRA, evaluated on the same 5,000 XSum articles each epoch, which learned slowly. Only for a
    held-out loss: a training loss is a mean over batches drawn at random, whose noise is its own."""
    values = evals.to_numpy(dtype="float64")
    return len(values) >= _HELD_OUT_EVALS and values[0] > 0 and bool(np.all(np.diff(values) < 0)) \
        and float(values[-1]) <= (1 - _HELD_OUT_FALL) * float(values[0])


_STAYED_EVALS = 2  # evaluations of a held-out loss, every one after the first ...
_STAYED_DOWN = 0.05  # ... this share or more under the first: six times the 0.8% a non-learning one moves at most


def held_out_fell(evals) -> bool:
    """Whether a held-out (eval) loss shows learning: lower at every evaluation (`lower_at_every_evaluation`), or
    `_STAYED_DOWN` or more under the first at every later evaluation, however it moved among them
    (soureeshdalal_finetuned-phi2: 0.7413, then 0.6781, 0.6747, 0.6575, 0.6803 - 8-11% under it; a fixed-set eval
    loss that does not learn moves under 1%, see `lower_at_every_evaluation`). Two evaluations are enough for that: the
    second one 5% under the first is six times what a non-learning fixed set moves (joaorafaelm_notebooks' T5 on SWAG,
    validated on the same 2,000 examples after each epoch: 0.3535, then 0.3268, -7.6%)."""
    values = evals.to_numpy(dtype="float64")
    stayed = len(values) >= _STAYED_EVALS and values[0] > 0 \
        and bool(np.all(values[1:] <= (1 - _STAYED_DOWN) * float(values[0])))
    return stayed or lower_at_every_evaluation(evals)


HELD_OUT_FLAT_EVALS = 5  # evaluations of a held-out loss, none of them `_HELD_OUT_FALL` under the first


def held_out_never_fell(evals) -> bool:
    """Whether a held-out (eval) loss evaluated `HELD_OUT_FLAT_EVALS` times or more never came `_HELD_OUT_FALL` under
    its first evaluation: the same fixed set scored no better at any later point, so whatever the training loss did,
    nothing shows the model learned anything that carries to unseen data (IMLHF_lstm_text_summary's Keras headline
    LSTM: training loss 8.86 -> 7.77 over ten iterations, val_loss 7.960 first, 7.902 at its lowest (-0.7%), 7.967
    last; its samples are the most frequent words). The floor is the one a fixed-set eval loss that does not learn
    moves within (`lower_at_every_evaluation`)."""
    values = evals.to_numpy(dtype="float64")
    return len(values) >= HELD_OUT_FLAT_EVALS and values[0] > 0 \
        and float(values.min()) > (1 - _HELD_OUT_FALL) * float(values[0])
