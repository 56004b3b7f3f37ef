"""Findings about a run's weights, judged from what `checkpoints.check_run_checkpoints` measured.

`weight_findings` turns the checkpoint verdicts into Findings: `nonfinite_weights` (the first bad
checkpoint), `weights_over_bound` (a user bound), `weights_near_fp16_limit` and `empty_checkpoint`.
`checkpoints/` reads and measures; judging happens here, beside the log analyzers.
"""
from __future__ import annotations

from ..checkpoints.blocks import blocks_in_order
from ..checkpoints.blocks import block_ranges
from ..checkpoints.types import CheckpointInfo, last_good_before_of
from ..config import Thresholds
from ..findings import Finding, plural

MAX_EVIDENCE_TENSORS = 50


def weight_findings(checkpoints: list[CheckpointInfo], timeline, thresholds: Thresholds) -> list[Finding]:
    """Findings about the weights; an empty list for healthy checkpoints."""
    if not checkpoints:
        return []
    fallback = last_step(timeline)
    out = []
    first_bad = _first_bad(checkpoints, fallback)
    if first_bad is not None:
        out.append(first_bad)
    over = next((c for c in checkpoints if c.status == "bad"), None)
    if over is not None:
        out.append(_over_bound(over, thresholds, fallback))
    out += _near_fp16_limit(checkpoints, thresholds, fallback)
    out += [_empty(c, fallback) for c in checkpoints if c.status == "empty"]
    return out


def _step(info: CheckpointInfo, fallback: int) -> int:
    return info.step if info.step is not None else fallback


def last_step(timeline) -> int:
    """The last logged step (0 for an empty timeline): where a checkpoint of unknown step is placed."""
    frame = getattr(timeline, "frame", None)
    if frame is None or frame.empty:
        return 0
    return int(frame["step"].max())


def _first_bad(checkpoints: list[CheckpointInfo], fallback: int) -> Finding | None:
    bad = [c for c in checkpoints if c.status == "nonfinite"]
    if not bad:
        return None
    first = bad[0]  # the same rule as first_bad_of
    last_good = last_good_before_of(checkpoints, first)
    blocks = first.nonfinite_blocks
    where = f"in {plural(len(blocks), 'block')} ({block_ranges(blocks)})" if blocks else "outside the repeated blocks"
    safe = f"{last_good.name} (step {last_good.step}) is the last good one" if last_good \
        else "no earlier checkpoint reads clean"
    message = (f"Checkpoint {first.name} (step {first.step}) holds NaN/Inf weights in "
               f"{plural(len(first.nonfinite_tensors), 'tensor')} {where}; {safe}.")
    if first.copy_disagreements:
        message += " ZeRO copies disagree: " + "; ".join(first.copy_disagreements[:3]) + "."
    evidence = {
        "checkpoint": first.name, "path": str(first.ref.path), "checkpoint_step": first.step,
        "last_good": last_good.name if last_good else None, "last_good_step": last_good.step if last_good else None,
        "nonfinite_blocks": list(blocks), "n_nonfinite_tensors": len(first.nonfinite_tensors),
        "nonfinite_tensors": first.nonfinite_tensors[:MAX_EVIDENCE_TENSORS],
        "later_bad_checkpoints": [c.name for c in bad[1:]],
        "copy_disagreements": list(first.copy_disagreements),
        "nonfinite_files": sorted(first.nonfinite_files),
    }
    if first.stats is not None:
        evidence["n_nan"] = int(first.stats["n_nan"].sum())
        evidence["n_inf"] = int(first.stats["n_inf"].sum())
    end = bad[-1].step if len(bad) > 1 and bad[-1].step is not None else None
    return Finding("nonfinite_weights", "error", _step(first, fallback), message, end_step=end, evidence=evidence)


def _over_bound(info: CheckpointInfo, thresholds: Thresholds, fallback: int) -> Finding:
    tensors = info.over_bound_tensors or []
    message = (f"Checkpoint {info.name} (step {info.step}) has {plural(len(tensors), 'tensor')} with |value| above "
               f"{thresholds.absmax_bound:g}, the bound set for this analysis.")
    return Finding("weights_over_bound", "error", _step(info, fallback), message,
                   evidence={"checkpoint": info.name, "bound": thresholds.absmax_bound,
                             "tensors": tensors[:MAX_EVIDENCE_TENSORS], "blocks": blocks_in_order(tensors)})


def _near_fp16_limit(checkpoints: list[CheckpointInfo], thresholds: Thresholds, fallback: int) -> list[Finding]:
    """The first fully scanned checkpoint with finite weights above fp16_headroom_warn x fp16_max."""
    limit = thresholds.fp16_headroom_warn * thresholds.fp16_max
    for info in checkpoints:
        if info.stats is None or info.stats.empty:
            continue
        near = info.stats[info.stats["absmax"] > limit].sort_values("absmax", ascending=False)
        if near.empty:
            continue
        top = float(near["absmax"].iloc[0])
        message = (f"Checkpoint {info.name} (step {info.step}) has {plural(len(near), 'tensor')} with finite weights "
                   f"above {limit:g} (largest {top:g}, {thresholds.fp16_max / top:.2g}x below the fp16 limit "
                   f"{thresholds.fp16_max:g}); in fp16 these overflow easily.")
        return [Finding("weights_near_fp16_limit", "warning", _step(info, fallback), message, evidence={
            "checkpoint": info.name, "limit": limit, "largest_absmax": top,
            "tensors": near["name"].head(MAX_EVIDENCE_TENSORS).tolist(),
            "blocks": blocks_in_order(near["name"].tolist())})]
    return []


def _empty(info: CheckpointInfo, fallback: int) -> Finding:
    return Finding("empty_checkpoint", "warning", _step(info, fallback),
                   f"Checkpoint {info.name} holds no weights: {info.reason}.",
                   evidence={"checkpoint": info.name, "path": str(info.ref.path), "reason": info.reason})


# Incidents after which the weights cannot be trusted, even where they are still finite.
WEIGHT_HARMING = ("nonfinite_metric", "masked_nan_loss", "divergence", "loss_collapse", "nonfinite_weights",
                  "nonfinite_optimizer_state")
_TRAINING_METRICS = (None, "loss", "grad_norm")
# The weights themselves moved many-fold more than before: later checkpoints hold what that did to them.
_WEIGHTS_LEFT_HISTORY = ("update_precursor",)


def harm_step(findings: list[Finding]) -> int | None:
    """The step of the first standing error that harms the weights (non-finite training metrics, a masked
    NaN loss, divergence onset, a collapse, NaN/Inf weights or optimizer state), or of a checkpoint where the
    weights' update ratio left its history (update_precursor); None when there is none."""
    harm = first_harm(findings)
    return harm.step if harm is not None else None


def first_harm(findings: list[Finding]) -> Finding | None:
    """The finding whose step `harm_step` gives (the earliest such), or None."""
    harming = [f for f in findings if not f.abandoned and f.metric in _TRAINING_METRICS + ("learning_rate",)
               and (f.kind in WEIGHT_HARMING and f.severity == "error" or f.kind in _WEIGHTS_LEFT_HISTORY)]
    return min(harming, key=lambda f: f.step) if harming else None


def why_not_safe(checkpoint: CheckpointInfo, findings: list[Finding]) -> str | None:
    """Why a checkpoint whose weights read finite is still no safe place to resume from (the rule of
    `safe_checkpoint`, for one checkpoint), or None when it is safe or its weights are not finite."""
    if checkpoint.status != "ok" or safe_checkpoint([checkpoint], findings) is checkpoint:
        return None
    if checkpoint.optimizer_finite is False:
        moments = checkpoint.optimizer.nonfinite_tensors
        return (f"finite weights, but NaN/Inf optimizer state ({plural(len(moments), 'moment tensor')}, "
                f"{moments[0]} first)")
    harm = first_harm(findings)
    if checkpoint.step is None:
        return f"finite weights, but of unknown step: it cannot be placed before the {harm.kind} at step {harm.step}"
    return f"finite weights, but saved after the {harm.kind} at step {harm.step} in the run's log"


def safe_checkpoint(checkpoints: list[CheckpointInfo], findings: list[Finding]) -> CheckpointInfo | None:
    """The last checkpoint that is really safe to resume from: finite weights, a finite optimizer state where
    one was saved (a resume loads it: NaN moments poison the run again), and saved before the first incident
    that harms the weights (not merely finite). Checkpoints of unknown step qualify only without an incident.

    >>> from pathlib import Path
    >>> from forensics.checkpoints.types import CheckpointRef
    >>> ck = [CheckpointInfo(CheckpointRef(f"checkpoint-{s}", s, Path("."), ()), "ok") for s in (10, 20, 30)]
    >>> div = Finding("divergence", "error", 25, "loss diverges from step 25")
    >>> safe_checkpoint(ck, [div]).name
    'checkpoint-20'
    """
    checkpoints = [c for c in checkpoints if c.optimizer_finite is not False]
    first_bad = next((c for c in checkpoints if c.status == "nonfinite"), None)
    good = last_good_before_of(checkpoints, first_bad)
    incident = harm_step(findings)
    if good is None or incident is None:
        return good
    before = [c for c in checkpoints if c.status == "ok" and c.step is not None and c.step < incident
              and (first_bad is None or first_bad.step is None or c.step < first_bad.step)]
    return before[-1] if before else None
