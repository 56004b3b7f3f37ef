"""Learning evidence on short logs with a held-out loss, and a notebook that ends on a one-line fit (branch
fx-evidence). A held-out loss that never improves over many evaluations is no evidence the run learned, whatever the
training loss beside it did (IMLHF_lstm_text_summary); a held-out loss 5% lower at its second evaluation is evidence
(joaorafaelm_notebooks); a notebook whose last training logs one point is judged on the training before it
(DevanshiVyas_DeepLearningExperiments)."""
from __future__ import annotations

from pathlib import Path

import nbformat
import pandas as pd
from nbformat.v4 import new_code_cell, new_notebook, new_output

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


# --- a notebook that ends on a one-line fit -------------------------------------------------------------------------

ITERATIONS = "".join(f"Iteration: {k * 2000}, Loss: {v:.6f}\n\n" for k, v in enumerate(
    [23.087, 27.884, 25.902, 24.609, 24.070, 23.844, 23.291, 23.381, 23.290, 22.820, 23.040, 22.730, 22.680,
     22.550, 22.480, 22.770, 22.209, 22.397]))
KERAS_FIT = "Epoch 1/1\n31412/31412 [==============================] - 206s - loss: 2.5631   \n"


def _notebook(folder: Path, outputs: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=[
        new_code_cell(f"cell_{i}()", execution_count=i + 1, outputs=[new_output("stream", name="stdout", text=text)])
        for i, text in enumerate(outputs)]), folder / "run.ipynb")
    return folder


def test_a_notebook_ending_on_a_one_line_fit_is_judged_on_the_training_before_it(tmp_path):
    folder = _notebook(tmp_path / "nb", ["Loss = 126.503975722\n", ITERATIONS, KERAS_FIT])
    analysis = forensics.analyze(folder)
    assert analysis.status == "healthy"
    assert analysis.learning.n_points == 18 and analysis.learning.first_step == 0


def test_a_notebook_whose_last_training_logs_a_course_is_judged_on_it(tmp_path):
    """Two fits of several points each: the last is judged, as before."""
    second = "".join(f"Iteration: {k * 100}, Loss: {v:.4f}\n" for k, v in enumerate([5.0, 5.0, 5.01, 4.99, 5.0]))
    folder = _notebook(tmp_path / "nb", [ITERATIONS, second])
    analysis = forensics.analyze(folder)
    assert analysis.status == "warning"
    assert analysis.first_incident.kind == "no_learning_evidence"


def test_the_corpus_case_devanshivyas_is_healthy():
    analysis = forensics.analyze(CORPUS / "DevanshiVyas_DeepLearningExperiments")
    assert analysis.status == "healthy"
    assert analysis.learning.n_points == 18


def test_a_last_training_of_one_point_with_an_evaluation_is_still_judged():
    """ameerfayiz_ML-notebooks ends on a toy LSTM with one training report and a validation at update 1828 (loss 0,
    accuracy 1 on its six training dialogues): the last training, judged at 1828, not the transformer before it."""
    analysis = forensics.analyze(CORPUS / "ameerfayiz_ML-notebooks")
    assert analysis.status == "warning"
    assert analysis.first_incident.step == 1828
