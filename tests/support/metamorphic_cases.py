"""Copies of real corpus cases in another shape (tests/test_metamorphic_*.py): the copy, the rewrite, and the
answer compared."""
from __future__ import annotations

import shutil
from pathlib import Path

import forensics

CORPUS = Path(__file__).resolve().parents[1] / "realworld"


def case_copy(tmp_path: Path, case: str) -> Path:
    dst = tmp_path / case  # the case's own folder name: the tool reads hints from it
    shutil.copytree(CORPUS / case, dst)
    return dst


def rewrite(path: Path, fn) -> None:
    """The file's text passed through `fn` (bytes that are not UTF-8 kept as they were)."""
    text = path.read_bytes().decode("utf-8", errors="surrogateescape")
    path.write_bytes(fn(text).encode("utf-8", errors="surrogateescape"))


def each_line(fn):
    return lambda text: "\n".join(fn(line) if line else line for line in text.split("\n"))


def answer(path: Path) -> tuple:
    """(status, first incident kind, its step)."""
    a = forensics.analyze(path)
    fi = a.first_incident
    return a.status, (fi.kind if fi else None), (fi.step if fi else None)
