"""A run folder of trainer_state.json (its log_history) and files beside it, and its analysis."""
from __future__ import annotations

import json

import forensics


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


def _trainer_state(folder, rows, **files):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": rows[-1]["step"], "log_history": rows}))
    for name, text in files.items():
        (folder / name.replace("__", ".")).write_text(text)
    return folder
