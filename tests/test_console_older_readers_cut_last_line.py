"""A console still being written ends in a line cut mid-write (no newline after it). The older readers follow the
console readers' rule (`fields.printed_shape`, `console_scan._Scanner`): a value on that line that may be cut is left
out, the record marked cut and said (`settled_lines.step_line_warnings`), and the line is taken whole where it is
printed in the very shape of a line before it. Readers: the TF PTB tutorial's `Epoch: E Valid Perplexity: P`
(stepless.ptb_epoch), `Epoch #E finished --- Training cost: X` (epoch_costs), and the tables fed line by line: TF
Estimator's hook and evaluation lines, tinygrad's value-first lines, the PyTorch tutorials' `(iter P%) loss`, MXNet's
Speedometer."""
from __future__ import annotations

from pathlib import Path

from forensics.ingest import stdout

CUT_NOTE = "the last line (step {}) is cut mid-write; its complete fields were kept"


def _read(tmp_path: Path, text: str):
    (tmp_path / "train.log").write_text(text)
    return stdout.read(tmp_path / "train.log")


def _at(records, step: int) -> dict[str, float]:
    rows = records.frame[records.frame.step == step]
    return dict(zip(rows.metric, rows.value))


def _values(records, metric: str) -> list[float]:
    return list(records.frame[records.frame.metric == metric].value)


def _series(records, metric: str) -> dict[int, float]:
    rows = records.frame[records.frame.metric == metric]
    return dict(zip(rows.step.astype(int), rows.value))


# --- the TF PTB tutorial's epoch lines ----------------------------------------------------------------------------

def _ptb(epochs: int) -> str:
    return "".join(f"Epoch: {e} Learning rate: 1.000\n0.004 perplexity: {900.0 / e:.3f} speed: 1200 wps\n"
                   f"Epoch: {e} Train Perplexity: {300.0 / e:.3f}\nEpoch: {e} Valid Perplexity: {200.0 / e:.3f}\n"
                   for e in range(1, epochs + 1))


def test_a_last_ptb_valid_perplexity_cut_mid_number_is_not_read(tmp_path: Path):
    records = _read(tmp_path, _ptb(4)[:-len("0.000\n")])  # `Epoch: 4 Valid Perplexity: 50.000`, cut to `5`
    assert _values(records, "eval_perplexity") == [200.0, 100.0, 66.667]


def test_a_whole_last_ptb_epoch_line_printed_as_the_ones_before_it_is_read(tmp_path: Path):
    records = _read(tmp_path, _ptb(4).rstrip("\n"))
    assert _series(records, "eval_perplexity")[4] == 50.0 and not records.warnings


def test_a_whole_ptb_console_is_read_as_before(tmp_path: Path):
    assert _series(_read(tmp_path, _ptb(4)), "eval_perplexity") == {1: 200.0, 2: 100.0, 3: 66.667, 4: 50.0}


# --- an epoch's `Training cost: X / Validation cost: Y` ---------------------------------------------------------------

def _costs(epochs: int) -> str:
    return "".join(f"--- Epoch #{e} finished --- Training cost: {4.1394 - e:.4f} / Validation cost: {3.2550 + e:.4f}\n"
                   for e in range(epochs))


def test_a_last_training_cost_cut_mid_number_is_not_read(tmp_path: Path):
    records = _read(tmp_path, _costs(2) + "--- Epoch #2 finished --- Training cost: 2.1")  # 2.1394, cut
    assert _values(records, "loss") == [4.1394, 3.1394]


def test_a_last_validation_cost_cut_mid_number_keeps_the_training_cost_and_says_so(tmp_path: Path):
    records = _read(tmp_path, _costs(2) + "--- Epoch #2 finished --- Training cost: 2.1394 / Validation cost: 5.2")
    assert _values(records, "loss") == [4.1394, 3.1394, 2.1394]
    assert _values(records, "eval_loss") == [3.2550, 4.2550]
    assert CUT_NOTE.format(max(_series(records, "loss"))) in records.warnings


def test_a_whole_last_cost_line_printed_as_the_ones_before_it_is_read(tmp_path: Path):
    records = _read(tmp_path, _costs(3).rstrip("\n"))
    assert _values(records, "eval_loss") == [3.2550, 4.2550, 5.2550] and not records.warnings


# --- TF Estimator's hook and evaluation lines -------------------------------------------------------------------------

def _estimator(steps: int) -> str:
    return "".join(f"INFO:tensorflow:loss = {2.0 - s / 1000:.5f}, step = {s} ({11.5:.3f} sec)\n"
                   for s in range(100, steps + 1, 100))


def test_a_last_hook_line_cut_in_its_step_gives_no_step(tmp_path: Path):
    records = _read(tmp_path, _estimator(400) + "INFO:tensorflow:loss = 1.50000, step = 50")  # step 500, cut
    assert sorted(_series(records, "loss")) == [100, 200, 300, 400]


def test_a_last_evaluation_line_cut_mid_loss_keeps_its_accuracy_and_says_so(tmp_path: Path):
    records = _read(tmp_path, _estimator(400) + "INFO:tensorflow:Saving dict for global step 400: accuracy = 0.91, "
                    "global_step = 400, loss = 0.2")  # 0.25, cut
    assert _at(records, 400)["eval_accuracy"] == 0.91 and "eval_loss" not in _at(records, 400)
    assert CUT_NOTE.format(400) in records.warnings


def test_a_whole_last_hook_line_printed_as_the_ones_before_it_is_read(tmp_path: Path):
    records = _read(tmp_path, _estimator(500).rstrip("\n"))
    assert _series(records, "loss")[500] == 1.5 and not records.warnings


# --- tinygrad's value-first lines -------------------------------------------------------------------------------------

def _value_first(steps: int) -> str:
    return "".join(f"{s:5d} 93.44 s run, {11.875 - s / 10:.4f} loss, 0.000000000001 LR, 642.43 GB used,  19644.30 "
                   "GFLOPS\n" for s in range(1, steps + 1))


def test_a_last_value_first_line_cut_in_its_last_name_leaves_that_pair_out_and_says_so(tmp_path: Path):
    records = _read(tmp_path, _value_first(3) + "    4 93.44 s run, 11.4750 loss, 0.000000000001 LR, 642.43 GB used,"
                    "  19644.30 GFL")  # GFLOPS, cut
    assert _at(records, 4)["loss"] == 11.475 and not {"gfl", "gflops"} & set(_at(records, 4))
    assert CUT_NOTE.format(4) in records.warnings


def test_a_whole_last_value_first_line_printed_as_the_ones_before_it_is_read(tmp_path: Path):
    records = _read(tmp_path, _value_first(4).rstrip("\n"))
    assert set(_at(records, 4)) == set(_at(records, 3)) and not records.warnings


# --- the PyTorch NLP tutorials' `elapsed (iteration percent%) loss` ---------------------------------------------------

def _tutorial(prints: int) -> str:
    return "".join(f"{i}m 0s (- 9m 0s) ({500 * i} {i}%) {3.5 - i / 10:.4f}\n" for i in range(1, prints + 1))


def test_a_last_tutorial_loss_cut_mid_number_is_not_read(tmp_path: Path):
    records = _read(tmp_path, _tutorial(3) + "4m 0s (- 9m 0s) (2000 4%) 3.")  # 3.1000, cut
    assert sorted(_series(records, "loss")) == [500, 1000, 1500]


def test_a_whole_last_tutorial_line_printed_as_the_ones_before_it_is_read(tmp_path: Path):
    records = _read(tmp_path, _tutorial(4).rstrip("\n"))
    assert _series(records, "loss")[2000] == 3.1 and not records.warnings


# --- MXNet's Speedometer -------------------------------------------------------------------------------------------

def _mxnet(batches: int) -> str:
    return "".join(f"INFO:root:Epoch[0] Batch [{b}]\tSpeed: 900.12 samples/sec\taccuracy={0.5 + b / 1000:.6f}\t"
                   f"cross-entropy={2.5 - b / 100:.6f}\n" for b in range(10, 10 * batches + 1, 10))


def test_a_last_speedometer_line_cut_mid_loss_keeps_its_accuracy_and_says_so(tmp_path: Path):
    records = _read(tmp_path, _mxnet(3) + "INFO:root:Epoch[0] Batch [40]\tSpeed: 900.12 samples/sec\t"
                    "accuracy=0.540000\tcross-entropy=2.1")  # 2.100000, cut
    assert _at(records, 40) == {"accuracy": 0.54, "epoch": 0.0}
    assert CUT_NOTE.format(40) in records.warnings


def test_a_whole_last_speedometer_line_printed_as_the_ones_before_it_is_read(tmp_path: Path):
    records = _read(tmp_path, _mxnet(4).rstrip("\n"))
    assert _at(records, 40)["loss"] == 2.1 and not records.warnings
