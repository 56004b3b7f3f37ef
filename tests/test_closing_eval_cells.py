"""A training function that prints only `validation loss:  X` when it returns (and `lr:  [x]` every log interval),
called once a cell (forensics/discover/closing_eval_cells.py): each print one evaluation, the last call judged.

From AS76's reader misses (tests/realworld/PROVENANCE.md, AS76): Vishal-Padia_llama-from-scratch,
dangnguyenngochai_Llama_from_scratch."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.discover.closing_eval_cells import closing_evals, trainers
from forensics.ingest import notebook
from forensics.discover.log_hints import notebook_hinted
from support.notebook_files import code_cell as _cell, json_notebook as _notebook


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
