"""What a metrics table's header says: a CSV metrics table's step and loss columns, TensorBoard's scalar export, a
`step,value` series, a long ("tidy") table's role columns. Here, not in the readers, so that finding the files needs no
reader; the names the columns give are `metric_names`' vocabulary.
"""
from __future__ import annotations

import re

from .metric_names import JSON_LINE_STEP_KEYS, is_taken_training_loss


# A CSV metrics table (Lightning's / LitGPT's metrics.csv, a script's own): its header names a step or epoch column
# and a loss column. Its step columns are the JSON lines' step keys as `table_column` spells them: a W&B panel
# export's `_step` too (JlPang863_QualityDPO)
TABLE_STEP_COLUMNS = tuple(dict.fromkeys(key.lower() for key in JSON_LINE_STEP_KEYS))
TABLE_LOSS_COLUMNS = frozenset({"loss", "train_loss", "train_loss_step", "train/loss", "training_loss", "val_loss",
                                "eval_loss", "valid_loss", "validation_loss", "val/loss", "eval/loss", "lm loss"})


def table_column(header: str) -> str:
    """A table's column name as the vocabulary spells it: lower case, spaces and hyphens as underscores (a hand-written
    CSV's `Train Loss`, `Validation Loss`: AlexCheema_RetroInference); Megatron's `lm loss` kept.

    >>> [table_column(h) for h in ("Train Loss", "Validation Loss", " lm loss", "global-step")]
    ['train_loss', 'validation_loss', 'lm loss', 'global_step']
    """
    low = header.strip().lower()
    return low if low in TABLE_LOSS_COLUMNS else re.sub(r"[\s-]+", "_", low)


def is_metrics_table_header(header: list[str]) -> bool:
    """Whether a CSV header is a training metrics table: a step (or epoch) column and a loss column.

    >>> is_metrics_table_header(["epoch", "step", "train_loss", "val_loss"]), is_metrics_table_header(["id", "text"])
    (True, False)
    """
    names = {table_column(h) for h in header}
    losses = names & TABLE_LOSS_COLUMNS or {n for n in names if is_taken_training_loss(n)}
    return bool(names & (set(TABLE_STEP_COLUMNS) | {"epoch"})) and bool(losses)


# TensorBoard's scalar export (its dashboard's CSV download): one tag a file, named only by the file's name
# (ofrik_Seq2Seq: train_loss.csv, validation_bleu.csv; ingest.scalar_export)
SCALAR_EXPORT_HEADER = ("wall time", "step", "value")


def is_scalar_export_header(header: list[str]) -> bool:
    """Whether a CSV header is TensorBoard's scalar export's, `Wall time,Step,Value`."""
    return tuple(h.strip().lower() for h in header) == SCALAR_EXPORT_HEADER


# A script's own series of one metric a file, `step,value`, the metric named only by the file's name (AS116:
# MABELGAO_Adaptive-SimPO writes train_loss.csv, eval_loss.csv, eval_acc.csv ... from trainer.state.log_history). The
# header is anyone's: a folder holds such a series only where one file's name names a loss (`series_names_a_loss`).
STEP_VALUE_HEADER = ("step", "value")


def is_step_value_header(header: list[str]) -> bool:
    """Whether a CSV header is exactly `step,value`."""
    return tuple(h.strip().lower() for h in header) == STEP_VALUE_HEADER


# A long ("tidy") metric table: one row per metric per step, the metric named in a column of its own - MLflow's metric
# history (its REST get-history and MlflowClient.get_metric_history: key, value, timestamp, step), TensorBoard's
# experiment.get_scalars() frame (run, tag, step, value), a `Name,Value,Timestamp,Step` export (AS119:
# giganticode_rafael-experiments). Its header has one column of each needed role, at most one of each optional one,
# and nothing else: a column of no role (a label, a text) makes it some other table.
_LONG_TABLE_ROLES = {"name": frozenset({"name", "key", "metric", "metric_name", "tag"}), "value": frozenset({"value"}),
                     "step": frozenset(TABLE_STEP_COLUMNS) | {"epoch"},
                     "time": frozenset({"timestamp", "wall_time", "time"}), "run": frozenset({"run", "run_id"})}
_LONG_TABLE_NEEDED = ("name", "value", "step")


def long_table_columns(header: list[str]) -> dict[str, int] | None:
    """{role: column index} of a long metric table's header (roles name, value, step, and optionally time, run);
    None where the header is not one.

    >>> long_table_columns(["Name", "Value", "Timestamp", "Step"]), long_table_columns(["name", "value"])
    ({'name': 0, 'value': 1, 'time': 2, 'step': 3}, None)
    """
    roles: dict[str, int] = {}
    for index, cell in enumerate(header):
        role = next((r for r, names in _LONG_TABLE_ROLES.items() if table_column(cell) in names), None)
        if role is None or role in roles:
            return None
        roles[role] = index
    return roles if all(r in roles for r in _LONG_TABLE_NEEDED) else None
