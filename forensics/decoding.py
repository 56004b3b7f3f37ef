"""Decoding a log file's bytes into text, the one way every reader does it.

Training logs are UTF-8, but not always all of it: a file name in latin-1 inside a JSON string, one line a
tool wrote in another encoding, a console captured by Windows PowerShell's `>` (UTF-16 LE with a BOM).
`decode_text(data)` keeps every line it can: a BOM says the encoding (UTF-8, UTF-16 LE/BE); without one, a zero
in every other byte says UTF-16 all the same (a file written as "utf-16-le" by Python or .NET carries no BOM, and
`unmarked_utf16_note` words the note that names such a file); else UTF-8 with the bytes that are not replaced by
U+FFFD, and a note counts the lines that held them (the reader says it beside the file's name; a value in those lines
is read as far as the rest of the line allows).
`sniffed_encoding` and `as_utf8` let the sniffers of `run.discover`, which search bytes, see a UTF-16 file's text.
"""
from __future__ import annotations

import codecs

_SAMPLE_BYTES = 4096
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def sniffed_encoding(head: bytes) -> tuple[str, int]:
    """The encoding of a file whose first bytes are `head`, and the length of its BOM (0 where none).

    A BOM names it; without one, `unmarked_utf16` may find UTF-16 (LE or BE) all the same; else "utf-8".
    A UTF-16 BOM is believed only where zero bytes show the text is UTF-16: a log's newlines, digits and spaces are
    ASCII, whose UTF-16 high byte is zero (`_ASCII_SHARE` of its characters at least, even in a log of Chinese
    text), while UTF-8 text has no zero byte at all: \xff\xfe may as well be two stray bytes before it.
    """
    encoding, size = next(((name, len(bom)) for bom, name in _BOMS if head.startswith(bom)), ("utf-8", 0))
    sample = head[size:size + _SAMPLE_BYTES]
    if size == 0:
        return unmarked_utf16(sample) or "utf-8", 0
    if encoding != "utf-8" and _halves(sample, encoding)[0].count(0) < _ASCII_SHARE * (len(sample) // 2):
        return "utf-8", 0
    return encoding, size


_ASCII_SHARE = 0.02  # the characters of a UTF-16 log's first 2048 that are ASCII (newlines, digits, spaces), at least


def _halves(sample: bytes, encoding: str) -> tuple[bytes, bytes]:
    """(high, low): the high and the low byte of each UTF-16 character of `sample` in `encoding` (utf-16-le: the odd
    bytes are the high ones)."""
    count = len(sample) // 2
    even, odd = sample[0:2 * count:2], sample[1:2 * count:2]
    return (odd, even) if encoding == "utf-16-le" else (even, odd)


# ASCII text in UTF-16 has a zero as the high byte of every character and none as the low byte. Most characters of
# a log are ASCII (keys, digits, punctuation); a NUL-filled stretch (a file preallocated, or cut by a crash) has zeros
# in both positions and reads as no UTF-16.
_HIGH_BYTES_ZERO = 0.75   # at least this share of the characters' high bytes are zero
_LOW_BYTES_ZERO = 0.05    # and at most this share of their low bytes
_MIN_CHARACTERS = 4


def unmarked_utf16(sample: bytes) -> str | None:
    """"utf-16-le" or "utf-16-be" where `sample`, the first bytes of a file with no BOM, is UTF-16 text by its
    zero bytes (see above); None otherwise.

    >>> unmarked_utf16("loss 1.5".encode("utf-16-le")), unmarked_utf16("loss 1.5".encode("utf-16-be"))
    ('utf-16-le', 'utf-16-be')
    >>> unmarked_utf16(b"loss 1.5"), unmarked_utf16(bytes(64))
    (None, None)
    """
    count = len(sample) // 2
    if count < _MIN_CHARACTERS:
        return None
    for name in ("utf-16-le", "utf-16-be"):
        high, low = _halves(sample, name)
        if high.count(0) >= _HIGH_BYTES_ZERO * count and low.count(0) <= _LOW_BYTES_ZERO * count:
            return name
    return None


def unmarked_utf16_note(head: bytes) -> str | None:
    """The note that names a file read as UTF-16 without a BOM (`head`: its first bytes), or None for any other."""
    encoding, bom_size = sniffed_encoding(head)
    if bom_size or encoding == "utf-8":
        return None
    return (f"read as UTF-16 {encoding[-2:].upper()}: the file has no byte-order mark, but a zero in every other "
            "byte shows UTF-16 text")


def decode_text(data: bytes) -> tuple[str, str | None]:
    """The text of `data` and a note when some of it was not in the encoding read (else None).

    >>> decode_text(b"caf\\xe9\\nok\\n")
    ('caf\\ufffd\\nok\\n', 'bytes that are not UTF-8 were replaced (1 line)')
    >>> decode_text("loss 1.5".encode("utf-16"))[0]
    'loss 1.5'
    """
    encoding, start = sniffed_encoding(data)
    try:
        return data[start:].decode(encoding), None
    except UnicodeDecodeError:
        text = data[start:].decode(encoding, errors="replace")
    bad_lines = sum("\ufffd" in line for line in text.splitlines())
    name = "UTF-16" if encoding.startswith("utf-16") else "UTF-8"
    return text, f"bytes that are not {name} were replaced ({bad_lines} line{'s' if bad_lines != 1 else ''})"


def as_utf8(chunk: bytes, encoding: str) -> bytes:
    """A chunk of a file in `encoding` as UTF-8 bytes (its BOM left out); a UTF-8 chunk as it is."""
    if encoding == "utf-8":
        return chunk
    return chunk.decode(encoding, errors="replace").lstrip("\ufeff").encode("utf-8")
