"""Small runs written in a framework's own output format (tests/test_formats_*.py): the loss they log, where
they are written, and what the tool must then say about them."""
from __future__ import annotations

import forensics

N = 30  # logged steps


def losses(nan_at=None, n=N):
    """Step 1..n: a loss falling from about 2.5 to 1.2 with a little step-to-step wiggle, NaN from `nan_at` on."""
    out = []
    for s in range(1, n + 1):
        v = 2.5 - 1.3 * (s - 1) / (n - 1) + (0.03 if s % 3 == 0 else -0.02 if s % 3 == 1 else 0.0)
        out.append(float("nan") if nan_at is not None and s >= nan_at else v)
    return out


def write_file(folder, name, text):
    """`text` written to folder/name (parents made); the folder."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return folder


def analyze_logs(run):
    return forensics.analyze(run, check_checkpoints=False)


def assert_healthy_loss(a, n=N):
    """The run's n losses were read, from above 2.4 to under 1.3, and it is healthy."""
    assert "loss" in a.timeline.metrics, sorted(a.timeline.metrics)
    loss = a.timeline.series("loss")
    assert len(loss) == n
    assert loss.iloc[0] > 2.4 and loss.iloc[-1] < 1.3
    assert a.status == "healthy"


def assert_broken_at(a, step):
    assert a.status == "broken"
    assert a.first_incident is not None and a.first_incident.step == step
