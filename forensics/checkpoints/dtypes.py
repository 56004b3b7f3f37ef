"""The element types a checkpoint can hold, seen as raw bit patterns.

Every tensor is read as unsigned integers of its width (BF16 and F16 as `uint16`, F32 as
`uint32`, ...). For the floating types that is enough to find NaN and Inf without any
float arithmetic: with the sign bit masked off, a value is non-finite exactly when its
magnitude bits reach the all-ones exponent (`nonfinite_from`); it is Inf when they equal
`inf_bits` and NaN above it. Magnitude bits also order like the magnitudes themselves, so
the absmax of the finite values is an integer max. Only the moments (sum, sum of squares)
need real numbers, and `widen` makes them chunk by chunk.

Codes are the safetensors names (`BF16`, `F8_E4M3`, ...); torch dtypes map onto them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class DtypeInfo:
    """How to read one element type.

    Fields:
        code: the safetensors dtype name.
        itemsize: bytes per element.
        bits: the unsigned integer dtype the raw bytes are read as.
        kind: "float", "int" or "bool".
        signed: for "int", the signed view of `bits` (np.int8, ...), else None.
        sign_bit: the sign bit of a float format.
        nonfinite_from: smallest magnitude bit pattern that is NaN or Inf.
        inf_bits: the magnitude bits of Inf, or None for formats without Inf (F8_E4M3).
    """

    code: str
    itemsize: int
    bits: type
    kind: str
    signed: type | None = None
    sign_bit: int = 0
    nonfinite_from: int = 0
    inf_bits: int | None = None

    @property
    def mag_mask(self) -> int:
        return self.sign_bit - 1

    @property
    def is_float(self) -> bool:
        return self.kind == "float"


def _float(code, itemsize, bits, nonfinite_from, inf_bits):
    return DtypeInfo(code, itemsize, bits, "float", sign_bit=1 << (8 * itemsize - 1),
                     nonfinite_from=nonfinite_from, inf_bits=inf_bits)


DTYPES: dict[str, DtypeInfo] = {
    "BF16": _float("BF16", 2, np.uint16, 0x7F80, 0x7F80),
    "F16": _float("F16", 2, np.uint16, 0x7C00, 0x7C00),
    "F32": _float("F32", 4, np.uint32, 0x7F800000, 0x7F800000),
    "F64": _float("F64", 8, np.uint64, 0x7FF0000000000000, 0x7FF0000000000000),
    # float8_e4m3fn: no Inf; only S.1111.111 is NaN.
    "F8_E4M3": _float("F8_E4M3", 1, np.uint8, 0x7F, None),
    # float8_e5m2: the top byte of an F16.
    "F8_E5M2": _float("F8_E5M2", 1, np.uint8, 0x7C, 0x7C),
    "BOOL": DtypeInfo("BOOL", 1, np.uint8, "bool"),
    "U8": DtypeInfo("U8", 1, np.uint8, "int"),
    "I8": DtypeInfo("I8", 1, np.uint8, "int", signed=np.int8),
    "U16": DtypeInfo("U16", 2, np.uint16, "int"),
    "I16": DtypeInfo("I16", 2, np.uint16, "int", signed=np.int16),
    "U32": DtypeInfo("U32", 4, np.uint32, "int"),
    "I32": DtypeInfo("I32", 4, np.uint32, "int", signed=np.int32),
    "U64": DtypeInfo("U64", 8, np.uint64, "int"),
    "I64": DtypeInfo("I64", 8, np.uint64, "int", signed=np.int64),
}

# torch dtype name (str(torch.bfloat16) without "torch.") -> safetensors code.
TORCH_CODES = {
    "bfloat16": "BF16", "float16": "F16", "half": "F16", "float32": "F32", "float": "F32",
    "float64": "F64", "double": "F64", "float8_e4m3fn": "F8_E4M3", "float8_e5m2": "F8_E5M2",
    "bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "uint16": "U16", "int32": "I32",
    "uint32": "U32", "int64": "I64", "uint64": "U64",
}


class Scratch:
    """Reusable work buffers of one scan, so no chunk allocates (peak memory stays flat)."""

    def __init__(self, chunk_bytes: int):
        self.chunk_bytes = max(int(chunk_bytes), 64)  # room for at least one element of any type
        self.raw = np.empty(self.chunk_bytes, dtype=np.uint8)
        self._arrays: dict[tuple[str, type], np.ndarray] = {}

    def array(self, role: str, dtype, n: int) -> np.ndarray:
        """A buffer of at least `n` elements of `dtype` for `role`, reused across calls."""
        key = (role, np.dtype(dtype).str)
        buf = self._arrays.get(key)
        if buf is None or buf.size < n:
            buf = np.empty(max(n, self.chunk_bytes // np.dtype(dtype).itemsize), dtype=dtype)
            self._arrays[key] = buf
        return buf[:n]


def _widen_bf16(bits: np.ndarray, scratch: Scratch) -> np.ndarray:
    out = scratch.array("wide", np.uint32, bits.size)
    np.left_shift(bits, 16, out=out, dtype=np.uint32)  # BF16 is the top half of an F32
    return out.view(np.float32)


def _widen_bf16_unordered(bits: np.ndarray, scratch: Scratch) -> np.ndarray:
    """The values of `bits` as float32, odd elements first, then even ones (fine for sums).

    Read as uint32, each pair of BF16 words already holds the odd element in its top half;
    one AND and one shift widen both without numpy's slower uint16 -> uint32 cast.
    """
    if bits.size % 2:
        return _widen_bf16(bits, scratch)
    pairs = bits.view(np.uint32)
    half = pairs.size
    out = scratch.array("wide", np.uint32, 2 * half)
    np.bitwise_and(pairs, np.uint32(0xFFFF0000), out=out[:half])
    np.left_shift(pairs, np.uint32(16), out=out[half:])
    return out.view(np.float32)


_F16_CLEAR = np.int32(-0x70000001)  # 0x8FFFFFFF: keep the sign, drop the sign-extension bits 28-30
_F16_SCALE = np.float32(2.0 ** 112)  # rebias the exponent from 15 to 127 (subnormals included)


def _widen_f16(bits: np.ndarray, scratch: Scratch) -> np.ndarray:
    # numpy's float16 -> float32 cast is ~5x slower than these three integer/float passes.
    out = scratch.array("wide", np.int32, bits.size)
    np.left_shift(bits.view(np.int16), 13, out=out, dtype=np.int32)  # sign-extends into bits 28-31
    np.bitwise_and(out, _F16_CLEAR, out=out)
    values = out.view(np.float32)
    np.multiply(values, _F16_SCALE, out=values)
    return values


def _lut(code: str) -> np.ndarray:
    codes = np.arange(256, dtype=np.uint16)
    if code == "F8_E5M2":
        return (codes << 8).view(np.float16).astype(np.float32)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exp, man = (codes >> 3) & 0xF, codes & 0x7
    value = np.where(exp == 0, man / 8.0 * 2.0 ** -6, (1 + man / 8.0) * 2.0 ** (exp.astype(np.float64) - 7))
    value = np.where((codes & 0x7F) == 0x7F, np.nan, value)
    return (sign * value).astype(np.float32)


_LUTS = {"F8_E4M3": _lut("F8_E4M3"), "F8_E5M2": _lut("F8_E5M2")}


def _widen_f8(code: str) -> Callable:
    lut = _LUTS[code]

    def widen(bits: np.ndarray, scratch: Scratch) -> np.ndarray:
        return np.take(lut, bits, out=scratch.array("wide", np.float32, bits.size))
    return widen


WIDEN: dict[str, Callable[[np.ndarray, Scratch], np.ndarray]] = {
    "BF16": _widen_bf16,
    "F16": _widen_f16,
    "F32": lambda bits, scratch: bits.view(np.float32),
    "F64": lambda bits, scratch: bits.view(np.float64),
    "F8_E4M3": _widen_f8("F8_E4M3"),
    "F8_E5M2": _widen_f8("F8_E5M2"),
}


# For sums only, where element order does not matter.
WIDEN_FOR_SUMS = {**WIDEN, "BF16": _widen_bf16_unordered}


def magnitude_value(info: DtypeInfo, mag_bits: int) -> float:
    """The float value of magnitude bits `mag_bits` of a float type (e.g. 0x3F80 of BF16 -> 1.0)."""
    bits = np.array([mag_bits], dtype=info.bits)
    scratch = Scratch(16)
    return float(WIDEN[info.code](bits, scratch)[0])
