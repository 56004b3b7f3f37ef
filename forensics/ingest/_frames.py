"""Clean-ups of a reader's long frame that more than one reader needs."""
from __future__ import annotations

import pandas as pd

# Megatron writes its twins of every TensorBoard tag against consumed samples (or tokens), not
# iterations: the same values on another x-axis, which would read as far-off steps.
OTHER_AXIS_SUFFIXES = (" vs samples", " vs tokens")


def without_unit_loss_scale(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame without `loss_scale` rows when the scale is 1.0 at every point.

    Megatron prints (and writes to TensorBoard) a loss scale of 1.0 for bf16 and fp32 runs,
    which have no dynamic scaler; kept, it would read as an fp16 scale sitting at its floor.
    A scale that moved and then reached 1.0 is a real floor and is kept, and so is a constant
    1.0 next to skipped iterations: only an fp16 scaler skips (a log that starts at the floor).
    """
    metric, value = frame["metric"].to_numpy(), frame["value"].to_numpy()
    is_scale = metric == "loss_scale"
    skipped = (metric == "skipped_iterations") & (value > 0)
    if is_scale.any() and (value[is_scale] == 1.0).all() and not skipped.any():
        return frame[~is_scale].reset_index(drop=True)
    return frame


def without_other_axis_twins(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame without Megatron's `<tag> vs samples` / `vs tokens` twins (see OTHER_AXIS_SUFFIXES)."""
    twin = frame["metric"].str.endswith(OTHER_AXIS_SUFFIXES).to_numpy(dtype=bool)
    return frame[~twin].reset_index(drop=True) if twin.any() else frame


def without_placeholders(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame without the values Megatron prints when another engine owns them.

    Under DeepSpeed's pipeline engine, Megatron-DeepSpeed prints `loss scale: -1.0` and
    `grad norm: 0.000` on every line: DeepSpeed scales and clips, Megatron never sees either.
    A scale is never <= 0, and a gradient norm of exactly 0 at every point while the loss
    moves cannot be (a changing loss needs non-zero updates), so both are left out.
    """
    metric, value = frame["metric"].to_numpy(), frame["value"].to_numpy()
    drop = (metric == "loss_scale") & (value <= 0)
    grad, loss = metric == "grad_norm", metric == "loss"
    if grad.any() and (value[grad] == 0).all() and len(set(value[loss].tolist())) > 1:
        drop |= grad
    return frame[~drop].reset_index(drop=True) if drop.any() else frame
