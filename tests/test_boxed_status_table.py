"""A hand-written loop's training status drawn as a box table and redrawn after each print (fani-lab_RePair's t5.py,
corpus batch AS107): `forensics.ingest.boxed_table`."""
from __future__ import annotations

import forensics
from forensics.discover.run import discover

_HEAD = """[03:05:51] [Model]: Loading t5-small...                               t5.py:194

FULL Dataset: (300, 2)
TRAIN Dataset: (240, 2)
TEST Dataset: (60, 2)

           [Initiating Fine Tuning]...                                t5.py:263

"""
# fani-lab_RePair output/logs.txt's rows, each drawing holding the rows before it
_ROWS = ["|  0   |   0   | tensor(10.3821, grad_fn=<NllLossBackward0>)|",
         "|  0   |  10   | tensor(4.9702, grad_fn=<NllLossBackward0>) |",
         "|  0   |  20   | tensor(4.5142, grad_fn=<NllLossBackward0>) |",
         "|  1   |   0   | tensor(4.4077, grad_fn=<NllLossBackward0>) |",
         "|  1   |  10   | tensor(4.3103, grad_fn=<NllLossBackward0>) |",
         "|  1   |  20   | tensor(4.3087, grad_fn=<NllLossBackward0>) |",
         "|  2   |   0   | tensor(4.2605, grad_fn=<NllLossBackward0>) |",
         "|  2   |  10   | tensor(4.4195, grad_fn=<NllLossBackward0>) |",
         "|  2   |  20   | tensor(3.8154, grad_fn=<NllLossBackward0>) |"]
_BORDER = "+-----------------------------------------------------------+"


def _drawings(rows: list[str]) -> str:
    out = []
    for n in range(1, len(rows) + 1):
        out += ["                       Training Status                       ", _BORDER,
                "|Epoch | Steps |                    Loss                    |",
                "|------+-------+--------------------------------------------|", *rows[:n], _BORDER]
    return _HEAD + "\n".join(out) + "\n[Saving Model]...\n[Initiating Validation]...\n"


def test_a_redrawn_box_table_of_epoch_step_and_loss_is_read_once_a_row(tmp_path):
    (tmp_path / "logs.txt").write_text(_drawings(_ROWS))
    assert [p.name for p in discover(tmp_path).text_logs] == ["logs.txt"]
    loss = forensics.analyze(tmp_path).timeline.series("loss")
    assert loss.tolist() == [10.3821, 4.9702, 4.5142, 4.4077, 4.3103, 4.3087, 4.2605, 4.4195, 3.8154]
    assert loss.index.is_monotonic_increasing and loss.index.is_unique  # steps numbered on across the epochs


def test_a_markdown_table_of_the_same_columns_without_a_border_is_no_log(tmp_path):
    """The guard: a README's or report's Markdown table (no box border over its header) is another reader's."""
    (tmp_path / "notes.txt").write_text("|Epoch | Steps | Loss |\n|---|---|---|\n" + "\n".join(
        f"| {e} | {s} | {4 - e / 3 - s / 100:.3f} |" for e in range(3) for s in (0, 10, 20)) + "\n")
    assert discover(tmp_path).text_logs == []


def test_a_box_table_of_an_evaluation_report_without_a_step_column_is_no_log(tmp_path):
    """The guard: a box-drawn evaluation summary (models and their losses, no step) holds no training course."""
    rows = "\n".join(f"| {name:<8}| {loss:.4f} |" for name, loss in (("t5-small", 3.81), ("t5-base", 3.12),
                                                                        ("bart", 3.40)))
    (tmp_path / "eval.txt").write_text(f"+---------+--------+\n| Model   | Loss   |\n+---------+--------+\n{rows}\n"
                                       "+---------+--------+\n")
    assert discover(tmp_path).text_logs == []
