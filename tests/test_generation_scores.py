"""Tests of analyzers/generation_scores.py: a run's own generation score (ROUGE, BLEU, chrF, METEOR) as evidence the
teacher-forced loss cannot give.

From two real cards in the corpus (tests/realworld/PROVENANCE.md): saranscript_huggingface-models_t5-vi-summ, whose
eval loss fell at every one of 20 evaluations while ROUGE-1 fell from 13.92 (epoch 5) to 2.5115 and froze there for
epochs 16-20 (the tool said healthy); and saranscript_huggingface-models_encdec-es-titles, whose loss stayed at 7.88
for four epochs beside a ROUGE-2 F of 0.0025-0.0038 at every evaluation (the tool said only no_learning_evidence).
Silent: a healthy seq2seq run whose ROUGE wobbles by +-10%, a fall held for fewer than three evaluations, a fall the
eval loss shows by rising (overfitting's to tell), a near-zero score that rises, one evaluation, a loss that fell.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

import forensics
from forensics.analyzers.generation_scores import detect_generation_score_collapse, never_learned_by_the_score
from forensics.config import Thresholds
from forensics.findings import Finding

CORPUS = Path(__file__).parent / "realworld"
_T5_VI_ROUGE1 = [7.4562, 10.4004, 11.4207, 13.0109, 13.9192, 12.4863, 11.0754, 9.5541, 8.1885, 6.9352, 6.0634,
                 3.8984, 3.8638, 3.393, 2.8226, 2.5115, 2.5115, 2.5115, 2.5115, 2.5115]


def _series(values, steps) -> pd.Series:
    return pd.Series(np.asarray(values, dtype="float64"), index=np.asarray(list(steps), dtype="int64"))


def _eval_metrics(rouge, eval_loss) -> dict[str, pd.Series]:
    steps = range(18, 18 * len(rouge) + 1, 18)
    return {"eval_rouge1": _series(rouge, steps), "eval_loss": _series(eval_loss, steps)}


def _falling(n: int, start: float = 2.97, end: float = 2.50) -> list[float]:
    return list(np.linspace(start, end, n))


def test_a_rouge_that_collapses_to_a_fifth_of_its_best_while_the_eval_loss_falls_is_a_warning():
    (found,) = detect_generation_score_collapse(_eval_metrics(_T5_VI_ROUGE1, _falling(20)), Thresholds())
    assert (found.kind, found.severity, found.metric) == ("generation_score_collapse", "warning", "eval_rouge1")
    assert found.step == 216 and found.end_step == 360  # epoch 12: the first of the last evaluations under a third
    assert found.evidence["best"] == 13.9192 and found.evidence["best_step"] == 90
    assert found.evidence["evaluations_collapsed"] == 9 and found.evidence["frozen_at_the_end"] == 5
    assert "decoded generations" in found.message and "tokenizer" in found.message, found.message


def test_a_healthy_seq2seq_rouge_wobbling_by_ten_percent_is_silent():
    rng = np.random.default_rng(3)
    rouge = [30.0 * (1 + rng.uniform(-0.1, 0.1)) for _ in range(20)]
    assert detect_generation_score_collapse(_eval_metrics(rouge, _falling(20)), Thresholds()) == []


def test_a_fall_held_for_two_evaluations_only_is_silent():
    rouge = [10.0, 12.0, 14.0, 13.5, 13.0, 13.2, 12.8, 3.0, 2.9]
    assert detect_generation_score_collapse(_eval_metrics(rouge, _falling(9)), Thresholds()) == []


def test_a_collapse_the_eval_loss_shows_by_rising_is_left_to_the_loss_detectors():
    rising = [2.9, 2.7, 2.6, 2.55, 2.5, 2.6, 2.7, 2.8, 2.9, 3.0, 3.1, 3.2, 3.3, 3.4, 3.5, 3.6, 3.7, 3.8, 3.9, 4.0]
    assert detect_generation_score_collapse(_eval_metrics(_T5_VI_ROUGE1, rising), Thresholds()) == []


def test_a_score_that_never_left_near_zero_has_no_best_to_collapse_from():
    rouge = [0.004, 0.009, 0.003, 0.001, 0.001, 0.001]
    assert detect_generation_score_collapse(_eval_metrics(rouge, _falling(6)), Thresholds()) == []


def _flat_loss_doubt() -> Finding:
    return Finding("no_learning_evidence", "warning", 5784, "the loss did not fall", end_step=23136, metric="loss",
                   evidence={"head": 7.8807, "tail": 7.8507, "n_points": 4})


def _titles_metrics(f_measure) -> dict[str, pd.Series]:
    steps = range(5784, 5784 * len(f_measure) + 1, 5784)
    return {"eval_rouge2_fmeasure": _series(f_measure, steps), "eval_rouge2_recall": _series([0.012] * len(f_measure),
                                                                                           steps)}


def test_a_rouge_near_zero_at_every_evaluation_beside_a_loss_that_did_not_fall_never_learned():
    (found,) = never_learned_by_the_score(_titles_metrics([0.0038, 0.003, 0.0025, 0.0034]), [_flat_loss_doubt()])
    assert (found.kind, found.severity, found.step, found.metric) == ("never_learned", "error", 5784,
                                                                      "eval_rouge2_fmeasure")
    assert "0.0038" in found.message and "4 evaluations" in found.message, found.message


def test_a_near_zero_score_that_rises_is_silent():
    assert never_learned_by_the_score(_titles_metrics([0.001, 0.003, 0.006, 0.009]), [_flat_loss_doubt()]) == []


def test_a_near_zero_score_at_one_or_two_evaluations_is_silent():
    assert never_learned_by_the_score(_titles_metrics([0.0038, 0.0034]), [_flat_loss_doubt()]) == []


def test_a_near_zero_score_beside_a_loss_that_fell_is_not_this_rule():
    assert never_learned_by_the_score(_titles_metrics([0.0038, 0.003, 0.0025, 0.0034]), []) == []
    too_few = Finding("no_learning_evidence", "warning", 5784, "too few", metric="loss", evidence={"n_points": 2})
    assert never_learned_by_the_score(_titles_metrics([0.0038, 0.003, 0.0025, 0.0034]), [too_few]) == []


def _trainer_state(tmp_path, entries: list[dict]) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "trainer_state.json").write_text(json.dumps({"global_step": entries[-1]["step"], "log_history": entries}))
    return run


def test_a_healthy_seq2seq_log_whose_rouge_wobbles_stays_healthy(tmp_path):
    rng = np.random.default_rng(7)
    entries = [{"step": s, "epoch": s / 100, "loss": round(3.0 * np.exp(-s / 600) + 1.2 + rng.normal(0, 0.03), 4),
                "learning_rate": 5e-5 * (1 - s / 2000)} for s in range(20, 2001, 20)]
    for k, step in enumerate(range(200, 2001, 200)):
        entries.append({"step": step, "epoch": step / 100, "eval_loss": round(2.4 - 0.08 * k, 4),
                        "eval_rouge1": round(38.0 * (1 + rng.uniform(-0.1, 0.1)), 4),
                        "eval_rouge2": round(16.0 * (1 + rng.uniform(-0.1, 0.1)), 4), "eval_gen_len": 19.0})
    a = forensics.analyze(_trainer_state(tmp_path, sorted(entries, key=lambda e: e["step"])))
    assert a.status == "healthy", [f.message for f in a.findings]


def test_the_vietnamese_t5_card_whose_rouge_collapsed_and_froze_is_a_warning():
    a = forensics.analyze(CORPUS / "saranscript_huggingface-models_t5-vi-summ")
    assert a.status == "warning"
    (found,) = [f for f in a.findings if f.kind == "generation_score_collapse"]
    assert found.step == 216 and found.severity == "warning"


def test_the_spanish_titles_card_at_near_zero_rouge_and_a_flat_loss_never_learned():
    a = forensics.analyze(CORPUS / "saranscript_huggingface-models_encdec-es-titles")
    assert a.status == "broken"
    assert (a.first_incident.kind, a.first_incident.step) == ("never_learned", 5784)


def test_healthy_corpus_cards_with_rouge_stay_silent():
    # bart-large-wsj: ROUGE-2 down to 0.54 of its best at the end; KyrieRui: ROUGE-2 halved and 0.0199 at four
    # evaluations in a row (a small fraction printed to four places repeats: no freeze); smhavens: ROUGE-2 exactly 0 at
    # all nine evaluations of one-word outputs, while the loss fell 0.386 -> 0.001
    for case in ("saranscript_huggingface-models_bart-large-wsj", "KyrieRui_Qestion_QA", "smhavens_NLPCategoryGame"):
        a = forensics.analyze(CORPUS / case)
        assert a.status == "healthy", (case, [f.message for f in a.findings])
        assert not [f for f in a.findings if f.kind in ("generation_score_collapse", "never_learned")], case


def test_a_score_that_falls_with_no_eval_loss_logged_is_left_to_the_memorization_rules():
    # The collapse is the loss and the score parting ways; with no held-out loss there is nothing to part from, and a
    # held-out score falling as the training loss falls is memorization's witness (test_memorization_held_out_bleu)
    steps = [100 * i for i in range(1, 11)]
    bleu = pd.Series([10, 12, 14, 13, 4, 3, 2.5, 2.4, 2.3, 2.2], index=steps, dtype="float64")
    assert detect_generation_score_collapse({"eval_bleu": bleu}, Thresholds()) == []
