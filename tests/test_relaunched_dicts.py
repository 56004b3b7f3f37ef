"""Trainer dicts of several launches printed one after another (`ingest.relaunched_dicts`): k-fold cross-validation
read as one run made each fold's fresh loss a spike over the last fold's memorized one
(nytseng_llm-reliability-llama2-lora); each launch is numbered from step 1 again and the last one stands."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest import stdout

CORPUS = Path(__file__).parent / "realworld"


def _fold(name: str, epochs: int, final_loss: float = 0.0001, lr_step: float = 8e-05) -> list[str]:
    """One fold's console: its name, then one Trainer dict an epoch, loss 1.2 falling to `final_loss`, the LR warming
    up from `lr_step` as nytseng's did."""
    lines = [name]
    for e in range(1, epochs + 1):
        loss = 1.2 * (final_loss / 1.2) ** ((e - 1) / (epochs - 1))
        lines.append(f"{{'loss': {loss:.4f}, 'learning_rate': {lr_step * e:.6g}, 'epoch': {float(e)}}}")
    return lines


def _evals(epochs: int, lowest_at: int) -> list[str]:
    """One fold's eval dicts: eval_loss 2.4 falling to 0.2 at `lowest_at`, then rising (overfitting)."""
    lines = []
    for e in range(1, epochs + 1):
        value = 2.4 - 2.2 * (e - 1) / (lowest_at - 1) if e <= lowest_at else 0.2 + 0.05 * (e - lowest_at)
        lines.append(f"{{'eval_loss': {value:.4f}, 'eval_runtime': 1.62, 'eval_samples_per_second': 9.8, "
                     f"'eval_steps_per_second': 1.23, 'epoch': {float(e)}}}")
    return lines


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def _steps(records, metric: str) -> list[int]:
    frame = records.frame
    return frame.loc[frame["metric"] == metric, "step"].tolist()


def test_each_fold_of_a_cross_validation_console_is_numbered_from_step_one(tmp_path):
    lines = _fold("A_fold0", 30) + _fold("A_fold1", 25) + _fold("A_fold2", 20)
    records = stdout.read(_write(tmp_path / "train_loss.log", lines))
    assert _steps(records, "loss") == list(range(1, 31)) + list(range(1, 26)) + list(range(1, 21))
    assert any("3 launches" in note for note in records.notes)


def test_a_fold_restart_is_no_loss_spike_and_the_last_fold_is_judged(tmp_path):
    _write(tmp_path / "train_loss.log", _fold("A_fold0", 30) + _fold("A_fold1", 25) + _fold("A_fold2", 20))
    analysis = forensics.analyze(tmp_path)
    standing = [f for f in analysis.findings if "threw away" not in f.message]
    assert not [f for f in standing if f.kind == "loss_spike"]
    assert analysis.timeline.series("loss").index.max() == 20


def test_an_evaluation_log_of_folds_lines_up_with_its_training_log_and_its_last_fold_stands(tmp_path):
    # the longest fold is not the last one: the last launch stands, not the one that got furthest
    _write(tmp_path / "train_loss.log", _fold("A_fold0", 40) + _fold("A_fold1", 25))
    _write(tmp_path / "eval_loss.log", _evals(40, 20) + _evals(25, 12))
    records = stdout.read(tmp_path / "eval_loss.log")
    assert _steps(records, "eval_loss") == list(range(1, 41)) + list(range(1, 26))
    analysis = forensics.analyze(tmp_path)
    assert analysis.timeline.series("eval_loss").index.max() == 25
    assert analysis.first_incident is not None and analysis.first_incident.kind == "overfitting"
    assert analysis.first_incident.step == 13


def test_an_epoch_counted_per_chunk_over_one_schedule_is_one_launch(tmp_path):
    # RapidFire (Obychenkov_CSE234-hardneg) prints each chunk of one run with epochs from 0.03 again, its LR carrying on
    lines, lr = [], 2e-4
    for _chunk in range(3):
        for k in range(1, 11):
            lines.append(f"{{'loss': {0.3 - 0.005 * len(lines):.4f}, 'learning_rate': {lr:.6g}, 'epoch': {k / 10}}}")
            lr -= 6e-6
    records = stdout.read(_write(tmp_path / "training.log", lines))
    assert _steps(records, "loss") == list(range(1, 31))
    assert not any("launches" in note for note in records.notes)


def test_an_epoch_that_goes_back_a_little_or_a_fraction_forward_is_no_new_launch(tmp_path):
    # a resume re-logging from its checkpoint's epoch (2.0 -> 1.5), and fractional epochs between whole ones
    epochs = [0.5, 1.0, 1.5, 2.0, 1.5, 2.0, 2.13, 3.0, 4.0]
    lines = [f"{{'loss': {1.0 - 0.05 * i:.4f}, 'learning_rate': 1e-4, 'epoch': {e}}}" for i, e in enumerate(epochs)]
    records = stdout.read(_write(tmp_path / "train.log", lines))
    assert _steps(records, "loss") == list(range(1, len(epochs) + 1))
    assert not any("launches" in note for note in records.notes)


def test_the_cross_validation_case_reads_fifteen_folds_and_judges_the_last():
    folder = CORPUS / "nytseng_llm-reliability-llama2-lora"
    train = stdout.read(folder / "train_loss.log")
    evals = stdout.read(folder / "eval_loss.log")
    assert _steps(train, "loss").count(1) == _steps(evals, "eval_loss").count(1) == 15
    analysis = forensics.analyze(folder)
    assert analysis.first_incident.kind == "overfitting" and analysis.first_incident.step == 15
    assert not any(c.title.startswith("Learning rate") for c in analysis.causes)
