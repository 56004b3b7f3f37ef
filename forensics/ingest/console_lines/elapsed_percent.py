"""The progress print of the PyTorch NLP tutorials and their many copies: the time elapsed, the iteration with the
share of the run done, and the mean loss since the last print, with no name for any of them, read by `read_line`:
* seq2seq_translation_tutorial's trainIters, `print('%s (%d %d%%) %.4f' % (timeSince(start, iter / n_iters), iter,
  iter / n_iters * 100, print_loss_avg))`, its timeSince giving the time left after the time spent:
  `0m 43s (- 6m 25s) (5000 10%) 2.9432`; a copy whose timeSince gives the time spent alone prints
  `1m 1s (500 3%) 4.2725` (164887081_python-, the tutorial retyped with Chinese comments: 26 such lines);
* char_rnn_generation_tutorial's `print('%s (%d %d%%) %.4f' % (timeSince(start), iter, iter / n_iters * 100, loss))`:
  `0m 21s (5000 5%) 2.6733`.
Kind "generic" (a hand-written loop's print) at the printed iteration (the tutorial's later version counts epochs
there: its count all the same), the number as the loss. Narrow: the whole line, the `Nm Ns` time first and the
`(N P%)` group both required, since a bare number after a percent is anything elsewhere. The loss ends the line: on
a file's last line that may be cut mid-write (no newline after it, `console_scan`) it is not read.
"""
from __future__ import annotations

import re

from .fields import FLOAT, StepLine

MARKER = "%) "  # in a text that holds none, no line is this print
_TIME = r"-?\d{1,6}m -?\d{1,2}s"
_LINE = re.compile(r"^\s*" + _TIME + r" (?:\(- " + _TIME + r"\) )?\((\d{1,12}) \d{1,3}%\) (" + FLOAT + r")\s*$",
                   re.IGNORECASE)


def read_line(line: str, last_line: bool = False) -> StepLine | None:
    """The record of `<elapsed> [(- <left>)] (<iteration> <percent>%) <loss>`, else None; None on a last line that may
    be cut (`last_line`): the loss ends it."""
    if MARKER not in line or last_line:
        return None
    m = _LINE.match(line)
    return StepLine("generic", int(m.group(1)), None, (("loss", float(m.group(2))),)) if m else None
