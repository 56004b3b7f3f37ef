"""Plain data types of the checkpoint side, shared by readers, scans, bisect and reports."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..findings import Skipped, plural
from .blocks import block_ranges

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


@dataclass(frozen=True)
class TensorTable:
    """Per-tensor rows of a scan or a diff, and the weight files that could not be read (the rows are
    then partial: a shard missing or damaged)."""

    frame: pd.DataFrame
    skipped: tuple[Skipped, ...] = ()

    @property
    def nonfinite_values(self) -> int:
        """The NaN and Inf values over every tensor of a scan (`scan` exits 1 on any)."""
        return int((self.frame["n_nan"] + self.frame["n_inf"]).sum()) if len(self.frame) else 0


@dataclass(frozen=True)
class DeepSpeedCounters:
    """The counters of a checkpoint's DeepSpeed `*model_states.pt` (each None when the file lacks it).

    Fields:
        file: the model_states file read (rank 0 first).
        skipped_steps: optimizer steps DeepSpeed skipped on an fp16 overflow, cumulative.
        global_steps, global_samples: steps and samples trained when it was saved.
        dp_world_size, mp_world_size: data- and model-parallel ranks.
    """

    file: str
    skipped_steps: int | None = None
    global_steps: int | None = None
    global_samples: int | None = None
    dp_world_size: int | None = None
    mp_world_size: int | None = None

    @classmethod
    def from_counters(cls, counters: dict[str, int], file: str) -> "DeepSpeedCounters":
        return cls(file=file, **{k: v for k, v in counters.items() if k in _COUNTER_NAMES})

    def to_dict(self) -> dict[str, Any]:
        """The counters found, then the file (the `extra.deepspeed` object of the --json contract)."""
        found = {k: getattr(self, k) for k in _COUNTER_NAMES if getattr(self, k) is not None}
        return {**found, "file": self.file}


_COUNTER_NAMES = ("skipped_steps", "global_steps", "global_samples", "dp_world_size", "mp_world_size")


@dataclass(frozen=True)
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
        criterion: what counted as bad besides NaN/Inf ("non-finite only", "absmax > 10000"), None if unchecked.
        stopped_early: True when a quick check stopped at the first bad tensor; None if not a quick check.
        over_bound_tensors: finite tensors failing the user's bound (status "bad"); None when none was named.
        unchecked_tensors: tensors of a dtype that cannot be checked.
        unreadable_files: files of the checkpoint that could not be read (the rest was checked).
        deepspeed: the counters of its DeepSpeed model_states file, None when it has none.
        nonfinite_files: file -> its tensors holding NaN or Inf (which DeepSpeed / Megatron rank holds them).
        copy_disagreements: ZeRO parameters whose fp32 master and 16-bit copies disagree about being finite.
        optimizer: the measured optimizer state saved beside it (`optimizer_stats.OptimizerState`), None
            when there is none; `optimizer_problem` says why one could not be read.
    """

    ref: CheckpointRef
    status: str
    nonfinite_tensors: list[str] = field(default_factory=list)
    nonfinite_blocks: list[str] = field(default_factory=list)
    reason: str | None = None
    stats: pd.DataFrame | None = None
    full_scan: bool = False
    criterion: str | None = None
    stopped_early: bool | None = None
    over_bound_tensors: list[str] | None = None
    unchecked_tensors: list[str] = field(default_factory=list)
    unreadable_files: tuple[Skipped, ...] = ()
    deepspeed: DeepSpeedCounters | None = None
    nonfinite_files: dict[str, list[str]] = field(default_factory=dict)
    copy_disagreements: list[str] = field(default_factory=list)
    optimizer: Any = None
    optimizer_problem: str | None = None

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"CheckpointInfo status must be one of {STATUSES}, not {self.status!r}")

    def __repr__(self) -> str:
        """One line: name, step, status and what is wrong (the stats frame stays out: `.stats`)."""
        return f"<CheckpointInfo {self.summary()}>"

    def summary(self) -> str:
        """`checkpoint-30 (step 30): nonfinite, 36 tensors in transformer.h.21-23; optimizer state finite`."""
        text = f"{self.name} (step {self.step}): {self.status}"
        if self.nonfinite_tensors:
            where = f" in {block_ranges(self.nonfinite_blocks)}" if self.nonfinite_blocks else ""
            text += f", {plural(len(self.nonfinite_tensors), 'tensor')} with NaN/Inf{where}"
        if self.reason:
            text += f" ({self.reason})"
        if self.optimizer is not None:
            text += "; optimizer state " + {True: "finite", False: "NOT finite",
                                            None: "not read"}[self.optimizer_finite]
        return text

    @property
    def name(self) -> str:
        return self.ref.name

    @property
    def step(self) -> int | None:
        return self.ref.step

    @property
    def optimizer_finite(self) -> bool | None:
        """Whether its saved optimizer moments are all finite; None when it has no readable optimizer state."""
        return None if self.optimizer is None else self.optimizer.is_finite

    @property
    def is_nonfinite(self) -> bool:
        """It holds NaN/Inf weights (status "nonfinite"; a finite checkpoint over a user bound is not)."""
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
            "extra": self._extra_dict(),
            "nonfinite_files": {f: list(n) for f, n in self.nonfinite_files.items()},
            "copy_disagreements": list(self.copy_disagreements),
            "optimizer": self.optimizer.to_dict() if self.optimizer is not None else None,
            "optimizer_problem": self.optimizer_problem,
        }

    def _extra_dict(self) -> dict[str, Any]:
        """The `extra` object of the --json contract, built from the typed fields (same keys as ever)."""
        out: dict[str, Any] = {}
        if self.stopped_early is not None:
            out["stopped_early"] = self.stopped_early
        if self.criterion is not None:
            out["criterion"] = self.criterion
        if self.over_bound_tensors:
            out["over_bound_tensors"] = list(self.over_bound_tensors)
        if self.unchecked_tensors:
            out["unchecked_tensors"] = list(self.unchecked_tensors)
        if self.unreadable_files:
            out["unreadable_files"] = [s.to_dict() for s in self.unreadable_files]
        if self.deepspeed is not None:
            out["deepspeed"] = self.deepspeed.to_dict()
        return out


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
