"""Tests of analyzers/grad_spike.py: a storm's heavy tail, a loss reaction in nats.

From review day 5: two grad_norm-spike misjudgements on real runs, each rebuilt at its smallest.

* A storm of lone grad_norm spikes over a per-step LoRA SFT on batches of 8 (cho104's Ovis2.5, judged healthy): the
  loss was said to react because the largest of its ~190 per-step losses over the storm (one batch's 1.21) stood
  over 1.25x the median before, though the median over the storm did not rise (0.519 against 0.530).
* A lone grad_norm spike over a loss near zero (anears' QLoRA SFT of a chart VLM, judged warning for memorization):
  0.012 -> 0.0198 at the spike, +0.008 nats, counted as a reaction because it is 1.6x; and the memorization went
  unreported because the descent from 5.9 looks level (on a linear scale) from 0.3 on, inside the first epoch,
  though the loss still fell sixfold over the second and third passes over the same examples.

The runs are built the way the real ones logged (every step / every 5 steps, seeded noise); what each test expects
comes from how the run was made."""
import numpy as np
from forensics.analyzers.grad_spike import detect_grad_norm_spikes
from forensics.config import Thresholds
from support.grad_spike_runs import _memorizing_qlora, _metrics


TH = Thresholds()


STORM = {468: 815.6, 520: 160.9, 580: 120.0, 640: 90.0}  # lone spikes, each back to the median at the next step


def _per_step_sft(seed: int = 51, n: int = 1000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A LoRA SFT logged every step on batches of 8: loss about 0.5 with 15% batch noise, grad_norm about 7 with a
    warm-up high of 358 at step 21, and a storm of lone spikes from step 468 (the largest 815.6, over 1.5x the
    warm-up's high), every update clipped."""
    rng = np.random.default_rng(seed)
    st = np.arange(1, n + 1, dtype="int64")
    loss = 0.5 * np.exp(rng.normal(0.0, 0.15, n))
    grad = 7.0 * np.exp(rng.normal(0.0, 0.3, n))
    grad[:30] *= 4.0
    grad[20] = 357.9
    for step, value in STORM.items():
        grad[step - 1] = value
    loss[467:471] = [0.61, 0.58, 0.52, 0.45]  # the loss at the largest jump: within its batch noise
    return st, loss, grad


def _finding_at(findings, step):
    (found,) = [f for f in findings if f.step == step]
    return found


def test_a_storm_whose_loss_median_held_is_the_heavy_tail_though_one_batch_in_it_was_high():
    st, loss, grad = _per_step_sft()
    loss[559] = 1.21  # one batch's loss inside the storm: 2.4x the median, its median unmoved
    storm = _finding_at(detect_grad_norm_spikes(_metrics(st, loss=loss, grad_norm=grad), TH), 468)
    assert storm.evidence["storm"] and storm.evidence["peak"] == 815.6
    assert storm.severity == "info" and storm.evidence["loss_reacted"] is False, storm.message


def test_a_storm_the_loss_rose_through_stays_a_warning():
    st, loss, grad = _per_step_sft()
    loss[467:660] *= 1.6  # the loss's median over the storm clearly up: the model was set back
    storm = _finding_at(detect_grad_norm_spikes(_metrics(st, loss=loss, grad_norm=grad), TH), 468)
    assert storm.severity == "warning", storm.message


def test_a_lone_grad_norm_spike_over_a_loss_near_zero_that_moved_a_hundredth_of_a_nat_is_info():
    m = _memorizing_qlora()
    spike = _finding_at(detect_grad_norm_spikes(m, TH), 640)
    assert spike.severity == "info" and spike.evidence["loss_reacted"] is False, spike.message


def test_the_same_spike_with_the_loss_up_a_tenth_of_a_nat_stays_a_warning():
    m = _memorizing_qlora()
    m["loss"].loc[640:660] = 0.15  # a loss at 0.012 thrown back to 0.15 for five points: the model lost something
    spike = _finding_at(detect_grad_norm_spikes(m, TH), 640)
    assert spike.severity == "warning", spike.message
