"""Reader of LLaMA-Factory's `trainer_log.jsonl` (FORMATS.md section 7).

`read(path)` returns one LogRecords. The classic writer (LogCallback.on_log) puts the step in
`current_steps` and the learning rate in `lr` (`learning_rate` before Nov 2024), writes no
grad_norm, and repeats `current_steps` on eval and summary lines without `loss`. The v1 trainer
writes `step`/`total_steps` with `grad_norm`. Bookkeeping keys (total_steps, percentage, times)
are not metrics; `accuracy` is a pairwise stage's rewards/accuracies and is named so. `meta`: max_steps
(total_steps), and `warnings` for skipped lines.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..timeline import LogRecords
from ._jsonlines import read_jsonl

FORMAT = "llamafactory"
STEP_KEYS = ("current_steps", "step", "global_step")
# Progress bookkeeping, not training metrics.
NOT_METRICS = frozenset(STEP_KEYS + ("total_steps", "percentage", "elapsed_time", "remaining_time"))
# LogCallback.on_log writes `accuracy=log_history[-1].get("rewards/accuracies")`: a DPO / KTO stage's pair accuracy
PAIRWISE_ACCURACY = "rewards/accuracies"


def read(path: Path) -> LogRecords:
    """The metrics of every line, at its `current_steps` (or v1 `step`).

    Raises UnreadableFile when no line is a JSON object or none carries a step.
    """
    records = read_jsonl(path, FORMAT, STEP_KEYS, NOT_METRICS, "not a LLaMA-Factory trainer_log.jsonl")
    frame = records.frame
    if "accuracy" in set(frame["metric"]):  # LogCallback writes a pairwise stage's rewards/accuracies as "accuracy"
        frame = frame.assign(metric=frame["metric"].replace({"accuracy": PAIRWISE_ACCURACY}))
        records = replace(records, frame=frame)
    return records
