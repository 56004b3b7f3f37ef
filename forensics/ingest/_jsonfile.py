"""Reading a whole JSON file that must hold one object, with our one-line errors.

Python's json accepts the bare NaN / Infinity / -Infinity tokens that HF's writers emit
(`json.dumps` with allow_nan=True), so nothing special is needed for them.
"""
from __future__ import annotations

import json

from ..errors import UnreadableFile
from ..decoding import decode_text


def read_json_value(path, what: str = "", notes: list[str] | None = None):
    """The JSON value in `path` (an object, a list, ...); UnreadableFile naming the problem otherwise.

    Bytes that are not UTF-8 are replaced (a latin-1 path in a string value costs nothing else) and, when
    `notes` is given, said there; a bad byte outside a string leaves the JSON invalid, which is said as such.
    """
    with open(path, "rb") as fh:
        text, not_utf8 = decode_text(fh.read())
    if not_utf8 and notes is not None:
        notes.append(not_utf8)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise UnreadableFile(path, f"invalid JSON at line {err.lineno} column {err.colno} "
                                   f"({err.msg}); the file may be cut") from None
    except RecursionError:
        raise UnreadableFile(path, "JSON nested too deeply") from None


def read_json_object(path, what: str = "", notes: list[str] | None = None) -> dict:
    """The JSON object in `path` as a dict; UnreadableFile naming the problem otherwise.

    `what` names the expected file kind ("a trainer_state.json") for the error messages; `notes` as in
    read_json_value.
    """
    suffix = f"; not {what}" if what else ""
    value = read_json_value(path, what, notes)
    if not isinstance(value, dict):
        raise UnreadableFile(path, f"the JSON is not an object (expected a JSON object, "
                                   f"found {type(value).__name__}){suffix}")
    return value


def complete_values(text: str, pos: int) -> list:
    """The JSON values of a list in `text` from `pos` (just after its `[`) on, up to the first one that is cut or
    broken: what a file cut mid-write (or damaged part-way) still holds whole.

    >>> complete_values('{"log": [{"a": 1}, {"b": 2}, {"c"', 9)
    [{'a': 1}, {'b': 2}]
    """
    return values_and_end(text, pos)[0]


def values_and_end(text: str, pos: int) -> tuple[list, int]:
    """`complete_values`, and where the last of them ends in `text`: a number no comma follows may be cut mid-number
    (`1.2` of a `1.25` being written).

    >>> values_and_end('[1.5, 1.25, 1.2', 1)
    ([1.5, 1.25, 1.2], 15)
    """
    decoder = json.JSONDecoder()
    values, end = [], pos
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            return values, end
        try:
            value, pos = decoder.raw_decode(text, pos)
        except (json.JSONDecodeError, RecursionError):
            return values, end
        values.append(value)
        end = pos
