"""Per-step metrics of an SFT and of a memorizing QLoRA run, for the grad-norm spike and loss-collapse tests."""
from __future__ import annotations

import numpy as np
import pandas as pd


def _metrics(step_index: np.ndarray, **series) -> dict[str, pd.Series]:
    return {name: pd.Series(np.asarray(v, dtype="float64"), index=step_index, name=name) for name, v in series.items()}


def _memorizing_qlora(seed: int = 52) -> dict[str, pd.Series]:
    """A QLoRA SFT over three epochs of 320 steps, logged every 5: the loss falls from 5.9 to ~0.04 within its
    first 50 steps, eases to 0.031 by the first epoch's end, then steps down on each pass over the same examples
    (0.018 -> 0.0137 in epoch 2, 0.0057 -> 0.005 in epoch 3); grad_norm about 0.24 with one 4.0 at step 640, where
    the loss touches 0.0198 against about 0.012."""
    rng = np.random.default_rng(seed)
    st = np.arange(5, 965, 5, dtype="int64")
    fall = 0.04 + 5.9 * np.exp(-(st - 5) / 8.0)
    level = np.where(st <= 320, np.interp(st, [50, 320], [0.045, 0.031]),
                     np.where(st <= 640, np.interp(st, [325, 640], [0.018, 0.0137]),
                              np.interp(st, [645, 960], [0.0057, 0.005])))
    loss = np.where(st <= 50, fall, level) * np.exp(rng.normal(0.0, 0.2, len(st)))
    grad = 0.24 * np.exp(rng.normal(0.0, 0.3, len(st)))
    grad[:10] = np.linspace(12.4, 1.0, 10)
    at = int(np.flatnonzero(st == 640)[0])
    grad[at], loss[at - 1], loss[at], loss[at + 1] = 4.014, 0.012, 0.0198, 0.0038
    return _metrics(st, loss=loss, grad_norm=grad, epoch=st / 320)
