"""A notebook cut part-way (a copy taken while it was saved, a download that stopped) or damaged in the middle (bytes
that are no JSON between two cells): the cells before the break are read, the rest left out and said, as a cut
trainer_state.json keeps its complete log_history entries.

The notebooks are written by nbformat's own writer (sorted keys, one space indent: `cells` first), and in Colab's key
order (`nbformat`, `nbformat_minor`, `metadata`, then `cells` last); the losses compared come from how the cells were
made. scripts/cut_corpus_copies.py found every cut or damaged corpus notebook read as nothing at all.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

import forensics
from forensics.errors import UnreadableFile
from forensics.ingest import notebook

STEPS = 200
TESTS = Path(__file__).resolve().parent


def _losses() -> list[float]:
    return [round(0.4 + 2.36 * math.exp(-s / 40) + 0.02 * math.sin(s * 1.7), 4) for s in range(1, STEPS + 1)]


def _training_lines() -> str:
    """The HF Trainer's console dicts, one every 5 steps, then its closing summary."""
    losses = _losses()
    lines = [f"{{'loss': {losses[s - 1]}, 'grad_norm': 1.2, 'learning_rate': 2e-05, 'epoch': {s / STEPS:.2f}}}\n"
             for s in range(5, STEPS + 1, 5)]
    return "".join(lines) + "{'train_runtime': 120.5, 'train_samples_per_second': 13.3, 'train_loss': 0.9}\n"


def _cells() -> list:
    """Set-up, the training cell, then two cells after it (an evaluation print, a save)."""
    return [new_code_cell("from transformers import Trainer", execution_count=1),
            new_code_cell("trainer.train()", execution_count=2,
                          outputs=[new_output("stream", name="stdout", text=_training_lines())]),
            new_code_cell("print(trainer.evaluate())", execution_count=3,
                          outputs=[new_output("stream", name="stdout", text="{'eval_loss': 0.52}\n")]),
            new_code_cell("trainer.save_model('out')", execution_count=4,
                          outputs=[new_output("stream", name="stdout", text="Saving model checkpoint to out\n" * 40)])]


def _jupyter_text() -> str:
    return nbformat.writes(new_notebook(cells=_cells()))


def _colab_text() -> str:
    """Colab's order of the top keys: the cells come last."""
    nb = json.loads(_jupyter_text())
    return json.dumps({"nbformat": 4, "nbformat_minor": 0, "metadata": nb["metadata"], "cells": nb["cells"]})


def _in_last_cell(text: str) -> int:
    """An offset inside the last cell's output ("Saving model checkpoint ..."), past every other cell."""
    return text.index("Saving model checkpoint to out") + 20


def _losses_read(path) -> list[float]:
    frame = notebook.read(path).frame
    return list(frame[frame.metric == "loss"].value)


EXPECTED = [_losses()[s - 1] for s in range(5, STEPS + 1, 5)]


@pytest.mark.parametrize("writer", [_jupyter_text, _colab_text])
def test_a_notebook_cut_in_a_later_cell_keeps_the_training_cell_before_it(tmp_path, writer):
    text = writer()
    (tmp_path / "train.ipynb").write_text(text[:_in_last_cell(text)])
    assert _losses_read(tmp_path / "train.ipynb") == EXPECTED
    warnings = notebook.read(tmp_path / "train.ipynb").warnings
    assert any("cut" in w and "3 complete cells" in w for w in warnings), warnings


@pytest.mark.parametrize("writer", [_jupyter_text, _colab_text])
def test_a_cut_notebook_is_analyzed_and_its_cut_named_in_skipped(tmp_path, writer):
    text = writer()
    (tmp_path / "train.ipynb").write_text(text[:_in_last_cell(text)])
    analysis = forensics.analyze(tmp_path)
    assert analysis.status == "healthy"
    assert any(s.path.endswith("train.ipynb") and "cut" in s.reason for s in analysis.skipped)


def test_bytes_that_are_no_json_between_cells_keep_the_cells_before_and_say_damaged_not_cut(tmp_path):
    text = _jupyter_text()
    at = text.rfind("{", 0, text.rfind('"cell_type"', 0, _in_last_cell(text)))  # where the last cell opens
    (tmp_path / "train.ipynb").write_bytes(text[:at].encode() + b"\xff\xfe#@" + text[at:].encode())
    assert _losses_read(tmp_path / "train.ipynb") == EXPECTED
    warnings = notebook.read(tmp_path / "train.ipynb").warnings
    assert any("damaged" in w and "3 complete cells" in w and "cut" not in w for w in warnings), warnings


def test_a_notebook_cut_inside_its_training_cell_is_still_unreadable_and_named(tmp_path):
    # no complete cell holds the training: reading the set-up cell alone would be a run with nothing in it
    text = _jupyter_text()
    (tmp_path / "train.ipynb").write_text(text[:text.index("'loss'") + 40])
    with pytest.raises(UnreadableFile, match="cut part-way.*none of them shows a training"):
        notebook.read(tmp_path / "train.ipynb")


def test_a_whole_notebook_is_read_in_full_with_no_cut_warning(tmp_path):
    for name, writer in (("jupyter", _jupyter_text), ("colab", _colab_text)):
        (tmp_path / f"{name}.ipynb").write_text(writer())
        records = notebook.read(tmp_path / f"{name}.ipynb")
        assert _losses_read(tmp_path / f"{name}.ipynb") == EXPECTED
        assert not any("cut" in w or "damaged" in w for w in records.warnings)


def test_a_real_corpus_notebook_cut_in_its_last_cell_keeps_the_verdict_of_the_whole(tmp_path):
    # Atulit23_gpt_from_scratch: a nanoGPT-style loop's train/val prints, judged warning (overfitting near step 550);
    # its last cell comes after the training cell, so a cut there loses no training line
    whole = TESTS / "realworld" / "Atulit23_gpt_from_scratch" / "gpt_from_scratch.ipynb"
    text = whole.read_text(encoding="utf-8")
    (tmp_path / whole.name).write_text(text[:text.rfind('"cell_type"') + 5], encoding="utf-8")
    cut, intact = forensics.analyze(tmp_path), forensics.analyze(whole.parent)
    assert _losses_read(tmp_path / whole.name) == _losses_read(whole)
    assert (cut.status, cut.first_incident.kind, cut.first_incident.step) == \
        (intact.status, intact.first_incident.kind, intact.first_incident.step)
    assert cut.status == "warning" and cut.first_incident.kind == "overfitting"
    assert abs(cut.first_incident.step - 550) <= 150  # the judgement's step and tolerance
    assert any("cut part-way" in s.reason for s in cut.skipped)


def test_a_stray_number_between_cells_is_the_break_and_only_the_cells_before_it_are_counted(tmp_path):
    """`}, 7 {` where the file was damaged: the 7 is valid JSON but no cell; reading stops there and the note counts
    the one cell before it (second review of session 28: it counted the 7 as a cell and read on past the damage)."""
    cells = [{"cell_type": "code", "execution_count": i + 1, "metadata": {}, "source": ["print(1)\n"],
              "outputs": [{"output_type": "stream", "name": "stdout",
                           "text": [f"step {j * 10}, loss {4 - j * 0.1:.3f}\n" for j in range(i * 5, (i + 1) * 5)]}]}
             for i in range(4)]
    text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
    second = text.index('{\n   "cell_type"', text.index('"cell_type"') + 5)
    path = tmp_path / "train.ipynb"
    path.write_text(text[:second] + "7 " + text[second:])
    records = notebook.read(path)
    assert len(records.frame) == 5
    assert "read its 1 complete cells before it" in records.warnings[-1]
