"""livelossplot's closing summary read as a course (forensics/discover/livelossplot_summary.py).

Notebooks whose only training numbers are a closing summary (fx-summaries): livelossplot's min / max / cur lines
read as the course they allow; a watcher's `nan` default for a key the log lacked is no NaN loss."""
from __future__ import annotations

import json

import pytest

import forensics
from forensics.discover.livelossplot_summary import as_step_lines

# Joseph-Ajegetina_supervised-speech-recognition-transformers: livelossplot clears the cell at every update and
# keeps its last summary
_SUMMARY = ("log loss\n\ttraining         \t (min:    1.227, max:    4.285, cur:    1.227)\n"
            "Loss\n\tvalidation       \t (min:    1.501, max:    {max_val:.3f}, cur:    {cur_val:.3f})\n")
_LOOP = ("liveloss = PlotLosses()\nfor it in range(3000):\n    if it % 50 == 0:\n        losses = estimate_loss()\n"
         "        liveloss.update({'log loss': losses['train'], 'val_loss': losses['val']})\n        liveloss.send()\n"
         "    logits, loss = model(xb, yb)\n    loss.backward()\n    optimizer.step()\n")


def _notebook(tmp_path, outputs: list[dict], source: str = _LOOP):
    cells = [{"cell_type": "code", "execution_count": 1, "metadata": {}, "source": source, "outputs": outputs}]
    (tmp_path / "run.ipynb").write_text(json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5,
                                                    "metadata": {}}))
    return tmp_path


def _livelossplot_cell(max_val: float, cur_val: float) -> list[dict]:
    figure = {"output_type": "display_data", "metadata": {},
              "data": {"text/plain": ["<Figure size 1200x800 with 2 Axes>"]}}
    return [figure, {"output_type": "stream", "name": "stdout",
                     "text": _SUMMARY.format(max_val=max_val, cur_val=cur_val)}]


def test_a_livelossplot_summary_whose_series_end_at_their_lowest_is_a_run_that_learned(tmp_path):
    a = forensics.analyze(_notebook(tmp_path, _livelossplot_cell(4.282, 1.502)))
    assert a.status == "healthy" and a.first_incident is None
    assert a.timeline.series("loss").tolist() == [4.285, 1.227]
    assert a.timeline.series("eval_loss").tolist() == [4.282, 1.502]
    assert any("livelossplot" in s.reason and s.note for s in a.skipped)


def test_a_livelossplot_summary_whose_validation_loss_ended_between_its_extremes_is_not_healthy(tmp_path):
    """Down to 1.501 and back up to 2.9, or up to 4.282 and back down? The summary cannot say: the series is not
    read, and two training points alone show no course (a warning)."""
    a = forensics.analyze(_notebook(tmp_path, _livelossplot_cell(4.282, 2.9)))
    assert "eval_loss" not in set(a.timeline.frame["metric"])
    assert a.status == "warning"


@pytest.mark.parametrize("low, high, last, course", [
    (1.227, 4.285, 1.227, [4.285, 1.227]),   # ended at its lowest: a fall from its highest
    (1.2, 4.3, 4.3, [1.2, 4.3]),             # ended at its highest: a rise from its lowest
    (1.2, 4.3, 2.0, None)])                  # between: which extreme came first is not said
def test_a_livelossplot_series_reads_as_the_course_its_extremes_allow(low, high, last, course):
    text = f"Loss\n\ttraining         \t (min: {low:8.3f}, max: {high:8.3f}, cur: {last:8.3f})\n"
    expected = "".join(f"step {k}: loss {v!r}\n" for k, v in enumerate(course)) if course else None
    assert as_step_lines(text) == expected


def test_a_livelossplot_summary_of_an_accuracy_alone_is_no_loss():
    assert as_step_lines("accuracy\n\ttraining         \t (min:    0.210, max:    0.910, cur:    0.910)\n") is None
