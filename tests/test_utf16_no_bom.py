"""A log written as UTF-16 without a byte-order mark (Python's `open(..., encoding="utf-16-le")`, .NET's
Encoding.Unicode streams, `iconv -t UTF-16LE`) is read as UTF-16 because every other byte is zero, and named with a
note; a UTF-8 log, a NUL-filled stretch included, is read as it was.

Runs are written in tmp_path the way their writers write them: the HF Trainer's trainer_state.json
(json.dumps, indent 2), a console log of the Trainer's dict lines.
"""
from __future__ import annotations

import json
import math

from forensics.analysis import analyze, load_timeline

STEPS = 60


def _losses() -> list[float]:
    """A run that learned: 2.76 falling to about 0.5."""
    return [round(0.4 + 2.36 * math.exp(-s / 20), 4) for s in range(1, STEPS + 1)]


def _trainer_state_text() -> str:
    history = [{"epoch": round(s / STEPS, 4), "grad_norm": 1.2, "learning_rate": 2e-05 * (1 - s / STEPS),
                "loss": _losses()[s - 1], "step": s} for s in range(5, STEPS + 1, 5)]
    return json.dumps({"global_step": STEPS, "max_steps": STEPS, "log_history": history}, indent=2)


def _console_text() -> str:
    """The Trainer's console: one dict line a logging step, as `print(logs)` writes it."""
    lines = [str({"loss": _losses()[s - 1], "grad_norm": 1.2, "learning_rate": 2e-05, "epoch": round(s / STEPS, 2)})
             for s in range(5, STEPS + 1, 5)]
    return "\n".join(lines) + "\n"


def _encoding_notes(analysis) -> list[str]:
    return [s.reason for s in analysis.skipped if s.note and "UTF-16" in s.reason]


def test_trainer_state_in_utf16_le_without_bom_is_read_and_named(tmp_path):
    (tmp_path / "trainer_state.json").write_bytes(_trainer_state_text().encode("utf-16-le"))
    analysis = analyze(tmp_path)
    assert list(load_timeline(tmp_path).series("loss").index) == list(range(5, STEPS + 1, 5))
    assert analysis.status == "healthy"
    assert any("UTF-16 LE" in n and "no byte-order mark" in n for n in _encoding_notes(analysis))


def test_console_log_in_utf16_be_without_bom_is_found_read_and_named(tmp_path):
    (tmp_path / "train.log").write_bytes(_console_text().encode("utf-16-be"))
    analysis = analyze(tmp_path)
    assert len(load_timeline(tmp_path).series("loss")) == STEPS // 5
    assert analysis.status == "healthy"
    assert any("UTF-16 BE" in n for n in _encoding_notes(analysis))


def test_utf8_logs_with_a_nul_filled_stretch_are_read_as_utf8_without_a_note(tmp_path):
    (tmp_path / "trainer_state.json").write_text(_trainer_state_text())
    # a console log whose writer preallocated its file: NUL bytes after the lines, zero in both byte positions
    (tmp_path / "train.log").write_bytes(_console_text().encode() + bytes(8192))
    analysis = analyze(tmp_path)
    assert analysis.status == "healthy" and not _encoding_notes(analysis)
    assert list(load_timeline(tmp_path).series("loss").index)[-1] == STEPS


def test_utf16_with_bom_is_read_without_a_guess_note(tmp_path):
    (tmp_path / "trainer_state.json").write_bytes(_trainer_state_text().encode("utf-16"))
    analysis = analyze(tmp_path)
    assert analysis.status == "healthy" and not _encoding_notes(analysis)
