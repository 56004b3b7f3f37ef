"""Learning evidence on short logs with a held-out loss (forensics/analyzers/learning_evidence.py): a held-out loss that
never improves over many evaluations is no evidence the run learned, whatever the training loss beside it did
(IMLHF_lstm_text_summary); a held-out loss 5% lower at its second evaluation is evidence (joaorafaelm_notebooks).

From branch fx-evidence."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

import forensics
from forensics.analyzers.learning_evidence import detect_no_learning_evidence, learning_shown
from forensics.config import Thresholds


CORPUS = Path(__file__).parent / "realworld"

# IMLHF's ten Keras iterations: the training loss and the validation loss printed beside it
IMLHF_TRAIN = [8.8566, 7.9593, 7.8776, 7.8286, 7.8198, 7.8023, 7.7811, 7.7844, 7.7648, 7.7676]
IMLHF_VAL = [7.9603, 7.9788, 7.9794, 8.0276, 8.0019, 7.9753, 7.9945, 7.9018, 7.9762, 7.9674]


def _run(train: list[float], evals: list[float]) -> dict:
    steps = list(range(1, len(train) + 1))
    return {"loss": pd.Series(train, index=steps, dtype="float64"),
            "eval_loss": pd.Series(evals, index=steps[:len(evals)], dtype="float64")}


def _kinds(run: dict) -> list[str]:
    return [f.kind for f in detect_no_learning_evidence(run, Thresholds())]


# --- a held-out loss that never improved ----------------------------------------------------------------------------

def test_a_training_loss_fall_beside_a_held_out_loss_that_never_improved_is_no_evidence():
    run = _run(IMLHF_TRAIN, IMLHF_VAL)
    assert learning_shown(run, Thresholds()) is None
    [finding] = detect_no_learning_evidence(run, Thresholds())
    assert finding.kind == "no_learning_evidence" and finding.metric == "eval_loss"
    assert "never improved on its first evaluation" in finding.message
    assert finding.evidence["n_evaluations"] == 10


def test_a_held_out_loss_that_fell_beside_the_training_loss_stays_silent():
    """The same training loss, the held-out loss 2% under its first by the end: evidence, no warning."""
    evals = [7.96, 7.93, 7.90, 7.88, 7.86, 7.85, 7.83, 7.82, 7.80, 7.79]
    assert _kinds(_run(IMLHF_TRAIN, evals)) == []
    assert learning_shown(_run(IMLHF_TRAIN, evals), Thresholds()) is not None


def test_a_couple_of_flat_evaluations_do_not_overrule_the_training_loss():
    """Four evaluations, fewer than the five a flat held-out loss is read over: the training loss's fall stands."""
    assert _kinds(_run(IMLHF_TRAIN, IMLHF_VAL[:4])) == []


def test_the_corpus_case_imlhf_warns_no_learning_evidence():
    analysis = forensics.analyze(CORPUS / "IMLHF_lstm_text_summary")
    assert analysis.status == "warning"
    assert "no_learning_evidence" in [f.kind for f in analysis.findings]


# --- a held-out loss 5% lower at its second evaluation --------------------------------------------------------------

def test_two_evaluations_the_second_five_percent_under_the_first_show_learning():
    """joaorafaelm's SWAG run: two last-batch training losses (0.308, 0.548), val_loss 0.3535 -> 0.3268 (-7.6%)."""
    run = _run([0.3080, 0.5484], [0.3535, 0.3268])
    assert _kinds(run) == []
    shown = learning_shown(run, Thresholds())
    assert (shown.metric, shown.start, shown.end) == ("eval_loss", 0.3535, 0.3268)


def test_two_evaluations_a_percent_apart_are_no_evidence():
    assert _kinds(_run([0.3080, 0.5484], [0.3535, 0.3500])) == ["no_learning_evidence"]


def test_the_corpus_case_joaorafaelm_is_healthy():
    analysis = forensics.analyze(CORPUS / "joaorafaelm_notebooks")
    assert analysis.status == "healthy"
