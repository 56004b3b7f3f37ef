"""Tests of analyzers/loss_spike.py: a jump out of a steady low level, a noisy near-zero loss.

From day 7's second pass over datings and spikes the tool got wrong on real runs."""
from __future__ import annotations

import math

from support.shaped_logs import _analyze, _trainer_state


# ---- (3) a loss spike out of a steady low loss, in a run that started many times higher -----------------------------


def _settled_low(s):
    """A LoRA SFT logged every 10 steps (each point the mean of ten): from 10.7 nats to a steady 0.04 by step 300."""
    return 0.04 + 10.6 * math.exp(-s / 30) + 0.001 * math.sin(s)


_JUMP = {430: 0.0516, 440: 0.126, 450: 0.2057, 460: 0.1421, 470: 0.1128, 480: 0.0965, 490: 0.0866, 500: 0.0771}


def test_a_loss_jumping_fivefold_out_of_a_steady_low_level_is_a_loss_spike_though_under_a_tenth_of_its_start(tmp_path):
    """0.043 -> 0.126 -> 0.206 (x4.8), then slowly back: a rise of 0.16 nats, under a tenth of where the log started
    (about 1.7 over its first points), out of a loss that held within a few percent before it."""
    _trainer_state(tmp_path, list(range(10, 1210, 10)),
                   lambda s: _JUMP.get(s, _settled_low(s) if s < 430 else 0.065 + 0.001 * math.sin(s)),
                   grad_norm=lambda s: 0.5 + 0.02 * math.sin(s), per_epoch=400)
    a = _analyze(tmp_path)
    spikes = [f for f in a.findings if f.kind == "loss_spike" and f.severity == "warning"]
    assert spikes and 430 <= spikes[0].step <= 460, [f.message for f in a.findings]
    assert a.status == "warning" and a.first_incident.kind == "loss_spike"


def test_single_batch_jumps_of_a_noisy_near_zero_loss_are_no_loss_spike(tmp_path):
    """A per-step loss that hovers noisily near 0.02 (0.003-0.07) touching 0.13-0.24 now and then, in a run that
    started at 3: the noise of small batches near zero, under the start-scaled bar, stays no spike."""
    noise = [0.02, 0.005, 0.045, 0.011, 0.07, 0.003, 0.032, 0.009, 0.051, 0.016, 0.004, 0.038, 0.012, 0.027]
    jumps = {2315: 0.2425, 2845: 0.1849, 2600: 0.13}

    def loss(s):
        return 3.0 * math.exp(-s / 100) + jumps.get(s, noise[(s // 5) % len(noise)])

    _trainer_state(tmp_path, list(range(5, 3605, 5)), loss, per_epoch=1200)
    a = _analyze(tmp_path)
    assert not [f for f in a.findings if f.kind == "loss_spike" and f.severity != "info"], \
        [f.message for f in a.findings]
