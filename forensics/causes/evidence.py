"""The facts the cause rules look at, read once from the config, timeline, findings and checkpoints.

Every helper returns plain values (numbers, steps, names) plus, where it helps a report,
the file or source that said it, so a rule can write evidence sentences that name them.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..checkpoints.types import CheckpointInfo
from ..config import RunConfig, Thresholds
from ..findings import Finding
from ..timeline import Timeline

NONFINITE_KINDS = ("nonfinite_metric", "masked_nan_loss", "nonfinite_weights")
INSTABILITY_KINDS = NONFINITE_KINDS + ("grad_norm_spike", "loss_spike", "divergence", "loss_collapse",
                                       "loss_scale_overflow", "skipped_steps", "no_learning_signal")


@dataclass
class Facts:
    """Everything a rule may use; `broken` and `troubled` summarise how bad the run is."""

    config: RunConfig
    timeline: Timeline
    findings: list[Finding]
    checkpoints: list[CheckpointInfo]
    thresholds: Thresholds

    @property
    def live_findings(self) -> list[Finding]:
        """Findings of the history that stands (not of attempts a resume threw away)."""
        return [f for f in self.findings if not f.abandoned]

    @property
    def broken(self) -> bool:
        """An error-level finding or a checkpoint with non-finite weights."""
        return any(f.severity == "error" for f in self.live_findings) or any(c.is_bad for c in self.checkpoints)

    @property
    def troubled(self) -> bool:
        """Anything at warning level or worse: something to explain."""
        return self.broken or any(f.severity in ("warning", "error") for f in self.live_findings)

    def of_kind(self, *kinds: str) -> list[Finding]:
        return [f for f in self.live_findings if f.kind in kinds]

    def series(self, metric: str) -> pd.Series:
        return self.timeline.series(metric)


def fmt(value) -> str:
    """A number as a report writes it: 3e-04 -> '0.0003', 65536.0 -> '65536'."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        return repr(value) if isinstance(value, str) else str(value)
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        return str(value)
    return f"{value:g}"


def said(config: RunConfig, key: str) -> str:
    """'key=value (source)' for an evidence sentence."""
    return f"{key}={fmt(config.get(key))} ({config.source_of(key)})"


# --- timeline facts -------------------------------------------------------------------------

def nonfinite_steps(series: pd.Series) -> list[int]:
    values = series.to_numpy(dtype="float64")
    return [int(s) for s in series.index[~np.isfinite(values)]]


def masked_loss_steps(timeline: Timeline) -> list[int]:
    """Steps where loss is logged as exactly 0.0 while grad_norm is NaN/Inf (HF's NaN filter at work)."""
    wide = timeline.wide()
    if "loss" not in wide or "grad_norm" not in wide:
        return []
    loss, grad = wide["loss"].to_numpy(dtype="float64"), wide["grad_norm"].to_numpy(dtype="float64")
    hit = (loss == 0.0) & ~np.isfinite(grad) & ~np.isnan(loss)
    return [int(s) for s in wide.index[hit]]


def zero_loss_zero_grad_steps(timeline: Timeline) -> list[int]:
    """Steps where loss and grad_norm are both exactly 0.0: no learning signal at all."""
    wide = timeline.wide()
    if "loss" not in wide or "grad_norm" not in wide:
        return []
    hit = (wide["loss"].to_numpy(dtype="float64") == 0.0) & (wide["grad_norm"].to_numpy(dtype="float64") == 0.0)
    return [int(s) for s in wide.index[hit]]


def lr_points(timeline: Timeline) -> pd.Series:
    """The logged learning rate, finite and above zero (DeepSpeed fp16 logs 0 before its first step)."""
    lr = timeline.series("learning_rate")
    values = lr.to_numpy(dtype="float64")
    return lr[np.isfinite(values) & (values > 0)]


def peak_lr(facts: Facts) -> tuple[float | None, list[str]]:
    """The highest learning rate the run used, and sentences saying where it was seen."""
    seen: list[tuple[float, str]] = []
    lr = lr_points(facts.timeline)
    if len(lr):
        step = int(lr.idxmax())
        seen.append((float(lr.max()), f"logged learning_rate peaked at {fmt(lr.max())} (step {step})"))
    for key in ("learning_rate", "ds.optimizer.params.lr", "ds.scheduler.params.warmup_max_lr"):
        value = facts.config.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            seen.append((float(value), f"configured {said(facts.config, key)}"))
            break
    if not seen:
        return None, []
    return max(v for v, _ in seen), [s for _, s in seen]


def max_finite(series: pd.Series) -> tuple[float, int] | None:
    values = series.to_numpy(dtype="float64")
    finite = np.isfinite(values)
    if not finite.any():
        return None
    i = int(np.argmax(np.where(finite, values, -np.inf)))
    return float(values[i]), int(series.index[i])


# --- precision --------------------------------------------------------------------------------

def precision_sources(config: RunConfig, kind: str) -> list[str]:
    """Where the run says `kind` ("fp16" or "bf16") mixed precision was on, as 'key=True (source)'."""
    out = []
    for key in (kind, f"ds.{kind}.enabled"):
        for seen in config.values.get(key, []):
            if seen.value is True or (type(seen.value) is int and seen.value == 1):
                out.append(f"{key}={seen.value} ({seen.source})")
    return out


# --- blocks -----------------------------------------------------------------------------------

_WRAPPERS = re.compile(r"^(?:module\.|_orig_mod\.|_fsdp_wrapped_module\.|_checkpoint_wrapped_module\.|base_model\.model\.)+")
_BLOCK = re.compile(r"^(?P<prefix>(?:\w+\.)*?)(?P<container>layers|h|blocks|block|layer)\.(?P<idx>\d+)(?:\.|$)")
_EMBEDDING = re.compile(r"(embed_tokens|wte|wpe|word_embeddings|embed_in|shared)\b")


def block_index(name: str) -> int | None:
    """The block number in a block or tensor name (`model.layers.21`, `transformer.h.21.attn...`), or None."""
    match = _BLOCK.match(_WRAPPERS.sub("", name))
    return int(match.group("idx")) if match else None


def is_embedding(name: str) -> bool:
    return block_index(name) is None and bool(_EMBEDDING.search(name))


def number_of_blocks(facts: Facts) -> tuple[int | None, str]:
    """How many blocks the model has: config num_hidden_layers, else the highest block index in checkpoint stats."""
    layers = facts.config.get("model.num_hidden_layers")
    if isinstance(layers, int) and not isinstance(layers, bool) and layers > 0:
        return layers, f"num_hidden_layers={layers} ({facts.config.source_of('model.num_hidden_layers')})"
    indices = []
    for info in facts.checkpoints:
        if info.stats is not None and "name" in info.stats:
            indices += [i for i in map(block_index, info.stats["name"].astype(str)) if i is not None]
    if indices:
        return max(indices) + 1, f"{max(indices) + 1} blocks seen in the checkpoint tensors"
    return None, ""


def first_bad_checkpoint(facts: Facts) -> CheckpointInfo | None:
    bad = [c for c in facts.checkpoints if c.is_bad]
    return min(bad, key=lambda c: -1 if c.step is None else c.step) if bad else None


def last_good_before(facts: Facts, bad: CheckpointInfo) -> CheckpointInfo | None:
    good = [c for c in facts.checkpoints if c.status == "ok" and c.step is not None
            and bad.step is not None and c.step < bad.step]
    return max(good, key=lambda c: c.step) if good else None
