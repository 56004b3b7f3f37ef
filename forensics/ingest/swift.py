"""Reader of ms-swift's `logging.jsonl` (FORMATS.md section 7).

`read(path)` returns one LogRecords. The step is only in the string
`"global_step/max_steps": "10/100"` (Megatron-swift: `"iteration": "10/100"`; older releases
wrote a plain `"global_step": 10`). The last line is a summary object holding a copy of
`log_history` (and best_metric, checkpoints): it is not read as metrics, since every entry of it
is already a line of the file; its `global_step`, `best_metric`, `best_model_checkpoint` and
`last_model_checkpoint` go into `meta`, and its parameter counts (`model_info`) into a banner. `percentage` ("12.50%"),
times and memory are not metrics; other numbers (loss, grad_norm, token_acc, eval_*, train_runtime, ...) are.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..timeline import LogRecords
from ._jsonlines import read_jsonl
from .banners import swift_banner
from .trainer_state import history_frame

FORMAT = "swift"
STEP_KEYS = ("global_step/max_steps", "iteration", "global_step", "step")
NOT_METRICS = frozenset(STEP_KEYS + ("percentage", "elapsed_time", "remaining_time", "memory(GiB)",
                                     "train_speed(iter/s)", "train_speed(s/it)"))
SUMMARY_META = ("global_step", "best_metric", "best_model_checkpoint", "last_model_checkpoint")
MODEL_INFO = ("model_parameter_info", "model_info")  # the summary's parameter counts, by release


def read(path: Path) -> LogRecords:
    """The metrics of every log line at its step; the closing summary object only feeds `meta`.

    Raises UnreadableFile when no line carries a step.
    """
    summarized: list = []
    records = read_jsonl(path, FORMAT, STEP_KEYS, NOT_METRICS, "not an ms-swift logging.jsonl",
                         lambda obj, meta: _summary_line(obj, meta, summarized))
    if records.frame.empty and summarized:  # the step lines gone, the summary's copy of them kept
        frame, _, warnings = history_frame(summarized, None)
        note = "no step's line in the file: its closing summary's log_history read instead"
        records = replace(records, frame=frame, notes=(note,), warnings=records.warnings + warnings)
    banner = swift_banner(str(records.meta.get("model_info", "")), str(path))
    return replace(records, banners=(banner,)) if banner else records


def _summary_line(obj: dict, meta: dict, history: list) -> bool:
    """The closing summary: its log_history duplicates the lines above, so only its facts are kept (and its
    entries in `history`, for a file that lost the lines)."""
    if "log_history" not in obj:
        return False
    if isinstance(obj["log_history"], list):
        history[:] = [e for e in obj["log_history"] if isinstance(e, dict)]
    meta.update({k: obj[k] for k in SUMMARY_META if isinstance(obj.get(k), (int, float, str))})
    info = next((obj[k] for k in MODEL_INFO if isinstance(obj.get(k), str)), None)
    if info:
        meta["model_info"] = info
    return True
