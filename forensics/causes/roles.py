"""What each cause is to the report: the one to act on first, what hid the trouble, a note on how the loss was
logged, or one more possibility.

`infer_causes` orders the causes by confidence (the `--json` contract); the report does not lead with the first of
them but with the first link of the chain that has a fix (`leading_cause`): HF's NaN-loss filter hides the trouble
rather than causing it, and a note on how the loss was logged is no cause of an incident of another kind.
`analyze --json` gives each cause its role (`cause_role`) and the leading one as `leading_cause`.
"""
from __future__ import annotations

from typing import Sequence


from ..findings import Cause, Finding
from . import HIDERS
from .logged_loss import EXPLAINS, LOGGING_CAUSES
from .precision import SCALER_AT_WORK

# A cause's role in the report (`cause_role`), as `analyze --json` gives it on each cause.
CAUSE_ROLES = ("leading", "hid_the_cause", "about_the_log", "also")

# The first incidents an fp16 loss scaler's skipped updates can be a cause of.
_SCALER_KINDS = ("skipped_steps", "loss_scale_overflow", "nonfinite_metric")


def about_the_log(first: Finding | None, cause: Cause) -> bool:
    """Whether a cause is about how the loss was logged beside a first incident of another kind (no cause of it), or
    a note that the fp16 scaler only skipped a few updates beside a first incident the scaler has nothing to do with
    (an overfitting, a memorization: "FP16 overflow, nothing to change" is no cause of those)."""
    if first is None:
        return False
    if cause.cause == "fp16_overflow" and cause.suggestion.startswith(SCALER_AT_WORK):
        return first.kind not in _SCALER_KINDS
    return cause.cause in LOGGING_CAUSES and first.kind != EXPLAINS[cause.cause]


def leading_cause(causes: Sequence[Cause], first: Finding | None) -> Cause | None:
    """The cause to act on first: the first link of the chain that has a fix, not what hid the trouble (HF's NaN
    filter) nor a note on how the loss was logged beside an incident of another kind; the hider where nothing else
    fired; None where only notes on the log did."""
    fixes = [c for c in causes if not about_the_log(first, c)]
    return next((c for c in fixes if c.cause not in HIDERS), fixes[0] if fixes else None)


def cause_role(first: Finding | None, cause: Cause, lead: Cause | None) -> str:
    """What a cause is to the report whose leading cause is `lead`: "leading" (the one it leads with),
    "about_the_log" (a note on how the loss was logged, or the fp16 scaler's, beside an incident of another kind),
    "hid_the_cause" (HF's NaN filter beside a cause with a fix: how to read the log), else "also"."""
    if cause is lead:
        return "leading"
    if about_the_log(first, cause):
        return "about_the_log"
    return "hid_the_cause" if cause.cause in HIDERS else "also"
