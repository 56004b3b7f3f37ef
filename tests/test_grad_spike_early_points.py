"""Tests of analyzers/grad_spike.py: a spike at the first logged points.

From day 7's second pass over datings and spikes the tool got wrong on real runs."""
from __future__ import annotations

from support.shaped_logs import _analyze, _console


# ---- (2) an early grad_norm spike judged against the run's later points, not only the few before it ----------------


_FLAT_GRAD = [7.8, 8.1, 7.5, 8.3, 7.9, 7.6, 8.2, 7.7, 8.0, 7.9, 8.1, 7.8, 7.6, 8.2, 7.9, 8.0]


def _falling_loss(n):
    return [round(1.6 * 0.93 ** i + 0.02 * (-1) ** i, 4) for i in range(n)]


def test_a_grad_norm_spike_at_the_fourth_logged_step_is_judged_against_the_runs_later_points(tmp_path):
    """grad_norm 15, 9.8, 7.6, then 92 (about 9x the three before it, 12x the run's other points), back to ~8 at once:
    a spike, though fewer than `spike_min_history` points precede it."""
    grad = [14.98, 9.78, 7.64, 92.1, 29.0] + _FLAT_GRAD
    _console(tmp_path / "train.log", list(zip(_falling_loss(len(grad)), grad)))
    a = _analyze(tmp_path)
    spikes = [f for f in a.findings if f.kind == "grad_norm_spike" and f.severity == "warning"]
    assert [f.step for f in spikes] == [4], [f.message for f in a.findings]
    assert a.status == "warning" and a.first_incident.kind == "grad_norm_spike" and a.first_incident.step == 4


def test_a_grad_norm_high_at_its_first_points_and_falling_away_is_the_start_of_training(tmp_path):
    """A first or second point far above the rest that falls away steadily (the start-up of training), and a
    series that starts many-fold above the level it settles at: no spike, a healthy run."""
    for name, head in (("first", [95.0, 40.0, 18.0, 11.0]), ("second", [6.0, 95.0, 30.0, 12.0]),
                       ("level", [80.0, 70.0, 75.0, 450.0, 60.0, 30.0])):
        folder = tmp_path / name
        folder.mkdir()
        grad = head + [g / 10 if name == "level" else g for g in _FLAT_GRAD]
        _console(folder / "train.log", list(zip(_falling_loss(len(grad)), grad)))
        a = _analyze(folder)
        assert not [f for f in a.findings if f.kind == "grad_norm_spike" and f.severity != "info"], \
            (name, [f.message for f in a.findings])
        assert a.status == "healthy", (name, [f.message for f in a.findings])
