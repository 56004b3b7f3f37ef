"""A trainer_state.json written from a log history, its analysis and the kinds of its findings."""
from __future__ import annotations

import json

import forensics


def _write_state(folder, log, **state):
    """An HF Trainer trainer_state.json: its log_history and global_step, with `max_steps` and any other field."""
    last = max(r["step"] for r in log)
    body = {"log_history": log, "global_step": last, "max_steps": state.pop("max_steps", last), **state}
    (folder / "trainer_state.json").write_text(json.dumps(body, indent=1))


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


def _kinds(analysis) -> list[str]:
    return [f.kind for f in analysis.findings]
