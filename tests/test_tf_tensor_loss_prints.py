"""TensorFlow's scalar tensor repr, `tf.Tensor(X, shape=(), dtype=float32)`, printed as a loss
(forensics/ingest/pretrain_lines.py, stdout.py, notebook.py): a GradientTape loop's `print(loss)` once an epoch under
its tqdm epoch bar.

From corpus batch AS61 (AaronBarbosa12_transformer_model). The notebooks are written in nbformat 4's shape with their
outputs as the libraries print them."""
from __future__ import annotations

from pathlib import Path


import forensics
from forensics.ingest import notebook, stdout
from forensics.ingest.pretrain_lines import parse_line
from support.notebook_files import counted_notebook as _notebook, stream as _stream


CORPUS = Path(__file__).parent / "realworld"


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
