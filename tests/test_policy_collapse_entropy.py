"""A PPO policy's collapse (forensics/analyzers/policy_collapse.py): a reward won as the entropy collapsed and the KL to
the reference climbed; an entropy summed over a response's tokens read per token where the length is logged.

From branch fx-evalside (the first of each pair FAILS on main at 2ae0b180, its control holds before and after) and
branch fx-review3a (each behaviour test FAILS on main at 57e0ca20 and passes after; its control holds before and
after)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from forensics.analyzers import first_incident_of
from forensics.config import Thresholds

from support.state_points import first_of as _first


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


# ---- 3. a PPO policy's entropy, summed over a response's tokens, read per token where the length is logged -----------


def _ppo_log(entropy_sum, length=None, n: int = 64) -> dict:
    """A TRL PPO log of `n` updates: objective/entropy `entropy_sum(t)` (t from 0 to 1), objective/kl 1 -> 16 nats,
    objective/rlhf_reward 1.4 -> 8.2, and `tokens/responses_len_mean` `length(t)` where given."""
    t = np.linspace(0.0, 1.0, n)
    steps = np.arange(1, n + 1)
    log = {"objective/entropy": pd.Series(entropy_sum(t), index=steps),
           "objective/kl": pd.Series(1.0 + 15.0 * t, index=steps),
           "objective/rlhf_reward": pd.Series(1.4 + 6.8 * t, index=steps)}
    if length is not None:
        log["tokens/responses_len_mean"] = pd.Series(length(t), index=steps)
    return log


def test_a_summed_entropy_that_fell_with_the_response_length_is_no_collapse():
    """The entropy summed over a response fell 48 -> 4.8 because responses went 120 -> 12 tokens: 0.4 a token
    throughout, the policy no narrower. Read as logged, the same entropy is a collapse (the control)."""
    from forensics.analyzers.policy_collapse import detect_policy_collapse
    log = _ppo_log(lambda t: 0.4 * (120 - 108 * t), length=lambda t: 120 - 108 * t)
    assert detect_policy_collapse(log, Thresholds()) == []
    unmeasured = {k: v for k, v in log.items() if k != "tokens/responses_len_mean"}
    assert [f.kind for f in detect_policy_collapse(unmeasured, Thresholds())] == ["policy_collapse"]


def test_an_entropy_that_fell_per_token_at_a_steady_length_is_a_collapse_read_per_token():
    from forensics.analyzers.policy_collapse import detect_policy_collapse
    log = _ppo_log(lambda t: 48 * (1 - 0.85 * t), length=lambda t: 120 + 0 * t)
    found = detect_policy_collapse(log, Thresholds())
    assert [(f.kind, f.evidence["per_token_by"]) for f in found] == [("policy_collapse", "tokens/responses_len_mean")]
    assert "objective/entropy per token (objective/entropy / tokens/responses_len_mean) fell from about 0.3811" \
        in found[0].message and "got shorter" not in found[0].message
    assert "objective/rlhf_reward rose from about" in found[0].message


def test_an_entropy_fall_without_a_logged_length_says_the_responses_may_have_got_shorter():
    """ukhan1219_pychess_ppo's keys (TRL 0.20 PPO logs no response length): the collapse stands, worded with the
    other reading the sum allows."""
    from forensics.analyzers.policy_collapse import detect_policy_collapse
    found = detect_policy_collapse(_ppo_log(lambda t: 48 * (1 - 0.85 * t)), Thresholds())
    assert [f.kind for f in found] == ["policy_collapse"] and "or the responses got shorter" in found[0].message
    assert "objective/entropy fell from about" in found[0].message
