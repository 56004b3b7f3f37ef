"""Tests of the learning evidence of DPO / ORPO runs whose accuracy starts under one half.

From the review of the day's changes a5f3681..HEAD: inputs real runs plausibly produce that the new rules must not
misread. A failing test was a misfire of a new rule; the passing ones record shapes that held."""
from __future__ import annotations

import numpy as np

from support.written_runs import _analyze, _kinds, _trainer_state


# ---- learning_evidence._ranked_wrong ----------------------------------------------------------------------------


def _pairwise_history(n, loss, accuracy, extra=lambda f: {}):
    rng = np.random.default_rng(1)
    hist = []
    for i in range(n):
        f = i / (n - 1)
        hist.append({"loss": loss(f) + rng.normal(0, 0.03),
                     "rewards/accuracies": float(np.clip(accuracy(f) + rng.normal(0, 0.03), 0, 1)),
                     "rewards/chosen": -0.2 + 0.3 * f, "rewards/rejected": 0.3 - 0.1 * f,
                     "rewards/margins": -0.5 + 0.4 * f, "logps/chosen": -300.0, "logps/rejected": -280.0,
                     "learning_rate": 5e-6, "epoch": i / n, "step": (i + 1) * 10, **extra(f)})
    return hist


def test_dpo_accuracy_rising_from_far_below_chance_with_falling_loss_is_learning(tmp_path):
    """Stands for a TRL DPO run whose policy starts from an SFT adapter that is not the reference (the loss starts
    above ln 2, as giakhanhhii's): over 1,000 steps the loss falls 1.3 -> 0.85 and the reward accuracy climbs
    0.15 -> 0.45, the margins -0.5 -> -0.1. The pairs moved a long way the right way round; only the end is still
    under 0.5. The tool says warning `no_learning_evidence` (healthy before _ranked_wrong). _ranked_wrong should only
    hold where the accuracy also did not rise (giakhanhhii's went 0.36 -> 0.42): e.g. require end < start +
    PAIRWISE_RISE. Fix: learning_evidence._ranked_wrong / _told_apart."""
    hist = _pairwise_history(100, lambda f: 1.3 - 0.45 * f, lambda f: 0.15 + 0.30 * f)
    a = _analyze(_trainer_state(tmp_path, hist))
    assert "no_learning_evidence" not in [k for k, _ in _kinds(a)], _kinds(a)


def test_llamafactory_orpo_falling_loss_with_accuracy_under_half_is_learning(tmp_path):
    """Stands for a LLaMA-Factory ORPO run (stage dpo, pref_loss orpo: CustomDPOTrainer logs `sft_loss` and
    `odds_ratio_loss`, not TRL's `log_odds_ratio` / `nll_loss`): the loss (the SFT NLL plus beta x the odds-ratio term)
    falls 1.67 -> 1.17 while rewards/accuracies (beta x the average log-probs, compared) stays 0.40 -> 0.45. The SFT
    part clearly learned, as ORPO's rule (_MIXED_START) says; the tool does not see it as reference-free and says
    warning `no_learning_evidence` (healthy before _ranked_wrong). Fix: learning_evidence.reference_free
    (_REFERENCE_FREE_KEYS: add `sft_loss` / `odds_ratio_loss`)."""
    hist = _pairwise_history(100, lambda f: 1.6 - 0.5 * f + 0.075, lambda f: 0.40 + 0.05 * f,
                             lambda f: {"sft_loss": 1.6 - 0.5 * f, "odds_ratio_loss": 0.75 - 0.05 * f})
    a = _analyze(_trainer_state(tmp_path, hist))
    assert "no_learning_evidence" not in [k for k, _ in _kinds(a)], _kinds(a)


def test_trl_orpo_with_accuracy_under_half_still_counts_its_lm_fall(tmp_path):
    """Coverage: TRL's ORPO (log_odds_ratio, nll_loss) with the accuracy under 0.5 keeps its LM term's fall as
    learning (reference_free)."""
    hist = _pairwise_history(100, lambda f: 1.6 - 0.5 * f, lambda f: 0.40 + 0.05 * f,
                             lambda f: {"nll_loss": 1.5 - 0.5 * f, "log_odds_ratio": -0.8})
    a = _analyze(_trainer_state(tmp_path, hist))
    assert "no_learning_evidence" not in [k for k, _ in _kinds(a)], _kinds(a)
