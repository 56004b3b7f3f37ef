"""Readings of corpus batch AS61's notebooks: a from-scratch loop's `iter N | train X | val Y` estimate print
(DaraBodla_mini-gpt-pytorch), TensorFlow's scalar tensor repr printed by a GradientTape loop's `print(loss)` once an
epoch under its tqdm epoch bar (AaronBarbosa12_transformer_model). The notebooks are written in nbformat 4's shape
with their outputs as the libraries print them."""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

import forensics
from forensics.ingest import notebook, stdout
from forensics.ingest.pretrain_lines import parse_line

CORPUS = Path(__file__).parent / "realworld"


def _notebook(folder: Path, cells: list[tuple[str, list]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=[new_code_cell(source, outputs=outputs, execution_count=i + 1)
                                       for i, (source, outputs) in enumerate(cells)]), folder / "run.ipynb")
    return folder


def _stream(text: str, name: str = "stdout"):
    return new_output("stream", name=name, text=text)


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


# --- TensorFlow's `tf.Tensor(X, shape=(), dtype=float32)` -------------------------------------------------------------

def test_a_labelled_tensorflow_scalar_is_a_loss_and_a_bare_one_is_kept_by_its_own_name():
    assert dict(parse_line("loss: tf.Tensor(8.88289, shape=(), dtype=float32)").metrics) == {"loss": 8.88289}
    assert parse_line("tf.Tensor(0.91, shape=(), dtype=float32)").names == ("printed_tensor",)  # maybe an accuracy
    assert parse_line("tf.Tensor([1. 2.], shape=(2,), dtype=float32)") is None  # no scalar


_EPOCH_LOOP = """for ep in tqdm(range(n_episodes)):
    for batch, (x, y) in enumerate(data):
        with tf.GradientTape() as tape:
            loss = cce(y, model(x))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    print(loss)
    print(f"Translation (Pred): {pred}")
"""


def _epoch_outputs(losses: list[float], total: int = 10) -> list:
    """What the loop above shows: tqdm's bar on stderr moved on one, then the epoch's print on stdout, each epoch."""
    outputs = []
    for n, value in enumerate(losses, 1):
        outputs.append(_stream(f"\r {n * 100 // total}%|####| {n}/{total} [01:05<09:46, 65.18s/it]", "stderr"))
        outputs.append(_stream(f"tf.Tensor({value}, shape=(), dtype=float32)\nTranslation (Pred): the the\n\n"))
    return outputs


def test_a_loops_print_of_its_loss_tensor_once_an_epoch_under_its_bar_is_the_loss_at_each_epoch(tmp_path):
    folder = _notebook(tmp_path / "run", [(_EPOCH_LOOP, _epoch_outputs([8.88289, 8.878183, 8.873693, 8.869382]))])
    a = forensics.analyze(folder)
    loss = a.timeline.series("loss")
    assert list(loss.index) == [1, 2, 3, 4] and loss.iloc[0] == 8.88289
    assert a.status != "healthy"  # a loss that moved 0.15% in four epochs shows nothing learned


def test_the_same_prints_are_no_loss_where_the_cell_prints_another_bare_name_too(tmp_path):
    code = _EPOCH_LOOP.replace('print(f"Translation (Pred): {pred}")', "print(acc)")
    records = notebook.read(_notebook(tmp_path / "run", [(code, _epoch_outputs([0.1, 0.2, 0.3, 0.4]))]) / "run.ipynb")
    assert "loss" not in set(records.frame["metric"])


def test_bare_tensor_prints_whose_bar_starts_over_are_not_dated_by_it(tmp_path):
    """A per-batch bar that starts over each epoch does not count the prints: they are left to be numbered in order."""
    text = "".join(f"{n}/3 [00:01<00:02, 1.00s/it]\ntensor({2.0 - e / 10 - n / 100:.4f}, grad_fn=<NllLossBackward0>)\n"
                   for e in range(2) for n in (1, 2, 3))
    (tmp_path / "train.log").write_text(text)
    frame = stdout.read(tmp_path / "train.log").frame
    assert list(frame.loc[frame["metric"] == "loss", "step"]) == [1, 2, 3, 4, 5, 6]


def test_the_transformer_notebook_reads_four_epoch_losses():
    records = notebook.read(CORPUS / "AaronBarbosa12_transformer_model" / "transformer_from_scratch.ipynb")
    loss = records.frame[records.frame["metric"] == "loss"]
    assert list(loss["step"]) == [1, 2, 3, 4] and list(loss["value"]) == [8.88289, 8.878183, 8.873693, 8.869382]
