"""Plain data types of the checkpoint side, shared by readers, scans, bisect and reports."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

# Checkpoint status values of the --json contract. "bad" (finite, but over a bound the user set:
# Thresholds.absmax_bound, bisect --criterion) appears only when such a bound is given.
STATUSES = ("ok", "nonfinite", "unreadable", "empty", "bad")

# Columns of a per-tensor stats DataFrame (scan --csv has at least these, in this order).
STATS_COLUMNS = [
    "name", "block", "dtype", "shape", "numel", "n_nan", "n_inf", "absmax", "l2", "mean", "std",
    "zero_frac", "fp16_headroom", "file",
]


@dataclass(frozen=True)
class CheckpointRef:
    """Where one checkpoint lives: a folder (or single file) and the weight files in it.

    Fields:
        name: folder or file name (`checkpoint-3600`, `ckpt-12`, `global_step500`, `model.safetensors`).
        step: training step from the name (or trainer_state.json inside), None if unknown.
        path: the folder, or the file for a single-file checkpoint.
        files: the weight files to read (shards, adapters, .bin/.pt), sorted.
        kind: "safetensors", "sharded", "adapter", "torch", "deepspeed", "dcp" (torch.distributed.checkpoint
            folders: FSDP, torchtitan, Megatron torch_dist) or "mixed".
        aux_files: DeepSpeed `*model_states.pt` beside the weights, read for their counters only.
    """

    name: str
    step: int | None
    path: Path
    files: tuple[Path, ...]
    kind: str = "safetensors"
    aux_files: tuple[Path, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "step": self.step, "path": str(self.path)}


@dataclass
class CheckpointInfo:
    """What a check of one checkpoint found.

    Fields:
        ref: the checkpoint.
        status: "ok", "nonfinite", "unreadable" or "empty" ("bad" when a user-set bound fails).
        nonfinite_tensors: names of tensors holding NaN or Inf (all, or up to the first for a quick check).
        nonfinite_blocks: their blocks (`model.layers.21`), in block order.
        reason: why it is unreadable or empty, else None.
        stats: per-tensor stats (STATS_COLUMNS) when a full scan was done, else None.
        full_scan: True when every tensor was read to the end.
        extra: counters read beside the weights (DeepSpeed skipped_steps, scaler scale, ...).
        nonfinite_files: file -> its tensors holding NaN or Inf (which DeepSpeed / Megatron rank holds them).
        copy_disagreements: ZeRO parameters whose fp32 master and 16-bit copies disagree about being finite.
    """

    ref: CheckpointRef
    status: str
    nonfinite_tensors: list[str] = field(default_factory=list)
    nonfinite_blocks: list[str] = field(default_factory=list)
    reason: str | None = None
    stats: pd.DataFrame | None = None
    full_scan: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    nonfinite_files: dict[str, list[str]] = field(default_factory=dict)
    copy_disagreements: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.ref.name

    @property
    def step(self) -> int | None:
        return self.ref.step

    @property
    def is_bad(self) -> bool:
        return self.status == "nonfinite"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.ref.name,
            "step": self.ref.step,
            "path": str(self.ref.path),
            "status": self.status,
            "nonfinite_tensors": list(self.nonfinite_tensors),
            "nonfinite_blocks": list(self.nonfinite_blocks),
            "reason": self.reason,
            "full_scan": self.full_scan,
            "extra": dict(self.extra),
            "nonfinite_files": {f: list(n) for f, n in self.nonfinite_files.items()},
            "copy_disagreements": list(self.copy_disagreements),
        }


def first_bad_of(checkpoints) -> CheckpointInfo | None:
    """The first checkpoint holding NaN/Inf weights, in the given order (by step, unknown steps last)."""
    return next((c for c in checkpoints if c.status == "nonfinite"), None)


def last_good_before_of(checkpoints, bad: CheckpointInfo | None) -> CheckpointInfo | None:
    """The newest checkpoint that reads ok and comes before `bad` in the given order (by step,
    unknown steps last); any ok one when `bad` is None.

    A checkpoint of unknown step cannot be placed before a bad one of known step, so it never
    qualifies then.
    """
    checkpoints = list(checkpoints)
    before = checkpoints[: checkpoints.index(bad)] if bad is not None else checkpoints
    good = [c for c in before if c.status == "ok" and (bad is None or bad.step is None or c.step is not None)]
    return good[-1] if good else None
