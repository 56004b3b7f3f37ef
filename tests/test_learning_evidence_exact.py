"""Learning evidence read by exact arithmetic, where a noise bar read the run as flat: a held-out loss lower at every
evaluation by 1% or more (AkshayPethe's T5-small LoRA), the unlogged last window's mean derived from the Trainer's
closing train_loss (Jayveersinh-Raj's BLOOM LoRA), and two window means each spanning many passes over a small set
(Tu-Zhenzhao's Llama LoRA). Each with the non-learning logs next to it that must still warn."""
from pathlib import Path

import pandas as pd
import pytest

import forensics
from forensics.analyzers.learning_evidence import detect_no_learning_evidence, learning_shown
from forensics.analyzers.secondary_evidence import unlogged_last_window
from forensics.config import Thresholds

CORPUS = Path(__file__).parent / "realworld"


def _series(values: dict) -> pd.Series:
    return pd.Series(list(values.values()), index=list(values), dtype="float64")


def _kinds(run: dict) -> list[str]:
    return [f.kind for f in detect_no_learning_evidence(run, Thresholds())]


# A held-out loss lower at every evaluation, 1% or more in all

def test_an_eval_loss_lower_at_each_evaluation_by_over_one_percent_shows_learning():
    """AkshayPethe's epoch table: training rows 3.0024, 2.9369, 2.9628; eval 2.75918, 2.73026, 2.72422 (-1.27%)."""
    run = {"loss": _series({625: 3.0024, 1250: 2.9369, 1875: 2.9628}),
           "eval_loss": _series({625: 2.75918, 1250: 2.73026, 1875: 2.72422})}
    assert _kinds(run) == []
    assert learning_shown(run, Thresholds()).metric == "eval_loss"


def test_an_eval_loss_lower_at_each_evaluation_by_under_one_percent_still_warns():
    """jbmanasa's non-learning fixed-set eval, 0.63% lower over three evaluations: still the wobble of a flat loss."""
    run = {"loss": _series({625: 2.99, 1250: 3.01, 1875: 2.98}),
           "eval_loss": _series({625: 2.9855, 1250: 2.9718, 1875: 2.9668})}
    assert _kinds(run) == ["no_learning_evidence"]


# The unlogged last window, from the closing train_loss

def _jayveersinh(train_loss: float = 0.3511, **more) -> dict:
    """Logging every 100 steps of 380: 0.3723, 0.4232, 0.3327, then TrainOutput's training_loss at step 380."""
    run = {"loss": _series({100: 0.3723, 200: 0.4232, 300: 0.3327}), "train_loss": _series({380: train_loss}),
           "epoch": _series({100: 1.05263, 200: 2.10526, 300: 3.15789, 380: 4.98})}
    return {**run, **more}


def test_the_unlogged_last_window_is_the_closing_mean_less_the_logged_windows():
    run = _jayveersinh()
    assert unlogged_last_window(run, run["loss"]) == pytest.approx((380 * 0.3511 - 100 * 1.1282) / 80)


def test_a_last_window_derived_from_the_closing_mean_well_under_the_first_shows_learning():
    """0.258 over steps 301-380 against 0.372 over steps 1-100: 31% under, the lowest window of the run."""
    run = _jayveersinh()
    assert _kinds(run) == []
    shown = learning_shown(run, Thresholds())
    assert (shown.metric, shown.last_step, shown.end) == ("loss", 380, pytest.approx(0.2575, abs=1e-4))
    assert "train_loss 0.3511" in shown.said


def test_a_closing_mean_that_leaves_the_last_window_at_the_logged_level_still_warns():
    """train_loss 0.3780: the last window at about 0.37, no lower than the first: nothing learned that shows."""
    assert _kinds(_jayveersinh(train_loss=0.3780)) == ["no_learning_evidence"]


def test_no_last_window_is_derived_beside_an_eval_loss_or_at_an_irregular_log():
    """An epoch table's rows (with an eval loss) are not the windows of their interval; nor is a log whose steps are
    not a regular interval from step 0 (a resume, an excerpt)."""
    run = _jayveersinh(eval_loss=_series({100: 0.5, 200: 0.5, 300: 0.5}))
    assert unlogged_last_window(run, run["loss"]) is None
    irregular = _jayveersinh(loss=_series({100: 0.3723, 250: 0.4232, 300: 0.3327}))
    assert unlogged_last_window(irregular, irregular["loss"]) is None
    late = _jayveersinh(loss=_series({200: 0.3723, 300: 0.4232}))
    assert unlogged_last_window(late, late["loss"]) is None


def test_the_corpus_case_jayveersinh_is_healthy():
    analysis = forensics.analyze(CORPUS / "Jayveersinh-Raj_prompt_tuning")
    assert (analysis.status, analysis.first_incident) == ("healthy", None)


# Two window means, each spanning many passes over the data

def _two_windows(first: float, second: float, epochs: tuple[float, float] | None) -> dict:
    run = {"loss": _series({50: first, 100: second})}
    if epochs is not None:
        run["epoch"] = _series({50: epochs[0], 100: epochs[1]})
    return run


def test_two_windows_of_forty_passes_each_falling_eight_percent_show_learning():
    """Tu-Zhenzhao's ~20-example set, epoch 40 at step 50 and 80 at step 100: 2.1177 then 1.9414 (-8.3%)."""
    assert _kinds(_two_windows(2.1177, 1.9414, (40.0, 80.0))) == []


def test_two_windows_of_a_fraction_of_a_pass_need_the_window_fall():
    """The same 8.3% over windows of half an epoch each: the batches drawn differ, 25% is still asked."""
    assert _kinds(_two_windows(2.1177, 1.9414, (0.5, 1.0))) == ["no_learning_evidence"]
    assert _kinds(_two_windows(2.1177, 1.9414, None)) == ["no_learning_evidence"]


def test_two_windows_of_many_passes_that_barely_moved_still_warn():
    """Forty passes a window and 2% lower: within what dropout and the partial pass move a mean over a fixed set."""
    assert _kinds(_two_windows(2.1177, 2.0753, (40.0, 80.0))) == ["no_learning_evidence"]


def test_the_corpus_case_tu_zhenzhao_is_healthy():
    analysis = forensics.analyze(CORPUS / "Tu-Zhenzhao_Tu-Zhenzhao-HackAI-Team-GLEN")
    assert (analysis.status, analysis.first_incident) == ("healthy", None)
