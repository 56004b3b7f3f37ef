"""`forensics watch` on runs replayed as their jobs wrote them (tests/replay.py).

Every sample run (made by the real Trainer) and three real public logs are replayed into an empty
folder step by step, with a poll after each step. The expectations come from `analyze` of the
finished run: the watcher must report its first incident with the same kind and step, a point
event at the first poll after the record that shows it, nothing twice, and a checkpoint only
once it is completely written.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import forensics
from forensics.cli import cli
from forensics.watch import Watcher, same_event
from support.replay import replay

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted(p for p in (ROOT / "sample_runs").iterdir() if p.is_dir())
REALWORLD = ROOT.parent / "shared" / "realworld"
REAL_CASES = ["lf-sft-graduate-agent", "llama3.2-1b-webui-training-pro-notes", "mistral-7b-lora-sft"]
POINT_KINDS = {"nonfinite_metric", "masked_nan_loss", "grad_norm_spike", "loss_spike"}


def _replay_and_poll(src: Path, dst: Path, **options) -> tuple[list[tuple[int, object]], Watcher]:
    """Replay src into dst, polling after every yield; returns [(step just written, PollResult)]."""
    dst.mkdir()
    watcher = Watcher(dst, **options)
    polls = [(step, watcher.poll()) for step in replay(src, dst)]
    watcher.close()
    return polls, watcher


def _reported_at(polls, finding) -> int | None:
    """The step the replay had written when `finding` (kind, step) was first reported."""
    for step, result in polls:
        if any(f.kind == finding.kind and f.step == finding.step for f in result.findings):
            return step
    return None


@pytest.mark.parametrize("src", SAMPLES, ids=lambda p: p.name)
def test_sample_run_incident_is_found_live_with_the_step_analyze_gives(src, tmp_path):
    expected = forensics.analyze(src, check_checkpoints=False)
    polls, watcher = _replay_and_poll(src, tmp_path / "live", check_checkpoints=False)
    reported = watcher.reported
    first = expected.first_incident
    if first is None:
        assert not [f for f in reported if f.severity == "error"], reported
        return
    match = [f for f in reported if f.kind == first.kind and f.step == first.step]
    assert match, f"{first.kind}@{first.step} not reported live; got {[f.key for f in reported]}"
    # The same words as analyze; how far the event reaches may still grow after it is first reported.
    assert re.split(r"[,(]", match[0].message)[0] == re.split(r"[,(]", first.message)[0]
    if first.kind in POINT_KINDS:
        assert _reported_at(polls, first) == first.step  # at the first poll after its record


@pytest.mark.parametrize("src", SAMPLES, ids=lambda p: p.name)
def test_nothing_is_reported_twice(src, tmp_path):
    _, watcher = _replay_and_poll(src, tmp_path / "live", check_checkpoints=False)
    reported = watcher.reported
    for i, a in enumerate(reported):
        assert not any(same_event(a, b) for b in reported[i + 1:]), a


def test_checkpoints_are_checked_only_when_complete_and_damage_is_reported(tmp_path):
    src = ROOT / "sample_runs" / "nan_masked"
    polls, watcher = _replay_and_poll(src, tmp_path / "live", check_checkpoints=True)
    checked = [(step, e) for step, r in polls for e in r.checkpoints]
    names = [e.name for _, e in checked]
    assert sorted(names) == ["checkpoint-20", "checkpoint-40", "checkpoint-60"] and len(set(names)) == 3
    status = {e.name: e.status for _, e in checked}
    assert status == {"checkpoint-20": "ok", "checkpoint-40": "nonfinite", "checkpoint-60": "nonfinite"}
    assert all(r.skipped == [] for _, r in polls), "a half-written checkpoint was read"
    assert any(f.kind == "nonfinite_weights" for f in watcher.reported)


@pytest.mark.parametrize("case", REAL_CASES)
def test_real_log_replayed_gives_the_first_incident_of_analyze(case, tmp_path):
    src = REALWORLD / case
    if not src.is_dir():
        pytest.skip(f"{src} not present (../shared/realworld is beside the checkout in CI)")
    expected = forensics.analyze(src)
    _, watcher = _replay_and_poll(src, tmp_path / "live", check_checkpoints=False)
    first = expected.first_incident
    assert first is not None
    assert any(f.kind == first.kind and f.step == first.step for f in watcher.reported), \
        [f.key for f in watcher.reported]


def test_half_written_line_waits_and_a_rotated_log_keeps_its_place(tmp_path):
    log = tmp_path / "trainer_log.jsonl"
    line = lambda s, loss: json.dumps({"current_steps": s, "total_steps": 100, "loss": loss}) + "\n"  # noqa: E731
    log.write_text(line(1, 2.0) + line(2, 1.9) + line(3, 1.8)[:10])
    w = Watcher(tmp_path, check_checkpoints=False)
    assert w.poll().new_rows and w.poll().skipped == []
    with log.open("a") as fh:
        fh.write(line(3, 1.8)[10:])
    assert w.poll().new_rows
    log.rename(tmp_path / "trainer_log.jsonl.1")  # rotated away: nothing new to read
    assert not w.poll().new_rows
    (tmp_path / "trainer_log.jsonl").write_text(line(4, float("nan")))
    found = w.poll().findings
    assert [(f.kind, f.step) for f in found] == [("nonfinite_metric", 4)]
    timeline_steps = sorted({int(s) for t in w._tails.values() for c in t.chunks for s in c.frame["step"]})
    assert timeline_steps == [1, 2, 3, 4]
    w.close()


def test_a_restarted_job_starts_a_new_segment_not_a_finding(tmp_path):
    log = tmp_path / "trainer_log.jsonl"
    rows = [{"current_steps": s, "total_steps": 40, "loss": 3.0 - s / 20} for s in range(1, 21)]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    w = Watcher(tmp_path, check_checkpoints=False)
    w.poll()
    with log.open("a") as fh:  # resumed from step 10
        fh.write("".join(json.dumps(r) + "\n" for r in rows[9:]))
    result = w.poll()
    assert [f for f in result.findings if f.severity != "info"] == []
    segments = w.timeline().segments
    assert [(s.first_step, s.last_step) for s in segments] == [(1, 20), (10, 20)]  # as analyze reads it
    w.close()


def test_trainer_state_replaced_by_rename_supersedes_the_old_one(tmp_path):
    def save(steps, losses):
        tmp = tmp_path / "trainer_state.json.tmp"
        history = [{"step": s, "loss": v, "grad_norm": 1.0} for s, v in zip(steps, losses)]
        tmp.write_text(json.dumps({"global_step": steps[-1], "log_history": history}))
        tmp.rename(tmp_path / "trainer_state.json")

    w = Watcher(tmp_path, check_checkpoints=False)
    save([10, 20], [2.0, 1.9])
    w.poll()
    save([10, 20, 30], [2.0, 1.9, float("nan")])
    assert [(f.kind, f.step) for f in w.poll().findings] == [("nonfinite_metric", 30)]
    assert len(w.timeline().segments) == 1 and len(w._tails) == 1
    w.close()


def test_cli_json_lines_and_fail_on(tmp_path):
    src = ROOT / "sample_runs" / "nan_masked"
    dst = tmp_path / "done"
    for _ in replay(src, dst):
        pass
    result = CliRunner().invoke(cli, ["watch", str(dst), "--json-lines", "--max-polls", "1", "--no-checkpoints"])
    lines = [json.loads(ln) for ln in result.output.splitlines()]
    assert result.exit_code == 1
    kinds = {(d["kind"], d["step"]) for d in lines if d.get("event") == "finding"}
    assert ("nonfinite_metric", 35) in kinds
    stop = CliRunner().invoke(cli, ["watch", str(dst), "--fail-on", "warning", "--interval", "0", "--no-checkpoints"])
    assert stop.exit_code == 1 and stop.output.startswith("step 35") and len(stop.output.splitlines()) == 1


def test_cli_missing_folder_is_one_line_exit_2(tmp_path):
    result = CliRunner().invoke(cli, ["watch", str(tmp_path / "nope")])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1


def test_writer_process_and_watcher_side_by_side(tmp_path):
    """A real writer process replays a run while the watcher polls on its own clock."""
    src, dst = ROOT / "sample_runs" / "spike_recovers", tmp_path / "live"
    writer = subprocess.Popen([sys.executable, str(Path(__file__).parent / "support" / "replay.py"), str(src), str(dst),
                               "--delay", "0.02"])
    dst.mkdir(exist_ok=True)
    with Watcher(dst, check_checkpoints=False) as w:
        while writer.poll() is None:
            w.poll()
        w.poll()
        reported = w.reported
    expected = forensics.analyze(src, check_checkpoints=False)
    assert {(f.kind, f.step) for f in expected.findings if f.severity != "info"} <= {(f.kind, f.step) for f in reported}
    for i, a in enumerate(reported):
        assert not any(same_event(a, b) for b in reported[i + 1:])
