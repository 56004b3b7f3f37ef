"""A held-out (eval) loss lower at every evaluation is evidence the run learned: it is the mean over the same held-out
set each time, so nothing but the weights moves it. Three evaluations falling by a few percent in all count (the
corpus case DaryaYu_gen_ai), where a flat eval loss that wobbles by tenths of a percent, one that falls and comes
back, a fall of under a percent, or a training loss (a mean over random batches) lower at three points still warns."""
import json
from pathlib import Path

import pandas as pd

import forensics
from forensics.analyzers.learning_evidence import detect_no_learning_evidence, learning_shown
from forensics.analyzers.no_training_loss import eval_only
from forensics.config import Thresholds

CORPUS = Path(__file__).parent / "realworld"


def _run(losses: list[float] | None, evals: list[float], every: int = 4500) -> dict:
    """A training loss (each the mean of a logging window) and an eval loss, both logged at each epoch's end."""
    steps = [every * (k + 1) for k in range(len(evals))]
    run = {"eval_loss": pd.Series(evals, index=steps, dtype="float64")}
    if losses is not None:
        run["loss"] = pd.Series(losses, index=steps[:len(losses)], dtype="float64")
    return run


def _kinds(run: dict) -> list[str]:
    return [f.kind for f in detect_no_learning_evidence(run, Thresholds())]


def test_an_eval_loss_lower_at_each_of_three_evaluations_by_five_percent_shows_learning():
    """DaryaYu's epoch table: training loss 1.7941, 1.6879, 1.3537; eval loss 1.672330, 1.603865, 1.578177 (-5.6%)."""
    run = _run([1.7941, 1.6879, 1.3537], [1.672330, 1.603865, 1.578177])
    assert _kinds(run) == []
    shown = learning_shown(run, Thresholds())
    assert (shown.metric, shown.start, shown.end, shown.n_points) == ("eval_loss", 1.672330, 1.578177, 3)


def test_an_eval_only_log_lower_at_each_of_three_evaluations_shows_learning():
    """No training loss logged (logging_steps longer than the run), three evaluations: 2.40, 2.21, 2.15 (-10%)."""
    assert eval_only(_run(None, [2.40, 2.21, 2.15]), Thresholds()) == []


def test_a_trainer_state_whose_eval_loss_fell_at_every_epoch_is_healthy(tmp_path):
    """The same three epochs as the HF Trainer writes them (trainer_state.json, eval each epoch)."""
    log = []
    for k, (loss, ev) in enumerate([(1.7941, 1.672330), (1.6879, 1.603865), (1.3537, 1.578177)]):
        step, epoch = 4500 * (k + 1), float(k + 1)
        log += [{"epoch": epoch, "grad_norm": 2.1, "learning_rate": 5e-5 * (1 - epoch / 3), "loss": loss, "step": step},
                {"epoch": epoch, "eval_loss": ev, "eval_runtime": 60.0, "step": step}]
    state = {"log_history": log, "global_step": 13500, "max_steps": 13500, "num_train_epochs": 3, "epoch": 3.0,
             "logging_steps": 4500}
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    analysis = forensics.analyze(tmp_path)
    assert analysis.status == "healthy"
    assert "no_learning_evidence" not in [f.kind for f in analysis.findings]


def test_the_corpus_case_daryayu_is_healthy():
    analysis = forensics.analyze(CORPUS / "DaryaYu_gen_ai")
    assert (analysis.status, analysis.first_incident) == ("healthy", None)


def test_an_eval_loss_lower_at_each_evaluation_by_under_a_percent_still_warns():
    """jbmanasa's fixed-set eval loss 2.9855, 2.9718, 2.9668 (-0.6%) beside a flat training loss, and the same eval
    loss with no training loss: the wobble of an eval loss that does not learn, not a fall."""
    assert _kinds(_run([2.99, 3.01, 2.98], [2.9855, 2.9718, 2.9668])) == ["no_learning_evidence"]
    assert [f.kind for f in eval_only(_run(None, [2.9855, 2.9718, 2.9668]), Thresholds())] == ["no_learning_evidence"]


def test_an_eval_loss_that_falls_and_comes_back_still_warns():
    """MuQlanyu's 1.2834, 1.2820, 1.2811, 1.2807, 1.2808 and a 3-point 2.40, 2.21, 2.30: not lower at every evaluation."""
    assert _kinds(_run([1.30, 1.24, 1.30, 1.25, 1.29], [1.2834, 1.2820, 1.2811, 1.2807, 1.2808], every=300)) \
        == ["no_learning_evidence"]
    assert _kinds(_run([2.50, 2.52, 2.49], [2.40, 2.21, 2.30])) == ["no_learning_evidence"]


def test_a_training_loss_lower_at_three_single_steps_is_no_held_out_fall():
    """The rule is for a held-out loss only: three per-step training losses 2.4, 1.5, 1.4 (each one batch, lower at
    each, -42%) with an eval loss that did not move still warn."""
    run = {"loss": pd.Series([2.4, 1.5, 1.4], index=[1, 2, 3], dtype="float64"),
           "eval_loss": pd.Series([2.31, 2.31], index=[2, 3], dtype="float64")}
    assert _kinds(run) == ["no_learning_evidence"]


def test_a_run_whose_training_loss_fell_clearly_keeps_the_training_loss_as_its_evidence():
    """A healthy run: the training loss is the evidence, the held-out rule is not needed and says nothing."""
    losses = [2.5 - 0.1 * k for k in range(12)]
    run = {"loss": pd.Series(losses, index=[10 * (k + 1) for k in range(12)], dtype="float64"),
           "eval_loss": pd.Series([2.3, 2.0, 1.7], index=[40, 80, 120], dtype="float64")}
    assert _kinds(run) == []
    assert learning_shown(run, Thresholds()).metric == "loss"
