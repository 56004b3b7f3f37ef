"""The sums over one parameter's Adam moments m, v and its weights W, read together chunk by chunk (`SUMS`): the
NaN/Inf elements, Σm², Σv², the elements dominated by epsilon, the saturated updates, Σ(u + wd·W)² and ΣW².
`optimizer_stats` says what they measure and turns them into RMS and ratios per parameter and per block.
"""
from __future__ import annotations

import math

import numpy as np

from .dtypes import WIDEN, Scratch
from .entries import TensorEntry
from .optimizer_file import OptimizerFile, ParamGroup

SATURATED = 0.9  # |m̂/(√v̂+ε)| above this counts as a saturated (sign-like) update
SUMS = ("numel", "n_nonfinite_m", "n_nonfinite_v", "n_nonfinite_w", "n_excluded", "sq_m", "sq_v", "n_eps",
        "n_saturated", "n_corrected", "sq_update", "sq_w")


def measure_parameter(opt: OptimizerFile, state, weight, group: ParamGroup | None,
                      chunk_bytes: int) -> dict[str, float]:
    """The `SUMS` of one parameter: its moments `state` (exp_avg, exp_avg_sq) read from `opt` with its weight
    (`weight`: (file, entry), or None) in chunks of `chunk_bytes`; all NaN where a moment is missing or unreadable."""
    sums = dict.fromkeys(SUMS, 0.0)
    m, v = state.exp_avg, state.exp_avg_sq
    if m is None or v is None or m.problem or v.problem or m.numel != v.numel:
        return {k: math.nan for k in SUMS}
    w_file, w_entry = weight if weight is not None and weight[1].numel == m.numel else (None, None)
    bc = _bias_corrections(state.step, group)
    scratches = [Scratch(chunk_bytes) for _ in range(3)]
    per = max(256, chunk_bytes // 8)
    for pos in range(0, m.numel, per):
        stop = min(pos + per, m.numel)
        mv = _values(opt, m, pos, stop, scratches[0])
        vv = _values(opt, v, pos, stop, scratches[1])
        wv = _values(w_file, w_entry, pos, stop, scratches[2]) if w_entry is not None else None
        _add_chunk(sums, mv, vv, wv, bc, group)
    return sums


def _values(wf, entry: TensorEntry, start: int, stop: int, scratch: Scratch) -> np.ndarray:
    """Elements [start, stop) of `entry` as float64."""
    parts = [WIDEN[entry.dtype](bits, scratch).astype(np.float64) for bits in wf.chunks(entry, start, stop, scratch)]
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _bias_corrections(step: float | None, group: ParamGroup | None) -> tuple[float, float] | None:
    if not step or group is None or group.betas is None:
        return None
    b1, b2 = group.betas
    return 1.0 - b1 ** step, 1.0 - b2 ** step


def _add_chunk(sums: dict, m: np.ndarray, v: np.ndarray, w: np.ndarray | None, bc, group: ParamGroup | None) -> None:
    """Add one chunk's counts and sums (m, v, w are float64 copies of this chunk: changed in place)."""
    sums["numel"] += m.size
    # Squares of values read from 16/32-bit floats cannot overflow float64: a non-finite sum means a NaN/Inf
    # element, so the masks are built only for the rare chunk that has one.
    sq_m, sq_v = float(np.dot(m, m)), float(np.dot(v, v))
    sq_w = float(np.dot(w, w)) if w is not None else 0.0
    if not (math.isfinite(sq_m) and math.isfinite(sq_v) and math.isfinite(sq_w)):
        m, v, w = _finite_part(sums, m, v, w)
        sq_m, sq_v = float(np.dot(m, m)), float(np.dot(v, v))
        sq_w = float(np.dot(w, w)) if w is not None else 0.0
    sums["sq_m"] += sq_m
    sums["sq_v"] += sq_v
    if bc is None or group.eps is None:
        return
    root_v = np.maximum(v, 0.0, out=v)
    root_v *= 1.0 / bc[1]
    np.sqrt(root_v, out=root_v)
    sums["n_eps"] += int(np.count_nonzero(root_v < group.eps))
    root_v += group.eps
    u = np.divide(m, root_v, out=m)
    u *= 1.0 / bc[0]
    sums["n_corrected"] += u.size
    sums["n_saturated"] += int(np.count_nonzero(np.abs(u, out=root_v) > SATURATED))
    if w is not None:
        if group.decoupled and group.weight_decay:
            u += group.weight_decay * w
        sums["sq_update"] += float(np.dot(u, u))
        sums["sq_w"] += sq_w


def _finite_part(sums: dict, m: np.ndarray, v: np.ndarray, w: np.ndarray | None):
    """Count the chunk's NaN/Inf elements; return m, v, w where all three are finite."""
    finite_m, finite_v = np.isfinite(m), np.isfinite(v)
    sums["n_nonfinite_m"] += m.size - int(np.count_nonzero(finite_m))
    sums["n_nonfinite_v"] += v.size - int(np.count_nonzero(finite_v))
    ok = finite_m & finite_v
    if w is not None:
        finite_w = np.isfinite(w)
        sums["n_nonfinite_w"] += w.size - int(np.count_nonzero(finite_w))
        ok &= finite_w
    sums["n_excluded"] += m.size - int(np.count_nonzero(ok))
    return m[ok], v[ok], (w[ok] if w is not None else None)
