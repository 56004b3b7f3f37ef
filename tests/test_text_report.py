"""The text report as a terminal shows it: one screen for a clear case, the rest behind --verbose.

Expected contents come from how each sample run was made (its `.facts.json`), not from the tool.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from forensics.cli import cli
from forensics.report.story import QUESTIONS

SAMPLES = Path(__file__).resolve().parents[1] / "sample_runs"
RUNS = sorted(p.name for p in SAMPLES.iterdir() if p.is_dir())


def _text(run: str, *extra: str) -> str:
    return CliRunner().invoke(cli, ["analyze", str(SAMPLES / run), "--workers", "1", *extra]).output


def _facts(run: str) -> dict:
    return json.loads((SAMPLES / f"{run}.facts.json").read_text())


@pytest.mark.parametrize("run", RUNS)
def test_a_sample_run_fits_one_screen(run):
    lines = _text(run).splitlines()
    assert len(lines) <= 25, "\n".join(lines)
    assert max(len(line) for line in lines) <= 100


@pytest.mark.parametrize("run", RUNS)
def test_the_summary_says_the_verdict_first_incident_and_last_good_checkpoint(run):
    facts, text = _facts(run), _text(run)
    assert text.startswith(facts["expected_status"].upper() + ":")
    if facts["first_nonfinite_step"] is not None and facts["expected_status"] == "broken":
        assert "First incident" in text
    if facts["last_good_checkpoint"] and facts["first_bad_checkpoint"]:
        (line,) = [ln for ln in text.splitlines() if ln.startswith("Last good")]
        assert facts["last_good_checkpoint"] in line and facts["first_bad_checkpoint"] in line


def test_a_healthy_verdict_names_the_evidence_that_the_run_learned():
    history = json.loads((SAMPLES / "healthy" / "trainer_state.json").read_text())["log_history"]
    losses = [e["loss"] for e in history if "loss" in e]
    text = _text("healthy")
    (line,) = [ln for ln in text.splitlines() if ln.startswith("Learned")]
    assert line.split()[1] == "loss" and f"{len(losses)} points" in line
    d = json.loads(_text("healthy", "--json"))
    evidence = d["learning_evidence"]
    assert evidence["metric"] == "loss" and evidence["end"] < evidence["start"] and evidence["n_points"] == len(losses)
    assert "it learned" in _text("healthy", "--verbose")


def test_damaged_blocks_use_the_one_range_notation():
    facts, text = _facts("qwen1_names"), _text("qwen1_names")
    bad = facts["checkpoints"][facts["first_bad_checkpoint"]]["nonfinite_blocks"]
    assert sorted(bad) == ["transformer.h.21", "transformer.h.22", "transformer.h.23"]
    (line,) = [ln for ln in text.splitlines() if ln.startswith("Damaged blocks")]
    assert "transformer.h.21-23" in line


def test_verbose_adds_the_four_answers_in_full():
    short, full = _text("nan_masked"), _text("nan_masked", "--verbose")
    assert full.startswith(short)
    for question in QUESTIONS:
        assert question in full and question not in short


@pytest.mark.parametrize("run", RUNS)
def test_no_maybe_plurals_in_what_a_person_reads(run):
    assert "(s)" not in _text(run, "--verbose")


def test_a_checkpoint_left_as_a_git_lfs_pointer_is_said_unreadable_not_finite(tmp_path):
    """A run folder cloned without `git lfs pull`: its model.safetensors is the pointer's three lines. The summary
    must not count it among the finite checkpoints; the verbose answer says it is an LFS pointer."""
    import shutil
    run = tmp_path / "cloned"
    shutil.copytree(SAMPLES / "healthy", run)
    for ckpt in sorted(run.glob("checkpoint-*")):
        for weights in ckpt.glob("*.safetensors"):
            weights.write_bytes(b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"ab" * 32 + b"\nsize 99\n")
    out = CliRunner().invoke(cli, ["analyze", str(run), "--workers", "1", "--verbose"]).output
    (line,) = [ln for ln in out.splitlines() if ln.startswith("Checkpoints") or ln.startswith("Last good")]
    assert "all finite" not in line and "not readable" in line, line
    assert "Git LFS pointer" in out and "git lfs pull" in out


def test_a_cause_about_how_the_loss_was_logged_is_a_note_on_the_log_beside_another_first_incident():
    """AMindToThink's ORPO never learned; its training loss is also logged summed over 8 accumulation steps. That is
    true of the log and is said, but not as the cause of a model that never learned."""
    run = Path(__file__).parent / "realworld" / "AMindToThink_interpretable-fine-tuning"
    result = CliRunner().invoke(cli, ["analyze", str(run)])
    labels = [line[:16].strip() for line in result.output.splitlines()]
    assert "About the log" in labels and "Cause" not in labels
