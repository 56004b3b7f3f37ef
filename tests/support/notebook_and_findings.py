"""A notebook run written from its code cells, and the analysis of a run and its findings' kinds, severities and
steps."""
from __future__ import annotations

import json

import forensics


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


def _kinds(a):
    return [(f.kind, f.severity, f.step) for f in a.findings]


def _notebook(folder, cells):
    out = []
    for i, (src, text) in enumerate(cells):
        cell = {"cell_type": "code", "execution_count": i + 1, "metadata": {}, "source": src, "outputs": []}
        if text:
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": text}]
        out.append(cell)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.ipynb").write_text(json.dumps({"cells": out, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return folder
