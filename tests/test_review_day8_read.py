"""Day 8 reading fixes, each from a real paste the corpus holds (tests/realworld/PROVENANCE.md, batches AO2 / AO3).

* HF Trainer dict lines pasted with typographic quotes (`{‘loss’: 1.453, ...}`, huggingface/transformers issue
  33336) are read as the plain-quoted dicts they are.
* DeepSpeed-Chat's PPO lines are put at their own `step: N` (deepspeedai/DeepSpeedExamples issue 586 pastes steps
  259-264), numbered on across epochs where the script's count starts again.
"""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest import stdout
from forensics.ingest.deepspeed_chat import DeepSpeedChat


def _metric(frame, name: str) -> list[tuple[int, float]]:
    rows = frame[frame["metric"] == name]
    return list(zip(rows["step"].astype(int).tolist(), rows["value"].round(4).tolist()))


# ---- typographic quotes in a Trainer dict line -------------------------------------------------------------------

def _trainer_dicts(path: Path, open_q: str, close_q: str) -> Path:
    lines = []
    for i in range(12):
        loss = 1.45 + 0.015 * i
        lr = 5e-5 * (1 - 4 * (i + 1) / 63)
        keys = [f"{open_q}{k}{close_q}" for k in ("loss", "grad_norm", "learning_rate", "epoch")]
        lines.append("{" + f"{keys[0]}: {loss:.4f}, {keys[1]}: 2.5, {keys[2]}: {lr}, {keys[3]}: {0.19 * (i + 1):.2f}"
                     + "}\n")
    (path / "train.log").write_text("".join(lines), encoding="utf-8")
    return path


def test_trainer_dicts_with_typographic_single_quotes_are_read(tmp_path):
    frame = stdout.read(_trainer_dicts(tmp_path, "\u2018", "\u2019") / "train.log").frame
    assert len(_metric(frame, "loss")) == 12 and _metric(frame, "loss")[0][1] == 1.45
    a = forensics.analyze(tmp_path)
    assert a.run_profile.framework == "hf_trainer"


def test_trainer_dicts_with_typographic_double_quotes_are_read(tmp_path):
    frame = stdout.read(_trainer_dicts(tmp_path, "\u201c", "\u201d") / "train.log").frame
    assert len(_metric(frame, "loss")) == 12


def test_plain_quoted_trainer_dicts_read_as_before(tmp_path):
    frame = stdout.read(_trainer_dicts(tmp_path, "'", "'") / "train.log").frame
    assert [v for _, v in _metric(frame, "loss")] == [round(1.45 + 0.015 * i, 4) for i in range(12)]


# ---- DeepSpeed-Chat PPO steps ------------------------------------------------------------------------------------

def _ppo_lines(epochs_steps: list[tuple[int, int]]) -> list[str]:
    lines = []
    for epoch, step in epochs_steps:
        lines += [f"epoch: {epoch}|step: {step}|ppo_ep: 1|act_loss: 0.02|cri_loss: 0.21|unsuper_loss: 0.0",
                  f"average reward score: {0.2 + step / 1000}", "-" * 85]
    return lines


def _ppo_steps(lines: list[str]) -> list[tuple[int, str]]:
    chat = DeepSpeedChat()
    return [(r.step, r.metrics[0][0]) for r in (chat.feed(line) for line in lines) if r is not None]


def test_deepspeed_chat_ppo_lines_are_put_at_their_printed_step():
    steps = _ppo_steps(_ppo_lines([(0, s) for s in range(259, 265)]))
    assert [s for s, name in steps if name == "actor_loss"] == list(range(259, 265))
    assert [s for s, name in steps if name == "reward"] == list(range(259, 265))


def test_a_pasted_ppo_excerpt_is_dated_at_its_own_steps(tmp_path):
    (tmp_path / "train.log").write_text("\n".join(_ppo_lines([(0, s) for s in range(259, 265)])) + "\n")
    frame = stdout.read(tmp_path / "train.log").frame
    assert [s for s, _ in _metric(frame, "reward")] == list(range(259, 265))


def test_deepspeed_chat_ppo_steps_counted_from_0_each_epoch_are_numbered_on():
    steps = _ppo_steps(_ppo_lines([(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]))
    assert [s for s, name in steps if name == "actor_loss"] == [0, 1, 2, 3, 4]


def test_a_ppo_log_from_step_0_keeps_its_numbering():
    steps = _ppo_steps(_ppo_lines([(0, s) for s in range(5)]))
    assert [s for s, name in steps if name == "actor_loss"] == [0, 1, 2, 3, 4]
