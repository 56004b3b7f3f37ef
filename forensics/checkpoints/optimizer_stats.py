"""Measure a checkpoint's Adam state, parameter by parameter and block by block.

For each parameter, its first and second moments m, v (and its weights W, read from the
checkpoint's own weight files) are read together in bounded chunks, and with the bias
corrections of its `step` (torch.optim.Adam/AdamW: m̂ = m/(1-β1^t), v̂ = v/(1-β2^t)) we sum:

- the elements where m or v is NaN/Inf (a resume from such a state re-poisons the run);
- Σm², Σv² (the RMS of the moments);
- elements with √v̂ < ε: updates dominated by Adam's epsilon (SIGNALS.md #9, Wortsman et al. 2023);
- elements with |u| > 0.9, u = m̂/(√v̂+ε): saturated, sign-like updates (SIGNALS.md #10, Molybog et al. 2023);
- Σ(u + wd·W)² and ΣW²: AdamW's next step moves W by lr·(u + wd·W), so
  update_ratio = lr·‖u + wd·W‖/‖W‖ is the per-step update-to-weight ratio (SIGNALS.md #12).

Elements where m, v or W are non-finite are counted and left out of the sums (`adam_sums` adds them up, chunk
by chunk). Skipped optimizer steps (fp16 overflows: the scaler skips `optimizer.step()`, so Adam's `step` stops)
are the trainer's global step minus the optimizer's.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from ..errors import UnreadableFile
from ..findings import number_or_null
from .adam_sums import SUMS, measure_parameter
from .blocks import block_of, module_of, module_sort_key
from .entries import WeightFile
from .layout import open_checkpoint
from .optimizer_file import MOMENTS, OptimizerFile, ParamGroup, optimizer_file_of
from .optimizer_names import NameMapping, exact_names, map_parameter_names
from .readers import open_weight_file
from .types import CheckpointRef
from .fanout import active_client
from .units import DEFAULT_CHUNK_BYTES, map_in_pool

BLOCK_COLUMNS = ["block", "elements", "nonfinite", "m_rms", "v_rms", "eps_dominated", "saturated", "update_ratio"]


@dataclass(frozen=True)
class OptimizerState:
    """What the optimizer state of one checkpoint holds, measured.

    Fields:
        file: the optimizer state file.
        step: the optimizer's own step count (the largest of its parameters'), None if not saved.
        trainer_step: the trainer's global step at the save (the checkpoint's), None if unknown.
        groups: the param groups as saved (lr, betas, eps, weight_decay).
        mapping: how indices were matched to parameter names.
        tensors: one row per parameter (index, name, block, the sums above and their ratios, and name_certain:
            False where the name, and so the weight its update_ratio and n_nonfinite_w were measured on, may be
            another's of the same shape; see `NameMapping.uncertain`).
        blocks: one row per block, or per module outside the blocks (BLOCK_COLUMNS).
        nonfinite_tensors: moments holding NaN/Inf, as `<parameter>.exp_avg` / `.exp_avg_sq`.
        problems: moments that could not be read, with why.
    """

    file: str
    step: int | None
    trainer_step: int | None
    groups: tuple[ParamGroup, ...]
    mapping: NameMapping
    tensors: pd.DataFrame
    blocks: pd.DataFrame
    nonfinite_tensors: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def skipped_steps(self) -> int | None:
        """Optimizer steps the trainer counted but Adam never took (fp16 overflow skips), or None."""
        if self.step is None or self.trainer_step is None:
            return None
        return max(self.trainer_step - self.step, 0)

    @property
    def moments_read(self) -> int:
        """Parameters whose two Adam moments were read and measured (none: an empty state, or one the
        reader refused, proves nothing about finiteness)."""
        return int(self.tensors["numel"].notna().sum()) if "numel" in self.tensors else 0

    @property
    def is_finite(self) -> bool | None:
        """False when a moment holds NaN/Inf; True when every moment read is finite; None when none was read."""
        if self.nonfinite_tensors:
            return False
        return True if self.moments_read else None

    def to_dict(self) -> dict[str, Any]:
        """The `optimizer` object of a checkpoint in `analyze --json`."""
        return {
            "file": self.file, "step": self.step, "skipped_steps": self.skipped_steps,
            "nonfinite_tensors": list(self.nonfinite_tensors),
            "mapping": self.mapping.to_dict(), "groups": [g.to_dict() for g in self.groups],
            "blocks": [{k: number_or_null(v) for k, v in row.items()} for row in self.blocks.to_dict("records")],
            "problems": list(self.problems),
        }


def read_optimizer_state(ref: CheckpointRef, chunk_bytes: int = DEFAULT_CHUNK_BYTES,
                         progress: Callable[[str], None] | None = None,
                         workers: int | None = None) -> OptimizerState | None:
    """Measure the optimizer state saved beside checkpoint `ref`; None when it has none.

    Parameters are measured in batches: in this process (whose sums use every core through BLAS), or
    as tasks on the Dask cluster of an enclosing `fanout.dask_scheduler` block. Raises UnreadableFile
    when the optimizer file cannot be read at all.
    """
    folder = ref.path if ref.path.is_dir() else ref.path.parent
    path = optimizer_file_of(folder)
    if path is None:
        return None
    opt = OptimizerFile(path)
    weight_files = _open_weights(ref.files)
    try:
        shapes = {e.name: e.shape for wf in weight_files for e in wf.entries if e.info is not None and e.info.is_float}
        mapping = _mapping(opt, shapes, folder, exact=False)  # exact names only where shown: see below
        problems = [f"{e.name}: {e.problem}" for e in opt.entries if e.problem]
    finally:
        opt.close()
        for wf in weight_files:
            wf.close()
    group_of = {i: g for g in opt.groups for i in g.params}
    batches = _batches(str(path), tuple(str(f) for f in ref.files), opt, mapping, group_of, chunk_bytes,
                       workers or os.cpu_count() or 1)
    done = [0]

    def report(rows: list) -> None:
        done[0] += len(rows)
        if progress:
            progress(f"optimizer state {done[0]} of {len(opt.params)}")

    # Locally one process: its float64 sums already run on every core through BLAS, and a process pool
    # on top of that was 2.6x slower (bench/optimizer.py). A Dask cluster of a --dask block spreads the
    # batches over machines.
    if active_client() is not None and batches:
        results = map_in_pool(measure_batch, batches, workers or os.cpu_count() or 1, on_result=report)
    else:
        results = []
        for batch in batches:
            results.append(measure_batch(batch))
            report(results[-1])
    rows = [row for batch in results for row in batch]
    tensors = _with_ratios(pd.DataFrame(rows, columns=["index", "name", "block", *SUMS]), group_of)
    mapping, tensors = _named_where_shown(opt, mapping, tensors, shapes, folder)
    tensors = _remeasured_where_renamed(tensors, rows, mapping, batches, group_of)
    steps = [p.step for p in opt.params.values() if p.step is not None]
    return OptimizerState(str(path), int(max(steps)) if steps else None, ref.step, opt.groups, mapping,
                          tensors, _per_block(tensors, group_of), _nonfinite_moments(tensors), problems)


@dataclass(frozen=True)
class OptimizerBatch:
    """Parameters of one optimizer file to measure in one task (picklable: files by path)."""

    path: str
    weight_files: tuple[str, ...]
    params: tuple[tuple[int, str | None, ParamGroup | None], ...]  # (index, name, group)
    chunk_bytes: int


def _batches(path: str, weight_files: tuple[str, ...], opt: OptimizerFile, mapping: NameMapping,
             group_of: dict, chunk_bytes: int, workers: int) -> list[OptimizerBatch]:
    """The parameters in batches of about equal bytes, a few per worker so that the slowest one matters less."""
    sizes = {i: sum(e.nbytes for e in (p.exp_avg, p.exp_avg_sq) if e is not None) for i, p in opt.params.items()}
    target = max(sum(sizes.values()) // max(4 * workers, 1), 1)
    out, current, held = [], [], 0
    for index in opt.params:
        current.append((index, mapping.names.get(index), group_of.get(index)))
        held += sizes[index]
        if held >= target:
            out.append(OptimizerBatch(path, weight_files, tuple(current), chunk_bytes))
            current, held = [], 0
    if current:
        out.append(OptimizerBatch(path, weight_files, tuple(current), chunk_bytes))
    return out


def measure_batch(batch: OptimizerBatch) -> list[dict]:
    """Rows (index, name, block, the sums) of one batch; opens its files itself, so it runs in any process."""
    opt = OptimizerFile(batch.path)
    weight_files = _open_weights(batch.weight_files)
    try:
        weights = {e.name: (wf, e) for wf in weight_files for e in wf.entries if e.info is not None and e.info.is_float}
        rows = []
        for index, name, group in batch.params:
            state = opt.params[index]
            weight = weights.get(name) if name else None
            rows.append({"index": index, "name": name or str(index), "block": module_of(name) if name else None,
                         **measure_parameter(opt, state, weight, group, batch.chunk_bytes)})
        return rows
    finally:
        opt.close()
        for wf in weight_files:
            wf.close()


def _mapping(opt: OptimizerFile, weights: dict[str, tuple[int, ...]], folder: Path, exact: bool = True) -> NameMapping:
    return map_parameter_names(_group_params(opt), _moment_shapes(opt), weights, folder, exact)


def _group_params(opt: OptimizerFile) -> list[tuple[int, ...]]:
    return [g.params for g in opt.groups] or [tuple(opt.params)]


def _moment_shapes(opt: OptimizerFile) -> dict[int, tuple[int, ...] | None]:
    return {i: p.shape for i, p in opt.params.items()}


def _nonfinite_moments(tensors: pd.DataFrame) -> list[str]:
    """`<parameter>.exp_avg` / `.exp_avg_sq` of the moments holding NaN/Inf."""
    return [f"{row.name}.{key}" for row in tensors.itertuples()
            for key, n in (("exp_avg", row.n_nonfinite_m), ("exp_avg_sq", row.n_nonfinite_v))
            if n and not math.isnan(n)]  # NaN: the moment was not read, which says nothing of its values


def _named_where_shown(opt: OptimizerFile, mapping: NameMapping, tensors: pd.DataFrame,
                       weights: dict[str, tuple[int, ...]], folder: Path) -> tuple[NameMapping, pd.DataFrame]:
    """Exact names (the model built from config.json: seconds) only when a non-finite moment is one whose name the
    shapes left uncertain: the report names those parameters; the block figures need no names."""
    bad = tensors[(tensors["n_nonfinite_m"] > 0) | (tensors["n_nonfinite_v"] > 0)]
    if mapping.uncertain and set(bad["index"]) & mapping.uncertain:
        mapping = exact_names(mapping, _group_params(opt), _moment_shapes(opt), weights, folder)
    return mapping, tensors.assign(name=tensors["index"].map(lambda i: mapping.names.get(i, str(i))),
                                   name_certain=~tensors["index"].isin(mapping.uncertain))


def _remeasured_where_renamed(tensors: pd.DataFrame, rows: list[dict], mapping: NameMapping,
                              batches: list[OptimizerBatch], group_of: dict) -> pd.DataFrame:
    """`tensors` with the rows the exact names renamed measured again: their update ratio and non-finite weights
    were measured on the weight of the name the shapes guessed, another parameter of the same shape."""
    renamed = tuple((row["index"], mapping.names[row["index"]], group_of.get(row["index"])) for row in rows
                    if mapping.names.get(row["index"], row["name"]) != row["name"])
    if not renamed:
        return tensors
    again = {row["index"]: row for row in measure_batch(replace(batches[0], params=renamed))}  # same files
    fresh = pd.DataFrame([again.get(row["index"], row) for row in rows], columns=["index", "name", "block", *SUMS])
    fresh = _with_ratios(fresh, group_of)
    return fresh.assign(name_certain=~fresh["index"].isin(mapping.uncertain))


def optimizer_names(opt: OptimizerFile) -> NameMapping:
    """Parameter names for an optimizer file from the checkpoint weights in its own folder."""
    folder = opt.path.parent
    try:
        files = open_checkpoint(folder).files
    except (UnreadableFile, OSError, ValueError):
        files = ()
    weight_files = _open_weights(files)
    try:
        weights = {e.name: e.shape for wf in weight_files for e in wf.entries if e.info is not None and e.info.is_float}
    finally:
        for wf in weight_files:
            wf.close()
    return _mapping(opt, weights, folder)


def _open_weights(paths) -> list[WeightFile]:
    """The weight files that open (W for the update ratio); the others are left out."""
    out = []
    for path in paths:
        try:
            out.append(open_weight_file(path))
        except UnreadableFile:
            continue  # the weight check reports it; the ratio is then unknown for its tensors
    return out


def _with_ratios(tensors: pd.DataFrame, group_of: dict[int, ParamGroup]) -> pd.DataFrame:
    out = tensors.copy()
    finite = out["numel"] - out["n_excluded"]
    out["m_rms"] = np.sqrt(out["sq_m"] / finite.where(finite > 0))
    out["v_rms"] = np.sqrt(out["sq_v"] / finite.where(finite > 0))
    corrected = out["n_corrected"].where(out["n_corrected"] > 0)
    out["eps_dominated"] = out["n_eps"] / corrected
    out["saturated"] = out["n_saturated"] / corrected
    lr = out["index"].map(lambda i: group_of[i].lr if i in group_of and group_of[i].lr is not None else math.nan)
    out["update_ratio"] = lr * np.sqrt(out["sq_update"]) / np.sqrt(out["sq_w"].where(out["sq_w"] > 0))
    return out


def _per_block(tensors: pd.DataFrame, group_of: dict[int, ParamGroup]) -> pd.DataFrame:
    """Sums per block, then the same ratios; the update ratio pools the blocks' params of one LR."""
    if tensors.empty or tensors["block"].isna().all():
        return pd.DataFrame(columns=BLOCK_COLUMNS)
    rows = []
    for block, part in tensors.dropna(subset=["block"]).groupby("block", sort=False):
        s = part[list(SUMS)].sum()
        finite = s["numel"] - s["n_excluded"]
        lrs = {group_of[i].lr for i in part["index"] if i in group_of}
        lr = lrs.pop() if len(lrs) == 1 else math.nan
        rows.append({
            "block": block, "elements": int(s["numel"]),
            "nonfinite": int(s["n_nonfinite_m"] + s["n_nonfinite_v"]),
            "m_rms": math.sqrt(s["sq_m"] / finite) if finite > 0 else math.nan,
            "v_rms": math.sqrt(s["sq_v"] / finite) if finite > 0 else math.nan,
            "eps_dominated": s["n_eps"] / s["n_corrected"] if s["n_corrected"] else math.nan,
            "saturated": s["n_saturated"] / s["n_corrected"] if s["n_corrected"] else math.nan,
            "update_ratio": lr * math.sqrt(s["sq_update"] / s["sq_w"]) if s["sq_w"] > 0 and lr == lr else math.nan,
        })
    frame = pd.DataFrame(rows, columns=BLOCK_COLUMNS)
    return frame.sort_values("block", key=lambda col: col.map(module_sort_key)).reset_index(drop=True)


def split_state(frame: pd.DataFrame, mapping: NameMapping) -> pd.DataFrame:
    """A scan frame of an optimizer file (rows named `<index>.<moment>`): `name` becomes the parameter's
    name (its index where the mapping has none), `state` the moment, and `block` follows the parameter."""
    out = frame.copy()
    pattern = r"^(?P<param>.+)\.(?P<state>" + "|".join(sorted(MOMENTS, key=len, reverse=True)) + r")$"
    parts = out["name"].str.extract(pattern)
    has = parts["param"].notna()
    names = {str(i): n for i, n in mapping.names.items()}
    out.loc[has, "name"] = parts.loc[has, "param"].map(lambda p: names.get(p, p))
    out.insert(out.columns.get_loc("name") + 1, "state", parts["state"].where(has, None))
    out["block"] = out["name"].map(block_of) if mapping.names else None
    return out
