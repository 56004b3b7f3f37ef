"""Tests of the console readers: a plain tqdm bar with a loss postfix, a count after a time.

From the day-9 reading fixes, each from a real paste the corpus holds (tests/realworld/PROVENANCE.md, batches AQ1 /
AQ3)."""
from __future__ import annotations

from forensics.ingest import stdout


def _metric(frame, name: str) -> list[tuple[int, float]]:
    rows = frame[frame["metric"] == name]
    return list(zip(rows["step"].astype(int).tolist(), rows["value"].round(4).tolist()))


def test_a_plain_tqdm_bar_with_a_loss_postfix_keeps_the_bars_count(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("\r".join(f"Epoch 0: {n * 5}%|#   | {n}/20 [00:0{n % 10}<00:10,  1.00it/s, loss={2.0 - 0.03 * n:.3f}]"
                              for n in range(1, 21)) + "\n", encoding="utf-8")
    assert [step for step, _ in _metric(stdout.read(path).frame, "loss")] == list(range(1, 21))


def test_a_count_after_a_time_mid_line_is_still_a_step():
    from forensics.ingest.console_lines.hand_written import bare_count
    assert bare_count("train 3/10 12:00 loss 2.1").groups() == ("3", "10")
    assert bare_count("10/30 22:18:02 - INFO - [ 200/735] loss: 1").groups() == ("200", "735")
