"""TFRecord framing of TensorBoard event files, walked with numpy instead of record by record.

A record is `u64 length | u32 masked crc32c(length bytes) | payload | u32 masked crc32c(payload)`
(tensorboard/summary/writer/record_writer.py). `frame_records(data)` returns where every
payload starts and how long it is, plus warnings for a cut or broken tail.

Why not a Python loop: a 1M-scalar file holds 1M records, and a loop that reads each header is
most of the time of tensorboard's own reader. Here every event payload starts with byte 0x09
(`Event.wall_time`, field 1, a double that writers always set), so the record starts are found
as "byte 0x09 twelve bytes further on, and a length whose masked CRC matches": the length CRC is
checked for every record (vectorized), which rejects false candidates with odds of 2^-32 and
detects corrupt framing. Records the candidate scan misses (an event without wall_time, a
broken header) are reached by walking the chain from the last good record in Python.

Payload CRCs are checked too (vectorized over records of equal length, see `payload_crc_ok`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

_HEADER = 12      # u64 length + u32 length crc
_OVERHEAD = 16    # header + u32 payload crc
_EVENT_FIRST_BYTE = 0x09  # Event field 1 (wall_time), wire type 1 (64-bit)
_MASK_DELTA = 0xA282EAD8


def _crc32c_table() -> np.ndarray:
    table = []
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return np.array(table, dtype=np.uint32)


CRC_TABLE = _crc32c_table()
_CRC_LIST = CRC_TABLE.tolist()


def masked_crc32c(data: bytes) -> int:
    """The masked CRC32C TFRecord stores for `data` (pure Python; for a few short inputs)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC_LIST[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def masked_crc32c_rows(rows: np.ndarray) -> np.ndarray:
    """Masked CRC32C of every row of a (k, L) uint8 matrix, as uint32 (vectorized over rows)."""
    crc = np.full(rows.shape[0], 0xFFFFFFFF, dtype=np.uint32)
    for j in range(rows.shape[1]):
        crc = CRC_TABLE[(crc ^ rows[:, j]) & 0xFF] ^ (crc >> np.uint32(8))
    return _mask(crc)


def _mask(crc: np.ndarray) -> np.ndarray:
    crc ^= np.uint32(0xFFFFFFFF)
    return ((crc >> np.uint32(15)) | (crc << np.uint32(17))) + np.uint32(_MASK_DELTA)


@dataclass
class Framing:
    """Where the payloads are: `starts` (offset of each payload) and `lengths`, in file order."""

    starts: np.ndarray
    lengths: np.ndarray
    warnings: list[str] = field(default_factory=list)
    broken: bool = False  # a bad record (not just a cut tail) stopped the walk


class ByteViews:
    """Unaligned typed views over a zero-padded copy of the file, for vectorized gathers."""

    PAD = 32

    def __init__(self, data: bytearray, size: int):
        """`data` holds the file's `size` bytes followed by at least PAD zero bytes (see of_file)."""
        self.size = size
        self.raw = data
        n = len(data)
        self.u8 = np.frombuffer(data, dtype=np.uint8)
        self.u32 = np.ndarray((n - 3,), dtype="<u4", buffer=data, strides=(1,))
        self.u64 = np.ndarray((n - 7,), dtype="<u8", buffer=data, strides=(1,))
        self.f32 = np.ndarray((n - 3,), dtype="<f4", buffer=data, strides=(1,))
        self.f64 = np.ndarray((n - 7,), dtype="<f8", buffer=data, strides=(1,))

    @classmethod
    def of_file(cls, path) -> "ByteViews":
        """Read the whole file once into a zero-padded buffer."""
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            data = bytearray(size + cls.PAD)
            got = fh.readinto(memoryview(data)[:size])
        return cls(data, got)

    def rows(self, starts: np.ndarray, width: int) -> np.ndarray:
        """The `width` bytes at each start, as a (len(starts), width) uint8 matrix.

        Taken as whole rows of a sliding-window view: one short copy per start, no index matrix,
        and each row's bytes are read together (column-wise gathers miss the cache per byte).
        """
        # Callers ask for bytes inside the file (+ padding); a start past that is moved back, not read past.
        starts = np.minimum(starts, len(self.u8) - width)
        return sliding_window_view(self.u8, width)[starts]


def frame_records(views: ByteViews) -> Framing:
    """Find every record of the file; a cut or broken tail ends the walk with a warning."""
    starts, lengths = _candidate_records(views)
    ends = starts + _OVERHEAD + lengths
    # Candidates that chain (one ends where the next starts) are walked as whole runs.
    breaks = np.flatnonzero(ends[:-1] != starts[1:])
    out_starts: list[np.ndarray] = []
    out_lengths: list[np.ndarray] = []
    warnings: list[str] = []
    pos, size, broken = 0, views.size, False
    while pos < size:
        j = int(np.searchsorted(starts, pos))
        if j < len(starts) and starts[j] == pos:
            k = int(breaks[np.searchsorted(breaks, j)]) if len(breaks) and breaks[-1] >= j else len(starts) - 1
            out_starts.append(starts[j:k + 1] + _HEADER)
            out_lengths.append(lengths[j:k + 1])
            pos = int(ends[k])
            continue
        length, problem = _read_header(views, pos)
        if problem:
            cut = problem.startswith("cut")
            broken = not cut
            kept = "; kept the records before it" if pos else ""
            warnings.append(f"{problem} at byte {pos} of {size}{kept}")
            break
        out_starts.append(np.array([pos + _HEADER], dtype=np.int64))
        out_lengths.append(np.array([length], dtype=np.int64))
        pos += _OVERHEAD + length
    if not out_starts:
        return Framing(np.zeros(0, np.int64), np.zeros(0, np.int64), warnings, broken)
    return Framing(np.concatenate(out_starts), np.concatenate(out_lengths), warnings, broken)


def _candidate_records(views: ByteViews) -> tuple[np.ndarray, np.ndarray]:
    """Record starts found by the payload's first byte and a matching length CRC (vectorized)."""
    size = views.size
    if size < _OVERHEAD + 1:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    cand = np.flatnonzero(views.u8[_HEADER:size] == _EVENT_FIRST_BYTE).astype(np.int64)
    lengths = views.u64[cand].astype(np.int64)  # a huge u64 turns negative here and is rejected
    fits = (lengths > 0) & (lengths <= size - cand - _OVERHEAD)
    cand, lengths = cand[fits], lengths[fits]
    crc_ok = masked_crc32c_rows(views.rows(cand, 8)) == views.u32[cand + 8]
    return cand[crc_ok], lengths[crc_ok]


def _read_header(views: ByteViews, pos: int) -> tuple[int, str]:
    """Length of the record at `pos`, or a problem: 'cut ...' for a short tail, else a break."""
    size = views.size
    if pos + _HEADER > size:
        return 0, "cut record header (the file ends mid-record)"
    header = views.raw[pos:pos + 8]
    if masked_crc32c(header) != int(views.u32[pos + 8]):
        return 0, "broken record framing (length checksum mismatch)"
    length = int.from_bytes(header, "little")
    if pos + _OVERHEAD + length > size:
        return 0, f"cut last record ({length} bytes announced, {size - pos - _HEADER} present)"
    return length, ""


def payload_crc_ok(views: ByteViews, starts: np.ndarray, lengths: np.ndarray,
                   chunk_bytes: int = 1 << 24) -> np.ndarray:
    """Whether each payload's stored CRC matches, vectorized over payloads of equal length."""
    ok = np.zeros(len(starts), dtype=bool)
    order = np.argsort(lengths, kind="stable")
    sorted_len = lengths[order]
    bounds = np.flatnonzero(np.diff(sorted_len)) + 1
    for group in np.split(order, bounds):
        if not len(group):
            continue
        width = int(lengths[group[0]])
        step = max(1, chunk_bytes // max(width, 1))
        for lo in range(0, len(group), step):
            idx = group[lo:lo + step]
            s = starts[idx]
            ok[idx] = masked_crc32c_rows(views.rows(s, width)) == views.u32[s + width]
    return ok
