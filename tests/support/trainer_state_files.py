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


def falling_loss_profile(folder, **files):
    """The run profile of ten Trainer log rows of a falling loss (no flag, grad_norm or scaler to read a precision
    from) with `files` beside them (`README__md`: README.md)."""
    rows = [{"step": 10 * (i + 1), "epoch": 0.1 * (i + 1), "loss": 2.0 - 0.1 * i, "learning_rate": 2e-4}
            for i in range(10)]
    return _analyze(_trainer_state(folder, rows, **files)).run_profile
