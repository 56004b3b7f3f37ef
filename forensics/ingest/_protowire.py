"""The protocol-buffers wire format, just enough to read the few W&B messages we need.

A serialized message is a sequence of (tag, value) pairs, tag = field_number << 3 | wire_type:
wire type 0 a varint, 1 eight bytes, 2 a varint length then that many bytes (strings, bytes and
nested messages), 5 four bytes; 3 and 4 (groups) are long deprecated and not used by W&B.
See https://protobuf.dev/programming-guides/encoding/. Unknown fields are skipped by the caller,
which is how protobuf itself stays compatible across schema versions.

Raises `WireError` (a ValueError) on bytes that are not a valid message.
"""
from __future__ import annotations

from typing import Iterator

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5


class WireError(ValueError):
    """The bytes are not a valid protocol-buffers message."""


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if pos >= len(buf):
            raise WireError("message cut inside a varint")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise WireError("varint longer than 10 bytes")


def fields(buf: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """Each (field_number, wire_type, value) of a message, in order: an int for varints and fixed
    widths (little-endian, unsigned), the raw bytes for length-delimited fields.

    >>> list(fields(bytes([0x08, 0x96, 0x01, 0x12, 0x02, 0x68, 0x69])))
    [(1, 0, 150), (2, 2, b'hi')]
    """
    pos = 0
    while pos < len(buf):
        tag, pos = _varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        if wire == VARINT:
            value, pos = _varint(buf, pos)
        elif wire == LENGTH:
            size, pos = _varint(buf, pos)
            if pos + size > len(buf):
                raise WireError(f"field {number} runs {pos + size - len(buf)} bytes past the message")
            value, pos = buf[pos:pos + size], pos + size
        elif wire in (FIXED64, FIXED32):
            width = 8 if wire == FIXED64 else 4
            if pos + width > len(buf):
                raise WireError(f"field {number} cut")
            value, pos = int.from_bytes(buf[pos:pos + width], "little"), pos + width
        else:
            raise WireError(f"wire type {wire} (field {number}) is not used by these messages")
        if number == 0:
            raise WireError("field number 0")
        yield number, wire, value


def text(value: int | bytes) -> str:
    """A string field's value (UTF-8; a bad byte becomes U+FFFD rather than an error)."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def signed(value: int) -> int:
    """An int64 varint as the signed number it encodes (two's complement)."""
    return value - (1 << 64) if value >= 1 << 63 else value
