"""A hand-written loop's `[Step N/T] Train X | Val Y` line, its losses named by their split alone
(ingest.console_lines.split_values): seopseop77_Transformer's from-scratch translation Transformer prints one every 500
steps, its first Train value ln 16000, the uniform guess over its vocabulary."""
from __future__ import annotations

import math
from pathlib import Path

import forensics
from forensics.ingest import stdout
from forensics.ingest.pretrain_lines import parse_line
from forensics.discover.log_hints import log_hinted

CORPUS = Path(__file__).parent / "realworld"


def _lines(losses: list[tuple[float, float]]) -> str:
    return "".join(f"[08:{i:02d}:18] [INFO] [Step {500 * (i + 1):>6}/159210] Train {train:.4f} | Val~20% {val:.4f}\n"
                   for i, (train, val) in enumerate(losses))


def test_the_train_and_val_values_after_a_bracketed_step_are_its_losses(tmp_path: Path):
    (tmp_path / "train.log").write_text("[07:55:57] [INFO] logger ready\n" + _lines([(4.2, 4.3), (3.1, 3.3), (2.5, 2.9)]))
    frame = stdout.read(tmp_path / "train.log").frame
    assert dict(zip(frame[frame.metric == "loss"].step, frame[frame.metric == "loss"].value)) == {
        500: 4.2, 1000: 3.1, 1500: 2.5}
    assert dict(zip(frame[frame.metric == "eval_loss"].step, frame[frame.metric == "eval_loss"].value)) == {
        500: 4.3, 1000: 3.3, 1500: 2.9}


def test_a_log_of_such_lines_is_found_as_a_training_log():
    assert log_hinted(_lines([(4.2, 4.3), (3.1, 3.3)]).encode())


def test_a_loss_at_the_uniform_guess_for_ten_thousand_steps_is_never_learned(tmp_path: Path):
    guess = math.log(16000)
    (tmp_path / "train.log").write_text(_lines([(guess - 0.003 * i, guess - 0.003 * i - 0.001) for i in range(21)]))
    a = forensics.analyze(tmp_path)
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("broken", "never_learned", 500)


def test_a_train_figure_without_the_bracketed_step_is_no_loss():
    for line in ("Train 9.6801 | Val 9.6793", "[Epoch 3/10] Train 0.93 | Val 0.91 accuracy", "Step 500/1000 Train 2.3",
                 "[Step 500/1000] Train acc 0.93"):
        record = parse_line(line)
        assert record is None or "loss" not in record.names, line


def test_a_learning_run_of_such_lines_stays_healthy(tmp_path: Path):
    (tmp_path / "train.log").write_text(_lines([(6.0 * 0.9 ** i + 2.0, 6.0 * 0.9 ** i + 2.1) for i in range(30)]))
    a = forensics.analyze(tmp_path)
    assert a.status == "healthy", [f.message for f in a.findings]


def test_the_real_transformer_log_is_read_and_never_learned():
    a = forensics.analyze(CORPUS / "seopseop77_Transformer")
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("broken", "never_learned", 500)
