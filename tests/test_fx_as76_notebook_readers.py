"""AS76's reader misses (tests/realworld/PROVENANCE.md, AS76):

* a training function that prints only `validation loss:  X` when it returns (and `lr:  [x]` every log interval), called
  once a cell (forensics.closing_eval_cells): Vishal-Padia_llama-from-scratch, dangnguyenngochai_Llama_from_scratch;
* a Keras bar cut inside its epoch, its last update the run's only number (KerasEpochs.close):
  telecombcn-dl_2017-dlai-team8;
* one-epoch `model.fit` cells with nothing rebuilt between them, one training, and a fit's output copied into cells of
  the same execution count read once (ingest.notebook_fits); `reload(utils)` no weights load:
  CienegaOrchards_Learning.
"""
from __future__ import annotations

import json
from pathlib import Path

import forensics
from forensics.closing_eval_cells import closing_evals, trainers
from forensics.ingest import notebook
from forensics.ingest.console_lines.blocks import KerasEpochs
from forensics.log_hints import notebook_hinted

CORPUS = Path(__file__).parent / "realworld"

_TRAIN = """def train(model, optimizer, scheduler=None):
    losses = []
    for epoch in range(1000):
        optimizer.zero_grad()
        logits, loss = model(xs, targets=ys)
        loss.backward()
        optimizer.step()
        if scheduler:
            scheduler.step()
        if epoch % 10 == 0:
            losses += [evaluate_loss(model)]
            if scheduler:
                print("lr: ", scheduler.get_lr())
    print("validation loss: ", losses[-1]['val'])
"""


def _cell(source: str, text: str = "", count: int | None = 3, result: str | None = None) -> dict:
    outputs = [{"output_type": "stream", "name": "stdout", "text": text}] if text else []
    if result is not None:
        outputs.append({"output_type": "execute_result", "execution_count": count, "metadata": {},
                        "data": {"text/plain": result}})
    return {"cell_type": "code", "execution_count": count, "source": source, "metadata": {}, "outputs": outputs}


def _notebook(path: Path, *cells: dict) -> Path:
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": list(cells)}))
    return path


# --- closing `validation loss: X` prints


def test_each_closing_validation_print_is_one_eval_point_and_the_last_call_is_judged(tmp_path: Path):
    rates = [1e-3 * (1 - k / 10) for k in range(10)]
    last = "".join(f"lr:  [{r!r}]\n" for r in rates) + "validation loss:  4.158\n"
    path = _notebook(tmp_path / "llama.ipynb", _cell(_TRAIN + "train(model, optimizer)\n", "validation loss:  2.54\n", 1),
                     _cell("train(model, optimizer)\n", "validation loss:  1.90\n", 2),
                     _cell("llama = Llama(config)\ntrain(llama, opt, scheduler=sched)\n", last, 3))
    records = notebook.read(path)
    frame = records.frame
    assert list(frame[frame.metric == "learning_rate"]["value"]) == rates
    assert frame[frame.metric == "eval_loss"][["step", "value"]].values.tolist() == [[9, 4.158]]


def test_a_notebook_of_closing_validation_prints_is_found_as_a_run(tmp_path: Path):
    path = _notebook(tmp_path / "llama.ipynb", _cell(_TRAIN + "train(model, optimizer)\n", "validation loss:  2.54\n"))
    assert notebook_hinted(path.read_bytes())
    assert forensics.analyze(tmp_path).status == "warning"  # one held-out point: no evidence either way


def test_a_validation_print_of_code_that_trains_nothing_is_not_read():
    evaluates = "def check(model):\n    for b in batches:\n        x = model(b)\n    print('validation loss: ', x)\n"
    cells = [_cell(evaluates + "check(model)\n", "validation loss:  2.54\n")]
    assert trainers(cells) == set()
    in_loop = _TRAIN.replace("    print(\"validation loss: \", losses[-1]['val'])\n", "").replace(
        "losses += [evaluate_loss(model)]", "print('val loss: ', evaluate_loss(model))")
    assert trainers([_cell(in_loop)]) == set()  # printed every interval, not when the function returns
    trained_by = trainers([_cell(_TRAIN)])
    assert closing_evals(_cell("print(model)\n", "validation loss:  2.54\n"), trained_by) is None  # no call
    assert closing_evals(_cell("train(model, optimizer)\n", "done\n"), trained_by) is None  # no print shown


def test_the_llama_notebooks_are_read_with_their_final_models_size():
    for case in ("Vishal-Padia_llama-from-scratch", "dangnguyenngochai_Llama_from_scratch"):
        a = forensics.analyze(CORPUS / case)
        assert a.run_profile.to_dict()["model_params"] == 2_370_246, case
    a = forensics.analyze(CORPUS / "Vishal-Padia_llama-from-scratch")
    assert a.timeline.series("eval_loss").tolist() == [4.158263540267944]


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
    from forensics.ingest.notebook_code.model import _loads_weights
    built = _cell("model=Sequential([Embedding(60, 24), LSTM(512)])\n", count=2)
    assert not _loads_weights([_cell("import utils; reload(utils)\n", count=1), built])
    assert not _loads_weights([_cell("import importlib\nimportlib.reload(utils)\n", count=1), built])
    assert _loads_weights([built, _cell("model.load_weights('data/char_rnn.h5')\n", count=3)])
