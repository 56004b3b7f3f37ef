"""Reader of CSV metric tables: Lightning's CSVLogger `metrics.csv` (LitGPT's fine-tuning and pre-training write it
by default, `out/.../logs/csv/version_0/metrics.csv`), and a script's own table with a step or epoch column, comma-
or tab-separated (`step<TAB>loss` in a train.log).

`read(path)` returns one LogRecords (format "csv"): every numeric cell at its row's step. The step is the first of
`step`, `global_step`, `iteration`, `iter` the header names; a table with only an `epoch` column is one row an
epoch, numbered 1, 2, ... (the epochs done when it was written), or, where its epochs are fractions (an exported
log history), one row a step in order. Lightning writes train and validation rows apart, with the other row's cells
empty: an empty cell is no value, a `nan` cell a NaN. Except in a dense table (every cell filled in every row before):
there an empty loss cell is pandas' NaN (`DataFrame.to_csv` writes NaN as nothing: simpletransformers'
training_progress_scores.csv, `250,,,`). Names as the rest of the tool has them (`val_loss` ->
eval_loss, `lr-AdamW` -> learning_rate); a table's `train_loss` (or Lightning's `train_loss_step`) is the loss at that
row where the table has no `loss` column of its own (beside one, `train_loss` is the HF Trainer's closing average),
`*_epoch` columns (Lightning's epoch means) and an unnamed index column are left out; a table with no loss column of
those names takes one named for how it was taken (`avg_loss`, `running_loss`) as the loss.

Not a training log, raising UnreadableFile: a table with no step or loss column, and one with many rows at each step
(a per-example loss table, `epoch,guid,loss`) - unless its epoch column is all that puts them there and a column
named for the loop's updates (`iter_num`, `batch`) counts up once a row: a one-epoch loop's per-batch log, read at
that counter. A cut last row (a run still writing) is dropped with a warning, and
rows whose step cannot be read are counted in a warning; bytes that are not UTF-8 are replaced and said (the cells they
fall in are not read). TensorBoard's scalar export (`Wall time,Step,Value`, one tag
a file) is read by `scalar_export`; a long table (one row per metric per step, `key,value,timestamp,step`) by
`long_table`.
"""
from __future__ import annotations

import io
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..decoding import decode_text
from ..errors import UnreadableFile
from ..metric_names import STEP_LOSS_NAMES, is_lr_monitor_rate, is_taken_training_loss
from ..table_headers import (TABLE_LOSS_COLUMNS, TABLE_STEP_COLUMNS, is_metrics_table_header, is_scalar_export_header,
                             is_step_value_header, long_table_columns, table_column)
from ..timeline import LogRecords, canonical_metric, empty_frame
from . import long_table, scalar_export
from ._cut_tail import without_cut_last_line
from ._filetime import file_mtime

FORMAT = "csv"
_NAN_WORDS = frozenset({"nan", "-nan", "+nan", "inf", "-inf", "+inf", "infinity", "-infinity"})
_DENSE_ROWS = 2  # rows with every cell filled before an empty loss cell, for the table to be a dense one
_ROWS_A_STEP = 4  # Lightning writes up to three rows at one step (train, validation, epoch means); more is per-example


def read(path: Path) -> LogRecords:
    """The numeric cells of every row at the row's step (module docstring)."""
    path = Path(path)
    # a byte that is not UTF-8 (a damaged sector, a latin-1 name) costs the cell it is in, as in every text reader
    text, not_utf8 = decode_text(path.read_bytes())
    first_line = text.split("\n", 1)[0]
    header = first_line.strip().split(",")
    if is_scalar_export_header(header) or is_step_value_header(header):  # one tag a file, named by the file
        return scalar_export.read(path)
    if long_table_columns(header) is not None:  # one row per metric per step, the metric named in a column
        text, cut = without_cut_last_line(text)
        return long_table.read(path, text, [note for note in (not_utf8, cut) if note])
    delimiter = "\t" if "\t" in first_line and "," not in first_line else ","
    if not is_metrics_table_header(first_line.strip().split(delimiter)):
        raise UnreadableFile(path, "no step (or epoch) column and loss column in its header; not a metrics table")
    text, warnings = _without_cut_row(text, first_line.count(delimiter))
    warnings = ([not_utf8] if not_utf8 else []) + warnings
    # an empty cell is no value and a `nan` cell a NaN: told apart by reading cells as text, which is slow on big
    # tables, so only where the file holds such a word at all
    words = any(w in text.lower() for w in ("nan", "inf"))
    table = _table(text, delimiter, words, path, warnings)
    table.columns = [str(c).strip() for c in table.columns]
    steps, step_column, epoch_numbers, dropped = _steps(table, path)
    if dropped:
        warnings.append(f"{dropped} rows without a readable step; skipped")
    frame = _long_frame(table, steps, step_column, epoch_numbers)
    meta = {"rows": int(steps.notna().sum()), **_parameter_count(table)}
    return LogRecords(source=str(path), format=FORMAT, frame=frame, meta=meta, mtime=file_mtime(path),
                      warnings=tuple(warnings), console_kinds=("keras",) if _keras_csv_logger(table) else ())


def _table(text: str, delimiter: str, words: bool, path: Path, warnings: list[str]) -> pd.DataFrame:
    """The table as pandas reads it; a row with more cells than the header (damage: a stray separator) is left out
    and counted in `warnings`, where pandas would refuse the whole table for it."""
    def read(**bad_rows) -> pd.DataFrame:
        if words:
            return pd.read_csv(io.StringIO(text), sep=delimiter, dtype=str, keep_default_na=False,
                               skip_blank_lines=True, **bad_rows)
        return pd.read_csv(io.StringIO(text), sep=delimiter, skip_blank_lines=True, **bad_rows)
    try:
        try:
            return read()
        except pd.errors.ParserError:
            table = read(on_bad_lines="skip")
    except (pd.errors.ParserError, ValueError) as err:
        raise UnreadableFile(path, f"not a readable CSV table ({str(err).splitlines()[0]})") from None
    separators = text.split("\n", 1)[0].count(delimiter)
    wide = sum(line.count(delimiter) > separators for line in text.splitlines()[1:])
    warnings.append(f"{wide} rows with more cells than the header (damaged); skipped" if wide else
                    "rows pandas could not parse (damaged); skipped")
    return table


def _keras_csv_logger(table: pd.DataFrame) -> bool:
    """Whether the header is Keras' CSVLogger's: `epoch`, then the logs' keys in sorted order, each held-out
    `val_<name>` beside its `<name>`, with a metric or the rate besides the loss (`epoch,accuracy,learning_rate,loss,
    val_accuracy,val_loss`: AnggaMarcelio_english-javanese-lstm-attention); a bare `epoch,loss,val_loss` is anyone's."""
    columns = list(table.columns)
    keys = columns[1:]
    held_out = [k for k in keys if k.startswith("val_")]
    return (columns[:1] == ["epoch"] and keys == sorted(keys) and "loss" in keys and bool(held_out)
            and all(k[4:] in keys for k in held_out) and bool(set(keys) - {"loss", "val_loss"}))


def _without_cut_row(text: str, separators: int) -> tuple[str, list[str]]:
    """The text without a cut last row (no newline after it, and fewer cells than the header or its last number maybe
    cut: `_cut_tail`), and a warning."""
    if text.endswith("\n") or "\n" not in text:
        return text, []
    head, _, last = text.rpartition("\n")
    if last.count(",") + last.count("\t") < separators:
        return head + "\n", ["the last row is cut (the run may still be writing); dropped"]
    text, cut = without_cut_last_line(text)
    return text, [cut] if cut else []


def _steps(table: pd.DataFrame, path: Path) -> tuple[pd.Series, str | None, bool, int]:
    """Each row's step (NaN where it cannot be read), the column it came from (None: the row's number), whether the
    steps are epoch numbers, and how many rows were dropped."""
    lowered = {table_column(c): c for c in table.columns}
    column = next((lowered[c] for c in TABLE_STEP_COLUMNS if c in lowered), None) or lowered["epoch"]
    epoch_numbers = table_column(column) == "epoch"
    raw = pd.to_numeric(table[column], errors="coerce")
    whole = _whole(table[column])
    if epoch_numbers and raw.notna().any() and whole.notna().sum() < raw.notna().sum():
        # an exported log history: fractional epochs, one row a logging step, in order; the epoch stays a metric
        steps = pd.Series(np.arange(1, len(table) + 1, dtype="float64"), index=table.index).where(raw.notna())
        return steps, None, False, int(raw.isna().sum())
    if epoch_numbers and whole.notna().any():
        whole = whole - whole.min() + 1  # numbered from 1, whichever epoch the script counts from
    counts = whole[_loss_rows(table)].value_counts()
    many = bool(len(counts)) and float(counts.mean()) > _ROWS_A_STEP
    counter = _update_counter(table) if many and epoch_numbers else None
    if counter is not None:  # a one-epoch loop's per-batch log: its epoch column is the constant 0
        steps = _whole(table[counter])
        return steps, counter, False, int(steps.isna().sum())
    if many:
        raise UnreadableFile(path, f"about {counts.mean():.0f} rows at each step: a per-example table, not a "
                                   "training log")
    return whole, column, epoch_numbers, int(whole.isna().sum())


# The words of a column name that say it counts the loop's updates (`iter_num`, `batch_idx`, `n_updates`), beside an
# epoch column: a per-example table's row names its example (`guid`, `idx`, `example_id`), not an update
_COUNTER_WORDS = frozenset({"iter", "iters", "iteration", "iterations", "batch", "batches", "update", "updates"})


def _update_counter(table: pd.DataFrame) -> str | None:
    """The column that counts the loop's updates where the epoch column puts many loss rows at one epoch: named for
    iterations or batches (`_COUNTER_WORDS`), a whole number in every loss row that never comes back and only grows
    (Jacobson-CompSysBio_JAILLM's `epoch,iter_num,train_loss,val_loss`: epoch 0 in all 4,705 rows, iter_num 1-4,705);
    None where no column is one."""
    rows = _loss_rows(table)
    for column in table.columns:
        if not _COUNTER_WORDS.intersection(re.split(r"[_\s]+", table_column(column))):
            continue
        counts = _whole(table[column])[rows]
        if counts.notna().all() and len(counts) > 1 and bool((np.diff(counts.to_numpy()) > 0).all()):
            return column
    return None


def _whole(cells: pd.Series) -> pd.Series:
    """The cells as whole numbers at or above 0 (NaN where a cell is none)."""
    raw = pd.to_numeric(cells, errors="coerce")
    return raw.where(np.isfinite(raw) & (raw == np.floor(raw)) & (raw >= 0))


# A column that holds the model's whole size (AndyZhao2023_assignment1-basics' logger: `model/total_parameters`, one
# row at step 0); a trainable count is no size (an adapter's)
_SIZE_COLUMNS = frozenset({"total_parameters", "total_params", "num_parameters", "num_params", "n_params"})


def _parameter_count(table: pd.DataFrame) -> dict:
    """{"console_n_params", "console_n_params_line"} where a column holds one whole-model count (`run_config` reads
    them as a console's count); {} otherwise."""
    for column in table.columns:
        if column.strip().lower().rpartition("/")[2] not in _SIZE_COLUMNS:
            continue
        counts = pd.to_numeric(table[column], errors="coerce").dropna().unique()
        if len(counts) == 1 and counts[0] >= 1 and counts[0] == int(counts[0]):
            return {"console_n_params": int(counts[0]), "console_n_params_line": f"column {column}: {int(counts[0]):,}"}
    return {}


def _loss_rows(table: pd.DataFrame) -> pd.Series:
    """The rows with a loss cell filled (every row where no loss cell is): a logger that writes one sparse row per
    metric group at each step (AndyZhao2023_assignment1-basics: model/*, learning_rate/*, train/*, timing, eval/*
    rows, 172 rows over 41 steps) has one loss row a step, where a per-example table has many."""
    columns = [c for c in table.columns if table_column(c) in TABLE_LOSS_COLUMNS]
    filled = ~_empty_cells(table[columns]).all(axis=1) if columns else pd.Series(True, index=table.index)
    return filled if filled.any() else pd.Series(True, index=table.index)


def _long_frame(table: pd.DataFrame, steps: pd.Series, step_column: str | None, epoch_numbers: bool) -> pd.DataFrame:
    names = {c: n for c, n in _names(list(table.columns)).items() if c != step_column}
    keep = steps.notna()
    parts = []
    for column, name in names.items():
        cells = table.loc[keep, column]
        values = pd.to_numeric(cells, errors="coerce")
        valid = values.notna()
        if not pd.api.types.is_numeric_dtype(cells):  # read as text: `nan` / `inf` cells are values, empty ones not
            valid |= cells.astype(str).str.strip().str.lower().isin(_NAN_WORDS)
        if name == "loss":
            valid |= _written_nan(table.loc[keep], column)
        if valid.any():
            parts.append(pd.DataFrame({"step": steps[keep][valid].astype("int64").to_numpy(), "metric": name,
                                       "value": values[valid].astype("float64").to_numpy(),
                                       "_row": np.flatnonzero(valid.to_numpy())}))
    if epoch_numbers:
        parts.append(pd.DataFrame({"step": steps[keep].astype("int64").to_numpy(), "metric": "epoch",
                                   "value": steps[keep].astype("float64").to_numpy(),
                                   "_row": np.arange(int(keep.sum()))}))
    if not parts:
        return empty_frame()
    frame = pd.concat(parts, ignore_index=True)
    frame["wall_time"] = math.nan
    # in the file's order of rows: a step going back is a new launch appended to the file, which the timeline takes as
    # a new attempt (AlexCheema_RetroInference: two 30-epoch runs; 25125334-bjtu_transformer-iwslt17: six launches)
    frame = frame.sort_values("_row" if _appended_launches(steps[keep]) else "step", kind="stable")
    return frame.drop(columns="_row").reset_index(drop=True)


def _appended_launches(steps: pd.Series) -> bool:
    """Whether the rows' steps go back in the file's order (a launch appended after another)."""
    return bool((np.diff(steps.to_numpy(dtype="float64")) < 0).any())


def _written_nan(table: pd.DataFrame, column: str) -> pd.Series:
    """The empty cells of a loss column that pandas wrote for a NaN: from its first empty cell on, where every row
    before it has every cell filled (a table that leaves cells blank on purpose, Lightning's train and validation
    rows, has blanks from its first rows)."""
    empty = _empty_cells(table)
    gaps = empty[column].to_numpy()
    if not gaps.any():
        return pd.Series(False, index=table.index)
    first = int(np.argmax(gaps))
    dense = first >= _DENSE_ROWS and not empty.iloc[:first].to_numpy().any()
    return pd.Series(dense & gaps & (np.arange(len(gaps)) >= first), index=table.index)


def _empty_cells(table: pd.DataFrame) -> pd.DataFrame:
    """Where a cell holds nothing (read as numbers: NaN with no `nan` word in the file; as text: blank)."""
    return pd.DataFrame({c: table[c].isna() if pd.api.types.is_numeric_dtype(table[c]) else
                         table[c].astype(str).str.strip().eq("") | table[c].isna() for c in table.columns})


def _names(columns: list[str]) -> dict[str, str]:
    """{column: the timeline's name} of the columns to read (left-out ones not among them)."""
    lowered = [table_column(c) for c in columns]
    own_loss = "loss" in lowered or "train/loss" in lowered
    named = {column: _name(column, low, own_loss) for column, low in zip(columns, lowered)}
    taken = next((c for c, low in zip(columns, lowered) if is_taken_training_loss(low)), None)
    if taken is not None and "loss" not in named.values():
        named[taken] = "loss"  # `epoch,avg_loss,accuracy` (Parrajo41_train-200-bigram-animals): the table's only loss
    return {column: name for column, name in named.items() if name}


def _name(column: str, low: str, own_loss: bool) -> str | None:
    """The timeline's name of one column; None for an index column and Lightning's per-epoch means."""
    if not low or low.startswith("unnamed:") or low.endswith("_epoch"):
        return None
    # Lightning's LearningRateMonitor: lr-AdamW (lr-AdamW/pg1, -momentum: not kept)
    if column.lower().startswith("lr-"):
        return "learning_rate" if is_lr_monitor_rate(column) else None
    if low == "train_loss" and not own_loss:
        return "loss"
    name = STEP_LOSS_NAMES.get(low) or canonical_metric(column)
    unknown = name == column.strip()  # a name the vocabulary left as written
    spaced = unknown and re.search(r"[\s-]", name)  # `Validation Loss`: eval_loss
    return canonical_metric(low) if spaced or unknown and _known_lower_cased(low) else name


def _known_lower_cased(low: str) -> bool:
    """Whether a column is a loss or rate the vocabulary knows in lower case: a script's own
    `Epoch,Loss,CurrentLR,BestLoss,StagnantEpochs` (ChristianPE1_transformer-test), `LR`; a running best (`BestLoss`)
    stays a column of its own."""
    return low in TABLE_LOSS_COLUMNS or canonical_metric(low) == "learning_rate"
