"""Judging misses of corpus batch AS114 (tests/realworld/PROVENANCE.md): a short run of near-zero per-example losses
inside a hosted fine-tune's first pass (gessi-chatbots_RE-Miner-Hub: OpenAI's result file, one example a step, 69
examples x 3 epochs) read as a loss collapse, because the whole log's median - low once later passes have learned
the set - hid that the loss scattered around a high level before the run."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from forensics.analyzers.collapse import detect_loss_collapse
from forensics.config import Thresholds
from forensics.ingest import csv_metrics

_GESSI = Path(__file__).parent / "realworld" / "gessi-chatbots_RE-Miner-Hub" / "results" / "training_metrics.csv"


def _one_example_a_step(passes: int = 3, examples: int = 69) -> pd.Series:
    """Per-example losses: a first pass on unseen examples scattering from 7 nats to 1e-4 (the easy ones certain
    already, three of them in a row at steps 66-68), later passes near 0 but for the hard examples."""
    rng = np.random.default_rng(7)
    first = np.exp(rng.uniform(np.log(0.05), np.log(7.0), examples))
    first[rng.choice(60, 12, replace=False)[::1]] = 3e-4  # easy examples, alone among hard ones
    first[65:68] = [7e-5, 3e-5, 3e-5]
    first[64] = first[68] = 0.8
    later = np.full(examples * (passes - 1), 2e-5)
    later[rng.choice(len(later), 28, replace=False)] = rng.uniform(0.1, 3.1, 28)
    values = np.concatenate([first, later])
    return pd.Series(values, index=np.arange(1, len(values) + 1))


def test_a_short_near_zero_run_among_scattered_per_example_losses_in_the_first_pass_is_no_collapse():
    found = detect_loss_collapse({"loss": _one_example_a_step()}, Thresholds())
    assert not any(f.kind == "loss_collapse" and f.step <= 69 for f in found)


def test_the_hosted_fine_tunes_first_pass_run_is_no_collapse():
    frame = csv_metrics.read(_GESSI).frame
    loss = frame[frame.metric == "loss"].set_index("step")["value"].sort_index()
    found = detect_loss_collapse({"loss": loss}, Thresholds())
    assert not any(f.kind == "loss_collapse" for f in found)


def test_a_short_run_in_a_loss_that_sits_near_zero_before_it_is_still_judged():
    """The guard: where the loss already sat near 0 before the run (median under 0.1), its zeros are no scatter
    around a high level - the run in the middle of the log is judged, as before."""
    values = np.concatenate([np.linspace(2.0, 0.05, 30), np.full(100, 0.02)])
    values[35:65:3] = 0.0004  # ten scattered near-zero singles
    values[90:94] = 0.0005  # a run of four, the loss back at 0.02 after it
    loss = pd.Series(values, index=np.arange(1, len(values) + 1))
    assert [f.end_step for f in detect_loss_collapse({"loss": loss}, Thresholds())] == [94]
