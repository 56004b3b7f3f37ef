"""Keras `model.fit` cells of a notebook, for ingest/notebook: which cells only repeat another's output, and which fit
carries on the model an earlier cell fitted.

* `copied_outputs(cells, shown)`: a cell whose execution count and outputs are those of an earlier cell is that run's
  output copied with the cell (a notebook edited by copying cells), read once: CienegaOrchards_Learning's cells 25, 27
  and 30 all carry count 236 and the same `<keras.callbacks.History at 0x7f8cf2398810>` after the same 1.5152 epoch.
* `fit_carried_on(cells, shown, before, cell)`: a notebook that trains one epoch a cell (`model.fit(..., nb_epoch=1)`
  run again and again, the samples printed between) prints `Epoch 1/1` in each; `KerasEpochs` counts such fits on
  within one console (a new fit after one that finished), and across cells it is the same training where nothing
  between the two fits builds, compiles or loads a model (CienegaOrchards_Learning: four one-epoch fits of the one
  char-RNN, 1.5152 -> 1.2218, each cell its own `Epoch 1/1`).
"""
from __future__ import annotations

import re

from ..discover.printed_loss_cells import _source

_KERAS_HEADER = re.compile(r"(?m)^Epoch (\d{1,9})/(\d{1,9})[ \t]*$")
_FULL_BAR = re.compile(r"(?m)^[ \t]*(\d{1,12})/\1 ")
# what makes the model fitted next another one: built (`Sequential(`, `Model(`, `model = ...`), compiled (fresh
# optimizer state), or loaded
_NEW_MODEL = re.compile(r"\.compile\(|\b(?:Sequential|Model|load_model|clone_model)\(|\.load_weights\(|"
                        r"(?m:^[ \t]*\w*model\w*[ \t]*=(?!=))", re.IGNORECASE)


def copied_outputs(cells: list[dict], shown: list[list[tuple[str, str]]]) -> set[int]:
    """The indices of the cells whose execution count and outputs repeat an earlier cell's (module docstring)."""
    seen, copies = set(), set()
    for i, (cell, outputs) in enumerate(zip(cells, shown)):
        count = cell.get("execution_count")
        if not isinstance(count, int) or not any(text for text, _ in outputs):
            continue
        key = (count, tuple(outputs))
        if key in seen:
            copies.add(i)
        seen.add(key)
    return copies


def fit_carried_on(cells: list[dict], shown: list[list[tuple[str, str]]], before: int, cell: int) -> bool:
    """Whether the Keras fit of cell `cell` goes on training the model that cell `before` fitted to its last epoch
    (module docstring)."""
    earlier, later = _headers(shown[before]), _headers(shown[cell])
    if not earlier or not later or later[0][0] != 1 or earlier[-1][0] != earlier[-1][1]:
        return False
    if not _FULL_BAR.search(_text(shown[before]).rsplit("Epoch ", 1)[-1]):
        return False  # the earlier fit stopped inside its last epoch
    if not _counted_in_order(cells[before], cells[cell]):
        return False
    return not any(_NEW_MODEL.search(_source(cells[i])) for i in range(before + 1, cell + 1))


def _headers(outputs: list[tuple[str, str]]) -> list[tuple[int, int]]:
    return [(int(m.group(1)), int(m.group(2))) for m in _KERAS_HEADER.finditer(_text(outputs))]


def _text(outputs: list[tuple[str, str]]) -> str:
    return "".join(text for text, kind in outputs if kind == "stream")


def _counted_in_order(earlier: dict, later: dict) -> bool:
    """Whether the later cell ran after the earlier one, as far as their execution counts tell."""
    a, b = earlier.get("execution_count"), later.get("execution_count")
    return not (isinstance(a, int) and isinstance(b, int)) or a < b
