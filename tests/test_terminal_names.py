"""Names printed on the terminal: a file or folder whose name holds terminal escape codes (ESC [ ...) or other
control characters is shown with them escaped (ESC as `\\x1b`), never sent raw to the terminal; ordinary names,
accents and all, print as they are.

Runs are written in tmp_path the way the HF Trainer writes them; the CLI is run as on a terminal (color=True keeps
what click would otherwise strip from a pipe).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from click.testing import CliRunner

from forensics.analysis import analyze
from forensics.cli import cli
from forensics.report.text import analysis_text

CLEAR_SCREEN = "\x1b[2J"
STEPS = 60


def _trainer_state(folder: Path) -> Path:
    """A trainer_state.json of a run that learned (2.76 falling to about 0.5), a log entry every 5 steps."""
    history = [{"epoch": round(s / STEPS, 4), "grad_norm": 1.2, "learning_rate": 2e-05 * (1 - s / STEPS),
                "loss": round(0.4 + 2.36 * math.exp(-s / 20), 4), "step": s} for s in range(5, STEPS + 1, 5)]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "trainer_state.json"
    path.write_text(json.dumps({"global_step": STEPS, "max_steps": STEPS, "log_history": history}, indent=2))
    return path


def _run_with_unreadable_file_in(tmp_path: Path, folder_name: str) -> Path:
    """A healthy run, and a checkpoint folder named `folder_name` whose trainer_state.json is not JSON (skipped,
    and named on screen)."""
    run = tmp_path / "run"
    _trainer_state(run)
    (run / folder_name).mkdir()
    (run / folder_name / "trainer_state.json").write_text("{\"log_history\": [garbage")
    return run


def _has_control(text: str) -> bool:
    return any(ord(c) < 32 and c != "\n" or 0x7f <= ord(c) < 0xa0 for c in text)


def test_escape_codes_in_a_skipped_files_name_are_escaped_in_the_analyze_output(tmp_path):
    run = _run_with_unreadable_file_in(tmp_path, f"checkpoint-30{CLEAR_SCREEN}")
    for args in (["analyze", str(run)], ["analyze", str(run), "--verbose"]):
        result = CliRunner().invoke(cli, args, color=True)
        assert "\x1b" not in result.output
        assert "checkpoint-30\\x1b[2J/trainer_state.json" in result.output


def test_control_characters_in_a_name_are_escaped_in_the_library_text_report(tmp_path):
    run = _run_with_unreadable_file_in(tmp_path, "checkpoint-30\x07\x9b\u202etxt.exe")
    text = analysis_text(analyze(run), verbose=True)
    assert not _has_control(text) and "\u202e" not in text
    assert "checkpoint-30\\x07\\x9b\\u202etxt.exe/trainer_state.json" in text


def test_escape_codes_in_a_logs_folder_name_are_escaped_in_the_timeline_output(tmp_path):
    _trainer_state(tmp_path / f"out{CLEAR_SCREEN}")
    result = CliRunner().invoke(cli, ["timeline", str(tmp_path)], color=True)
    assert result.exit_code == 0 and "\x1b" not in result.output
    assert "out\\x1b[2J" in result.output


def test_ordinary_names_print_as_they_are(tmp_path):
    run = _run_with_unreadable_file_in(tmp_path, "checkpoint-30 über-日本")
    result = CliRunner().invoke(cli, ["analyze", str(run)], color=True)
    assert "checkpoint-30 über-日本/trainer_state.json" in result.output
    assert "HEALTHY" in result.output and "\\x" not in result.output and "\\u" not in result.output
    assert len(result.output.splitlines()) > 3  # the report's own lines stay lines
