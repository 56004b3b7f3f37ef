"""A pairwise preference loss (DPO and kin) whose first logged value is far above chance, ln 2.

DPO's loss -log sigmoid(beta x margin) is ln 2 = 0.693 at its first step: the policy is the reference model, every
margin 0. A first loss above `PAIRWISE_START_MAX` says the margins began far from 0, the rejected answers preferred:
no reference model anchoring the log-ratios (the summed log-probs of answers of different lengths decide), a reference
that is not the policy's starting weights, chosen and rejected swapped, or a beta far too large. What the loss then
shows is that being undone. A `start_above_uniform_guess` warning: the pairwise objective's uniform guess is ln 2, as a
language model's is ln V (sarahxgh_RL-for-Finetunning-LLms-dpo's hand-written loop, no reference model: 27.44 at
step 0, 40x ln 2). Read where the run profile says the loss is a pairwise one (`run_findings`) and the log holds
that loss alone, as `pairwise_loss.for_a_pairwise_loss` reads it: a trainer's log with its rewards/* and logps/* is
judged on those (sugarandgugu_Simple-Trl-Training's TRL DPO: a first window at 2.45e9 beside NaN rewards and
log-probs, a run gone non-finite, not a start).
"""
from __future__ import annotations

from ..findings import Finding
from .metrics import LN2, Metrics, format_number, logs_preference_metrics, real_loss

PAIRWISE_START_MAX = 1.5  # nats: DPO starts at ln 2, KTO under 1; a language model's loss starts above


def detect_pairwise_start_above_chance(metrics: Metrics) -> list[Finding]:
    """One `start_above_uniform_guess` warning at the first logged pairwise loss where it is over `PAIRWISE_START_MAX`
    in a log of that loss alone (module docstring); else []."""
    loss = real_loss(metrics)
    if logs_preference_metrics(metrics) or loss.empty or float(loss.iloc[0]) <= PAIRWISE_START_MAX:
        return []
    first, step = float(loss.iloc[0]), int(loss.index[0])
    message = (f"the first pairwise preference loss {format_number(first)} (step {step}) is "
               f"{format_number(first / LN2)}x ln 2 = {format_number(LN2)}, the loss of every pair at a margin of 0, "
               "where DPO starts (the policy is its reference): at its start the model preferred the rejected answers "
               f"by beta x margin of about {format_number(first)} nats. No reference model anchoring the log-ratios "
               "(summed log-probs of answers of different lengths then decide), a reference that is not the policy's "
               "starting weights, chosen and rejected swapped, or a beta far too large do this; what the loss first "
               "shows is that being undone. Check the loss of the first batch against ln 2.")
    return [Finding("start_above_uniform_guess", "warning", step, message, metric="loss",
                    evidence={"first_loss": first, "uniform_guess_loss": LN2, "pairwise": True})]
