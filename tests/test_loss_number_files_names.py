"""Which file names say a file of numbers only is a loss curve (discover.loss_numbers.loss_file_split).

A `loss` word in a name is not enough: `loss_weights.txt` ([1.0, 0.5, 0.25, 0.1]: the weights of a loss's terms),
`loss_config.txt`, `token_loss_mask.txt`, `train_loss_acc.txt` (a loss and an accuracy, which column is which?) are
numbers that are no loss curve. The name may hold, beside the loss word and its split, only words that say a record
of it over time (log, history, curve, epoch, step, avg, ...) or of the run (lstm, gpt2, lora, run1, final): only a
word that says the numbers are something else (weights, config, mask, acc, scale, params, ...) refuses it."""
from __future__ import annotations

from pathlib import Path

import pytest

from forensics.discover.loss_numbers import loss_file_split
from forensics.discover.run import discover

_CURVE = "[6.7, 5.9, 5.5, 5.2, 5.0]"


@pytest.mark.parametrize("name", ["loss_weights.txt", "loss_config.txt", "token_loss_mask.txt", "train_loss_acc.txt",
                                  "loss_scale.txt", "loss_params.txt", "loss_type.txt", "loss_coef.txt"])
def test_a_file_whose_name_says_more_than_a_record_of_a_loss_is_no_loss_curve(tmp_path, name):
    (tmp_path / name).write_text(_CURVE if name != "loss_weights.txt" else "[1.0, 0.5, 0.25, 0.1]")
    (tmp_path / "train.log").write_text("step 1 loss 2.0\nstep 2 loss 1.9\n")  # so that the folder is a run
    assert loss_file_split(name) is None
    assert discover(tmp_path).loss_number_files == []


@pytest.mark.parametrize("name, split", [
    ("losses.txt", ""), ("val_loss_history.txt", "eval"), ("train_losses.txt", "train"), ("loss_log.txt", ""),
    ("epoch_losses.txt", ""), ("avg_train_loss_per_epoch.txt", "train"), ("trainloss.txt", "train"),
    ("valLossCurve.csv", "eval"), ("loss", ""),
    # names read before the words beside a loss were restricted (a run's tag, a model, a stage): still read
    ("loss_values.txt", ""), ("losses_final.txt", ""), ("loss_run1.txt", ""), ("model_loss.txt", ""),
    ("lstm_loss.txt", ""), ("gpt2_train_loss.txt", "train"), ("train_loss_lora.txt", "train")])
def test_a_name_that_says_a_record_of_a_loss_is_still_read(tmp_path, name, split):
    assert loss_file_split(name) == split
    (tmp_path / name).write_text(_CURVE)
    assert [p.name for p in discover(tmp_path).loss_number_files] == [name]


def test_every_loss_number_file_of_the_corpus_is_still_named_as_one():
    """The names of the 27 files of numbers only the corpus holds under a loss name (train_loss.txt, valid_loss.txt,
    loss_history.txt, val_loss_history.txt, training_loss.txt, a bare `loss`, ...): each still a loss by its name."""
    corpus = Path(__file__).parent / "realworld"
    names = {p.name for p in corpus.rglob("*") if p.is_file() and "expected" not in p.parts}
    for name in ("loss", "loss_history.txt", "loss_log.txt", "losses.txt", "test_loss.txt", "train_loss.txt",
                 "train_losses.txt", "training_loss.txt", "val_loss.txt", "val_loss_history.txt", "val_losses.txt",
                 "valid_loss.txt"):
        assert name in names and loss_file_split(name) is not None, name
