"""Readers of training logs: one module per source format, each `read(path) -> LogRecords`.

Every reader raises `UnreadableFile` (never a parser's own error) for a file it cannot read;
`read_logs` turns those into `Skipped` entries and goes on with the rest.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..decoding import unmarked_utf16_note
from ..errors import UnreadableFile, os_reason
from ..lfs import unreadable_reason
from ..findings import Skipped
from ..discover.run_layout import RunLayout
from ..timeline import LogRecords
from . import (csv_metrics, dvclive, json_history, jsonl, llamafactory, loss_number_files, mlflow_files, mlflow_sqlite,
               notebook, stdout, swift, tensorboard, trainer_state, wandb, wandb_files)

Reader = Callable[[Path], "LogRecords | list[LogRecords]"]

# The kinds whose readers decode the file's bytes as text (decoding.decode_text), a UTF-16 file without BOM included
_DECODED_AS_TEXT = ("trainer_states", "llamafactory_logs", "swift_logs", "jsonl_logs", "json_histories", "text_logs",
                    "notebooks", "loss_number_files")


def _readers() -> list[tuple[str, Reader]]:
    return [
        ("trainer_states", trainer_state.read),
        ("tensorboard", tensorboard.read),
        ("llamafactory_logs", llamafactory.read),
        ("swift_logs", swift.read),
        ("jsonl_logs", jsonl.read),
        ("json_histories", json_history.read),
        ("csv_logs", csv_metrics.read),
        ("loss_number_files", loss_number_files.read),
        ("dvclive_logs", dvclive.read),
        ("text_logs", stdout.read),
        ("notebooks", notebook.read),
        ("wandb_logs", wandb.read),
        ("wandb_folders", wandb_files.read),
        ("mlflow_runs", mlflow_files.read),
        ("mlflow_dbs", mlflow_sqlite.read_all),  # one LogRecords per run in the store
    ]


def reader_for(kind: str) -> Reader:
    """The reader of one RunLayout log kind ("trainer_states", "tensorboard", "text_logs", ...)."""
    return dict(_readers())[kind]


def read_logs(layout: RunLayout,
              progress: Callable[[str], None] | None = None) -> tuple[list[LogRecords], list[Skipped]]:
    """Read every log file of a run; bad files become Skipped entries, never exceptions.

    A file read only in part (a cut tail, a damaged record) is kept and also gets a Skipped line
    saying what was left out.
    """
    records: list[LogRecords] = []
    skipped: list[Skipped] = []
    total, done = len(layout.log_files), 0
    for attr, read in _readers():
        for path in getattr(layout, attr):
            done += 1
            if progress:
                progress(f"reading log {done} of {total}: {path.name}")
            _read_one(path, attr, read, records, skipped)
    return records, skipped


def _read_one(path: Path, kind: str, read: Reader, records: list[LogRecords], skipped: list[Skipped]) -> None:
    """Read one log file into `records`, or name it in `skipped` with why it could not be read."""
    try:
        read_here = read(path)
    except UnreadableFile as err:
        skipped.append(Skipped(err.path, unreadable_reason(err)))
        return
    except OSError as err:  # permission, vanished file: name it and go on
        skipped.append(Skipped(str(path), os_reason(err)))
        return
    kept = len(records)
    for rec in read_here if isinstance(read_here, list) else [read_here]:
        _keep(rec, kind, records, skipped)
    if kind in _DECODED_AS_TEXT and len(records) > kept:
        skipped.extend(_encoding_note(path))


def _encoding_note(path: Path) -> list[Skipped]:
    """A note naming a log read as UTF-16 though it has no byte-order mark (the reading guessed it), else none."""
    try:
        with open(path, "rb") as fh:
            note = unmarked_utf16_note(fh.read(4096))
    except OSError:
        return []
    return [Skipped(str(path), note, note=True)] if note else []


def _keep(rec: LogRecords, kind: str, records: list[LogRecords], skipped: list[Skipped]) -> None:
    if rec.frame.empty and not rec.texts and not rec.banners and not rec.meta.get("console_run_signs") \
            and kind in ("text_logs", "notebooks"):
        return  # a text file (a notebook's outputs) without a single training line or sign of a run is not a log
    if rec.warnings:  # a cut or damaged file read in part: say so, one line
        skipped.append(Skipped(rec.source, "partly read: " + "; ".join(rec.warnings)))
    skipped.extend(Skipped(rec.source, note, note=True) for note in rec.notes)
    records.append(rec)
