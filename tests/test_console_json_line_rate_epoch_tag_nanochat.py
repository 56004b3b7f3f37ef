"""Tests of the console readers: one JSON line, a held-out loss with a rate, a rising epoch tag,
a nanochat line.

From the logs the tool did not read, or read wrongly, found on real runs (day 7)."""
from __future__ import annotations

import json
import math

import forensics
from support.final_series import _analyze, _series


def test_a_console_with_one_json_line_is_still_a_console(tmp_path):
    """A console whose first line is a JSON dict of the run's arguments (no step, no loss) and then HF dict lines is
    read by the console reader as before, not as JSON lines."""
    lines = [json.dumps({"model": "gpt2", "lr": 1e-4})]
    lines += [str({"loss": round(3.0 - 0.1 * i, 3), "learning_rate": 1e-4, "epoch": round(0.1 * i, 2)})
              for i in range(1, 20)]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    a = _analyze(tmp_path)
    assert {s.format for s in a.timeline.segments} != {"jsonl"}
    assert len(_series(a, "loss")) == 19


def test_a_held_out_loss_with_a_rate_is_no_training_loss(tmp_path):
    """`val_loss: X, lr: Y` lines (an evaluation summary printing the rate) are not a training loss."""
    (tmp_path / "train.log").write_text("".join(f"val_loss: {2.0 - 0.01 * i}, lr: 1e-4\n" for i in range(30)))
    try:
        a = _analyze(tmp_path)
    except forensics.NotARunDirectory:
        return
    assert "loss" not in set(a.timeline.final()["metric"])


# ---- (4) a step counter that restarts each epoch under an `[E<n>]` tag goes on --------------------------------------


def test_an_epoch_tag_rising_with_a_restarted_step_counter_numbers_the_steps_on(tmp_path):
    """`print(f"[E{epoch}] step {step} loss {loss:.4f}")` every 10 steps, the counter back at 0 each epoch, the first
    loss of an epoch a single batch's (sometimes higher than the epoch before ended): the tool read each restart as a
    resume and judged only the last attempts. The tag rises with the restart: the run goes on, at (E - 1) x the
    epoch's steps + step."""
    lines = ["trainable params: 5,898,240 || all params: 4,028,366,336 || trainable%: 0.1464"]
    for epoch in range(1, 4):
        for step in range(0, 2000, 10):
            loss = 2.0 / epoch * (1 - step / 4000) * (4.0 if step == 0 else 1.0 + 0.2 * ((step // 10) % 3))
            lines.append(f"[E{epoch}] step {step} loss {loss:.4f}")
        lines.append(f"Epoch {epoch} avg-loss {1.8 / epoch:.4f}")
    (tmp_path / "train_log.txt").write_text("\n".join(lines + ["Training completed!"]) + "\n")
    a = _analyze(tmp_path)
    loss = _series(a, "loss")
    assert len(loss) == 600 and min(loss) == 0 and max(loss) == 5990
    assert not any(s.abandoned for s in a.timeline.segments)
    assert math.isclose(loss[2000], 2.0 / 2 * 4.0)


# ---- (5) known reading quirks: nanochat's `Step N | Training loss:`; `eval/loss` beside `test/loss` ---------------------


def test_a_nanochat_training_line_without_its_total_is_a_training_line(tmp_path):
    """nanochat's chat_sft printing `Step 00012 | Training loss: 1.234567| lrm: 1.000000| num_tokens: 9,876` (no `/M`)
    was read as an evaluation (eval_loss, eval_lr_multiplier): it is the training loss; `Step N | Validation loss:`
    lines stay the evaluation's."""
    lines = []
    for step in range(1, 41):
        lines.append(f"Step {step:05d} | Training loss: {3.0 * 0.97 ** step:.6f}| lrm: 1.000000| num_tokens: 9,876")
        if step % 10 == 0:
            lines.append(f"Step {step:05d} | Validation loss: {3.1 * 0.975 ** step:.6f}")
    (tmp_path / "chat_sft.log").write_text("\n".join(lines) + "\n")
    a = _analyze(tmp_path)
    loss, held = _series(a, "loss"), _series(a, "eval_loss")
    assert sorted(loss) == list(range(1, 41)) and sorted(held) == [10, 20, 30, 40]
    assert "eval_lr_multiplier" not in set(a.timeline.final()["metric"])
