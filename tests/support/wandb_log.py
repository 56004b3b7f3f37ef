"""A W&B run log (`run-<id>.wandb`) built from messages: the documented framing
(wandb/sdk/internal/datastore.py `_write_data`) around records serialized by wandb's own protobuf classes."""
from __future__ import annotations

import struct
import zlib

import pytest

from forensics.ingest import _wandb_log


def framed(messages: list[bytes]) -> bytes:
    """A run log as the documented framing lays it out (wandb/sdk/internal/datastore.py `_write_data`)."""
    out = bytearray(_wandb_log.HEADER)

    def record(data: bytes, kind: int) -> None:
        crc = zlib.crc32(data, zlib.crc32(bytes([kind])))
        out.extend(struct.pack("<IHB", crc, len(data), kind) + data)

    for data in messages:
        left = _wandb_log.BLOCK - len(out) % _wandb_log.BLOCK
        if left < 7:
            out.extend(b"\0" * left)
            left = _wandb_log.BLOCK
        if len(data) + 7 <= left:
            record(data, 1)
            continue
        record(data[:left - 7], 2)
        data = data[left - 7:]
        while len(data) > _wandb_log.BLOCK - 7:
            record(data[:_wandb_log.BLOCK - 7], 3)
            data = data[_wandb_log.BLOCK - 7:]
        record(data, 4)
    return bytes(out)


def record(**kw) -> bytes:
    """One `wandb_internal.Record`, serialized by wandb's own class (the test is skipped without wandb)."""
    pb = pytest.importorskip("wandb.proto.wandb_internal_pb2")
    return pb.Record(**kw).SerializeToString()
