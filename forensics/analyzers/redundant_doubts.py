"""A `no_learning_evidence` warning ("too little to tell whether the run learned") that another finding already
answers: after a `never_learned` finding, or beside one that says why the loss is exactly 0. Kept apart from the
detectors because it reads their findings together, once they are all in."""
from __future__ import annotations

from ..findings import Finding


def without_doubt_after_never_learned(findings: list[Finding]) -> list[Finding]:
    """The findings less the `no_learning_evidence` warnings dated at or after a `never_learned` finding: once the
    run is shown not to have learned, a later "too little to tell whether it learned" contradicts it and adds nothing.
    An earlier one stays (it may be the first incident, dated where the doubt began)."""
    never = [f.step for f in findings if f.kind == "never_learned"]
    if not never:
        return findings
    return [f for f in findings if not (f.kind == "no_learning_evidence" and f.step >= min(never))]


# the findings that say the loss is exactly 0 and why that is no learning (or cannot be told to be)
_ZERO_LOSS_KINDS = ("zero_loss_unexplained", "masked_nan_loss")


def without_doubt_beside_a_zero_loss(findings: list[Finding]) -> list[Finding]:
    """The findings less a `no_learning_evidence` whose loss was 0 at its start and its end, where a zero-loss finding
    says why: "the loss did not fall: about 0 ... and 0" beside it adds nothing, and its advice (whether training
    started from a trained model) is for a loss that is not there (AyushK0808: every logged loss 0.0, no grad_norm).
    Without a zero-loss finding the doubt stays: it is then the only warning the run gets."""
    if not any(f.kind in _ZERO_LOSS_KINDS for f in findings):
        return findings
    return [f for f in findings if not (f.kind == "no_learning_evidence" and f.evidence.get("head") == 0
                                        and f.evidence.get("tail") == 0)]
