"""Small logs as the libraries write them (a trainer_state.json, a console) and the kinds of findings judged on them."""
from __future__ import annotations

import json


def _trainer_state(folder, history, **extra):
    folder.mkdir(parents=True, exist_ok=True)
    state = {"global_step": max(h["step"] for h in history), "log_history": history, **extra}
    (folder / "trainer_state.json").write_text(json.dumps(state, indent=2))
    return folder


def _kinds(analysis):
    return {f.kind for f in analysis.findings if f.severity in ("warning", "error")}


def _console(folder, lines, name="train.log"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(line + "\n" for line in lines))
    return folder
