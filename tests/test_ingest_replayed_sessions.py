"""Sessions appended to one step-less history, told by a re-run's replayed descent (ingest.replayed_sessions).

From corpus batch AS113: nawaraken_cevahir-ai's training_history.json, a dict of 40-entry lists that the repository's
TrainingManager extends with each train() call's fresh history - no counter goes back, but the last two sessions are
the same fresh start, 3.296 -> 1.681 and 3.302 -> 1.668 point for point."""
from __future__ import annotations

import json
import math
import random
from pathlib import Path

import forensics
from forensics.ingest import json_history
from forensics.ingest.replayed_sessions import counter_restarts, replayed_session_starts

CORPUS = Path(__file__).parent / "realworld"

_EARLIER = [0.93, 0.39, 0.23, 0.16, 0.12, 0.089, 0.069, 0.054, 0.043, 0.034]  # a session that learned to 0.03
_FRESH = [3.296, 2.273, 2.019, 1.845, 1.681, 1.530, 1.399, 1.287, 1.189, 1.104]  # a fresh model's first epochs
_AGAIN = [3.302, 2.245, 2.003, 1.829, 1.668]  # the same fresh start launched again (another seed)


def _history(folder: Path, train: list[float]) -> forensics.Analysis:
    (folder / "saved_models").mkdir()
    val = [0.7 * v + 0.2 for v in train]
    (folder / "saved_models" / "training_history.json").write_text(json.dumps({"train_loss": train, "val_loss": val}))
    return forensics.analyze(folder)


def test_a_later_stretch_retracing_an_earlier_fresh_start_begins_a_session_and_so_does_the_earlier_one():
    assert replayed_session_starts(_EARLIER + _FRESH + _AGAIN) == [10, 20]


def test_appended_sessions_are_numbered_each_from_one_and_the_last_one_is_judged(tmp_path):
    a = _history(tmp_path, _EARLIER + _FRESH + _AGAIN)
    records = json_history.read(tmp_path / "saved_models" / "training_history.json")
    assert "3 sessions" in records.meta["replayed_sessions"]
    assert records.frame.loc[records.frame["metric"] == "loss", "step"].tolist()[-6:] == [10, 1, 2, 3, 4, 5]
    assert a.status == "healthy" and a.first_incident is None


def test_a_divergence_inside_one_session_is_no_replay_and_still_fires(tmp_path):
    """Guard: the loss leaves its floor for a fresh model's level and climbs on - nothing it does retraces a descent."""
    diverged = _EARLIER + [0.9, 1.6, 2.4, 3.1, 3.3, 3.5, 3.6, 3.8, 3.9, 4.0]
    assert replayed_session_starts(diverged) == []
    a = _history(tmp_path, diverged)
    assert a.status == "broken" and a.first_incident.kind == "divergence"


def test_a_spike_that_recovers_along_another_path_is_no_replay():
    """Guard: a jump back up that falls again, but not through the earlier descent's values, stays one session."""
    assert replayed_session_starts(_FRESH + [2.6, 1.9, 1.3, 0.9, 0.8]) == []


def test_a_flat_noisy_plateau_matches_itself_nowhere():
    assert replayed_session_starts([2.0, 2.01, 1.99, 2.02, 1.98, 2.0, 2.01, 1.99, 2.02, 1.98, 2.0]) == []


def test_the_real_appended_history_is_judged_on_its_last_session():
    a = forensics.analyze(CORPUS / "nawaraken_cevahir-ai")
    assert a.status == "healthy" and a.first_incident is None


def test_an_epoch_list_that_goes_back_splits_the_sessions_without_a_replay(tmp_path):
    """Appended sessions with their own epoch counter (1..10, then 1..5): the counter says it, whatever the loss."""
    (tmp_path / "history.json").write_text(json.dumps({"epochs": list(range(1, 11)) + list(range(1, 6)),
                                                       "train_loss": _EARLIER + [2.9, 2.1, 1.7, 1.5, 1.4]}))
    records = json_history.read(tmp_path / "history.json")
    assert "their epoch counter goes back" in records.meta["replayed_sessions"]
    assert records.frame.loc[records.frame["metric"] == "loss", "step"].tolist()[-6:] == [10, 1, 2, 3, 4, 5]
    assert forensics.analyze(tmp_path).status == "healthy"


def _noisy_descent(count: int, spread: float, seed: int) -> list[float]:
    """A per-batch loss falling from 3.3 to 0.8 with multiplicative noise: one session, no replay anywhere."""
    rng = random.Random(seed)
    return [(0.8 + 2.5 * math.exp(-i / (count / 5))) * math.exp(rng.gauss(0, spread)) for i in range(count)]


def test_a_chance_four_point_match_in_a_long_noisy_history_begins_no_session():
    """A 5000-point noisy descent holds many rises into 4 falling points; some match an earlier four within 3% by
    chance, but what follows them does not retrace what followed the earlier one: one session."""
    assert replayed_session_starts(_noisy_descent(5000, 0.1, seed=1)) == []


def test_a_divergence_back_to_the_start_that_relearns_only_part_way_stays_broken(tmp_path):
    """The loss jumps back to a fresh model's level and falls along its first four points, then stalls at 1.7 where
    the first descent went on to 0.1: the stretch does not retrace over its whole length, so no session starts."""
    fresh = _FRESH + [0.9, 0.7, 0.5, 0.35, 0.25, 0.2, 0.15, 0.12, 0.1, 0.09]
    partial = fresh + [3.30, 2.26, 2.01, 1.84, 1.70, 1.69, 1.70, 1.71]
    assert replayed_session_starts(partial) == []
    assert _history(tmp_path, partial).status == "broken"


def test_an_epoch_value_repeated_over_several_entries_is_no_restart():
    """Several entries an epoch (1, 1, 1, 2, 2, 2, ...): the counter stays, it does not go back."""
    assert counter_restarts([1, 1, 1, 2, 2, 2, 3, 3, 3]) == []
    assert counter_restarts([1, 1, 2, 2, 1, 1]) == [4]


def test_a_run_logging_each_epoch_three_times_that_blows_up_is_judged_as_one_session(tmp_path):
    """Cut at every repeated epoch, the run was 10 sessions of 3 and its blow-up (1.5 -> 50 at entries 25-30) went
    unseen behind 'no learning evidence'; read as one run, the blow-up is its first incident."""
    loss = [3.0 * 0.9 ** i + 0.5 for i in range(24)] + [1.5, 3.0, 6.0, 12.0, 25.0, 50.0]
    (tmp_path / "history.json").write_text(json.dumps({"epoch": [1 + i // 3 for i in range(30)], "train_loss": loss}))
    assert "replayed_sessions" not in json_history.read(tmp_path / "history.json").meta
    a = forensics.analyze(tmp_path)
    assert a.first_incident.kind in ("loss_spike", "divergence") and 25 <= a.first_incident.step <= 27


def test_a_long_flat_history_with_large_batch_noise_begins_no_session():
    # +-30% batch-to-batch noise on a plateau: four falling points retrace an earlier four over their whole stretch by
    # chance here and there in 10,000 entries (6 starts before a relaunch had to jump); no entry doubles the one before
    rng = random.Random(1)
    values = [2.0 * (1 + rng.uniform(-0.3, 0.3)) for _ in range(10_000)]
    assert replayed_session_starts(values) == []


def test_a_relaunch_that_starts_no_higher_than_twice_the_last_loss_is_no_new_session():
    # the same descent again, but from 1.76x the entry before: a loss that rose back and fell the same way, which the
    # numbers cannot tell from a relaunch that had not got far; a session is cut only where the jump says it plainly
    values = [3.0, 2.5, 2.1, 1.8, 1.7, 3.0, 2.5, 2.1, 1.8]
    assert replayed_session_starts(values) == []
