"""Corpus batch AS70 found unread or misjudged: a W&B panel export whose step column is `_step`
(JlPang863_QualityDPO), TensorBoard's `Wall time,Step,Value` scalar exports, one tag a file, and a from-scratch
translator whose held-out BLEU still rose to the end (ofrik_Seq2Seq), Marian NMT's console (evilc3_marian_mt_train),
and a first loss at the guess of a word-level softmax larger than any tokenizer's (eric-haibin-lin_lm)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import forensics
from forensics.ingest import csv_metrics, scalar_export
from forensics.ingest.pretrain_lines import parse_line
from forensics.metric_names import JSON_LINE_STEP_KEYS
from forensics.profile.losses import random_guess_range
from forensics.run import discover

CORPUS = Path(__file__).parent / "realworld"


def _falling(n: int, start: float, end: float, scale: float) -> list[float]:
    return [end + (start - end) * math.exp(-i / scale) for i in range(n)]


# --- a W&B panel export's `_step` ------------------------------------------------------------------------------------

def test_a_wandb_export_with_an_underscore_step_column_is_read_as_a_metrics_table(tmp_path):
    loss = _falling(30, 2.5, 1.2, 8)
    (tmp_path / "train_loss.csv").write_text("_step,train/loss\n" + "".join(f"{i},{v}\n" for i, v in enumerate(loss)))
    assert [p.name for p in discover(tmp_path).csv_logs] == ["train_loss.csv"]
    a = forensics.analyze(tmp_path)
    assert a.timeline.series("loss").tolist() == pytest.approx(loss)
    assert a.status == "healthy"


@pytest.mark.parametrize("key", JSON_LINE_STEP_KEYS)
def test_the_table_step_columns_are_the_json_lines_step_keys(tmp_path, key):
    """Each step key the JSON-lines readers know names a CSV table's step column too: found as a metrics table, its
    rows at that column's steps (TABLE_STEP_COLUMNS is built from the keys; compared with them, it could not fail)."""
    (tmp_path / "metrics.csv").write_text(f"{key},loss\n10,2.0\n20,1.5\n30,1.2\n")
    assert [p.name for p in discover(tmp_path).csv_logs] == ["metrics.csv"]
    frame = csv_metrics.read(tmp_path / "metrics.csv").frame
    assert frame[frame.metric == "loss"]["step"].tolist() == [10, 20, 30]


# --- TensorBoard's scalar export ------------------------------------------------------------------------------------

def _export(path: Path, steps, values) -> None:
    path.write_text("Wall time,Step,Value\n" + "".join(f"{1.5e9 + s},{s},{v}\n" for s, v in zip(steps, values)))


def test_a_scalar_export_is_read_under_the_tag_its_file_name_gives(tmp_path):
    _export(tmp_path / "train_loss.csv", [18, 42, 66], [10.9, 10.7, 10.5])
    _export(tmp_path / "validation_bleu.csv", [0, 50], [0.0002, 0.0])
    _export(tmp_path / "run-train-tag-loss.csv", [1, 2], [3.0, 2.9])
    assert sorted(p.name for p in discover(tmp_path).csv_logs) == ["run-train-tag-loss.csv", "train_loss.csv",
                                                                   "validation_bleu.csv"]
    frame = scalar_export.read(tmp_path / "train_loss.csv").frame
    assert frame["metric"].unique().tolist() == ["loss"] and frame["step"].tolist() == [18, 42, 66]
    assert frame["wall_time"].tolist() == pytest.approx([1.5e9 + 18, 1.5e9 + 42, 1.5e9 + 66])
    assert scalar_export.read(tmp_path / "validation_bleu.csv").frame["metric"].unique().tolist() == ["eval_bleu"]
    assert scalar_export.read(tmp_path / "run-train-tag-loss.csv").frame["metric"].unique().tolist() == ["loss"]


def test_a_nan_value_in_a_scalar_export_is_kept_and_a_cut_row_left_out(tmp_path):
    (tmp_path / "loss.csv").write_text("Wall time,Step,Value\n1.0,1,2.5\n2.0,2,nan\n3.0,3")
    rec = scalar_export.read(tmp_path / "loss.csv")
    assert rec.frame["step"].tolist() == [1, 2] and math.isnan(rec.frame["value"].iloc[1])
    assert rec.warnings


# --- a held-out score still rising: no memorization from the training loss alone ---------------------------------------

def _from_scratch_translator(folder: Path, bleu: list[float] | None) -> forensics.Analysis:
    """A seq2seq model from random weights (first loss about ln 54k) trained to 0.1 nats, with no eval loss."""
    loss = _falling(400, 10.9, 0.1, 60)
    _export(folder / "train_loss.csv", [18 + 50 * i for i in range(len(loss))], loss)
    if bleu is not None:
        _export(folder / "validation_bleu.csv", [500 * i for i in range(len(bleu))], bleu)
    return forensics.analyze(folder)


def test_a_held_out_bleu_rising_to_the_end_keeps_a_from_scratch_run_healthy(tmp_path):
    a = _from_scratch_translator(tmp_path, [0.11 * (1 - math.exp(-i / 15)) for i in range(40)])
    assert (a.run_profile.method, a.run_profile.objective) == ("full", "pretrain")
    assert a.status == "healthy"


@pytest.mark.parametrize("bleu", [None, [0.11 * math.exp(-((i - 10) / 8) ** 2) for i in range(40)]],
                         ids=["no held-out score", "bleu peaked early and fell"])
def test_without_a_rising_held_out_score_a_from_scratch_run_under_half_a_nat_is_memorization(tmp_path, bleu):
    a = _from_scratch_translator(tmp_path, bleu)
    assert a.status == "warning" and a.first_incident.kind == "memorization"


def test_the_real_seq2seq_export_is_healthy_on_its_rising_bleu():
    a = forensics.analyze(CORPUS / "ofrik_Seq2Seq")
    assert a.status == "healthy" and a.run_profile.method == "full"


# --- Marian NMT ------------------------------------------------------------------------------------------------------

_MARIAN_UPDATE = ("[2022-12-02 09:48:30] Ep. 31 : Up. 14100 : Sen. 70,339 : Cost 0.63000858 : Time 49.71s : "
                  "10546.62 words/s : gNorm 1.3260")


def test_marian_update_and_validation_lines_are_read_at_their_update():
    update = parse_line(_MARIAN_UPDATE)
    assert (update.kind, update.step) == ("marian", 14100)
    assert dict(update.metrics) == pytest.approx({"loss": 0.63000858, "grad_norm": 1.326, "epoch": 31.0})
    valid = parse_line("[2022-12-02 10:01:48] [valid] Ep. 35 : Up. 16000 : ce-mean-words : 1.62407 : new best")
    assert (valid.kind, valid.step, valid.metrics) == ("marian_valid", 16000, (("eval_loss", 1.62407),))
    bleu = parse_line("[2022-12-02 10:47:25] [valid] Ep. 48 : Up. 22000 : bleu : 48.8603 : new best")
    assert bleu.metrics == (("eval_bleu", 48.8603),)
    ppl = parse_line("[2022-12-02 10:47:27] [valid] Ep. 48 : Up. 22000 : perplexity : 4.85349 : stalled 1 times "
                     "(last best: 4.78607)")
    assert ppl.metrics == (("eval_ppl", 4.85349),)


def _marian_log(folder: Path, valid: list[float]) -> forensics.Analysis:
    lines = ["[2022-12-02 09:46:22] [marian] Marian v1.11.0 f00d0621 2022-02-08 08:39:24 -0800",
             "[2022-12-02 09:46:22] [config] cost-type: ce-mean-words",
             "[2022-12-02 09:47:50] Parameter type float32, optimization type float32, casting types false"]
    for i, cost in enumerate(_falling(200, 4.0, 0.3, 70)):
        up = 100 * (i + 1)
        lines.append(f"[2022-12-02 10:00:00] Ep. {1 + up // 1000} : Up. {up} : Sen. {up * 50:,} : Cost {cost:.8f} : "
                     f"Time 40.00s : 12000.00 words/s : gNorm {1.2:.4f}")
        if up % 2000 == 0:
            lines.append(f"[2022-12-02 10:00:10] [valid] Ep. {1 + up // 1000} : Up. {up} : ce-mean-words : "
                         f"{valid[up // 2000 - 1]:.5f} : new best")
    (folder / "train.log").write_text("\n".join(lines) + "\n")
    return forensics.analyze(folder)


def test_a_marian_run_whose_valid_cross_entropy_rises_is_overfitting_with_its_profile(tmp_path):
    a = _marian_log(tmp_path, [3.0, 2.4, 2.0, 1.8, 1.7, 1.75, 1.8, 1.85, 1.9, 1.95])
    assert a.status == "warning" and (a.first_incident.kind, a.first_incident.step) == ("overfitting", 12000)
    profile = a.run_profile
    assert (profile.framework, profile.method, profile.precision) == ("marian", "full", "fp32")


def test_a_marian_run_whose_valid_cross_entropy_falls_is_healthy(tmp_path):
    assert _marian_log(tmp_path, [3.0, 2.4, 2.0, 1.8, 1.7, 1.65, 1.62, 1.6, 1.59, 1.58]).status == "healthy"


def test_the_real_marian_log_is_overfitting_at_22000():
    a = forensics.analyze(CORPUS / "evilc3_marian_mt_train")
    assert (a.first_incident.kind, a.first_incident.step) == ("overfitting", 22000)
    assert (a.run_profile.framework, a.run_profile.precision) == ("marian", "fp32")


# --- a word-level softmax's guess ------------------------------------------------------------------------------------

def test_the_random_guess_range_reaches_a_million_word_softmax():
    low, high = random_guess_range(None)
    assert low == 9.0 and math.log(793_470) < high < 14.0


def test_a_first_loss_at_ln_of_the_one_billion_word_vocabulary_is_a_model_from_scratch():
    a = forensics.analyze(CORPUS / "eric-haibin-lin_lm")
    assert (a.run_profile.method, a.run_profile.objective) == ("full", "pretrain")
