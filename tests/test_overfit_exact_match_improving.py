"""An extractive-QA fine-tune's held-out exact match / F1 read from its epoch lines, and the exact match as the
accuracy that says whether a rise of the eval loss is overfitting (ingest.console_lines.hand_written, analyzers.
overfit_accuracy).

gkrls_straggle-ml-experiments (BERT-base on SQuAD v1, judged healthy) prints `val_loss=1.0296 val_em=78.49%
val_f1=85.87%` per epoch: the validation loss rises 3.5% over its last two epochs (1.0296 -> 1.0563 -> 1.0655) while
exact match and F1 set a new best at each of them (78.49 -> 78.99 -> 79.32, 85.87 -> 86.23 -> 86.48). Exact match is
the share of held-out questions whose predicted span is right: an accuracy of the same start / end distributions the
loss scores. A rise past `CLIMB` is excused only where it gave back under half of the eval loss's fall to its best
(here a quarter: 1.178 -> 1.0296 -> 1.0655) and that accuracy set a new best at EVERY eval after the loss's best;
Kabeermd's LSTM LM (+4.5%, its accuracy falling back at three of its ten later epochs), ozguozkan's GPT-2 classifier
(a rise past its fall beside a rising accuracy) and runs whose best eval is their first (nothing to measure the rise
by) stay overfitting, as judged.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import forensics
from forensics.analyzers import analyze_metrics
from forensics.config import Thresholds
from forensics.ingest import stdout

CORPUS = Path(__file__).resolve().parent / "realworld"
TH = Thresholds()

# gkrls_straggle-ml-experiments' five epoch lines
TRAIN = [2.4297, 1.0769, 0.8716, 0.7331, 0.6797]
VAL = [1.1780, 1.0527, 1.0296, 1.0563, 1.0655]
EM = [73.37, 77.77, 78.49, 78.99, 79.32]
F1 = [82.43, 85.42, 85.87, 86.23, 86.48]


def _epoch_lines(em=EM, f1=F1) -> str:
    return "".join(f"[2025-09-07 15:50:30][Epoch {i:03d}] ...\n[2025-09-07 15:50:30][Epoch {i:03d}] train_loss={t:.4f} "
                   f"(global={t:.4f}) val_loss={v:.4f} val_em={e:.2f}% val_f1={f:.2f}% lr=0.000020 epoch_time=647.19s "
                   "straggle_events=0\n" for i, (t, v, e, f) in enumerate(zip(TRAIN, VAL, em, f1)))


def _read(text: str, tmp_path: Path) -> dict:
    frame = stdout.read_console(text, tmp_path / "bert_finetune.log", []).frame
    return {(int(r.step), r.metric): r.value for r in frame.itertuples()}


def test_a_held_out_exact_match_and_f1_are_read_beside_the_val_loss(tmp_path):
    read = _read(_epoch_lines(), tmp_path)
    assert read[(1, "eval_loss")] == 1.178
    assert abs(read[(1, "eval_exact_match")] - 0.7337) < 1e-9 and abs(read[(5, "eval_f1")] - 0.8648) < 1e-9


def test_a_bare_em_or_f1_without_a_split_is_not_read(tmp_path):
    # `em` alone is any abbreviation (an em dash, EM iterations); a score needs its split named before it
    text = "".join(f"step {i} loss={2.0 - i / 10:.3f} em={0.5 + i / 100:.2f} f1={0.6:.2f}\n" for i in range(1, 6))
    read = _read(text, tmp_path)
    assert read[(1, "loss")] == 1.9
    assert not [m for _, m in read if "exact" in m or "f1" in m]


def _overfitting(em=EM, name="eval_exact_match", val=VAL) -> list:
    steps = np.arange(1, 6)
    m = {"loss": pd.Series(TRAIN, index=steps), "eval_loss": pd.Series(val, index=steps, dtype="float64"),
         "epoch": pd.Series(steps.astype("float64"), index=steps), name: pd.Series(np.asarray(em) / 100, index=steps)}
    return [f for f in analyze_metrics(m, TH) if f.kind == "overfitting"]


def test_the_rise_beside_an_exact_match_that_set_a_new_best_at_each_later_eval_is_not_overfitting():
    assert not _overfitting()


def test_the_same_rise_with_no_score_beside_it_is_overfitting():
    assert len(_overfitting(name="eval_unrelated")) == 1


def test_the_same_rise_beside_an_exact_match_that_fell_back_once_is_overfitting():
    assert len(_overfitting(em=[73.37, 77.77, 78.49, 78.99, 78.90])) == 1
    assert len(_overfitting(em=[73.37, 77.77, 78.49, 78.40, 79.32])) == 1


def test_a_training_exact_match_is_no_held_out_one():
    assert len(_overfitting(name="exact_match")) == 1


def test_an_f1_alone_does_not_excuse_a_rise_past_the_small_one():
    # F1 is partial credit on overlapping tokens (a generation-like score), not the share of answers right
    assert len(_overfitting(name="eval_f1")) == 1


def test_gkrls_bert_squad_fine_tune_is_healthy():
    a = forensics.analyze(CORPUS / "gkrls_straggle-ml-experiments")
    assert a.status == "healthy" and not [f for f in a.findings if f.kind == "overfitting"]


def test_a_rise_that_gave_back_most_of_the_fall_is_overfitting_beside_a_rising_exact_match():
    # ozguozkan_DI725_Assignment_1's shape: 0.5355 -> 0.4173 -> 0.5507 ..., accuracy rising at every epoch
    assert len(_overfitting(val=[1.1780, 1.0527, 1.0296, 1.1200, 1.1300])) == 1


def test_a_rise_after_a_best_first_eval_is_overfitting_beside_a_rising_exact_match():
    # nothing fell before the best to measure the rise by (SwapnilupGrad_HugginFace: +13%, +47%)
    assert len(_overfitting(val=[1.0296, 1.0400, 1.0500, 1.0563, 1.0655])) == 1


def test_judged_overfitting_runs_beside_an_accuracy_rising_at_each_eval_stay_overfitting():
    for case in ("Kabeermd_deep-learning-nlp-models", "ozguozkan_DI725_Assignment_1", "SwapnilupGrad_HugginFace",
                 "Obychenkov_CSE234-hardneg"):
        assert any(f.kind == "overfitting" for f in forensics.analyze(CORPUS / case).findings), case


def _sft_state(accuracy_name: str, scale: float) -> dict:
    # review 29b's SFT run: eval loss 1.60 -> 1.00 at step 300, then +14% back to 1.14 (under half its fall given
    # back) while the held-out score creeps to a new best at each later eval
    evals, scores = [1.60, 1.20, 1.00, 1.05, 1.10, 1.14], [0.60, 0.66, 0.70, 0.705, 0.708, 0.710]
    log = []
    for step in range(10, 601, 10):
        log.append({"loss": 1.7 - 0.9 * step / 600, "learning_rate": 2e-5 * (1 - step / 600), "grad_norm": 1.0,
                    "epoch": step / 200, "step": step})
        if step % 100 == 0:
            log.append({"eval_loss": evals[step // 100 - 1], accuracy_name: scores[step // 100 - 1] * scale,
                        "eval_runtime": 10.0, "epoch": step / 200, "step": step})
    return {"global_step": 600, "max_steps": 600, "num_train_epochs": 3, "log_history": log, "logging_steps": 10,
            "eval_steps": 100, "should_training_stop": True}


def _overfitting_of_run(tmp_path: Path, accuracy_name: str, scale: float = 1.0) -> list:
    import json
    (tmp_path / "trainer_state.json").write_text(json.dumps(_sft_state(accuracy_name, scale)))
    return [f for f in forensics.analyze(tmp_path, check_checkpoints=False).findings if f.kind == "overfitting"]


def test_a_token_accuracy_creeping_up_does_not_excuse_a_rise_past_the_small_one(tmp_path):
    # TRL's eval_mean_token_accuracy is a teacher-forced next-token share: it keeps creeping up while an SFT run
    # memorises, so only an exact match (the share of answers right) excuses the larger rise
    assert len(_overfitting_of_run(tmp_path, "eval_mean_token_accuracy")) == 1


def test_an_exact_match_at_a_new_best_at_each_eval_still_excuses_the_same_rise(tmp_path):
    assert not _overfitting_of_run(tmp_path, "eval_exact_match", scale=100)
