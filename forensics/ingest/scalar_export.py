"""Reader of TensorBoard's scalar export: the CSV its dashboard downloads for one tag of one run, `Wall time,Step,Value`
(wall time in seconds), the tag named only by the file's name.

The dashboard names the download `run-<run>-tag-<tag>.csv` (a `/` in either as `_`); a file renamed by hand keeps the
tag alone (ofrik_Seq2Seq: `train_loss.csv`, `validation_bleu.csv`). The tag is named as every tracker's are
(`tracker_metric_names`): `train_loss` or `loss` the loss, `validation_bleu` the held-out `eval_bleu`.

`read(path)` returns one LogRecords (format "scalar_export"): each row's value at its step, with its wall time. Rows
whose step or value cannot be read are left out with a warning. Where the downloads of one run beside it carry the
Hugging Face Trainer's TensorBoardCallback tags, `meta["hf_callback_tags"]` says so, as the event-file reader's does
(`_run_has_hf_callback_tags`).

A script's own `step,value` file of one metric, named the same way (AS116: MABELGAO_Adaptive-SimPO's train_loss.csv,
eval_acc.csv ... from trainer.state.log_history), is read here too, without wall times (NaN); discovery takes such
files only where one of them is named for a loss (the two columns alone are any table's).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "validation_bleu.csv"
>>> _ = path.write_text("Wall time,Step,Value\\n1528974919.9,0,0.0002\\n1528976806.9,50,0.0\\n")
>>> read(path).frame[["step", "metric", "value"]].values.tolist()
[[0, 'eval_bleu', 0.0002], [50, 'eval_bleu', 0.0]]
"""
from __future__ import annotations

import csv
import io
import math
import re
from functools import lru_cache
from pathlib import Path

import pandas as pd

from ..decoding import decode_text
from ..errors import UnreadableFile
from ..metric_names import tracker_metric_names
from ..table_headers import is_scalar_export_header, is_step_value_header
from ..timeline import LogRecords
from ._cut_tail import without_cut_last_line
from ._filetime import file_mtime
from .tensorboard import hf_trainer_callback_tags

FORMAT = "scalar_export"
_DOWNLOAD_NAME = re.compile(r"^run-(?P<run>.*)-tag-(?P<tag>.+)$")
_BROWSER_COPY = re.compile(r" \(\d+\)$")  # a second download of the same name: `run-.-tag-eval_loss (1).csv`


def read(path: Path) -> LogRecords:
    """Every row's value at its step, named from the file's name (module docstring). Raises UnreadableFile where the
    header is not the export's."""
    path = Path(path)
    text, not_utf8 = decode_text(path.read_bytes())  # a byte that is not UTF-8 costs its row, as in every text reader
    text, cut = without_cut_last_line(text)  # a download or a writer stopped mid-row: `1.6` of a `1.6811`
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or not (is_scalar_export_header(rows[0]) or is_step_value_header(rows[0])):
        raise UnreadableFile(path, "the header is not `Wall time,Step,Value` nor `step,value`; not a one-tag series")
    timed = len(rows[0]) == 3
    cells = [_numbers(row if timed else ["nan", *row]) for row in rows[1:] if row]
    kept = [c for c in cells if c is not None]
    frame = pd.DataFrame({"step": pd.Series([int(c[1]) for c in kept], dtype="int64"), "metric": tag_metric(path.stem),
                          "value": pd.Series([c[2] for c in kept], dtype="float64"),
                          "wall_time": pd.Series([c[0] for c in kept], dtype="float64")})
    left_out = len(cells) - len(kept)
    warnings = tuple(note for note in (not_utf8, cut) if note) + \
        ((f"{left_out} rows without a readable step and value; skipped",) if left_out else ())
    meta = {"rows": len(kept)}
    if _run_has_hf_callback_tags(path):
        meta["hf_callback_tags"] = True
    return LogRecords(source=str(path), format=FORMAT, frame=frame, meta=meta,
                      mtime=file_mtime(path), warnings=warnings)


def _numbers(row: list[str]) -> tuple[float, float, float] | None:
    """A row's wall time, step and value (float() reads `nan` and `inf` as written: data, kept); None where the
    step or value cannot be read (a cut last row)."""
    try:
        wall, step, value = (float(cell) for cell in row)
    except ValueError:
        return None
    return (wall, step, value) if math.isfinite(step) and step >= 0 and step == int(step) else None


def tag_metric(stem: str) -> str:
    """The timeline's name of the tag a file's name gives.

    >>> [tag_metric(s) for s in ("train_loss", "validation_bleu", "run-train-tag-loss", "run-.-tag-eval_loss (1)")]
    ['loss', 'eval_bleu', 'loss', 'eval_loss']
    """
    stem = _BROWSER_COPY.sub("", stem)  # (TurkHukuk_hukukbert: the browser numbered the second `eval_loss` download)
    download = _DOWNLOAD_NAME.match(stem)
    return tracker_metric_names([download.group("tag") if download else stem])[0]


def _run_has_hf_callback_tags(path: Path) -> bool:
    """Whether the downloads of this file's run in its folder, one tag each, together carry the Trainer's
    TensorBoardCallback tags (ingest.tensorboard.hf_trainer_callback_tags): the set is only seen across the files
    (TurkHukuk_hukukbert: run-.-tag-train_epoch.csv, -train_learning_rate, -train_loss, -eval_loss (1), ...)."""
    mine = _DOWNLOAD_NAME.match(path.stem)
    if mine is None:
        return False
    try:
        listed = path.parent.stat().st_mtime_ns
    except OSError:
        return False
    return mine.group("run") in _runs_with_callback_tags(path.parent, listed)


@lru_cache(maxsize=16)
def _runs_with_callback_tags(folder: Path, listed: int) -> frozenset[str]:
    """The runs whose downloads in `folder` together carry the callback's tags: the folder is listed once for all its
    downloads, not once a file (n downloads, n x n names matched). `listed`, the folder's mtime, is part of the key: a
    download added, removed or renamed there changes it."""
    tags: dict[str, list[str]] = {}
    for download in (_DOWNLOAD_NAME.match(p.stem) for p in folder.glob("run-*-tag-*.csv")):
        if download is not None:
            tags.setdefault(download.group("run"), []).append(_callback_tag(download.group("tag")))
    return frozenset(run for run, names in tags.items() if hf_trainer_callback_tags(names))


def _callback_tag(download_tag: str) -> str:
    """The callback's tag a download name gives: the dashboard writes each `/` as `_`, and the callback's tags are
    `<split>/<key>` with `_` inside the key (`train_learning_rate` <- train/learning_rate), so the first `_` is the
    `/` (`train_train_loss` <- train/train_loss, train() closing summary, not train_train/loss).

    >>> [_callback_tag(t) for t in ("train_learning_rate", "train_train_loss", "eval_loss (1)", "loss")]
    ['train/learning_rate', 'train/train_loss', 'eval/loss (1)', 'loss']
    """
    return download_tag.replace("_", "/", 1)
