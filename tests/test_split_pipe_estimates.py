"""A from-scratch loop's `iter N | train X | val Y` estimate print (forensics/ingest/pretrain_lines.py, split_pipe).

From corpus batch AS61 (DaraBodla_mini-gpt-pytorch). The notebooks are written in nbformat 4's shape with their outputs
as the libraries print them."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from forensics.ingest import notebook
from forensics.ingest.pretrain_lines import parse_line
from support.notebook_files import counted_notebook as _notebook, stream as _stream


CORPUS = Path(__file__).parent / "realworld"


# --- `iter N | train X | val Y` ---------------------------------------------------------------------------------------

def test_a_pipe_separated_estimate_of_both_splits_with_bare_names_is_read():
    record = parse_line("iter   200 | train 2.5202 | val 2.5344")
    assert (record.kind, record.step, dict(record.metrics)) == (
        "split_pipe", 200, {"train_split_loss": 2.5202, "eval_loss": 2.5344})


@pytest.mark.parametrize("line", ["iter 200 | train 2.5 | val 2.5 | acc 0.91",  # other fields: may be accuracies
                                  "epoch 3 | train 0.91 | val 0.88",  # an epoch's: accuracies as often as losses
                                  "200 | train 2.5 | val 2.5"])  # no counter word
def test_split_fields_beside_other_fields_or_without_an_iteration_counter_are_not_read(line):
    assert parse_line(line) is None


def test_a_from_scratch_notebook_printing_train_and_val_estimates_is_found_and_healthy(tmp_path):
    lines = "".join(f"iter {it:5d} | train {4.13 - it / 1200:.4f} | val {4.12 - it / 1300:.4f}\n"
                    for it in range(0, 3000, 200))
    code = "for it in range(3000):\n    pass"
    folder = _notebook(tmp_path / "run", [(code, [_stream(lines + "Training complete!\n")])])
    a = forensics.analyze(folder)
    assert a.status == "healthy"
    assert a.timeline.series("eval_loss").index[-1] == 2800


def test_the_mini_gpt_notebook_reads_its_sixteen_estimates():
    records = notebook.read(CORPUS / "DaraBodla_mini-gpt-pytorch" / "mini_gpt.ipynb")
    held_out = records.frame[records.frame["metric"] == "eval_loss"]
    assert (len(held_out), held_out["value"].iloc[0], held_out["value"].iloc[-1]) == (16, 4.1249, 1.9162)
