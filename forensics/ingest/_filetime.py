"""A log file's modification time, which orders files that carry no wall time of their own."""
from __future__ import annotations

import os
from pathlib import Path


def file_mtime(path: Path) -> float:
    """The file's mtime, or NaN if it cannot be read."""
    try:
        return os.stat(path).st_mtime
    except OSError:
        return float("nan")
