"""Tests of analyzers/collapse.py: memorization over later epochs.

From review day 5: two grad_norm-spike misjudgements on real runs, each rebuilt at its smallest.

* A lone grad_norm spike over a loss near zero (anears' QLoRA SFT of a chart VLM, judged warning for memorization):
  0.012 -> 0.0198 at the spike, +0.008 nats, counted as a reaction because it is 1.6x; and the memorization went
  unreported because the descent from 5.9 looks level (on a linear scale) from 0.3 on, inside the first epoch,
  though the loss still fell sixfold over the second and third passes over the same examples."""
import numpy as np

from forensics.analyzers import analyze_metrics, first_incident_of
from forensics.analyzers.collapse import detect_loss_collapse
from forensics.config import Thresholds
from support.grad_spike_runs import _memorizing_qlora, _metrics


TH = Thresholds()


def test_a_loss_that_keeps_falling_over_later_epochs_is_memorization_though_its_first_fall_was_in_epoch_one():
    m = _memorizing_qlora()
    (memo,) = [f for f in detect_loss_collapse(m, TH) if f.kind == "memorization"]
    assert memo.severity == "warning" and 1.0 <= memo.evidence["epoch"] < 3.0, memo.message
    first = first_incident_of(analyze_metrics(m, TH))
    assert (first.kind, 320 <= first.step <= 960) == ("memorization", True)


def test_a_loss_at_its_floor_by_the_first_epochs_end_is_still_no_memorization():
    """The guard kept: within `FELL_AFTER` x its final level at the first epoch's end (Ammar's Mistral QLoRA on
    docker commands, judged healthy: 0.040 at epoch 0.93, 0.0132 at the end of a second epoch under a cosine decay)."""
    st = np.arange(5, 75, 5, dtype="int64")
    loss = np.array([0.934, 0.30, 0.149, 0.061, 0.0445, 0.040, 0.0397, 0.021, 0.022, 0.016, 0.0155, 0.0145,
                     0.0140, 0.0132])
    m = _metrics(st, loss=loss, grad_norm=np.linspace(1.75, 0.36, len(st)), epoch=st / 37.0)
    assert [f for f in detect_loss_collapse(m, TH) if f.kind == "memorization"] == []
