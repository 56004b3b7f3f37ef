"""Tests of the NeMo 2 console reader: one eval per validation interval.

From the review of the day's changes 72c43fc..HEAD: inputs real runs plausibly produce that the new rules must not
misread. A failing test was a misfire; the passing ones record shapes that held."""
from __future__ import annotations

from support.review_runs import nemo2_console
from support.written_runs import _analyze, _kinds, _write


# ---- stdout._nemo2_evaluations_once --------------------------------------------------------------------------------


def test_nemo2_validation_every_log_interval_keeps_every_eval(tmp_path):
    """Stands for a NeMo 2.0 fine-tune with val_check_interval equal to log_every_n_steps (both 10): every progress
    line carries a new val_loss (the validation just before it), so no value is printed twice. The eval loss falls
    to 1.6 at step 170 and climbs to 2.36 by 400 while the training loss keeps falling. The tool keeps one eval point
    of 39 (a value never repeated is never 'settled') plus one, and says healthy; before the change it said
    overfitting at 179. Fix: stdout._nemo2_evaluations_once: drop a value only when the next line shows it again
    (a repeat) or it is the partial average right after a validation block, not every value the next line changes."""
    vals = {it: max(2.2 - 0.004 * it, 1.6) + max(0, it - 200) * 0.004 for it in range(9, 400, 10)}
    a = _analyze(_write(tmp_path, "log-nemo.txt", nemo2_console(vals, 400, 10)))
    assert len(a.timeline.series("eval_loss")) >= 30
    assert "overfitting" in [k for k, _ in _kinds(a)], _kinds(a)


def test_nemo2_validation_every_fifth_log_line_is_one_eval_each(tmp_path):
    """Coverage: validation every 50 steps, log interval 10: 7 evals, one each, at the line where it settles."""
    vals = {it: 2.2 - 0.002 * it for it in range(49, 400, 50)}
    a = _analyze(_write(tmp_path, "log-nemo.txt", nemo2_console(vals, 400, 10)))
    assert len(a.timeline.series("eval_loss")) == 7
