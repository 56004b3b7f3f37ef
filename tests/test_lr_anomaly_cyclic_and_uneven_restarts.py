"""Tests of analyzers/lr_anomaly.py: a cyclic schedule logged sparsely, uneven restarts.

From the day-7 judgements that were wrong on real runs: each test FAILS on the code before the change it targets;
each rule has a healthy run beside it where it must stay silent."""
from __future__ import annotations

import math

import pytest

import forensics
from support.judged_logs import _trainer_state


def _schedule_run(folder, rates, every):
    """A run whose learning rate follows `rates` (one per optimizer step), logged every `every` steps, its loss
    falling steadily."""
    total = len(rates)
    history = [{"step": s, "loss": round(0.5 + 2.0 * math.exp(-s / total), 4), "grad_norm": 1.0,
                "learning_rate": rates[s - 1], "epoch": round(s / total, 4)} for s in range(every, total + 1, every)]
    return _trainer_state(folder, history)


def _rates(make_scheduler, total):
    torch = pytest.importorskip("torch")
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([param], lr=2e-4, momentum=0.9)
    scheduler = make_scheduler(optimizer)
    rates = []
    for _ in range(total):
        optimizer.step()
        scheduler.step()
        rates.append(optimizer.param_groups[0]["lr"])
    return rates


@pytest.mark.parametrize("name, make, every", [
    ("hard_restarts", lambda o: pytest.importorskip("transformers").get_cosine_with_hard_restarts_schedule_with_warmup(
        o, 0, 1000, num_cycles=4), 70),
    ("hard_restarts_warmup", lambda o: pytest.importorskip("transformers")
     .get_cosine_with_hard_restarts_schedule_with_warmup(o, 50, 2000, num_cycles=5), 45),
    ("warm_restarts", lambda o: __import__("torch").optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=100), 45),
    ("warm_restarts_tmult", lambda o: __import__("torch").optim.lr_scheduler.CosineAnnealingWarmRestarts(
        o, T_0=100, T_mult=2), 40),
    ("cyclic", lambda o: __import__("torch").optim.lr_scheduler.CyclicLR(o, base_lr=1e-5, max_lr=1e-3,
                                                                       step_size_up=100), 30),
])
def test_a_cyclic_schedule_logged_sparsely_is_no_lr_anomaly(tmp_path, name, make, every):
    """A cosine with hard restarts, SGDR warm restarts (T_mult 1 and 2) and CyclicLR, each logged every 30-70 steps
    (a few points a cycle, the cycle's low seen at some restarts and not others): the schedule is a schedule, no
    lr_anomaly, healthy. Before: one lr_anomaly for each restart whose low was logged (3-5 a run)."""
    total = 2000 if name == "hard_restarts_warmup" else 1500 if name == "warm_restarts_tmult" else 1000
    a = forensics.analyze(_schedule_run(tmp_path / name, _rates(make, total), every))
    assert not [f for f in a.findings if f.kind == "lr_anomaly"], [(f.step, f.message) for f in a.findings]
    assert a.status == "healthy"


def test_a_schedule_started_over_at_uneven_steps_is_one_lr_anomaly(tmp_path):
    """A linear decay to 0 at step 60, then train() called again with a longer schedule that runs out at step 300,
    then again (a rate back at its peak each time, at uneven intervals): the run went past its schedule twice, told
    as one warning from the first restart, not one each."""
    rates = [2.5e-4 * (1 - s / 60) for s in range(1, 61)] + [2.5e-4 * (1 - s / 240) for s in range(1, 241)]
    rates += [2.5e-4 * (1 - s / 300) for s in range(1, 301)]
    a = forensics.analyze(_schedule_run(tmp_path / "run", rates, 5))
    found = [f for f in a.findings if f.kind == "lr_anomaly"]
    assert len(found) == 1 and found[0].step == 65, [(f.step, f.message) for f in found]
    assert found[0].evidence["restarts"] == [65, 305]
