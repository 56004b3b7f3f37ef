"""What a file's bytes hold, read within bounds for `run.discover` to sort it: a sign sought in a file's head and
tail (`holds`), in a whole notebook (`holds_whole`), and why a notebook cannot be read (`notebook_problem`). A file
that cannot be opened is listed as skipped in the layout.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

from ..decoding import as_utf8, decode_text, sniffed_encoding
from ..errors import os_reason
from ..findings import Skipped
from .json_hints import SNIFF_BYTES
from .run_layout import RunLayout


def holds(path: Path, layout: RunLayout, found: Callable[[bytes], bool], tail: bool = True,
          together: bool = False) -> bool:
    """Whether `found` holds for the head or (with `tail`) the tail of a file (`SNIFF_BYTES` each: logs often start
    with banners; a JSON file's shape is in its head alone), or (`together`) for the head and tail joined: signs that
    belong together may be far apart, a run's start in its head and the traceback that ended it in its tail."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
            encoding, _ = sniffed_encoding(head)  # a UTF-16 console (PowerShell's `>`) is searched as its text
            if found(as_utf8(head, encoding)):
                return True
            size = os.fstat(fh.fileno()).st_size
            if tail and size > SNIFF_BYTES:
                fh.seek(max(size - SNIFF_BYTES, SNIFF_BYTES) // 2 * 2)  # even: a UTF-16 character's first byte
                end = fh.read(SNIFF_BYTES)
                return found(as_utf8(head + end if together else end, encoding))
    except OSError as err:
        layout.skipped.append(Skipped(str(path), os_reason(err)))
    return False


# A notebook is read whole to be sniffed (its outputs may lie between megabytes of images); a bigger one is skipped
_MAX_NOTEBOOK_BYTES = 256 << 20


def notebook_problem(path: Path) -> str | None:
    """Why a notebook that shows no training cannot be read as a notebook (cut, not JSON, cells not a list), or None
    for a whole notebook that simply holds no training (a data-preparation notebook is passed over in silence)."""
    try:
        with open(path, "rb") as fh:
            text, _ = decode_text(fh.read(_MAX_NOTEBOOK_BYTES))
        notebook = json.loads(text)
    except OSError as err:
        return os_reason(err)
    except json.JSONDecodeError as err:
        return f"invalid JSON at line {err.lineno} column {err.colno} ({err.msg}); the notebook may be cut"
    except RecursionError:
        return "JSON nested too deeply; not a Jupyter notebook"
    cells = notebook.get("cells", notebook.get("worksheets")) if isinstance(notebook, dict) else None
    return None if isinstance(cells, list) else "no list of cells; not a Jupyter notebook"


def holds_whole(path: Path, layout: RunLayout, found: Callable[[bytes], bool]) -> bool:
    try:
        if os.path.getsize(path) > _MAX_NOTEBOOK_BYTES:
            layout.skipped.append(Skipped(str(path), f"a notebook over {_MAX_NOTEBOOK_BYTES >> 20} MB: not sniffed"))
            return False
        with open(path, "rb") as fh:
            data = fh.read()
        return found(as_utf8(data, sniffed_encoding(data)[0]))
    except OSError as err:
        layout.skipped.append(Skipped(str(path), os_reason(err)))
    return False
