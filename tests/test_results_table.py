"""The HF Trainer's results tables read as logs: its model card's `### Training results` (written here by
transformers' own modelcard code) and its notebook progress table copied as text (tab-separated, or as a
Markdown table), from real write-ups in tests/realworld."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from forensics.ingest import stdout
from forensics.ingest.results_table import ResultsTable
from forensics.discover.run import discover

CORPUS = Path(__file__).parent / "realworld"


def _series(frame, metric):
    rows = frame[frame["metric"] == metric]
    return dict(zip(rows["step"].tolist(), rows["value"].tolist()))


def _model_card(history: list[dict]) -> str:
    modelcard = pytest.importorskip("transformers.modelcard")
    _, lines, results = modelcard.parse_log_history(history)
    return modelcard.TrainingSummary(model_name="tiny", eval_lines=lines, eval_results=results,
                                     hyperparameters={"learning_rate": 1e-4}).to_model_card()


HISTORY = [{"eval_loss": 2.9, "eval_accuracy": 0.2, "epoch": 0.5, "step": 2},  # evaluated before a loss was logged
           {"loss": 2.1, "learning_rate": 1e-4, "epoch": 1.0, "step": 4},
           {"eval_loss": 2.5431, "eval_accuracy": 0.41, "epoch": 1.0, "step": 4},
           {"loss": 1.5, "learning_rate": 5e-5, "epoch": 2.0, "step": 8},
           {"eval_loss": 1.9, "eval_accuracy": 0.6, "epoch": 2.0, "step": 8},
           {"train_runtime": 10.0, "train_loss": 1.8, "epoch": 2.0, "step": 8}]


def test_the_trainers_model_card_results_table_is_a_log_of_the_run(tmp_path):
    """A run folder keeping only the final model and the README.md the Trainer wrote: its results table holds the
    eval losses, metrics and the training loss at each evaluation (`No log` before the first one)."""
    card = _model_card(HISTORY)
    assert "| Training Loss | Epoch | Step | Validation Loss | Accuracy |" in card and "No log" in card
    (tmp_path / "README.md").write_text(card)
    assert [p.name for p in discover(tmp_path).text_logs] == ["README.md"]
    frame = stdout.read(tmp_path / "README.md").frame
    assert _series(frame, "eval_loss") == {2: 2.9, 4: 2.5431, 8: 1.9}
    assert _series(frame, "eval_accuracy") == {2: 0.2, 4: 0.41, 8: 0.6}
    assert _series(frame, "loss") == {4: 2.1, 8: 1.5} and _series(frame, "epoch") == {2: 0.5, 4: 1.0, 8: 2.0}
    assert forensics.analyze(tmp_path).status == "healthy"


def test_a_readme_without_a_results_table_is_no_log(tmp_path):
    (tmp_path / "README.md").write_text("# My run\n\n| Model | Score |\n|---|---|\n| tiny | 0.4 |\n")
    assert discover(tmp_path).text_logs == []


def test_a_notebook_table_pasted_into_a_write_up_is_read_with_epochs_from_the_banner():
    """Mozyura's readme.md: Unsloth's banner (`Num Epochs = 30 | Total steps = 90`), then the notebook's
    `Step<TAB>Training Loss` table: 20 examples 30 times over, memorized."""
    rec = stdout.read(CORPUS / "Mozyura_lecture-of-generative-ai-and-business" / "readme.md")
    assert _series(rec.frame, "loss")[10] == 1.8985 and len(_series(rec.frame, "loss")) == 9
    assert _series(rec.frame, "epoch")[90] == 30
    a = forensics.analyze(CORPUS / "Mozyura_lecture-of-generative-ai-and-business")
    assert (a.status, a.first_incident.kind, a.run_profile.method) == ("warning", "memorization", "qlora")


def test_a_markdown_grpo_table_gives_training_metrics_not_eval_ones():
    """unsloth issue 2291: `Step | Training Loss | reward | reward_std | ... | rewards / match_format_exactly`, no
    Validation Loss column: the extra columns are the training step's own metrics."""
    frame = stdout.read(CORPUS / "unslothai_unsloth_issue2291" / "train.log").frame
    assert _series(frame, "reward")[1] == -17.25 and len(_series(frame, "reward")) == 11
    assert "rewards/match_format_exactly" in set(frame["metric"]) and not frame["metric"].str.startswith("eval_").any()


@pytest.mark.parametrize("lines, rows", [
    (["Epoch\tTraining Loss\tValidation Loss\tAccuracy", "1\t0.6931\t0.6512\t0.61", "2\t0.5210\t0.6032\t0.70"], 2),
    (["Step\tTraining Loss", "10\t1.8985", "we then saved the model", "20\t0.9252"], 1),  # prose ends the table
    (["Step | Training Loss", "-- | --", "10 | 1.9", "20 | apples"], 1),  # a cell that is no number ends it too
    (["| Step | Score |", "|---|---|", "| 10 | 0.5 |"], 0),  # no loss column: no results table
])
def test_a_table_is_its_header_and_the_numeric_rows_right_under_it(lines, rows):
    table = ResultsTable()
    assert sum(table.feed(line) is not None for line in lines) == rows


def test_a_model_cards_writer_and_its_fp16_line_go_into_the_profile(tmp_path):
    """The Trainer's card names no framework but is the Trainer's; it writes `mixed_precision_training: Native AMP`
    only for fp16 (transformers/modelcard.py). An Axolotl card says 'Built with Axolotl'."""
    modelcard = pytest.importorskip("transformers.modelcard")
    _, lines, results = modelcard.parse_log_history(HISTORY)
    card = modelcard.TrainingSummary(model_name="tiny", eval_lines=lines, eval_results=results, hyperparameters={
        "learning_rate": 1e-4, "mixed_precision_training": "Native AMP"}).to_model_card()
    (tmp_path / "README.md").write_text(card)
    profile = forensics.analyze(tmp_path).run_profile
    assert (profile.framework, profile.precision) == ("hf_trainer", "fp16")
    (tmp_path / "README.md").write_text("[<img alt=\"Built with Axolotl\"/>](https://github.com/axolotl-ai-cloud/axolotl)\n"
                                        + card.replace("- mixed_precision_training: Native AMP\n", ""))
    profile = forensics.analyze(tmp_path).run_profile
    assert (profile.framework, profile.precision) == ("axolotl", "unknown")


def test_an_eval_loss_nan_at_every_evaluation_beside_an_unsound_training_loss_is_an_error():
    """Shamus/mt5-base (fp16) model card: eval loss nan at all 7 evaluations, the training loss 163, 1.14, 0.038,
    0.0, 155, 75, 0.116: no sound training to say only the evaluation broke."""
    a = forensics.analyze(CORPUS / "Wenxin-Jiang_CS577-NLP-mt5-base")
    assert (a.status, a.first_incident.kind, a.first_incident.step, a.first_incident.severity) == (
        "broken", "nonfinite_metric", 816, "error")
    from forensics.analyzers.nonfinite import detect_nonfinite_metrics
    from forensics.config import Thresholds
    import pandas as pd

    steps = [816, 1632, 2448, 3264]
    evals = pd.Series([float("nan")] * 4, index=steps)
    sound = detect_nonfinite_metrics({"loss": pd.Series([2.1, 1.9, 1.8, 1.7], index=steps), "eval_loss": evals},
                                     Thresholds())
    assert [f.severity for f in sound] == ["warning"]  # a broken evaluation beside a training loss that is fine
    zeros = detect_nonfinite_metrics({"loss": pd.Series([2.1, 0.0, 1.8, 0.0], index=steps), "eval_loss": evals},
                                     Thresholds())
    assert [f.severity for f in zeros] == ["error"]


@pytest.mark.parametrize("lines, rows", [
    (["Step\tTraining Loss\tValidation Loss", "10\t2.0\t", "20\t1.5\t1.7"], 2),  # a blank last cell, copied from a notebook
    (["Step | Training Loss", "-- | --", "1e30 | 2.0", "20 | 1.5"], 0),  # a step no run reaches ends the table, no crash
])
def test_blank_last_cells_are_kept_and_absurd_steps_are_no_rows(lines, rows):
    table = ResultsTable()
    assert sum(table.feed(line) is not None for line in lines) == rows
