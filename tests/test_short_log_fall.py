"""Short logs (three to six points) whose loss plainly fell: the fall must not be read as noise measured from the
same few steps, while a short log that wobbles or stays flat still gets its `no_learning_evidence` warning."""
import json

import pandas as pd

import forensics
from forensics.analyzers.learning_evidence import detect_no_learning_evidence, learning_shown
from forensics.config import Thresholds


def _loss(values: list[float], every: int = 100) -> dict:
    """A training loss logged every `every` steps (the HF Trainer's mean over each logging window)."""
    steps = [every * (k + 1) for k in range(len(values))]
    return {"loss": pd.Series(values, index=steps, dtype="float64")}


def _kinds(run: dict) -> list[str]:
    return [f.kind for f in detect_no_learning_evidence(run, Thresholds())]


def test_three_window_means_each_lower_and_falling_by_tens_of_percent_show_learning():
    """A small fine-tune logged every 100 steps: 1.92, 1.10, 0.86 (-55%, lower at each window)."""
    run = _loss([1.92, 1.10, 0.86])
    assert _kinds(run) == []
    assert learning_shown(run, Thresholds()) is not None


def test_three_window_means_falling_by_tens_of_percent_in_a_trainer_state_show_learning(tmp_path):
    """The same shape as the HF Trainer writes it (trainer_state.json, logging_steps 50, no eval): no
    no_learning_evidence, and the run is healthy."""
    log = [{"epoch": 0.5 * (k + 1), "grad_norm": g, "learning_rate": lr, "loss": loss, "step": 50 * (k + 1)}
           for k, (loss, g, lr) in enumerate([(2.41, 1.9, 4.2e-5), (1.63, 1.4, 2.6e-5), (1.37, 1.3, 1.0e-5)])]
    state = {"log_history": log, "global_step": 160, "max_steps": 160, "logging_steps": 50, "epoch": 1.6}
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    analysis = forensics.analyze(tmp_path)
    assert "no_learning_evidence" not in [f.kind for f in analysis.findings]
    assert analysis.status == "healthy"


def test_three_window_means_that_wobble_still_warn():
    """2.01, 1.98, 2.00: down then up, as noise moves a loss that stays where it is."""
    assert _kinds(_loss([2.01, 1.98, 2.00])) == ["no_learning_evidence"]


def test_three_single_steps_falling_by_tens_of_percent_still_warn():
    """Three per-step losses (steps 1, 2, 3, each one batch) 2.4, 1.5, 1.4: one batch's loss moves by tens of percent
    on its own, so three of them in order are no more than the 1 in 6 that noise gives."""
    assert _kinds(_loss([2.4, 1.5, 1.4], every=1)) == ["no_learning_evidence"]


def test_a_flat_four_point_log_still_warns():
    assert _kinds(_loss([2.31, 2.29, 2.32, 2.30])) == ["no_learning_evidence"]


# ---- a short log whose loss still fell several-fold over late passes, with no eval: memorization ----------------------

from forensics.analyzers.collapse import detect_loss_collapse  # noqa: E402


def _many_epochs(values: list[float], epochs: list[float], evals: list[float] | None = None) -> dict:
    """A loss logged every 100 steps of a 16-step epoch (a hundred-odd examples), its epoch beside it."""
    steps = [100 * (k + 1) for k in range(len(values))]
    run = {"loss": pd.Series(values, index=steps, dtype="float64"),
           "epoch": pd.Series(epochs, index=steps, dtype="float64")}
    if evals is not None:
        run["eval_loss"] = pd.Series(evals, index=steps, dtype="float64")
    return run


def test_a_short_log_falling_several_fold_over_late_passes_to_a_low_loss_is_memorization():
    """Three points at epochs 6, 12 and 18 of a 20-epoch run on a small set: 0.91, 0.27, 0.12 (7.6x over passes that
    only show the model examples it has seen six times and more), no eval loss."""
    found = detect_loss_collapse(_many_epochs([0.91, 0.27, 0.12], [6.0, 12.0, 18.0]), Thresholds())
    assert [(f.kind, f.step) for f in found] == [("memorization", 300)]


def test_a_short_log_that_learned_its_task_over_many_passes_is_not_memorization():
    """The same passes, but the loss ends at 1.05 (a level held-out text reaches), or sits near 0.15 from epoch 6 on
    (a templated task learned early, no fall over the late passes), or an eval loss is logged beside it (overfitting
    judges there)."""
    for run in (_many_epochs([2.10, 1.40, 1.05], [6.0, 12.0, 18.0]),
                _many_epochs([0.16, 0.15, 0.15], [6.0, 12.0, 18.0]),
                _many_epochs([0.91, 0.27, 0.12], [6.0, 12.0, 18.0], evals=[1.2, 1.1, 1.1])):
        assert [f.kind for f in detect_loss_collapse(run, Thresholds())] == []


def test_a_trainer_state_of_twenty_passes_over_a_small_set_is_judged_memorization(tmp_path):
    """The HF Trainer's record of such a run (logging every 100 steps, no eval): warning, memorization first, and no
    no_learning_evidence beside it (three window means lower at each, -85%)."""
    log = [{"epoch": e, "grad_norm": g, "learning_rate": lr, "loss": loss, "step": 100 * (k + 1)}
           for k, (loss, g, lr, e) in enumerate([(0.91, 4.1, 3.4e-5, 6.25), (0.27, 3.2, 1.9e-5, 12.5),
                                                (0.12, 2.6, 3.3e-6, 18.75)])]
    state = {"log_history": log, "global_step": 320, "max_steps": 320, "num_train_epochs": 20, "epoch": 20.0,
             "logging_steps": 100}
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    analysis = forensics.analyze(tmp_path)
    assert analysis.status == "warning"
    assert (analysis.first_incident.kind, analysis.first_incident.step) == ("memorization", 300)
    assert "no_learning_evidence" not in [f.kind for f in analysis.findings]


def test_a_tenfold_fall_over_twenty_five_passes_to_under_half_a_nat_is_memorization():
    """vvud_notebooks' shape: a QLoRA over 13 rows logged every 25 steps of a 4-step epoch, 3.47 at epoch 6.25, 0.83,
    0.26, 0.245 at epoch 25 (14x over passes that only show examples seen six times and more), no eval loss: over
    0.2, but a tenfold fall after twice ten passes is the rows learned by heart, dated where it went under 0.5."""
    run = _many_epochs([3.47, 0.83, 0.26, 0.245], [6.25, 12.5, 18.75, 25.0])
    assert [(f.kind, f.step) for f in detect_loss_collapse(run, Thresholds())] == [("memorization", 300)]


def test_a_fall_short_of_tenfold_over_twenty_passes_to_under_half_a_nat_is_not_memorization():
    """YYYYXL1004_NLP2's shape (judged healthy: a translation model from scratch whose held-out BLEU held): 4.0 at
    epoch 5 to 0.48 at epoch 20, 8.3x; and the same tenfold fall over only fifteen passes: no finding."""
    for run in (_many_epochs([4.0, 2.0, 1.0, 0.48], [5.0, 10.0, 15.0, 20.0]),
                _many_epochs([3.47, 0.83, 0.26, 0.245], [6.0, 9.0, 12.0, 15.0])):
        assert [f.kind for f in detect_loss_collapse(run, Thresholds())] == []
