"""One-epoch `model.fit` cells of a notebook (forensics/ingest/notebook_fits.py): with nothing rebuilt between them one
training, and a fit's output copied into cells of the same execution count read once; `reload(utils)` no weights load.

From AS76's reader misses (tests/realworld/PROVENANCE.md, AS76): CienegaOrchards_Learning."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest import notebook
from support.notebook_files import code_cell as _cell, json_notebook as _notebook


CORPUS = Path(__file__).parent / "realworld"


# --- one-epoch fits continued cell by cell


_FIT = "model.fit(x, y, batch_size=64, nb_epoch=1)"


def _fit_cell(loss: float, count: int, address: str = "0x7f01") -> dict:
    return _cell(_FIT, f"Epoch 1/1\n600860/600860 [==============================] - 640s - loss: {loss}   \n", count,
                 f"<keras.callbacks.History at {address}>")


def test_one_epoch_fits_of_one_model_are_one_training(tmp_path: Path):
    path = _notebook(tmp_path / "char-rnn.ipynb",
                     _cell("model=Sequential([Embedding(60, 24), LSTM(512)])\nmodel.compile(optimizer=Adam())\n", "", 1),
                     _fit_cell(1.5152, 2), _cell("print_example()", "ethics is a basic\n", 3),
                     _cell("model.optimizer.lr=0.001"), _fit_cell(1.2892, 5, "0x7f02"),
                     _fit_cell(1.2544, 6, "0x7f03"), _fit_cell(1.2218, 7, "0x7f04"))
    loss = notebook.read(path).frame.query("metric == 'loss'")
    assert loss[["step", "value"]].values.tolist() == [[1, 1.5152], [2, 1.2892], [3, 1.2544], [4, 1.2218]]


def test_a_fit_after_the_model_is_rebuilt_is_a_new_training(tmp_path: Path):
    path = _notebook(tmp_path / "char-rnn.ipynb", _fit_cell(1.5152, 2),
                     _cell("model=Sequential([Embedding(60, 24), LSTM(256)])\nmodel.compile(optimizer=Adam())\n", "", 3),
                     _fit_cell(1.6, 4, "0x7f02"))
    loss = notebook.read(path).frame.query("metric == 'loss'")
    assert loss[["step", "value"]].values.tolist() == [[1, 1.6]]


def test_a_fits_output_copied_into_cells_of_its_count_is_read_once(tmp_path: Path):
    path = _notebook(tmp_path / "char-rnn.ipynb", _fit_cell(1.5152, 236), _fit_cell(1.5152, 236),
                     _fit_cell(1.5152, 236), _fit_cell(1.2892, 239, "0x7f02"))
    loss = notebook.read(path).frame.query("metric == 'loss'")
    assert loss[["step", "value"]].values.tolist() == [[1, 1.5152], [2, 1.2892]]


def test_the_char_rnn_notebook_is_a_healthy_four_epoch_run_of_a_model_built_here():
    a = forensics.analyze(CORPUS / "CienegaOrchards_Learning")
    assert a.timeline.series("loss").tolist() == [1.5152, 1.2892, 1.2544, 1.2218]
    assert a.status == "healthy", [f.message for f in a.findings]
    profile = a.run_profile.to_dict()
    assert (profile["method"], profile["objective"]) == ("full", "pretrain")


def test_a_module_reload_is_no_weights_load_but_load_weights_is():
    from forensics.ingest.notebook_code.model import loads_weights
    built = _cell("model=Sequential([Embedding(60, 24), LSTM(512)])\n", count=2)
    assert not loads_weights([_cell("import utils; reload(utils)\n", count=1), built])
    assert not loads_weights([_cell("import importlib\nimportlib.reload(utils)\n", count=1), built])
    assert loads_weights([built, _cell("model.load_weights('data/char_rnn.h5')\n", count=3)])
