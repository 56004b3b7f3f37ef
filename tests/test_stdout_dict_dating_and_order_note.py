"""Tests of the console reader's dating of dicts (ingest/stdout.py): bars, stated logging
steps, a W&B summary, the note where only their order dates them.

From the day-11 reading fixes of consoles and run records (a reviewer's built runs, /tmp/rev8 of that day).

* A tqdm capture whose carriage returns were deleted holds each dict on one line after the bar redraws since the last
  one: the reading just before the dict dates it, not the previous line's last reading (every incident was one
  logging interval early).
* The Trainer's printed dicts with no bar and no closing summary (a killed run) were numbered 1, 2, 3 ... though the
  run states its logging_steps (the printed launch command, a W&B run's config.yaml beside its output.log, or the
  summary's last global_step): they are numbered by it now; where nothing states it, a note says the steps are the
  dicts' order."""
from __future__ import annotations

import io
import json
import math

import numpy as np
import tqdm

import forensics
from forensics.ingest import stdout


_TOTAL, _EVERY = 300, 5


def _trainer_console(losses: dict[int, float], total: int = _TOTAL) -> str:
    """What the HF Trainer prints to a console: its tqdm bar moved on each step, then at each logging step the
    ProgressCallback's dict written through `tqdm.write` (the real writer, so the bar's clear and redraw are real)."""
    buf = io.StringIO()
    bar = tqdm.tqdm(total=total, file=buf, mininterval=0, ncols=100)
    rng = np.random.default_rng(0)
    for step in range(1, max(losses) + 1):
        bar.update(1)
        if step in losses:
            pairs = {"loss": losses[step], "grad_norm": round(float(rng.uniform(0.8, 1.4)), 4),
                     "learning_rate": 2e-4 * (1 - step / total), "epoch": round(step / 100, 2)}
            tqdm.tqdm.write(str(pairs), file=buf)
    return buf.getvalue()


def _healthy_losses(until: int = _TOTAL) -> dict[int, float]:
    rng = np.random.default_rng(1)
    return {s: round(2.6 * math.exp(-s / 150) + 0.6 + float(rng.normal(0, 0.03)), 4)
            for s in range(_EVERY, until + 1, _EVERY)}


def _loss_steps(text: str, tmp_path) -> list[int]:
    path = tmp_path / "train.log"
    path.write_text(text)
    frame = stdout.read(path).frame
    return frame[frame["metric"] == "loss"]["step"].astype(int).tolist()


def test_dict_after_its_own_bar_on_a_line_without_carriage_returns_is_dated_by_that_bar(tmp_path):
    losses = _healthy_losses(until=125)
    losses[125] = float("nan")  # a run killed after its loss went NaN at step 125
    text = _trainer_console(losses).replace("\r", "")
    assert _loss_steps(text, tmp_path) == list(range(_EVERY, 130, _EVERY))
    analysis = forensics.analyze(tmp_path)
    assert analysis.status == "broken"
    assert analysis.first_incident.kind in ("nonfinite_metric", "nonfinite_loss")
    assert analysis.first_incident.step == 125


def test_a_healthy_capture_reads_the_same_with_or_without_its_carriage_returns(tmp_path):
    text = _trainer_console(_healthy_losses())
    kept, stripped = tmp_path / "kept", tmp_path / "stripped"
    kept.mkdir()
    stripped.mkdir()
    expected = list(range(_EVERY, _TOTAL + 1, _EVERY))
    assert _loss_steps(text, kept) == expected
    assert _loss_steps(text.replace("\r", ""), stripped) == expected
    assert forensics.analyze(stripped).status == "healthy"


def _killed_losses() -> dict[int, float]:
    """A run whose loss went NaN at step 125 and was killed at step 300, before its closing summary."""
    losses = _healthy_losses()
    return {s: (float("nan") if s >= 125 else loss) for s, loss in losses.items()}


def _dict_lines(losses: dict[int, float]) -> str:
    """The Trainer's dicts as a console without its progress bar keeps them (stderr not captured)."""
    return "".join(str({"loss": loss, "grad_norm": float("nan") if math.isnan(loss) else 1.0,
                        "learning_rate": 2e-4 * (1 - s / _TOTAL), "epoch": round(s / 100, 2)}) + "\n"
                   for s, loss in losses.items())


def _wandb_files(folder, config: dict, summary: dict, losses: dict[int, float]):
    """A W&B run folder's files/: output.log (its copy of the console), config.yaml and wandb-summary.json."""
    files = folder / "wandb" / "run-20250101_000000-abcd1234" / "files"
    files.mkdir(parents=True)
    (files / "output.log").write_text(_dict_lines(losses))
    (files / "config.yaml").write_text("_wandb:\n  value:\n    cli_version: 0.18.0\n" + "".join(
        f"{k}:\n  value: {str(v).lower() if isinstance(v, bool) else v}\n" for k, v in config.items()))
    (files / "wandb-summary.json").write_text(json.dumps({"_step": len(losses), "_runtime": 1000, **summary}))
    return forensics.analyze(folder)


def _first(analysis) -> tuple:
    return analysis.status, analysis.first_incident.kind, analysis.first_incident.step


def test_killed_wandb_console_is_numbered_by_the_logging_steps_its_config_states(tmp_path):
    analysis = _wandb_files(tmp_path, {"learning_rate": 2e-4, "logging_steps": _EVERY}, {"train/loss": None},
                            _killed_losses())
    assert _first(analysis) == ("broken", "nonfinite_metric", 125)
    assert sorted(analysis.timeline.series("loss").index) == list(range(_EVERY, _TOTAL + 1, _EVERY))


def test_killed_wandb_console_is_numbered_by_the_summary_last_global_step(tmp_path):
    """No logging_steps in the config: the summary's train/global_step (the last dict's step) over the dicts says 5."""
    analysis = _wandb_files(tmp_path, {"learning_rate": 2e-4}, {"train/global_step": _TOTAL, "train/epoch": 3.0},
                            _killed_losses())
    assert _first(analysis) == ("broken", "nonfinite_metric", 125)
    assert analysis.timeline.series("loss").index.max() == _TOTAL


def test_console_dicts_are_numbered_by_the_launch_command_logging_steps(tmp_path):
    path = tmp_path / "train.log"
    path.write_text(f"torchrun --nproc_per_node 2 train.py --logging_steps {_EVERY} --bf16 True\n"
                    + _dict_lines(_killed_losses()))
    analysis = forensics.analyze(tmp_path)
    assert _first(analysis) == ("broken", "nonfinite_metric", 125)


def test_logging_first_step_puts_the_first_dict_at_step_one(tmp_path):
    losses = {1: 3.2, **_healthy_losses()}
    analysis = _wandb_files(tmp_path, {"logging_steps": _EVERY, "logging_first_step": True}, {}, losses)
    steps = sorted(analysis.timeline.series("loss").index)
    assert steps[:3] == [1, _EVERY, 2 * _EVERY] and steps[-1] == _TOTAL
    assert analysis.status == "healthy"


def test_dicts_that_nothing_dates_carry_a_note_that_their_steps_are_their_order(tmp_path):
    (tmp_path / "train.log").write_text(_dict_lines(_killed_losses()))
    analysis = forensics.analyze(tmp_path)
    notes = [s.reason for s in analysis.skipped if s.note]
    assert any("their steps are their order in the log" in note for note in notes), notes


def test_a_finished_healthy_console_is_dated_by_its_summary_and_gets_no_order_note(tmp_path):
    """The closing summary (train_runtime x train_steps_per_second) gives the interval: no note, steps 5 to 300."""
    summary = str({"train_runtime": 600.0, "train_samples_per_second": 4.0, "train_steps_per_second": 0.5,
                   "train_loss": 1.2, "epoch": 3.0})
    (tmp_path / "train.log").write_text(_dict_lines(_healthy_losses()) + summary + "\n")
    analysis = forensics.analyze(tmp_path)
    assert analysis.status == "healthy"
    assert sorted(analysis.timeline.series("loss").index) == list(range(_EVERY, _TOTAL + 1, _EVERY))
    assert not any("their order in the log" in s.reason for s in analysis.skipped if s.note)
