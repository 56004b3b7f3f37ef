"""A notebook cell whose training loop prints its loss bare, one number a pass (forensics.discover.printed_loss_cells):
0000mprakash_Bigram_for_names' makemore bigram prints `loss.item()` 100 times, 3.779 down to 2.474."""
from __future__ import annotations

import json
from pathlib import Path

import forensics
from forensics.discover.log_hints import notebook_hinted
from forensics.discover.printed_loss_cells import loss_column

CORPUS = Path(__file__).parent / "realworld"
_LOOP = """for k in range(100):
    logits = xenc @ W
    loss = -probs[torch.arange(num), ys].log().mean()
    print(loss.item())
    W.grad = None
    loss.backward()
    W.data += -5 * W.grad
"""


def _cell(source: str, numbers: list[float]) -> dict:
    return {"cell_type": "code", "execution_count": 3, "source": source, "metadata": {},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": [f"{v!r}\n" for v in numbers]}]}


def _notebook(path: Path, *cells: dict) -> Path:
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": list(cells)}))
    return path


def test_a_loops_bare_loss_prints_are_its_loss_at_each_pass(tmp_path: Path):
    losses = [3.78 * 0.99 ** k for k in range(40)]
    _notebook(tmp_path / "bigram.ipynb", _cell("import torch\n", []), _cell(_LOOP, losses))
    a = forensics.analyze(tmp_path)
    assert list(a.timeline.series("loss").items()) == list(enumerate(losses))
    assert a.status == "healthy", [f.message for f in a.findings]


def test_the_notebook_is_found_as_a_run_by_that_cell_alone(tmp_path: Path):
    path = _notebook(tmp_path / "bigram.ipynb", _cell(_LOOP, [3.0, 2.9, 2.8, 2.7, 2.6]))
    assert notebook_hinted(path.read_bytes())


def test_numbers_printed_without_a_loss_print_in_a_training_loop_are_not_read():
    numbers = [0.5, 0.6, 0.7, 0.8, 0.9]
    for source in ("for k in range(5):\n    print(acc)\n    loss.backward()\n",  # not a loss
                   "for k in range(5):\n    print(loss.item())\n",  # a loop that trains nothing: an evaluation
                   "print(loss.item())\nloss.backward()\n",  # no loop
                   "for k in range(5):\n    print(loss.item())\n    print(acc)\n    loss.backward()\n"):  # two prints
        assert loss_column(_cell(source, numbers)) is None, source
    assert loss_column(_cell(_LOOP, numbers[:4])) is None  # too few to be a loop's column
    mixed = _cell(_LOOP, numbers)
    mixed["outputs"][0]["text"].append("done\n")
    assert loss_column(mixed) is None


def test_the_real_bigram_notebook_is_read_as_a_healthy_run():
    a = forensics.analyze(CORPUS / "0000mprakash_Bigram_for_names")
    assert a.status == "healthy" and len(a.timeline.series("loss")) == 100 and not a.causes
