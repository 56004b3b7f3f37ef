"""A list of a run's saved checkpoints each scored on a held-out split, a line each, as a homework's evaluation script
prints it after training (Roushelfy_LLM_HW3's ppl.log: opt-350m continued pre-training, its checkpoints' validation
perplexities):

    opt-350m valid 19.48899482506002
    detected_model valid 14.996239244658277
    results/checkpoint-10 valid 16.615849909147343
    results/checkpoint-20 valid 16.109620501110886

`<path>/checkpoint-N <split> <perplexity>`: the Trainer's checkpoint folder names its global step N, the split a
held-out one, the number a perplexity (the exponential of the mean cross-entropy: eval_loss = ln of it). A model
named before the first checkpoint line, no checkpoint number in its name, is the base the checkpoints were trained
from, scored the same way: the first such line is the run's start, step 0 (a second, `detected_model`, is some other
model scored for comparison, and left out).

Read only where `_FEWEST_CHECKPOINTS` checkpoint lines are printed (`checkpoint_eval_reader`): one such line could be
anyone's note. Each line becomes a `StepLine` of kind "checkpoint_eval" at its step.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .fields import FLOAT, StepLine, number, perplexity_loss

_SPLIT = r"(?:valid|validation|val|dev|eval)"
_CHECKPOINT = re.compile(r"^[ \t]*(?:\S*/)?checkpoint-(\d{1,12})/?[ \t]+" + _SPLIT + r"[ \t]+(" + FLOAT + r")[ \t]*$",
                         re.IGNORECASE)
# a model's name (no path to a checkpoint), the split, a perplexity
_BASE = re.compile(r"^[ \t]*(?!\S*checkpoint-\d)([\w./-]{1,200})[ \t]+" + _SPLIT + r"[ \t]+(" + FLOAT + r")[ \t]*$",
                   re.IGNORECASE)
_FEWEST_CHECKPOINTS = 3
MARKER = "checkpoint-"


def checkpoint_eval_reader(text: str) -> CheckpointEvals | None:
    """A reader of the checkpoints' evaluation lines (module docstring) where the text prints
    `_FEWEST_CHECKPOINTS` or more of them; else None."""
    if MARKER not in text:
        return None
    lines = (line for line in text.splitlines() if MARKER in line)
    found = sum(1 for line in lines if _CHECKPOINT.match(line))
    return CheckpointEvals() if found >= _FEWEST_CHECKPOINTS else None


@dataclass
class CheckpointEvals:
    """`owns(line)`: a checkpoint's evaluation line, or the first base model's before any; `feed(line)` its record."""

    base_taken: bool = False  # the base model's line (step 0) was read
    checkpoints: bool = False  # a checkpoint's line was read (a model named after it is no base)

    def owns(self, line: str) -> bool:
        if _CHECKPOINT.match(line):
            return True
        return not (self.base_taken or self.checkpoints) and _BASE.match(line) is not None

    def feed(self, line: str) -> StepLine | None:
        m = _CHECKPOINT.match(line)
        if m is not None:
            self.checkpoints = True
            return _evaluation(int(m.group(1)), m.group(2))
        self.base_taken = True
        return _evaluation(0, _BASE.match(line).group(2))

    def close(self) -> None:
        return None


def _evaluation(step: int, text: str) -> StepLine | None:
    ppl = number(text)
    if ppl is None or not ppl > 0:
        return None
    return StepLine("checkpoint_eval", step, None, (("eval_ppl", ppl), ("eval_loss", perplexity_loss(ppl))))
