"""A hand-written classifier loop's `progress: P  loss: M (G)` lines (forensics/ingest/console_lines/stepless.py,
progress_loss): P the epochs done as a fraction (0.94, ... 4.99), M the median of the last 20 batch losses and G
their global mean (a SmoothedValue's `{median} ({global_avg})`, as the MetricLogger prints its meters). The median is
the loss point; the step is the line's place among them (the fraction is rounded to two decimals: not a counter).

From corpus batch AS104 (ShangQingTu_buaa_ML_teamwork: ckpt/log.txt, 510 lines over 5 epochs)."""
from __future__ import annotations

from pathlib import Path

from forensics.ingest import stdout
from forensics.ingest.pretrain_lines import parse_line

_PREFIX = "2021-12-05 19:12:26,690 Classify INFO: "
_COPIED = ("progress: 0.92  loss: 0.6363 (0.7014)", "progress: 0.93  loss: 0.8840 (0.7035)",
           "progress: 0.94  loss: 1.0465 (0.7071)", "progress: 0.95  loss: 1.0455 (0.7106)")


def _log(lines: int = 30) -> str:
    head = _PREFIX + "max_epoch:5\n" + _PREFIX + "[1] Building model\n"
    body = [f"{_PREFIX}progress: {(i + 1) / 100:.2f}  loss: {1.0 - i / 100:.4f} ({1.02 - i / 200:.4f})\n"
            for i in range(lines - len(_COPIED))]
    return head + "".join(body) + "".join(_PREFIX + line + "\n" for line in _COPIED) + _PREFIX + "last dummy batch\n"


def test_a_progress_line_reads_the_window_median_as_the_loss():
    record = parse_line(_PREFIX + "progress: 0.94  loss: 1.0465 (0.7071)")
    assert record is not None and dict(record.metrics)["loss"] == 1.0465
    assert dict(record.metrics)["epoch"] == 0.94


def test_progress_lines_are_numbered_by_their_place_in_the_file(tmp_path: Path):
    path = tmp_path / "log.txt"
    path.write_text(_log())
    frame = stdout.read(path).frame
    loss = frame[frame.metric == "loss"]
    assert loss.step.tolist() == list(range(1, 31))
    assert loss.value.tolist()[-4:] == [0.6363, 0.8840, 1.0465, 1.0455]


def test_near_misses_of_a_progress_line_stay_unread():
    """A percent, not a fraction; a line that goes on after the mean; a last line cut before its mean."""
    assert parse_line("progress: 45%  loss: 1.0465 (0.7071)") is None
    assert parse_line("progress: 0.94  loss: 1.0465 (0.7071) of the data in the cache") is None
    assert parse_line("progress: 0.94  loss: 1.04", last_line=True) is None
