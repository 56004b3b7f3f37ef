"""The report's tables as lists of plain string rows (the template only lays them out).

Every value here may come from a run's files; the template escapes it (autoescape), so these
functions only choose and format, never add markup.
"""
from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..analyzers.metrics import format_number
from ..checkpoints.blocks import block_of, block_sort_key
from ..config import CONSOLE_ACCUMULATION
from ..discover.run_layout import FILE_KINDS
from .notation import block_ranges, shown_path

MAX_ROWS = 1000      # findings / checkpoints / skipped rows shown; more are counted, not listed
WORST_TENSORS = 25
MAX_CHANGES = 25


def setting_text(value: Any, not_recorded: bool = False) -> str:
    """A configuration value of one run: "not recorded" where its files hold no setting of that kind, "not set"
    where they do but not this one (the default applies), a flag as yes/no.

    >>> setting_text(None, True), setting_text(None), setting_text(False), setting_text(1e-05)
    ('not recorded', 'not set', 'no', '1e-05')
    """
    if value is None:
        return "not recorded" if not_recorded else "not set"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return cell_text(value)


def cell_text(value: Any) -> str:
    """A cell: numbers short (NaN/Inf spelled out), None as empty, lists joined."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        return format_number(value)
    if isinstance(value, (list, tuple)):
        return ", ".join(cell_text(v) for v in value)
    if hasattr(value, "item"):  # numpy scalars
        return cell_text(value.item())
    return str(value)


def finding_rows(findings) -> list[dict[str, str]]:
    return [{"step": cell_text(f.step) + (f"-{f.end_step}" if f.end_step not in (None, f.step) else ""),
             "severity": f.severity, "kind": f.kind, "metric": cell_text(f.metric), "message": f.message,
             "abandoned": cell_text(f.abandoned), "caused_by": cell_text(f.caused_by)}
            for f in findings[:MAX_ROWS]]


def checkpoint_rows(checkpoints) -> list[dict[str, str]]:
    return [{"name": c.name, "step": cell_text(c.step), "status": c.status,
             "blocks": block_ranges(c.nonfinite_blocks) if c.nonfinite_blocks else "",
             "tensors": cell_text(len(c.nonfinite_tensors)) if c.nonfinite_tensors else "",
             "scan": "full" if c.full_scan else "quick", "reason": cell_text(c.reason), "path": str(c.ref.path)}
            for c in checkpoints[:MAX_ROWS]]


def cause_rows(causes) -> list[dict[str, Any]]:
    """One row per cause: title, confidence, every piece of evidence, the change to try."""
    return [{"title": c.title or c.cause, "cause": c.cause, "confidence": c.confidence,
             "evidence": list(c.evidence), "suggestion": c.suggestion} for c in causes]


# The configuration keys the report lists first: the ones the cause rules read.
CONFIG_KEYS = ("method", "learning_rate", "lr_scheduler_type", "warmup_steps", "warmup_ratio", "max_grad_norm",
               "fp16", "bf16", "logging_nan_inf_filter", "optim", "gradient_accumulation_steps", CONSOLE_ACCUMULATION,
               "model.model_type", "model.torch_dtype", "model.dtype", "model.num_hidden_layers", "n_params",
               "quant.load_in_4bit", "quant.bnb_4bit_use_double_quant", "adapter.peft_type", "adapter.r",
               "ds.fp16.enabled", "ds.bf16.enabled", "ds.communication_data_type", "ds.gradient_clipping",
               "ds.zero_optimization.stage", "state.loss_scale", "state.skipped_steps")


def config_rows(config) -> list[dict[str, str]]:
    """The run's configuration that matters for diagnosis: key, value, source, and whether sources disagree."""
    conflicts = config.conflicts()
    rows = []
    for key in CONFIG_KEYS:
        for i, seen in enumerate(config.values.get(key, [])):
            if i and key not in conflicts:
                break  # agreeing copies from other files add nothing
            rows.append({"key": key, "value": cell_text(seen.value), "source": seen.source,
                         "conflict": "sources disagree" if key in conflicts else ""})
    return rows


def skipped_rows(skipped) -> list[dict[str, str]]:
    return [{"path": s.path, "reason": s.reason, "note": s.note} for s in skipped[:MAX_ROWS]]


WORST_COLUMNS = ["name", "block", "dtype", "shape", "n_nan", "n_inf", "absmax", "fp16_headroom"]


def worst_tensor_rows(ckpt) -> list[dict[str, str]]:
    """The first bad checkpoint's worst tensors: most NaN/Inf first, then largest absmax."""
    if ckpt is None:
        return []
    if ckpt.stats is None or not len(ckpt.stats):
        # A quick check names the bad tensors only.
        return [{"name": name} for name in sorted(ckpt.nonfinite_tensors, key=block_sort_key)[:WORST_TENSORS]]
    stats = ckpt.stats
    bad = stats["n_nan"].fillna(0) + stats["n_inf"].fillna(0)
    order = stats.assign(_bad=bad, _abs=stats["absmax"].fillna(-math.inf)).sort_values(
        ["_bad", "_abs"], ascending=False, kind="stable")
    cols = [c for c in WORST_COLUMNS if c in stats.columns]
    return [{c: cell_text(row[c]) for c in cols} for _, row in order.head(WORST_TENSORS).iterrows()]


def layout_rows(layout) -> list[dict[str, str]]:
    """The files read, by kind (paths relative to the run folder where they lie inside it)."""
    if layout is None:
        return []
    rows = []
    for kind in FILE_KINDS:
        for path in getattr(layout, kind, [])[:MAX_ROWS]:
            rows.append({"kind": kind.replace("_", " "), "path": shown_path(path, layout.root)})
    return rows


# The columns of the bisect changes table a page can hold; the JSON keeps every column.
CHANGE_COLUMNS = {"tensor": "tensor", "block": "block", "rel_change": "change", "absmax_a": "absmax before",
                  "absmax_b": "absmax after", "n_nonfinite_b": "NaN/Inf after"}


def change_rows(changes: pd.DataFrame | None) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a bisect changes table (largest change first, as given), in six columns."""
    if changes is None or changes.empty:
        return [], []
    head = changes.head(MAX_CHANGES)
    cols = [c for c in CHANGE_COLUMNS if c in head.columns]
    rows = []
    for row in head[cols].itertuples(index=False):
        cells = dict(zip(cols, row))
        if "rel_change" in cells and cells.get("n_nonfinite_b"):
            cells["rel_change"] = "NaN/Inf"  # no finite relative change: say what happened
        rows.append([cell_text(cells[c]) if c != "block" or cells[c] else "-" for c in cols])
    return [CHANGE_COLUMNS[c] for c in cols], rows


def damaged_by_block(ckpt) -> list[dict[str, str]]:
    """The non-finite tensors of `ckpt` grouped by block: [{"block", "count", "tensors"}]."""
    if ckpt is None or not ckpt.nonfinite_tensors:
        return []
    groups: dict[str, list[str]] = {}
    for name in ckpt.nonfinite_tensors:
        groups.setdefault(block_of(name) or "(outside blocks)", []).append(name)
    return [{"block": b, "count": str(len(t)), "tensors": ", ".join(sorted(t, key=block_sort_key))}
            for b, t in sorted(groups.items(), key=lambda kv: block_sort_key(kv[0]))]

