"""A console of the Hugging Face Trainer's printed log dicts, for tests of what a console's other lines say."""
from __future__ import annotations

import json
import math
from pathlib import Path


def trainer_console(tmp_path: Path, *lines: str) -> Path:
    """A folder `run` holding train.log: the Trainer's logged dicts (loss falling from 2.4 over 10 logs), then `lines`.
    (Named `run`: the test's own folder name would be read as the run's name.)"""
    folder = tmp_path / "run"
    folder.mkdir()
    logs = [f"{{'loss': {2.4 * math.exp(-i / 6) + 1.1:.4f}, 'grad_norm': {1.0 + 0.1 * (i % 3):.4f}, "
            f"'learning_rate': {5e-5 * (1 - i / 20):.6g}, 'epoch': {i / 10:.2f}}}" for i in range(1, 11)]
    (folder / "train.log").write_text("\n".join(logs + list(lines)) + "\n")
    return folder


def trainer_notebook(tmp_path: Path, code: str) -> Path:
    """A folder `run` holding train.ipynb: one cell that ran, `code`, its output the Trainer's logged dicts."""
    logs = "".join(f"{{'loss': {2.4 * math.exp(-i / 6) + 1.1:.4f}, 'learning_rate': {5e-5 * (1 - i / 20):.6g}, "
                   f"'epoch': {i / 10:.2f}}}\n" for i in range(1, 11))
    cell = {"cell_type": "code", "source": code, "execution_count": 1, "metadata": {},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": logs}]}
    folder = tmp_path / "run"
    folder.mkdir()
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (folder / "train.ipynb").write_text(json.dumps(notebook))
    return folder
