"""A console log whose loss went down and came most of the way back up is no evidence of learning: a least-squares
line tilts down over the dip, but the run did not end lower than it started by more than its own swings
(`fall_measure.came_back_up`); a noisy log of the same shape that really descends still shows learning."""
from __future__ import annotations

import math

from forensics import analyze


def _opennmt_log(tmp_path, xents: list[float], first_batch: int = 20050):
    """OpenNMT-py's (2018) report lines, one every 50 batches of epoch 1, as its trainer prints them."""
    lines = []
    for i, xent in enumerate(xents):
        batch, elapsed = first_batch + 50 * i, 12000 + 38 * i
        lines.append(f"Epoch  1, {batch}/41000; acc:  {max(1.0, 40 - 3 * xent):5.2f}; ppl: {math.exp(xent):.2f}; "
                     f"xent: {xent:6.2f}; 3600 src tok/s; 3680 tgt tok/s; {elapsed:6d} s elapsed\n")
    (tmp_path / "train.log").write_text("".join(lines))
    return tmp_path


def test_a_dip_that_came_back_up_is_no_learning_evidence(tmp_path):
    a = analyze(_opennmt_log(tmp_path, [9.8, 10.1, 9.6, 9.7, 8.9, 8.0, 7.5, 7.6, 7.9, 9.3, 9.5]))
    assert a.status == "warning"
    assert a.first_incident.kind == "no_learning_evidence"
    assert "came back up" in a.first_incident.message


def test_a_noisy_log_that_descends_still_learned(tmp_path):
    """The same eleven report lines, as noisy, going down and staying down."""
    a = analyze(_opennmt_log(tmp_path, [9.8, 10.1, 9.6, 9.7, 8.9, 8.0, 7.5, 7.6, 7.3, 7.0, 7.1]))
    assert a.status == "healthy", [f.message for f in a.findings]
    assert a.learning is not None
