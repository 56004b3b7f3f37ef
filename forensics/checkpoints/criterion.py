"""What counts as a bad checkpoint beyond NaN/Inf (`bisect --criterion`, `Thresholds.absmax_bound`).

    >>> parse_criterion("absmax>1e4")
    Criterion(absmax_above=10000.0)
    >>> parse_criterion("absmax > 65504").describe()
    'absmax > 65504'
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..errors import BadOption

_ABSMAX = re.compile(r"^\s*(?:absmax\s*>\s*)?(?P<bound>[-+0-9.eE]+|inf)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Criterion:
    """A checkpoint is bad when any float tensor's largest finite |value| exceeds `absmax_above`.

    A tensor that fails it is listed in `CheckpointInfo.over_bound_tensors` and the
    checkpoint's status is "bad" (non-finite values still make it "nonfinite").
    """

    absmax_above: float | None = None

    def fails(self, absmax: float) -> bool:
        return self.absmax_above is not None and absmax > self.absmax_above

    def describe(self) -> str:
        return "non-finite only" if self.absmax_above is None else f"absmax > {self.absmax_above:g}"


def parse_criterion(text) -> Criterion:
    """`"absmax>1e4"` (or a bare number, or a Criterion, or None) as a Criterion; ValueError if unknown."""
    if text is None or isinstance(text, Criterion):
        return text or Criterion()
    if isinstance(text, (int, float)):
        return Criterion(absmax_above=float(text))
    m = _ABSMAX.match(str(text))
    if m is None:
        raise BadOption(f"unknown criterion {text!r}: the one metric a criterion can use is absmax, "
                        "written absmax>BOUND (e.g. absmax>1e4)")
    try:
        bound = float(m.group("bound"))
    except ValueError:
        bound = math.nan
    if math.isnan(bound):
        raise BadOption(f"criterion bound is not a number: {text!r} (write it as absmax>BOUND, e.g. absmax>1e4)")
    return Criterion(absmax_above=bound)
