"""A loop's epoch record that names its loss "cost" (ingest.console_lines.epoch_costs): jonathanbgn_slogan-generator's
distilgpt2 fine-tune prints `--- Epoch #0 finished --- Training cost: X / Validation cost: Y` once an epoch."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest import stdout
from forensics.ingest.pretrain_lines import parse_line

CORPUS = Path(__file__).parent / "realworld"


def _series(path: Path, metric: str) -> dict[int, float]:
    frame = stdout.read(path).frame
    rows = frame[frame.metric == metric]
    return dict(zip(rows.step.astype(int), rows.value))


def test_an_epochs_training_and_validation_cost_are_its_losses(tmp_path: Path):
    lines = ["--- Starting epoch #0 ---", "Training: 100%|##########| 268/268 [00:50<00:00,  5.71it/s]",
             "--- Epoch #0 finished --- Training cost: 4.1394 / Validation cost: 3.2550", "",
             "--- Starting epoch #1 ---", "--- Epoch #1 finished --- Training cost: 2.6903 / Validation cost: 3.2779"]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    assert _series(tmp_path / "train.log", "loss") == {1: 4.1394, 2: 2.6903}
    assert _series(tmp_path / "train.log", "eval_loss") == {1: 3.2550, 2: 3.2779}


def test_cost_outside_an_epoch_record_is_no_loss():
    for line in ("Training cost: 4.1394", "Epoch 3 cost: 12.50 USD", "total compute cost: 1.2e3",
                 "--- Epoch #0 finished --- GPU cost: 3.2"):
        record = parse_line(line)
        assert record is None or "loss" not in record.names, line


def test_the_real_slogan_generator_notebook_is_read_with_its_two_epochs():
    a = forensics.analyze(CORPUS / "jonathanbgn_slogan-generator")
    assert dict(a.timeline.series("eval_loss")) == {1: 3.2550279853724633, 2: 3.2779046367196476}
    profile = a.run_profile.to_dict()
    assert (profile["method"], profile["objective"], profile["precision"]) == ("full", "sft", "fp32")
