"""Follow the log files of a running job, reading only what is new at each poll.

A `LogTail` follows one file. Appended formats (TensorBoard events, JSON lines, console text)
are read from the byte where the last poll stopped, up to the last complete unit (a whole
TensorBoard record, a whole line); a half-written unit waits for the next poll. Only those new
bytes go through the format's own reader (the same reader `analyze` uses, so a metric read live
is the metric `analyze` reads later), so a poll costs what was appended, not the whole file.
`trainer_state.json`, which the Trainer rewrites at every save, is read again when it changes.

Files are followed by identity (device, inode): a log renamed by rotation keeps its tail, and a
file replaced at the same path (or cut shorter) starts over.
"""
from __future__ import annotations

import os
import shutil
import struct
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from ..errors import UnreadableFile, os_reason
from ..timeline import LogRecords, empty_frame

APPENDED_KINDS = ("tensorboard", "llamafactory_logs", "swift_logs", "jsonl_logs", "text_logs")
_CONTEXT_LINES = 3  # console lines carried into the next chunk: the progress bar a dict line's step comes from


@dataclass
class Chunk:
    """What one poll read from one file: its rows, texts and format facts."""

    frame: pd.DataFrame
    format: str
    texts: dict[str, str] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)


@dataclass
class LogTail:
    """One followed log file: where it is, how far it has been read, and the chunks read so far.

    `replaced` is True when the file was rewritten (trainer_state.json at a save, a file cut
    shorter or replaced at the same path): its earlier chunks no longer stand.
    """

    path: Path
    kind: str
    identity: tuple[int, int]
    offset: int = 0
    signature: tuple[int, int] | None = None
    context: bytes = b""
    chunks: list[Chunk] = field(default_factory=list)
    rows: int = 0

    def records(self, max_rows: int | None = None) -> tuple[LogRecords | None, bool]:
        """This file's rows as one LogRecords, only the newest `max_rows` (whole chunks) when given.

        Returns (records or None when nothing was read, whether older chunks were left out).
        """
        if not self.chunks:
            return None, False
        taken, count = [], 0
        for chunk in reversed(self.chunks):
            taken.append(chunk)
            count += len(chunk.frame)
            if max_rows is not None and count >= max_rows:
                break
        taken.reverse()
        frames = [c.frame for c in taken if not c.frame.empty]
        frame = pd.concat(frames, ignore_index=True) if frames else empty_frame()
        texts = {k: v for c in taken for k, v in c.texts.items()}
        meta = {k: v for c in taken for k, v in c.meta.items()}
        record = LogRecords(source=str(self.path), format=taken[-1].format, frame=frame, texts=texts, meta=meta,
                            mtime=_mtime(self.path))
        return record, len(taken) < len(self.chunks)


Reader = Callable[[Path], LogRecords]


class TailReader:
    """Reads the new part of followed files through the format readers, via a private scratch folder."""

    def __init__(self, readers: dict[str, Reader]):
        self._readers = readers
        self._scratch = Path(tempfile.mkdtemp(prefix="forensics-watch-"))

    def close(self) -> None:
        shutil.rmtree(self._scratch, ignore_errors=True)

    def poll(self, tail: LogTail) -> bool:
        """Read what was added to `tail`'s file since the last poll; True when new rows came in.

        Raises UnreadableFile when the new part cannot be read (it is skipped, the tail moves on).
        """
        try:
            stat = os.stat(tail.path)
        except OSError as err:
            raise UnreadableFile(tail.path, os_reason(err)) from None
        if tail.kind == "trainer_states":
            return self._reread(tail, stat)
        if stat.st_size < tail.offset:  # cut shorter: rewritten in place
            tail.offset, tail.context, tail.chunks, tail.rows = 0, b"", [], 0
        if stat.st_size == tail.offset:
            return False
        with open(tail.path, "rb") as fh:
            fh.seek(tail.offset)
            data = fh.read(stat.st_size - tail.offset)
        complete = _complete_records(data) if tail.kind == "tensorboard" else _complete_lines(data)
        if complete == 0:
            return False
        new, tail.offset = data[:complete], tail.offset + complete
        chunk = self._read_chunk(tail, tail.context + new if tail.kind == "text_logs" else new)
        if tail.kind == "text_logs":
            tail.context = _bar_lines(tail.context + new)
        if chunk is None:
            return False
        tail.chunks.append(chunk)
        tail.rows += len(chunk.frame)
        return not chunk.frame.empty

    def _reread(self, tail: LogTail, stat: os.stat_result) -> bool:
        signature = (stat.st_size, stat.st_mtime_ns)
        if signature == tail.signature:
            return False
        rec = self._readers[tail.kind](tail.path)  # UnreadableFile mid-write: tried again next poll
        tail.signature = signature
        tail.chunks = [Chunk(rec.frame, rec.format, dict(rec.texts), dict(rec.meta))]
        tail.rows = len(rec.frame)
        return True

    def _read_chunk(self, tail: LogTail, data: bytes) -> Chunk | None:
        scratch = self._scratch / tail.path.name
        scratch.write_bytes(data)
        try:
            rec = self._readers[tail.kind](scratch)
        except UnreadableFile as err:
            if tail.kind == "text_logs":
                return None  # console text without a training line yet
            raise UnreadableFile(tail.path, err.reason) from None
        finally:
            scratch.unlink(missing_ok=True)
        return Chunk(rec.frame, rec.format, dict(rec.texts), dict(rec.meta))


def identity_of(path: Path) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _mtime(path: Path) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return float("nan")


def _complete_lines(data: bytes) -> int:
    """Bytes up to and including the last newline (a line still being written waits)."""
    return data.rfind(b"\n") + 1


def _complete_records(data: bytes) -> int:
    """Bytes of the whole TFRecords at the start of `data` (length, length CRC, payload, payload CRC)."""
    pos = 0
    while pos + 12 <= len(data):
        (length,) = struct.unpack_from("<Q", data, pos)
        end = pos + 12 + length + 4
        if end > len(data):
            break
        pos = end
    return pos


def _bar_lines(data: bytes) -> bytes:
    """The last few console lines that are progress bars, not log dicts: the context a dict line's step needs."""
    lines = [ln for ln in data.replace(b"\r", b"\n").split(b"\n") if b"it/s]" in ln or b"s/it]" in ln]
    kept = [ln for ln in lines if b"{" not in ln][-_CONTEXT_LINES:]
    return b"".join(ln + b"\n" for ln in kept)
