"""The HF Trainer's closing summary in a console: the dict train() prints last (`{'train_runtime': ..., 'train_loss':
...}`, no step of its own), dated by the `TrainOutput(global_step=N, ..., metrics={...})` that train() returns and a
notebook cell shows after it, the same summary as its metrics (`console_scan` gives those metrics the step N).

Nothing else dates a summary with no train dict before it: a run whose logging_steps outlasted it, which the position
rule puts at step 0 - as if no optimizer step had run (yangoos57_Bert_For_Domain_Adaptation: two steps, logging_steps
5, train_loss 3.283 the mean of the two).
"""
from __future__ import annotations

from .console_scan import EXPLICIT_STEP_KEYS


def dated_by_train_output(events: list[tuple], steps: dict[int, int]) -> dict[int, int]:
    """`steps` (each dict event's, by index), each closing summary with no step of its own put at the step of the
    summary printed with one after it (a TrainOutput's) holding the same train_runtime, before any other training's
    train dict."""
    for i, event in enumerate(events):
        if not _undated_summary(event):
            continue
        for later in events[i + 1:]:
            if later[0] == "dict" and "loss" in later[2]:
                break
            if later[0] == "dict" and later[1] is not None and later[2].get("train_runtime") == event[2]["train_runtime"]:
                steps[i] = later[1]
                break
    return steps


def _undated_summary(event: tuple) -> bool:
    pairs = event[2] if event[0] == "dict" else {}
    return "train_runtime" in pairs and "loss" not in pairs and event[1] is None and not any(
        key in pairs for key in EXPLICIT_STEP_KEYS)
