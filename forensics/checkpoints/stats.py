"""Streaming per-tensor statistics over raw bit chunks, in bounded memory.

A tensor is read in chunks of raw bits (see dtypes.py). For each chunk:

* non-finite values: the max of the magnitude bits says at once whether any element reaches
  the all-ones exponent; only then are NaN and Inf counted element by element;
* absmax of the finite values: that same integer max (decoded once per tensor);
* zeros: `count_nonzero` of the magnitude bits (so -0.0 counts as zero);
* sum and sum of squares: the chunk is widened to float32 and summed in rows of 256 with
  float32 accumulators (`einsum`), the row sums added in float64. Rows that short keep the
  error near 1e-7 relative; chunks whose magnitudes could overflow or underflow a float32
  square are widened to float64 instead.

The sums are additive, so a tensor split across worker processes merges exactly
(`Partial.merge`). `mean` and `std` come from them; when the mean dominates the spread (a
norm weight near 1.0), E[x^2] - mean^2 would lose digits, so `needs_shifted_pass` asks the
caller for a second float64 pass around the mean (`shifted_chunk`). L2 and std end within
1e-6 relative of a float64 reference.

The quick check (`quick_chunk`) reads only two integer maxima per chunk.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .blocks import block_of
from .dtypes import WIDEN, WIDEN_FOR_SUMS, DtypeInfo, Scratch, magnitude_value
from .entries import TensorEntry

FP16_MAX = 65504.0
ROW = 256  # float32 accumulation length: short enough to keep row sums exact to ~1e-7


def _bits_of(code: str, value: float) -> int:
    f32 = int(np.array([value], dtype=np.float32).view(np.uint32)[0])
    return f32 >> 16 if code == "BF16" else f32


# Magnitude-bit ranges whose float32 squares (summed over a row) neither overflow nor underflow.
_F32_SAFE = {code: (_bits_of(code, 1e-15), _bits_of(code, 1e18)) for code in ("BF16", "F32")}


@dataclass
class Partial:
    """Additive sums over some elements of one tensor.

    `absmax_raw` is the largest magnitude bit pattern of the finite values for float types
    (-1 when none was finite), or the largest absolute value for integer and bool types.
    `s1`/`s2` are the sum and sum of squares of the finite values, `n_finite` their count.
    """

    numel: int = 0
    n_nan: int = 0
    n_inf: int = 0
    n_zero: int = 0
    n_finite: int = 0
    absmax_raw: int = -1
    s1: float = 0.0
    s2: float = 0.0

    def merge(self, other: "Partial") -> None:
        self.numel += other.numel
        self.n_nan += other.n_nan
        self.n_inf += other.n_inf
        self.n_zero += other.n_zero
        self.n_finite += other.n_finite
        self.absmax_raw = max(self.absmax_raw, other.absmax_raw)
        self.s1 += other.s1
        self.s2 += other.s2


def quick_chunk(info: DtypeInfo, bits: np.ndarray) -> tuple[bool, int]:
    """(holds a NaN/Inf, largest finite magnitude bits) of a float chunk, from two integer maxima.

    The unsigned max is the most negative value (sign bit set), the signed max the most
    positive one; a chunk is finite when neither reaches the all-ones exponent.
    """
    umax = int(bits.max())
    smax = int(bits.view(f"i{info.itemsize}").max())
    bad = umax >= (info.sign_bit | info.nonfinite_from) or smax >= info.nonfinite_from
    negative = umax - info.sign_bit if umax >= info.sign_bit else 0
    return bad, max(smax, negative, 0)


def full_chunk(info: DtypeInfo, bits: np.ndarray, scratch: Scratch, part: Partial) -> None:
    """Add the stats of one chunk of raw bits to `part`."""
    k = bits.size
    part.numel += k
    if not info.is_float:
        _integer_chunk(info, bits, part)
        return
    mag = np.bitwise_and(bits, info.mag_mask, out=scratch.array("mag", info.bits, k))
    top = int(mag.max())
    part.n_zero += k - int(np.count_nonzero(mag))
    finite, n_finite = None, k
    if top >= info.nonfinite_from:  # the slow path, only for chunks holding NaN/Inf
        finite = mag < info.nonfinite_from
        n_finite = int(np.count_nonzero(finite))
        n_inf = 0 if info.inf_bits is None else int(np.count_nonzero(mag == info.inf_bits))
        part.n_inf += n_inf
        part.n_nan += k - n_finite - n_inf
        top = int(mag[finite].max()) if n_finite else -1
    part.n_finite += n_finite
    part.absmax_raw = max(part.absmax_raw, top)
    if top <= 0:  # all zeros (or nothing finite): the sums stay as they are
        return
    if finite is None:
        values = WIDEN_FOR_SUMS[info.code](bits, scratch)
    else:
        values = WIDEN[info.code](bits, scratch)[finite]
    s1, s2 = _moments(values if f32_sums_safe(info, top) else values.astype(np.float64))
    part.s1 += s1
    part.s2 += s2


def _integer_chunk(info: DtypeInfo, bits: np.ndarray, part: Partial) -> None:
    values = bits.view(info.signed) if info.signed else bits
    part.n_zero += bits.size - int(np.count_nonzero(values))
    part.absmax_raw = max(part.absmax_raw, abs(int(values.max())), abs(int(values.min())))


def _moments(values: np.ndarray) -> tuple[float, float]:
    """(sum, sum of squares) in float64 from rows of ROW elements summed in the array's own type."""
    rows, tail = _rows(values)
    s1 = float(np.einsum("ij->i", rows).sum(dtype=np.float64)) + float(tail.sum())
    return s1, sum_of_squares(values)


def sum_of_squares(values: np.ndarray) -> float:
    """Sum of squares in float64, from row sums of ROW elements in the array's own type."""
    rows, tail = _rows(values)
    return float(np.einsum("ij,ij->i", rows, rows).sum(dtype=np.float64)) + float(np.einsum("i,i->", tail, tail))


def _rows(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`values` as full rows of ROW elements, and the rest widened to float64."""
    r = values.size - values.size % ROW
    return values[:r].reshape(-1, ROW), values[r:].astype(np.float64)


def f32_sums_safe(info: DtypeInfo, top: int) -> bool:
    """Whether float32 row sums of squares can hold values with magnitude bits up to `top`."""
    lo, hi = _F32_SAFE.get(info.code, (0, math.inf))
    return lo <= top <= hi


def needs_shifted_pass(entry: TensorEntry, part: Partial) -> bool:
    """True when E[x^2] - mean^2 would lose more than ~4 bits: the mean dominates the spread."""
    if entry.info is None or not entry.info.is_float or part.n_finite == 0 or part.s2 == 0:
        return False
    mean_sq = (part.s1 / part.n_finite) ** 2
    return 16.0 * (part.s2 / part.n_finite - mean_sq) < part.s2 / part.n_finite


def shifted_chunk(info: DtypeInfo, bits: np.ndarray, scratch: Scratch, shift: float, part: Partial) -> None:
    """Float64 sums of (x - shift) over the finite values of a chunk, into `part.s1`/`part.s2`."""
    values = WIDEN[info.code](bits, scratch)
    mag = np.bitwise_and(bits, info.mag_mask, out=scratch.array("mag", info.bits, bits.size))
    if int(mag.max()) >= info.nonfinite_from:
        values = values[mag < info.nonfinite_from]
    centred = np.subtract(values, shift, out=scratch.array("f64", np.float64, values.size), dtype=np.float64)
    part.n_finite += centred.size
    part.s1 += float(centred.sum())
    part.s2 += float(np.einsum("i,i->", centred, centred))  # einsum, not BLAS: no threads in workers


def stats_row(entry: TensorEntry, part: Partial | None, shifted: Partial | None = None,
              shift: float = 0.0) -> dict:
    """One row of STATS_COLUMNS (+ `note`) from the merged sums of a tensor.

    std is the population standard deviation (ddof=0) of the finite values; fp16_headroom is
    FP16_MAX / absmax (how many times the largest finite magnitude fits under 65504: below 1
    means it overflows in fp16; inf for an all-zero tensor; NaN for integer types).
    """
    info = entry.info
    row = {"name": entry.name, "block": block_of(entry.name), "dtype": entry.dtype, "shape": entry.shape,
           "numel": entry.numel, "n_nan": 0, "n_inf": 0, "absmax": math.nan, "l2": math.nan,
           "mean": math.nan, "std": math.nan, "zero_frac": math.nan, "fp16_headroom": math.nan,
           "file": entry.file, "note": entry.problem}
    if info is None or part is None:
        return row
    row.update(n_nan=part.n_nan, n_inf=part.n_inf,
               zero_frac=part.n_zero / part.numel if part.numel else math.nan)
    if not info.is_float:
        row["absmax"] = float(part.absmax_raw) if part.numel else math.nan
        row["note"] = "integer type: no non-finite check" if info.kind == "int" else "bool"
        return row
    if part.absmax_raw >= 0:
        absmax = 0.0 if part.absmax_raw == 0 else magnitude_value(info, part.absmax_raw)
        row.update(absmax=absmax, fp16_headroom=FP16_MAX / absmax if absmax else math.inf)
    if part.n_finite:
        n = part.n_finite
        mean, var = part.s1 / n, part.s2 / n - (part.s1 / n) ** 2
        if shifted is not None and shifted.n_finite:
            d = shifted.s1 / n
            mean, var = shift + d, shifted.s2 / n - d * d
        row.update(l2=math.sqrt(part.s2), mean=mean, std=math.sqrt(max(var, 0.0)))
    return row
