"""The gradient accumulation a console states: the HF Trainer's start-up banner (`  Gradient Accumulation steps = 4`,
trainer.py's `_inner_training_loop`), or a script's own logger saying it the same way (Jinyeop3110_Post_Training_
Protein_LLM's `[...][src.training.sft_trainer][INFO] -   Gradient accumulation steps: 4`). Read where no config file
gives it: the number of micro-batches a logged loss may have been summed over (causes.logged_loss)."""
from __future__ import annotations

import re

from .console_text import line_at, line_end

KEY = "console_accumulation"
_STATED = re.compile(r"\bGradient [Aa]ccumulation steps *[=:] *(\d{1,4})[ \t]*\r?$", re.MULTILINE)


def accumulation_said(text: str) -> dict:
    """`console_accumulation` (an int, 1 or more) with its `_line`: the last statement (a console appended to by
    several launches: the last launch's); {} where none."""
    last = None
    for last in _STATED.finditer(text) if "ccumulation steps" in text else ():
        pass
    if last is None or int(last.group(1)) < 1:
        return {}
    return {KEY: int(last.group(1)), f"{KEY}_line": line_end(line_at(text, last.start()))}
