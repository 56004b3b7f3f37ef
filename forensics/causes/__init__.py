"""Name the likely cause of a broken run from its own configuration, metrics and checkpoints.

`infer_causes(...)` runs every rule (each a small function `rule(facts) -> Cause | None`) and
returns the causes that fired, ordered by confidence: "likely" before "possible", and within a
confidence in the order of RULES: settings that explain a whole class of failure (precision,
quantization) first, then a sudden break (nothing built up before it: data or numerics, which a
rate out of range is no answer to), then the learning rate, then where the damage is, then
contributing settings. What only hid the trouble (`HIDERS`: HF's NaN filter logging a NaN loss as
0.0) comes after every cause of its own confidence: it tells how to read the log, not what to fix.
So the report does not lead with it however sure it is: the report picks the cause it leads with
by role (`roles.leading_cause`), not by place in this list, and `analyze --json` gives each
cause its `role`.
A cause that rules others out (`RULES_OUT`) drops them: GRPO groups without reward spread have
no gradient for a learning rate, a warm-up or clipping to act on.

A run with no error-level finding and no bad checkpoint gets nothing above "possible", and a run with nothing at
warning level or worse gets no cause at all: a cause says why something went wrong (cbt12123_meituan_takeout_review,
healthy, was told its summed training loss was a cause; the `train_eval_mismatch` info already reads that scale).
Without a readable config the rules that need it stay silent and the metric- and
checkpoint-based ones still speak; `RunConfig.missing` says what was not there.
"""
from __future__ import annotations

from dataclasses import replace

from ..checkpoints.types import CheckpointInfo
from ..config import RunConfig, Thresholds
from ..findings import Cause, Finding
from ..profile import RunProfile
from ..timeline import Timeline
from .damage import (early_blocks, frozen_weights, late_blocks, masked_nan_loss, no_reward_spread,
                     zero_loss_zero_grad)
from .evidence import Facts
from .logged_loss import accumulation_scaled_loss, labels_count_padding
from .optimization import clipping_cannot_help, lr_too_high, no_clipping, sudden_break
from .precision import deepspeed_precision_conflict, fp16_overflow, qlora_double_quant
from .too_slow import lr_too_low
from .warmup import no_warmup

RULES = (
    deepspeed_precision_conflict,
    qlora_double_quant,
    fp16_overflow,
    sudden_break,
    lr_too_high,
    lr_too_low,
    late_blocks,
    early_blocks,
    masked_nan_loss,
    zero_loss_zero_grad,
    frozen_weights,
    no_reward_spread,
    no_warmup,
    no_clipping,
    clipping_cannot_help,
    accumulation_scaled_loss,
    labels_count_padding,
)

# What hid the trouble rather than caused it: ranked after every cause of its confidence, never led with.
HIDERS = frozenset({"masked_nan_loss"})

# A likely cause that says an optimizer setting cannot help, and the causes it rules out.
RULES_OUT = {"no_reward_spread": frozenset({"lr_too_high", "no_warmup", "no_clipping"})}


def infer_causes(config: RunConfig, timeline: Timeline, findings: list[Finding],
                 checkpoints: list[CheckpointInfo], thresholds: Thresholds | None = None,
                 profile: RunProfile | None = None) -> list[Cause]:
    """The causes the evidence supports, most confident first (see the module docstring).

    >>> infer_causes(RunConfig(), Timeline.empty(), [], [], Thresholds())
    []
    """
    facts = Facts(config, timeline, list(findings), list(checkpoints), thresholds or Thresholds(), profile)
    if not facts.troubled:  # nothing went wrong, so nothing to explain: an info finding says how to read the log
        return []
    fired = [cause for rule in RULES if (cause := rule(facts)) is not None]
    if not facts.broken:  # nothing broke: no cause can be more than a possibility
        fired = [replace(c, confidence="possible") for c in fired]
    ruled_out = set().union(*(RULES_OUT.get(c.cause, ()) for c in fired if c.confidence == "likely"))
    fired = [c for c in fired if c.cause not in ruled_out]
    order = {rule.__name__: i for i, rule in enumerate(RULES)}
    return sorted(fired, key=lambda c: (c.confidence != "likely", c.cause in HIDERS, order.get(c.cause, len(RULES))))


__all__ = ["infer_causes", "RULES", "HIDERS", "RULES_OUT"]
