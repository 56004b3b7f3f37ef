"""Tests of the NeMo 2 console reader: a val loss repeated on progress lines, a partial interval.

From the review of the day's changes a5f3681..HEAD: inputs real runs plausibly produce that the new rules must not
misread. A failing test was a misfire of a new rule; the passing ones record shapes that held."""
from __future__ import annotations

from support.review_runs import nemo2_console
from support.written_runs import _analyze, _kinds, _write


# ---- NeMo 2.0 ProgressPrinter: val_loss stays among the progress-bar metrics --------------------------------------


def test_nemo2_val_loss_repeated_on_every_progress_line_is_one_eval_per_validation(tmp_path):
    """Stands for a NeMo 2.0 fine-tune printed by ProgressPrinter (log_interval 1), validated every 50 steps: the
    val_loss of the last validation is printed again on every training line after it (prog_bar metric), 1.900 at its
    best and 1.912 / 1.915 / 1.921 at the last three validations (a 1% wobble). The tool reads 350 eval points for 7
    validations and calls the pseudo-replicated wobble `overfitting` (warning at step 201). It should read one eval
    point per validation (7) and stay healthy. Fix: pretrain_lines._nemo2_progress (or step_numbering, as the tqdm
    postfix reader does): keep val_loss / val_ppl only on the first line after a `Validation: iteration` block, or
    where the value changes."""
    vals = {49: 2.10, 99: 1.950, 149: 1.905, 199: 1.900, 249: 1.912, 299: 1.915, 349: 1.921}
    a = _analyze(_write(tmp_path, "log-nemo.txt", nemo2_console(vals)))
    assert "overfitting" not in [k for k, _ in _kinds(a)], _kinds(a)
    assert len(a.timeline.series("eval_loss")) == len(vals)


def test_nemo2_val_loss_averaged_over_a_partial_interval_is_no_eval_dip(tmp_path):
    """Stands for a NeMo 2.0 run with ProgressPrinter(log_interval=10) and val_check_interval 25: on the first line
    after each validation the printer divides a val_loss summed over part of the interval by 10 (0.975 for a val_loss
    of 1.95), so the eval loss reads 0.97 ... then 1.95. The eval loss in truth fell steadily (1.95 -> 1.84); the tool
    says `overfitting` at step 39 (the fake dip the best, every later eval 15% above it: _settled_above). Fix:
    pretrain_lines._nemo2_progress: take val_loss only from a line whose interval held no validation start (or only
    where it changes, leaving out the first line after a validation)."""
    vals = {24: 1.95, 49: 1.90, 74: 1.88, 99: 1.87, 124: 1.86, 149: 1.86, 174: 1.85, 199: 1.85, 224: 1.845,
            249: 1.845, 274: 1.84}
    a = _analyze(_write(tmp_path, "log-nemo.txt", nemo2_console(vals, steps=300, log_interval=10)))
    assert "overfitting" not in [k for k, _ in _kinds(a)], _kinds(a)
