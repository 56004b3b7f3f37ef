"""Reader of a DVCLive folder (`dvclive/`, or the `Live(dir=...)` a script named), one TSV a metric.

The layout (src/dvclive/plots/metric.py Metric.dump, live.py in github.com/iterative/dvclive):

    <dir>/plots/metrics/<name>.tsv   one row a logged value: `step<TAB><last part of name>` header (older versions:
                                     `timestamp<TAB>step<TAB><name>`, the time in milliseconds); NaN / Inf as Python
                                     writes them (`nan`, `inf`); a name with `/` is a sub-folder
    <dir>/metrics.json               the last value of each metric (not read: the TSVs hold every one)
    <dir>/params.yaml                the logged parameters (read as a configuration: ingest.config_files)

The header names only the last part of a metric's name (`eval/loss.tsv` and `train/epoch/loss.tsv` both say
`step<TAB>loss`), so each file is named from its path below `plots/metrics`. The integrations make a folder of the
split (utils.py standardize_metric_name): transformers' DVCLiveCallback `eval_loss` -> `eval/loss`, `train_loss` (the
run's closing mean) -> `train/loss`; Lightning's DVCLiveLogger `train_loss_step` -> `train/step/loss`,
`train_loss_epoch` -> `train/epoch/loss`, `val_loss` -> `val/loss`. Each path is turned back into the key that was
logged and named as every tracker's keys are (`tracker_metric_names`): `loss` or `train/step/loss` is the loss,
`eval/loss` and `val/loss` the eval loss, a sole `train/loss` (Lightning's, Keras') the loss, `lr-AdamW` the rate;
`*/epoch/*` files (Lightning's epoch means) are left out.

`read(folder)` takes the DVCLive folder (what `run.discover` lists) and returns one LogRecords (format "dvclive"):
every value at DVCLive's own `step` (transformers' callback takes a step for each `on_log`, evaluations included, so
it runs ahead of the Trainer's global step). A cut last row is dropped with a warning; a file without a `step`
column is left out with a warning.
"""
from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pandas as pd

from ..errors import UnreadableFile, os_reason
from ..metric_names import tracker_metric_names
from ..timeline import LogRecords, empty_frame
from ._filetime import file_mtime
from .running_means import frame_per_step

FORMAT = "dvclive"
METRICS_FOLDER = ("plots", "metrics")
# standardize_metric_name's split folders and Lightning's frequency folders
_SPLITS = ("train", "eval", "val", "test")
_FREQUENCIES = ("step", "epoch")


def read(folder: Path) -> LogRecords:
    """Every metric file under `<folder>/plots/metrics` at its DVCLive step (see the module docstring).

    Raises UnreadableFile when the folder holds no metric file.
    """
    folder = Path(folder)
    metrics_dir = folder.joinpath(*METRICS_FOLDER)
    files = sorted(metrics_dir.rglob("*.tsv"))
    if not files:
        raise UnreadableFile(folder, "no plots/metrics/*.tsv file: not a DVCLive folder with metrics")
    named = {path: path.relative_to(metrics_dir).as_posix() for path in files}
    keyed = [(path, _logged_key(named[path][:-len(".tsv")])) for path in files]
    keyed = [(path, key) for path, key in keyed if key is not None]
    warnings: list[str] = []
    parts = [_metric_rows(path, named[path], name, warnings)
             for (path, _), name in zip(keyed, tracker_metric_names([key for _, key in keyed]))]
    parts = [part for part in parts if not part.empty]
    frame = pd.concat(parts, ignore_index=True).sort_values("step", kind="stable").reset_index(drop=True) \
        if parts else empty_frame()
    frame, notes = frame_per_step(frame, folder.name)
    return LogRecords(source=str(folder), format=FORMAT, frame=frame, meta={"metric_files": len(files)},
                      mtime=max(file_mtime(path) for path in files), warnings=tuple(warnings), notes=notes)


def _logged_key(name: str) -> str | None:
    """The key an integration logged, from the file's name below plots/metrics (standardize_metric_name undone):
    `eval/loss` -> `eval_loss`, `train/step/loss` -> `train_loss_step`; None for an epoch mean (`train/epoch/loss`).

    >>> [_logged_key(n) for n in ("loss", "eval/loss", "train/step/loss", "train/epoch/loss", "lr-AdamW")]
    ['loss', 'eval_loss', 'train_loss_step', None, 'lr-AdamW']
    """
    parts = name.split("/")
    if len(parts) == 3 and parts[0] in _SPLITS and parts[1] in _FREQUENCIES:
        return None if parts[1] == "epoch" else f"{parts[0]}_{parts[2]}_{parts[1]}"
    if len(parts) == 2 and parts[0] in _SPLITS:
        return f"{parts[0]}_{parts[1]}"
    return name


def _metric_rows(path: Path, label: str, name: str, warnings: list[str]) -> pd.DataFrame:
    """One metric file's rows (step, metric, value, wall_time); empty, with a warning, where it cannot be read."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        reason = os_reason(err) if isinstance(err, OSError) else "not UTF-8 text"
        warnings.append(f"{label}: {reason}; left out")
        return empty_frame()
    rows = list(csv.reader(io.StringIO(text), delimiter="\t"))
    header = [cell.strip() for cell in rows[0]] if rows else []
    if "step" not in header or not set(header) - {"step", "timestamp"}:
        warnings.append(f"{label}: no `step` and value columns in its header; left out")
        return empty_frame()
    if not text.endswith("\n") and len(rows) > 1 and len(rows[-1]) < len(header):
        warnings.append(f"{label}: the last row is cut (the run may still be writing); dropped")
        rows = rows[:-1]
    return _rows_frame(rows[1:], header, name, label, warnings)


def _rows_frame(rows: list[list[str]], header: list[str], name: str, label: str, warnings: list[str]) -> pd.DataFrame:
    step_at = header.index("step")
    time_at = header.index("timestamp") if "timestamp" in header else None
    value_at = next(i for i, column in enumerate(header) if column not in ("step", "timestamp"))
    steps, values, walls, bad = [], [], [], 0
    for row in rows:
        try:
            step, value = int(row[step_at]), float(row[value_at])  # float() reads `nan` and `inf` as DVCLive wrote them
            wall = float(row[time_at]) / 1000 if time_at is not None else math.nan
        except (ValueError, IndexError):
            bad += len(row) > 0
            continue
        steps.append(step)
        values.append(value)
        walls.append(wall)
    if bad:
        warnings.append(f"{label}: {bad} rows without a readable step and value; skipped")
    return pd.DataFrame({"step": pd.Series(steps, dtype="int64"), "metric": name,
                         "value": pd.Series(values, dtype="float64"),
                         "wall_time": pd.Series(walls, dtype="float64")})
