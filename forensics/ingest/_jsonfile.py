"""Reading a whole JSON file that must hold one object, with our one-line errors.

Python's json accepts the bare NaN / Infinity / -Infinity tokens that HF's writers emit
(`json.dumps` with allow_nan=True), so nothing special is needed for them.
"""
from __future__ import annotations

import json

from ..errors import UnreadableFile


def read_json_value(path, what: str = ""):
    """The JSON value in `path` (an object, a list, ...); UnreadableFile naming the problem otherwise."""
    suffix = f"; not {what}" if what else ""
    try:
        with open(path, "rb") as fh:
            return json.loads(fh.read().decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise UnreadableFile(path, f"not UTF-8 text{suffix}") from None
    except json.JSONDecodeError as err:
        raise UnreadableFile(path, f"invalid JSON at line {err.lineno} column {err.colno} "
                                   f"({err.msg}); the file may be cut") from None
    except RecursionError:
        raise UnreadableFile(path, "JSON nested too deeply") from None


def read_json_object(path, what: str = "") -> dict:
    """The JSON object in `path` as a dict; UnreadableFile naming the problem otherwise.

    `what` names the expected file kind ("a trainer_state.json") for the error messages.
    """
    suffix = f"; not {what}" if what else ""
    value = read_json_value(path, what)
    if not isinstance(value, dict):
        raise UnreadableFile(path, f"the JSON is not an object (expected a JSON object, found {type(value).__name__}){suffix}")
    return value
