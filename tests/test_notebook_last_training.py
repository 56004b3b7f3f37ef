"""Which training of a notebook is judged (forensics/ingest/notebook.py): a notebook whose last training logs one point
(a one-line fit) is judged on the training before it (DevanshiVyas_DeepLearningExperiments), one whose last training
has an evaluation on that training (ameerfayiz_ML-notebooks).

From branch fx-evidence."""
from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

import forensics


CORPUS = Path(__file__).parent / "realworld"


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
