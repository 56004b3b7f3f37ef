"""Notebook files written for reader tests: code cells with their outputs, as nbformat objects (`counted_notebook`,
`stream`) or as the raw JSON a saved .ipynb holds (`code_cell`, `json_notebook`)."""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output


def counted_notebook(folder: Path, cells: list[tuple[str, list]]) -> Path:
    """`folder/run.ipynb` of code cells (source, outputs), counted 1, 2, ... in order as if each ran once; the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=[new_code_cell(source, outputs=outputs, execution_count=i + 1)
                                       for i, (source, outputs) in enumerate(cells)]), folder / "run.ipynb")
    return folder


def stream(text: str, name: str = "stdout"):
    """A stream output (stdout or stderr) of `text`."""
    return new_output("stream", name=name, text=text)


def code_cell(source: str, text: str = "", count: int | None = 3, result: str | None = None) -> dict:
    """A code cell as saved JSON: `text` printed to stdout, `result` its shown value (None: no value shown)."""
    outputs = [{"output_type": "stream", "name": "stdout", "text": text}] if text else []
    if result is not None:
        outputs.append({"output_type": "execute_result", "execution_count": count, "metadata": {},
                        "data": {"text/plain": result}})
    return {"cell_type": "code", "execution_count": count, "source": source, "metadata": {}, "outputs": outputs}


def json_notebook(path: Path, *cells: dict) -> Path:
    """`path` written as an nbformat 4 notebook of `cells` (saved JSON); the path."""
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": list(cells)}))
    return path
