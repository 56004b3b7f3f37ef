"""The dtype a run's logged values were held in, where no flag says its precision: a norm or a loss computed in a half
precision is itself a number of that precision, which a float32 value is only by rare chance."""
from __future__ import annotations

import numpy as np

from ..timeline import Timeline

_BF16_VALUES = 8  # logged grad_norms, every one a bfloat16 number: no chance (2^-16 each for a float32 value)
# float16's normal range: below it a value holds fewer bits, above it is inf
_FP16_TINY, _FP16_MAX = 2.0 ** -14, 65504.0


def grad_norms_held_in_bf16(timeline: Timeline) -> str | None:
    """Why the gradients were bfloat16 tensors, where every logged grad_norm (`_BF16_VALUES` or more, not 0) is a
    bfloat16 number - at most 8 significant bits, 1.234375 or 0.78515625 - and most print more digits than a rounded
    log would keep: the norm of bf16 gradients is a bf16 tensor, and a model loaded in bfloat16 and trained with
    neither fp16 nor bf16 set trains in bf16 (isharpals-06's SFTConfig with both off, michaelnny's own loop; under
    mixed precision the gradients are float32 and so is their norm). Else None."""
    return _every_value_bf16(_finite_nonzero(timeline, "grad_norm"), "grad_norm",
                             "the gradients were bf16 tensors, a model trained in bf16")


def losses_held_in_bf16(timeline: Timeline) -> str | None:
    """Why the model ran in bfloat16, where every logged train loss (`_BF16_VALUES` or more) is a bfloat16 number and
    most print more digits than a rounded log keeps: the loss of a model loaded in bfloat16 and trained without
    autocast is a bf16 tensor (Manfredss_Qwen-3B-SFT---DPO's plain loop printing `loss.item()`: 1.0546875,
    0.12451171875); under mixed precision autocast computes the cross-entropy in float32, and the Trainer's logged
    loss is a float32 mean rounded to 4 places. Else None."""
    values = _finite_nonzero(timeline, "loss")
    if len(set(values)) < _BF16_VALUES:
        return None  # a loss stuck at one value (MiniGPT-4's 10.375 ten times) is one number, not eight
    return _every_value_bf16(values, "loss", "the losses were bf16 tensors, a model run in bf16")


def _every_value_bf16(values: np.ndarray, metric: str, meaning: str) -> str | None:
    """Why `values` (a metric's finite non-zero logged values) say `meaning`: `_BF16_VALUES` or more, every one a
    bfloat16 number, not a rounded log's; else None."""
    if len(values) < _BF16_VALUES or not all(_is_bf16(v) for v in values) or _rounded(values):
        return None
    shown = ", ".join(f"{v:.12g}" for v in values[:3])
    return (f"every one of the {len(values)} logged {metric} values is a bfloat16 number (at most 8 significant "
            f"bits: {shown}, ...): {meaning}")


def eval_losses_held_in_fp16(timeline: Timeline) -> str | None:
    """Why the model ran in float16, where every logged eval_loss is a float16 number (at most 11 significant bits)
    and one at least needs more bits than bfloat16's 8: the Trainer's eval_loss is the mean of the batches' losses in
    their own dtype, float32 under mixed precision (autocast computes the cross-entropy in float32), float16 where the
    model itself is float16 (HanGyeol-Yoo's polyglot-ko-12.8b LoRA: 0.9892578125 = 1013/1024). A float32 loss is a
    float16 number once in 2^13 by chance; one that is a bfloat16 number too says nothing of the two. Else None."""
    values = _finite_nonzero(timeline, "eval_loss")
    if not len(values) or not all(_is_fp16(v) for v in values) or all(_is_bf16(v) for v in values):
        return None
    if _rounded(values):
        return None
    shown = ", ".join(f"{v:.12g}" for v in values[:3])
    return (f"every one of the {len(values)} logged eval_loss values is a float16 number, and not every one a "
            f"bfloat16 number ({shown}{', ...' * (len(values) > 3)}): the losses were float16 tensors, a model run "
            f"in fp16")


def _finite_nonzero(timeline: Timeline, metric: str) -> np.ndarray:
    values = timeline.series(metric).dropna()
    return values[np.isfinite(values) & (values != 0)].to_numpy(dtype="float64")


def _is_bf16(value: float) -> bool:
    as_float32 = np.float32(value)
    return float(as_float32) == value and not int(as_float32.view(np.uint32)) & 0xFFFF


def _is_fp16(value: float) -> bool:
    return _FP16_TINY <= abs(value) <= _FP16_MAX and float(np.float16(value)) == value


def _rounded(values: np.ndarray) -> bool:
    """Whether most values print no more digits than a rounded log keeps (0.5, 1.25): half-precision numbers by
    chance."""
    return bool(np.mean([len(repr(float(v)).replace(".", "").strip("0")) > 4 for v in values]) < 0.5)
