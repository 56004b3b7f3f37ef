"""Signs in a console's text that a training run was started there, whether or not it logged a metric.

A run that crashed before its first logged step (out of memory on the first batch, an FSDP assertion), was stopped
by hand, or whose script logs only that trainings started and finished, leaves a console with no loss line at all:
the Trainer's `***** Running training *****` header, PEFT's `trainable params: N || all params: M` banner, a
script's own `Starting training` / `training completed` lines, a traceback, a progress bar, a logger's timestamped
lines. One of them alone is what any script or notes file may print; two kinds of them, one saying training and one
more than words, make the file a training console, read for what it can say (it logged nothing that tells whether the
run learned, and how it ended) rather than passed over.
"""
from __future__ import annotations

import re

# name -> pattern; these say training (the last two in words alone), the others only go with one of them
_TRAINING_SIGNS = {
    # verl's RL trainer pprints its whole config as it starts (`{'actor_rollout_ref': {'actor': {...`), minutes of
    # model loading and compilation before its first `step:1 - ...` line
    "rl_trainer_config": re.compile(rb"\{'actor_rollout_ref': \{"),
    "trainer_header": re.compile(rb"\*{5} Running training \*{5}"),
    "adapter_banner": re.compile(rb"trainable params: [1-9][\d,]* \|\| all params: [\d,]+"),  # (0: inference)
    "training_started": re.compile(rb"(?i)\b(?:start(?:ing|ed)?|begin(?:ning)?)\s+(?:the\s+)?(?:\w+\s+)?"
                                   rb"(?:training|fine-?tuning)\b|\b(?:training|fine-?tuning)\s+(?:has\s+|is\s+)?"
                                   rb"(?:started|starting|begins)\b"),
    "training_finished": re.compile(
        rb"(?i)\b(?:training|fine-?tuning)\s+(?:is\s+|has\s+)?(?:completed|finished|done)\b"),
}
_OTHER_SIGNS = {
    "traceback": re.compile(rb"Traceback \(most recent call last\):"),
    "out_of_memory": re.compile(rb"OutOfMemoryError|CUDA out of memory"),
    "progress_bar": re.compile(rb"\d{1,3}%\|[^|\n]{0,80}\| *\d+/\d+ \["),
    "loading_shards": re.compile(rb"Loading checkpoint shards:"),
    # a logger's timestamped lines (`2024-09-17 06:16:22,919 - INFO - ...`): a program's log, not a note
    "logger_lines": re.compile(rb"(?m)^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}[^\n]{0,40}\b(?:INFO|WARNING|ERROR)\b"),
}
_FEWEST = 2


def says_training_started(line: str) -> bool:
    """Whether a line says in words that training started (`Starting training session`, `Start fine-tuning`)."""
    return bool(_TRAINING_SIGNS["training_started"].search(line.encode("utf-8", errors="replace")))


def run_signs(chunk: bytes) -> set[str]:
    """The kinds of sign of a training run in `chunk` (names of `_TRAINING_SIGNS` and `_OTHER_SIGNS`)."""
    return {name for name, sign in {**_TRAINING_SIGNS, **_OTHER_SIGNS}.items() if sign.search(chunk)}


_IN_WORDS = {"training_started", "training_finished"}


def is_training_console(signs: set[str]) -> bool:
    """Two kinds of sign or more, one of them saying training, and one of them more than words (a note that says
    training started and is done is no console): a console a training run printed."""
    return len(signs) >= _FEWEST and bool(signs & set(_TRAINING_SIGNS)) and bool(signs - _IN_WORDS)


# The exception a traceback ends with: `AssertionError: ...`, `torch.OutOfMemoryError: CUDA out of memory ...`,
# `KeyboardInterrupt` (a line of its own after the indented frames)
_EXCEPTION_LINE = re.compile(r"(?m)^((?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Failure)"
                             r"\b(?::[^\n]*)?)$")
_TRACEBACK = "Traceback (most recent call last):"


def final_exception(text: str) -> str | None:
    """The exception line that the console's last traceback ends with (200 characters at most), or None where the
    console holds no traceback."""
    return _exception_ending(text, text.rfind(_TRACEBACK))


def first_exception_after(text: str, start: int) -> str | None:
    """The exception line that the first traceback at or after `start` ends with (200 characters at most), or None:
    what went wrong first, where later tracebacks may be the teardown it set off."""
    return _exception_ending(text, text.find(_TRACEBACK, max(start, 0)))


def _exception_ending(text: str, at: int) -> str | None:
    """The exception line ending the traceback whose header starts at `at` (-1: no traceback), or None."""
    if at < 0:
        return None
    m = _EXCEPTION_LINE.search(text, at + len(_TRACEBACK))
    return m.group(1).strip()[:200] if m else None
