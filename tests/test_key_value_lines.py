"""A hand-written loop's `name=value` step lines, counted by a batch or iteration counter, are read.

A loop that logs its locals through loguru (`logger.info(f"[{p:.2f}%] batch_index={i} loss={loss:.4f}")`) writes
`2024-10-26 01:01:49.115 | INFO     | __main__:train:58 - [0.06%] batch_index=64 loss=11.0210`: the counter
(`batch_index`, `batch_idx`, `batch`, `it`) is the step and the loss its loss, as `step=N loss=X` already is. A
from-scratch GPT-2 whose loss falls from about ln(50257) is a healthy pre-training run, not a log with no metric.
Not a counter: `batch_size=8` (a setting printed beside the loss) and `it` in prose.
"""
from __future__ import annotations

import math

import forensics
from forensics.ingest.pretrain_lines import parse_line

_PREFIX = "2024-10-26 01:{:02d}:{:02d}.115 | INFO     | __main__:train:58 - "


def _loguru_console(steps: int = 200, every: int = 64) -> str:
    """A loguru console of a from-scratch GPT-2's own loop: the loss of one micro-batch every `every` batches, from
    about ln(50257) = 10.82 down to about 3.7, with the loop's start and save lines."""
    lines = ["2024-10-26 01:01:14.330 | INFO     | __main__:train:24 - Initialize model",
             "2024-10-26 01:01:25.382 | INFO     | __main__:train:41 - Start training!"]
    total = steps * every
    for n in range(1, steps + 1):
        loss = 3.7 + 7.3 * math.exp(-n / 25) + 0.3 * math.sin(n * 1.7)  # a falling loss with per-batch noise
        stamp = _PREFIX.format(n // 60 % 60, n % 60)
        lines.append(f"{stamp}[{100 * n * every / total:.2f}%] batch_index={n * every} loss={loss:.4f}")
    lines.append("2024-10-26 10:19:07.001 | INFO     | __main__:train:63 - Save the model to ./checkpoints/model.pth")
    return "\n".join(lines) + "\n"


def test_batch_index_pairs_of_a_loguru_line_are_a_step_and_its_loss():
    record = parse_line(_PREFIX.format(1, 49) + "[0.06%] batch_index=64 loss=11.0210")
    assert record is not None and record.step == 64 and dict(record.metrics) == {"loss": 11.021}
    assert parse_line("it=5 loss=2.0312").step == 5
    assert parse_line("batch_idx = 12, loss = 2.5").step == 12


def test_from_scratch_loop_with_batch_index_pairs_is_healthy_pretraining(tmp_path):
    (tmp_path / "train_log.txt").write_text(_loguru_console())
    analysis = forensics.analyze(tmp_path)
    assert analysis.status == "healthy", [(f.kind, f.message) for f in analysis.findings]
    assert analysis.first_incident is None
    profile = analysis.run_profile.to_dict()
    assert (profile["method"], profile["objective"]) == ("full", "pretrain")


def test_batch_size_or_it_in_prose_is_no_counter():
    # a setting beside the loss is no step: nothing counts this line, so it is not a generic step line
    record = parse_line("config: batch_size=8 lr=0.0003 loss=2.31")
    assert record is None or record.step != 8
    assert parse_line("we ran it = 5 times and the loss 2.3 held") is None


def test_a_batch_size_printed_as_batch_equals_is_no_step_counter(tmp_path):
    """`epoch=0 batch=32 lr=0.0001 loss=2.98` (a loop printing its batch size beside the loss, three epochs): read as
    a counter, every epoch's lines sit at one step; they are the loop's 60 prints of a loss that fell."""
    lines = [f"2024-01-01 12:00:00 | INFO | epoch={n // 20} batch=32 lr=0.0001 loss={2.98 - 0.02 * n:.2f}"
             for n in range(60)]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    a = forensics.analyze(tmp_path)
    assert int((a.timeline.frame["metric"] == "loss").sum()) == 60 and a.status == "healthy", a.first_incident
