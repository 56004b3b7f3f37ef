"""The line where a console says its own early-stopping rule ended the training, where it has one.

Keras' EarlyStopping prints `Epoch 00028: early stopping`, Lightning's `Monitored metric val_loss did not improve in
the last 3 records`, scripts their own `Early stopping triggered.`, `Early Stopping in epoch 43`, `Training ended
with `patience` exceeded max(1).` (yuki-nyaa_myGPT). A configuration's echo (`early_stopping = True`, `patience = 1`,
a beam search's `early_stopping=True`) says only that a rule was set, not that it fired, and is not matched.
"""
from __future__ import annotations

import re

from .console_text import line_at

KEY = "early_stop_line"  # LogRecords.meta key of a console whose early-stopping rule ended its training

_FIRED = re.compile(
    r"(?im)\bearly[ _-]?stopping\s+(?:was\s+|is\s+)?(?:triggered|activated|in epoch|at (?:epoch|step|iter))\b"
    r"|^[^\n]{0,40}\bEpoch \d+: early stopping\b"
    r"|\bpatience`?\s+(?:was\s+)?(?:exceeded|exhausted|ran out)\b|\bexceeded\s+(?:the\s+)?`?patience\b"
    r"|\bdid not improve in the last \d+ records\b")
_WORDS = ("arly", "ARLY", "atience", "ATIENCE", "did not improve")  # gate the regex: most consoles hold none


def early_stop_line(text: str) -> str | None:
    """The console's last line saying its early-stopping rule ended the training (module docstring), or None."""
    if not any(word in text for word in _WORDS):
        return None
    last = None
    for last in _FIRED.finditer(text):
        pass
    return line_at(text, last.start()).strip()[:200] if last else None
