"""A Keras bar cut inside its epoch (forensics/ingest/console_lines/blocks.py, KerasEpochs.close): its last update the
run's only number, kept as a partial epoch.

From AS76's reader misses (tests/realworld/PROVENANCE.md, AS76): telecombcn-dl_2017-dlai-team8."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest.console_lines.blocks import KerasEpochs


CORPUS = Path(__file__).parent / "realworld"


# --- a Keras bar that never completes


def _fed(lines: list[str]) -> list:
    keras = KerasEpochs()
    records = [keras.feed(line) for line in lines if keras.owns(line)]
    return [r for r in records if r] + [r for r in [keras.close()] if r]


def test_the_last_update_of_a_bar_cut_inside_its_epoch_is_kept_as_a_partial_epoch():
    records = _fed(["Epoch 1/1", " 1560/11407 [===>..........................] - ETA: 1:47 - loss: 6.4571"])
    assert [(r.step, dict(r.metrics)) for r in records] == [(1, {"loss": 6.4571, "epoch": 1560 / 11407})]


def test_a_bar_that_completes_gives_only_its_epochs_record():
    records = _fed(["Epoch 1/2", " 10/100 [==>...] - ETA: 9s - loss: 3.0", "100/100 [==========] - 9s - loss: 2.5",
                    "Epoch 2/2", "100/100 [==========] - 9s - loss: 2.0"])
    assert [(r.step, dict(r.metrics)) for r in records] == [(1, {"loss": 2.5}), (2, {"loss": 2.0})]


def test_the_cut_word_rnn_notebook_is_a_run_with_one_point():
    a = forensics.analyze(CORPUS / "telecombcn-dl_2017-dlai-team8")
    assert a.timeline.series("loss").tolist() == [6.4571]
    assert a.status == "warning"
