"""A notebook file's JSON object, and what a cut or damaged one still holds whole.

A notebook copied while it was saved, or a download that stopped, ends part-way; a bad sector or a stray byte
between two cells leaves the rest of it no JSON. Either way the cells before the break are whole: they are read (as
a cut trainer_state.json keeps its complete log_history entries, `_jsonfile.complete_values`) and the rest is left
out with a warning that says which of the two it was. A file without one complete cell is not read.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from ..decoding import decode_text
from ..errors import UnreadableFile
from ._jsonfile import complete_values

WHAT = "a Jupyter notebook"
# The cells list: first in nbformat's own writing (sorted keys), last in Colab's (nbformat, nbformat_minor, metadata,
# cells); nbformat 3 keeps its cells in `worksheets`, the first sheet's list is found the same way
_CELLS_LIST = re.compile(r'"cells"\s*:\s*\[')


def notebook_object(path: Path) -> tuple[dict, list[str], str | None]:
    """The notebook's JSON object, its warnings (bytes that are not UTF-8 replaced, as a console's are; a cut or
    damaged file read up to its last complete cell), and that last warning alone where the file broke part-way (else
    None). UnreadableFile where not even one cell is whole."""
    text, not_utf8 = decode_text(path.read_bytes())
    warnings = [not_utf8] if not_utf8 else []
    try:
        notebook = json.loads(text)
    except json.JSONDecodeError as err:
        cells = _complete_cells(text)
        if not cells:
            raise UnreadableFile(path, f"invalid JSON at line {err.lineno} column {err.colno} ({err.msg}); "
                                       "the notebook may be cut") from None
        broken = _break_note(text, err, len(cells))
        return {"cells": cells}, warnings + [broken], broken
    except RecursionError:
        raise UnreadableFile(path, "JSON nested too deeply") from None
    if not isinstance(notebook, dict):
        raise UnreadableFile(path, f"the JSON is not an object; not {WHAT}")
    return notebook, warnings, None


def _complete_cells(text: str) -> list:
    """The cells before the break, in order ([] where not one is whole); a value that is no cell (`}, 7 {` where the
    file was damaged) is a break too."""
    found = _CELLS_LIST.search(text)
    cells = []
    for value in complete_values(text, found.end()) if found else []:
        if not isinstance(value, dict):
            break
        cells.append(value)
    return cells


def _break_note(text: str, err: json.JSONDecodeError, read: int) -> str:
    """Cut (the file ends inside its JSON) or damaged (it ends as a whole notebook does, with the object's `}`, so
    something in the middle is no JSON), and how many cells were read."""
    if text.rstrip().endswith("}"):
        return (f"damaged at line {err.lineno} column {err.colno} ({err.msg}): read its {read} complete cells "
                "before it, the cells after it left out")
    return f"cut part-way (the file ends inside its JSON, line {err.lineno}): read its {read} complete cells before it"
