"""Held-out evidence misread on real runs (branch fx-evalside): a run with one or two evaluations whose eval loss
says what the training loss alone cannot. Each test builds the log the trainer writes (trainer_state.json's
log_history, or a timeline of the same points) and asserts the reading; the first of each pair FAILS on main at
2ae0b180, its control ('stays silent') holds before and after."""
from __future__ import annotations

import pandas as pd

from forensics.analyzers import first_incident_of, run_all, status_of
from forensics.config import Thresholds
from forensics.timeline import LogRecords, build_timeline


def _timeline(points: dict[str, dict[int, float]]):
    """A trainer_state timeline of `points` {metric: {step: value}}."""
    rows = sorted((step, metric, value) for metric, series in points.items() for step, value in series.items())
    frame = pd.DataFrame({"step": pd.Series([r[0] for r in rows], dtype="int64"), "metric": [r[1] for r in rows],
                          "value": pd.Series([r[2] for r in rows], dtype="float64"), "wall_time": float("nan")})
    return build_timeline([LogRecords(source="trainer_state.json", format="trainer_state", frame=frame)])


def _first(points):
    findings = run_all(_timeline(points), Thresholds())
    first = first_incident_of(findings)
    return status_of(findings), None if first is None else (first.kind, first.severity, first.step), findings


# ---- one evaluation an order of magnitude above the first epoch's training loss ---------------------------------------

# alex-jk_SE-reddit-analysis: a one-epoch sentence-transformers run, embedding_loss read as the loss
ONE_EPOCH_TRAIN = {1: 0.4267, 50: 0.2274, 100: 0.0769, 150: 0.0074, 200: 0.0033, 250: 0.0024, 300: 0.0022}
ONE_EPOCH = {s: s / 300 for s in ONE_EPOCH_TRAIN}


def test_one_eval_loss_156x_the_one_epoch_training_loss_is_a_mismatch():
    """The training loss fell 0.427 -> 0.0022 over one pass (every batch new when scored), the one eval 0.344 at the
    same step: the held-out loss is where the untrained model started. The tool said healthy (three evaluations were
    needed to weigh the two); judged warning, train_eval_mismatch at 300."""
    status, first, findings = _first({"loss": ONE_EPOCH_TRAIN, "eval_loss": {300: 0.3436}, "epoch": ONE_EPOCH})
    assert (status, first) == ("warning", ("train_eval_mismatch", "warning", 300)), findings
    assert "156.2x the training loss at the one evaluation (0.3436 against 0.0022 at step 300" in findings[0].message


def test_one_eval_a_few_times_a_low_training_loss_stays_silent():
    """Its bound: an eval loss 4x a training loss near zero (0.009 against 0.0022), far under where training started,
    is two small losses, not two quantities; and 0.344 after a second epoch is no first-pass comparison."""
    status, first, findings = _first({"loss": ONE_EPOCH_TRAIN, "eval_loss": {300: 0.009}, "epoch": ONE_EPOCH})
    assert (status, first) == ("healthy", None), findings
    two_epochs = {s: 2 * s / 300 for s in ONE_EPOCH_TRAIN}
    status, first, findings = _first({"loss": ONE_EPOCH_TRAIN, "eval_loss": {300: 0.3436}, "epoch": two_epochs})
    assert "train_eval_mismatch" not in [f.kind for f in findings], findings


# ---- two evaluations: the second bought nothing while the training loss fell a third ----------------------------------


def test_a_second_eval_no_better_while_the_epoch_training_loss_fell_a_third_is_overfitting():
    """jonathanbgn_slogan-generator: distilgpt2 at LR 1e-3, epoch-mean training cost 4.1394 -> 2.6903 (-35%, from above
    the first validation cost to below the second), validation cost 3.2550 -> 3.2779 (+0.7%). The tool said only
    no_learning_evidence (a rise under the 3% a turn needs); judged warning, overfitting at epoch 2."""
    status, first, findings = _first({"loss": {1: 4.139444, 2: 2.690343}, "eval_loss": {1: 3.255028, 2: 3.277905},
                                      "epoch": {1: 1.0, 2: 2.0}})
    assert (status, first) == ("warning", ("overfitting", "warning", 2)), findings


def test_a_second_eval_no_better_at_a_plateau_of_the_training_loss_stays_healthy():
    """Its bound: Ishihara-Masabumi's shape, the last eval 0.8% over the best with the training loss near 0.60 at both
    (judged healthy); and a second eval that fell while the training loss fell a third."""
    train = {s: 0.62 - 0.00002 * s for s in range(10, 1681, 10)}
    epochs = {s: s / 560 for s in train}
    status, first, findings = _first({"loss": train, "eval_loss": {1120: 0.7150, 1680: 0.7206}, "epoch": epochs})
    assert "overfitting" not in [f.kind for f in findings], findings
    status, first, findings = _first({"loss": {1: 4.139444, 2: 2.690343}, "eval_loss": {1: 3.255028, 2: 3.21},
                                      "epoch": {1: 1.0, 2: 2.0}})
    assert "overfitting" not in [f.kind for f in findings], findings


# ---- PPO: a reward won as the policy's entropy collapsed and its KL to the reference climbed ----------------------------


def _ppo(entropy_end: float, kl_end: float, updates: int = 125) -> dict:
    """TRL PPO's per-update keys (ukhan1219_pychess_ppo's shape): the score rising 1.4 -> 8.2, the entropy going
    linearly from 3.8 to `entropy_end`, the KL from 1.2 to `kl_end`."""
    steps = range(1, updates + 1)
    along = {s: (s - 1) / (updates - 1) for s in steps}
    return {"objective/scores": {s: 1.4 + 6.8 * along[s] for s in steps},
            "objective/rlhf_reward": {s: 1.3 + 6.2 * along[s] for s in steps},
            "objective/entropy": {s: 3.8 + (entropy_end - 3.8) * along[s] for s in steps},
            "objective/kl": {s: 1.2 + (kl_end - 1.2) * along[s] for s in steps},
            "loss": {s: -0.02 + 0.001 * (s % 3) for s in steps}, "epoch": {s: s / 6000 for s in steps}}


def test_a_ppo_reward_won_as_entropy_fell_to_a_fifth_and_kl_reached_15_nats_is_a_policy_collapse():
    """ukhan1219_pychess_ppo: objective/entropy eighth medians 3.85 -> 0.76, objective/kl 1.2 -> 15.4 nats, the score
    1.4 -> 8.2. The tool said healthy with no finding (nothing read the entropy or the KL); judged warning, first
    incident open."""
    status, first, findings = _first(_ppo(entropy_end=0.3, kl_end=16.0))
    assert status == "warning" and first[:2] == ("policy_collapse", "warning"), findings
    assert "objective/entropy fell from about" in first_incident_of(findings).message


def test_a_ppo_policy_that_sharpened_near_its_reference_stays_healthy():
    """Its bound: the entropy falls as far but the KL stays at 3 nats; or the KL reaches 16 nats with the entropy held
    at half its start."""
    for entropy_end, kl_end in ((0.3, 3.0), (2.2, 16.0)):
        status, first, findings = _first(_ppo(entropy_end, kl_end))
        assert "policy_collapse" not in [f.kind for f in findings], findings
