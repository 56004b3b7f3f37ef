"""A bracketed iteration and share done, `[1000 - 20.0%] loss = 1.3149` (forensics/ingest/pretrain_lines.py).

From corpus batch AS75 (1-sang_data)."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from forensics.ingest.pretrain_lines import parse_line


CORPUS = Path(__file__).parent / "realworld"


# --- `[iteration - percent%] loss = X` ------------------------------------------------------------------------------

def test_a_bracketed_iteration_with_its_share_done_counts_the_step():
    record = parse_line("[1000 - 20.0%] loss = 1.3149")
    assert (record.kind, record.step, dict(record.metrics)) == ("generic", 1000, {"loss": 1.3149})


def test_the_seq2seq_lab_notebook_reads_its_five_prints():
    a = forensics.analyze(CORPUS / "1-sang_data")
    loss = a.timeline.series("loss")
    assert loss.index.tolist() == [1000, 2000, 3000, 4000, 5000]
    assert loss.tolist() == pytest.approx([1.3149, 0.3536, 0.1966, 0.0960, 0.0492])
    assert (a.run_profile.method, a.run_profile.precision) == ("full", "fp32")


@pytest.mark.parametrize("line", ["[20.0%] loss = 1.3149", "[1000 20.0%] loss = 1.3149", "[1000 - 20.0] loss = 1.3149"])
def test_a_bracket_without_both_the_iteration_and_its_share_counts_no_step(line):
    record = parse_line(line)
    assert record is None or record.step != 1000
