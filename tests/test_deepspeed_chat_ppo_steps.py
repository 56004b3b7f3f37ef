"""Tests of the DeepSpeed-Chat reader (ingest/deepspeed_chat.py): PPO lines and their steps.

From the day-8 reading fixes, each from a real paste the corpus holds (tests/realworld/PROVENANCE.md, batches AO2 /
AO3).

* DeepSpeed-Chat's PPO lines are put at their own `step: N` (deepspeedai/DeepSpeedExamples issue 586 pastes steps
  259-264), numbered on across epochs where the script's count starts again."""
from __future__ import annotations

from forensics.ingest import stdout
from forensics.ingest.deepspeed_chat import DeepSpeedChat


def _metric(frame, name: str) -> list[tuple[int, float]]:
    rows = frame[frame["metric"] == name]
    return list(zip(rows["step"].astype(int).tolist(), rows["value"].round(4).tolist()))


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
