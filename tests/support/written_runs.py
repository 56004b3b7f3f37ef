"""Run folders written file by file (a trainer_state.json, any text file) and the analysis of them, for the tests of
the reading rules' near misses."""
from __future__ import annotations

import json

import forensics


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


def _write(folder, name, text, newline=None):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, newline=newline)
    return folder


def _kinds(a):
    return [(f.kind, f.step) for f in a.findings]


def _trainer_state(folder, log_history):
    return _write(folder, "trainer_state.json", json.dumps({"log_history": log_history,
                                                            "global_step": log_history[-1]["step"]}))
