"""The PyTorch NLP tutorials' progress print with no word in it, `1m 1s (500 3%) 4.2725`
(forensics/ingest/console_lines/elapsed_percent.py, log_hints.py).

From corpus batch AS75 (164887081_python-)."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from forensics.ingest.console_lines import elapsed_percent
from forensics.discover.log_hints import log_hinted


CORPUS = Path(__file__).parent / "realworld"
# the mean loss every 500 iterations, falling with batch-1 noise (164887081_python-'s first and last prints)
_LOSSES = [4.2725, 3.7417, 3.5464, 3.4867, 3.3409, 3.2846, 3.2149, 3.1602, 3.0440, 3.0399, 2.8851, 2.9064]


def _tutorial_prints(time_left: bool) -> str:
    n = len(_LOSSES) * 500
    lines = []
    for i, loss in enumerate(_LOSSES):
        it = (i + 1) * 500
        spent = f"{it // 500}m {it % 60}s"
        left = f" (- {(n - it) // 500}m 2s)" if time_left else ""
        lines.append(f"{spent}{left} ({it} {it * 100 // n}%) {loss:.4f}\n")
    return "".join(lines)


# --- the tutorial's `elapsed (iteration percent%) loss` -------------------------------------------------------------

@pytest.mark.parametrize("time_left", [False, True])
def test_the_tutorial_progress_print_is_read_as_the_loss_at_its_iteration(tmp_path, time_left):
    (tmp_path / "train.log").write_text(_tutorial_prints(time_left))
    a = forensics.analyze(tmp_path)
    loss = a.timeline.series("loss")
    assert loss.index.tolist() == [500 * (i + 1) for i in range(len(_LOSSES))]
    assert loss.tolist() == pytest.approx(_LOSSES)
    assert a.status == "healthy"


def test_the_seq2seq_tutorial_notebook_is_read_and_healthy():
    a = forensics.analyze(CORPUS / "164887081_python-")
    loss = a.timeline.series("loss")
    assert (len(loss), loss.index[0], loss.iloc[0], loss.index[-1], loss.iloc[-1]) == (26, 500, 4.2725, 13000, 2.4786)
    assert a.status == "healthy" and a.causes == []


@pytest.mark.parametrize("line", ["(500 3%) 4.2725",  # no elapsed time before it
                                  "1m 1s (500 3%)",  # no loss after it
                                  "1m 1s 500 3% 4.2725",  # no parentheses
                                  "took 1m 1s (500 3%) 4.2725 on the GPU"])  # prose around it
def test_a_line_short_of_the_tutorial_print_is_not_read_as_it(line):
    assert elapsed_percent.read_line(line) is None
    assert not log_hinted(((line + "\n") * 5).encode())
