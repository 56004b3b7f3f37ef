"""Findings from the optimizer state saved with the checkpoints, and the precursor block before a break.

- `nonfinite_optimizer_state` (error): a checkpoint whose Adam moments hold NaN/Inf. Resuming from
  it loads them and poisons the run again, even where its weights are finite.
- `skipped_steps` (from the state): the trainer counted more steps than Adam took, i.e. the fp16
  scaler threw updates away. A few by the first checkpoint are the scaler calibrating (info);
  more later are worth a look (warning).
- `update_precursor` (warning): the first checkpoint where a block's update ratio leaves its own
  history many-fold (SIGNALS.md #12, #13): between consecutive checkpoints ‖W2−W1‖/‖W1‖ per step,
  or Adam's per-step ratio lr·‖u + wd·W‖/‖W‖ from the saved moments, or the per-step growth of a
  layer's attention-logit bound (`checkpoints.updates.attention_bound`). Named when it comes before the
  first NaN/Inf (or in a run with none), as "where the run was heading".
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..checkpoints.blocks import block_of, block_ranges
from ..checkpoints.types import CheckpointInfo
from ..checkpoints.updates import UpdateStep
from ..findings import Finding, plural
from .metrics import format_number

PRECURSOR_JUMP = 10.0  # a block's ratio this many times its own earlier median leaves its history
BOUND_GROWTH_MIN = 0.05  # ... and an attention-logit bound must grow by 5% a step or more (healthy runs: far less)
_WHAT = {"weights between checkpoints": "update ratio", "optimizer state": "Adam's update ratio",
         "attention-logit bound growth": "attention-logit bound growth per step"}
CALIBRATION_SKIPS = 20  # torch's GradScaler starts at 2**16: a dozen or so halvings are it calibrating
NONFINITE_KINDS = ("nonfinite_metric", "masked_nan_loss", "nonfinite_weights", "nonfinite_optimizer_state")


def optimizer_findings(checkpoints: list[CheckpointInfo], fallback_step: int) -> list[Finding]:
    """Findings about the saved optimizer states; empty when no checkpoint kept one."""
    with_state = [c for c in checkpoints if c.optimizer is not None]
    out = []
    poisoned = next((c for c in with_state if c.optimizer.is_finite is False), None)
    if poisoned is not None:
        out.append(_nonfinite_state(poisoned, with_state, fallback_step))
    skipping = _skipped(with_state, fallback_step)
    if skipping is not None:
        out.append(skipping)
    return out


def _nonfinite_state(info: CheckpointInfo, with_state: list[CheckpointInfo], fallback: int) -> Finding:
    state = info.optimizer
    blocks = sorted({b for b in (block_of(n) for n in state.nonfinite_tensors) if b})
    where = f" in {plural(len(blocks), 'block')} ({block_ranges(blocks)})" if blocks else ""
    weights = ("its weights are NaN/Inf too" if info.status == "nonfinite"
               else "its weights are finite, but resuming loads these moments and poisons the run again")
    message = (f"Checkpoint {info.name} (step {info.step}): the optimizer state holds NaN/Inf in "
               f"{plural(len(state.nonfinite_tensors), 'moment tensor')}{where}; {weights}.")
    later = [c.name for c in with_state if c.step is not None and info.step is not None and c.step > info.step
             and c.optimizer.is_finite is False]
    return Finding("nonfinite_optimizer_state", "error", info.step if info.step is not None else fallback, message,
                   evidence={"checkpoint": info.name, "file": state.file, "weights_finite": info.status != "nonfinite",
                             "nonfinite_tensors": state.nonfinite_tensors[:50], "blocks": blocks,
                             "later_checkpoints": later})


def _skipped(with_state: list[CheckpointInfo], fallback: int) -> Finding | None:
    counted = [(c, c.optimizer.skipped_steps) for c in with_state if c.optimizer.skipped_steps]
    if not counted:
        return None
    first, n_first = counted[0]
    last, n_last = counted[-1]
    grows = n_last > n_first
    severity = "warning" if grows or n_first > CALIBRATION_SKIPS else "info"
    message = (f"The optimizer took {plural(n_last, 'step')} fewer than the trainer counted by {last.name} "
               f"(step {last.step}): updates skipped, as the fp16 loss scaler does on an overflow"
               + (f"; {n_last - n_first} of them after {first.name}." if grows else "."))
    return Finding("skipped_steps", severity, first.step if first.step is not None else fallback, message,
                   end_step=last.step, evidence={"source": "optimizer state", "skipped_by_checkpoint":
                                                 {c.name: n for c, n in counted}})


@dataclass(frozen=True)
class _Jump:
    step: int
    checkpoint: str
    module: str
    factor: float
    ratio: float
    history: float
    jumped: tuple[str, ...]
    peers: float | None
    source: str
    compared: tuple[str, ...] = ()


def update_precursor(updates: list[UpdateStep], checkpoints: list[CheckpointInfo],
                     findings: list[Finding]) -> list[Finding]:
    """The first block whose update ratio leaves its own history before the first NaN/Inf, as a warning."""
    limit = _first_nonfinite_step(findings)
    jumps = [j for j in (_first_jump(_weight_series(updates), "weights between checkpoints"),
                         _first_jump(_optimizer_series(checkpoints), "optimizer state"),
                         _first_jump(_bound_series(updates), "attention-logit bound growth",
                                     BOUND_GROWTH_MIN)) if j is not None]
    jumps = [j for j in jumps if limit is None or j.step < limit]
    if not jumps:
        return []
    jump = min(jumps, key=lambda j: (j.step, -j.factor))
    ahead = [c for c in checkpoints if c.step is not None and jump.step <= c.step and (limit is None or c.step < limit)]
    when = (f", {plural(len(ahead), 'checkpoint')} before the first NaN/Inf at step {limit}"
            if limit is not None else "")
    peers = f", {format_number(jump.peers)}x the median of the other blocks" if jump.peers and jump.peers >= 2 else ""
    others, compared = len(jump.jumped) - 1, len(jump.compared) - 1
    together = ("; every other block jumped with it" if others and others == compared
                else f"; {plural(others, 'other block')} of {compared} jumped with it" if others else "")
    message = (f"{jump.module}: {_WHAT[jump.source]} {format_number(jump.factor)}x its own earlier median at "
               f"{jump.checkpoint} (step {jump.step}){peers}{when}{together} ({jump.source}).")
    return [Finding("update_precursor", "warning", jump.step, message, evidence={
        "block": jump.module, "checkpoint": jump.checkpoint, "factor": jump.factor, "update_ratio": jump.ratio,
        "history_median": jump.history, "peers_factor": jump.peers, "blocks_jumped": list(jump.jumped),
        "source": jump.source, "first_nonfinite_step": limit, "checkpoints_before_nonfinite": len(ahead)})]


def _first_nonfinite_step(findings: list[Finding]) -> int | None:
    steps = [f.step for f in findings if f.kind in NONFINITE_KINDS and f.severity == "error" and not f.abandoned]
    return min(steps) if steps else None


def _weight_series(updates: list[UpdateStep]) -> list[tuple[int, str, dict[str, float]]]:
    """(step, checkpoint, module -> per-step ratio) for each pair of consecutive finite checkpoints."""
    return [(u.to_step, u.to_name,
             {m: r / u.steps for m, r in u.blocks.items() if r == r and m not in u.nonfinite_blocks})
            for u in updates if not u.nonfinite_blocks]


def _bound_series(updates: list[UpdateStep]) -> list[tuple[int, str, dict[str, float]]]:
    """(step, checkpoint, layer -> growth of its attention-logit bound per step) between finite checkpoints:
    a layer whose bound suddenly grows many times faster than before is heading for one-hot attention."""
    out = []
    for u in updates:
        growth = {m: (u.attention_bound_to[m] / u.attention_bound_from[m]) ** (1 / u.steps)
                  for m in u.attention_bound_to if u.attention_bound_from.get(m) and u.attention_bound_to[m] > 0}
        # the per-step growth factor minus 1: ~0 when steady, so a jump stands out against its history
        out.append((u.to_step, u.to_name, {m: g - 1 for m, g in growth.items() if g > 1}))
    return out


def _optimizer_series(checkpoints: list[CheckpointInfo]) -> list[tuple[int, str, dict[str, float]]]:
    out = []
    for c in checkpoints:
        state = c.optimizer
        if state is None or not state.is_finite or c.step is None:
            continue
        ratios = {row["block"]: row["update_ratio"] for row in state.blocks.to_dict("records")
                  if row["update_ratio"] == row["update_ratio"]}
        out.append((c.step, c.name, ratios))
    return out


def _first_jump(series, source: str, at_least: float = 0.0) -> _Jump | None:
    """The first point where some module's ratio is PRECURSOR_JUMP x its median over the earlier points
    (and at least `at_least`)."""
    for k in range(1, len(series)):
        step, name, now = series[k]
        found = []
        for module, ratio in now.items():
            history = [s[2][module] for s in series[:k] if s[2].get(module, 0) > 0]
            if history and ratio >= max(at_least, PRECURSOR_JUMP * statistics.median(history)):
                found.append((ratio / statistics.median(history), module, ratio, statistics.median(history)))
        if found:
            factor, module, ratio, median = max(found)
            return _Jump(step, name, module, factor, ratio, median,
                         tuple(m for _, m, _, _ in sorted(found, reverse=True)),
                         _peers_factor(now, module), source, tuple(now))
    return None


def _peers_factor(now: dict[str, float], module: str) -> float | None:
    """The module's ratio over the median of the other repeated blocks at the same point (None without any)."""
    if block_of(module + ".x") is None:
        return None
    others = [r for m, r in now.items() if m != module and block_of(m + ".x") is not None and r > 0]
    return now[module] / statistics.median(others) if others else None
