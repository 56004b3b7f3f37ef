"""The framing of a W&B run log (`run-<id>.wandb`): a LevelDB-style record log.

As W&B writes it (wandb/sdk/internal/datastore.py in github.com/wandb/wandb, and the Go writer of
wandb-core that replaced it, which keeps the format):

    file   := header block*          header := ident ":W&B" (4 bytes), magic 0xBEE1 (uint16 LE), version 0 (uint8)
    block  := record* trailer?       blocks are 32768 bytes; the header takes the first 7 bytes of block 0
    record := checksum uint32 LE, length uint16 LE, type uint8 (1 FULL, 2 FIRST, 3 MIDDLE, 4 LAST), data
    trailer:= zero bytes, when fewer than 7 bytes are left in a block

The checksum is zlib's CRC-32 (not LevelDB's CRC-32C, whatever the datastore docstring says) of
the data, seeded with the CRC-32 of the type byte. A message longer than a block is split into
FIRST, MIDDLE..., LAST pieces. Each whole message is one serialized `wandb_internal.Record`.

`messages(data)` returns the messages and the problems met: a bad checksum drops the rest of its
block (its length cannot be trusted, LevelDB's reader does the same); a cut tail (a run still
being written, a copy interrupted) ends the file there. Neither is an error: what came before is kept.
"""
from __future__ import annotations

import struct
import zlib

from ..errors import UnreadableFile

HEADER = struct.pack("<4sHB", b":W&B", 0xBEE1, 0)
BLOCK = 32768
RECORD_HEADER = 7
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4

_TYPE_CRC = {t: zlib.crc32(bytes([t])) for t in (FULL, FIRST, MIDDLE, LAST)}


def check_header(data: bytes, path) -> None:
    """Raise UnreadableFile unless `data` starts with the W&B run-log header."""
    if len(data) < len(HEADER):
        raise UnreadableFile(path, f"only {len(data)} bytes: too short for a W&B run log (.wandb)")
    if data[:4] != HEADER[:4] or data[4:6] != HEADER[4:6]:
        raise UnreadableFile(path, "no ':W&B' header: not a W&B run log (.wandb)")
    if data[6] != 0:
        raise UnreadableFile(path, f"W&B run-log format version {data[6]}; only version 0 is known")


def messages(data: bytes) -> tuple[list[bytes], list[str]]:
    """The whole messages in a run log's bytes (after `check_header`), and what was wrong, if anything."""
    out: list[bytes] = []
    problems: list[str] = []
    pending: bytearray | None = None  # the pieces of a FIRST..LAST message so far
    pos = len(HEADER)
    while pos < len(data):
        left_in_block = BLOCK - pos % BLOCK
        if left_in_block < RECORD_HEADER:
            pos += left_in_block  # a block trailer
            continue
        if pos + RECORD_HEADER > len(data):
            problems.append(f"cut inside a record header at byte {pos} (a run still being written?)")
            break
        checksum, length, kind = struct.unpack_from("<IHB", data, pos)
        if kind == 0 and length == 0:  # zero fill (a preallocated or padded block): nothing more here
            pos += left_in_block
            continue
        start, end = pos + RECORD_HEADER, pos + RECORD_HEADER + length
        if end > len(data):
            problems.append(f"cut inside a record at byte {pos} (a run still being written?)")
            break
        if (kind not in _TYPE_CRC or end > pos + left_in_block
                or zlib.crc32(data[start:end], _TYPE_CRC[kind]) != checksum):
            problems.append(f"damaged record at byte {pos} (bad checksum or framing); the rest of its block skipped")
            pending = None
            pos += left_in_block
            continue
        pos = end
        piece = data[start:end]
        if kind in (FULL, FIRST):
            _note_unfinished(pending, problems, start)
            pending = None if kind == FULL else bytearray(piece)
            if kind == FULL:
                out.append(piece)
        elif pending is None:
            problems.append(f"a continuation record at byte {start - RECORD_HEADER} without its first part; skipped")
        elif kind == MIDDLE:
            pending += piece
        else:
            out.append(bytes(pending + piece))
            pending = None
    if pending is not None:
        problems.append("cut inside a message split across blocks (a run still being written?)")
    return out, problems


def _note_unfinished(pending: bytearray | None, problems: list[str], where: int) -> None:
    """A message whose LAST piece never came is dropped; say so."""
    if pending is not None:
        problems.append(f"a message split across blocks was not finished before byte {where}; skipped")
