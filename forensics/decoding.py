"""Decoding a log file's bytes into text, the one way every reader does it.

Training logs are UTF-8, but not always all of it: a file name in latin-1 inside a JSON string, one line a
tool wrote in another encoding, a console captured by Windows PowerShell's `>` (UTF-16 LE with a BOM).
`decode_text(data)` keeps every line it can: a BOM says the encoding (UTF-8, UTF-16 LE/BE), else UTF-8 with
the bytes that are not replaced by U+FFFD, and a note counts the lines that held them (the reader says it
beside the file's name; a value in those lines is read as far as the rest of the line allows).
`bom_encoding` and `as_utf8` let the sniffers of `run.discover`, which search bytes, see a UTF-16 file's text.
"""
from __future__ import annotations

import codecs

_SAMPLE_BYTES = 4096
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def bom_encoding(head: bytes) -> tuple[str, int]:
    """The encoding a file's first bytes name by their BOM ("utf-8" where none), and the BOM's length.

    A UTF-16 BOM is believed only where zero bytes show the text is UTF-16: a log's text is mostly ASCII, half
    of whose UTF-16 bytes are zero, while \xff\xfe may as well be two stray bytes before UTF-8 text.
    """
    encoding, size = next(((name, len(bom)) for bom, name in _BOMS if head.startswith(bom)), ("utf-8", 0))
    sample = head[size:size + _SAMPLE_BYTES]
    if encoding != "utf-8" and sample.count(0) < len(sample) // 4:
        return "utf-8", 0
    return encoding, size


def decode_text(data: bytes) -> tuple[str, str | None]:
    """The text of `data` and a note when some of it was not in the encoding read (else None).

    >>> decode_text(b"caf\\xe9\\nok\\n")
    ('caf\\ufffd\\nok\\n', 'bytes that are not UTF-8 were replaced (1 line)')
    >>> decode_text("loss 1.5".encode("utf-16"))[0]
    'loss 1.5'
    """
    encoding, start = bom_encoding(data)
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
