"""Checkpoints: find them, check them for NaN/Inf, scan their tensors, diff them, bisect them.

    >>> from pathlib import Path
    >>> import forensics
    >>> from forensics.checkpoints import find_checkpoints, quick_check, scan_checkpoint
    >>> run = Path(forensics.__file__).parents[1] / "sample_runs" / "nan_masked"
    >>> refs = find_checkpoints(run)                    # [CheckpointRef], by step
    >>> [(r.name, r.step) for r in refs]
    [('checkpoint-20', 20), ('checkpoint-40', 40), ('checkpoint-60', 60)]
    >>> [quick_check(r).status for r in refs]           # "ok" | "nonfinite" | "bad" | "unreadable" | "empty"
    ['ok', 'nonfinite', 'nonfinite']
    >>> stats = scan_checkpoint(refs[-1])               # DataFrame, one row per tensor (SCAN_COLUMNS)
    >>> stats.loc[stats["n_nan"] > 0, "block"].unique().tolist()
    ['model.layers.1']

Module map: readers.py / safetensors_file.py / torch_file.py read weight files; dtypes.py and
stats.py turn raw bit chunks into stats; units.py spreads the work over processes; scan.py
checks one checkpoint; layout.py finds them; diff.py compares two; bisection.py is the pure
search for the first bad one (the bisect use case is the top-level `forensics.bisection`);
run_checks.py is what `analyze` calls (the findings about weights are `analyzers.weights`).
"""
from .._lazy import lazy_exports

# Imported on first use: `analyze` needs the scan, not diff or the bisect search.
_EXPORTS = {
    **dict.fromkeys(("BinarySearch", "candidates_between", "first_bad_in_full", "search_window"), ".bisection"),
    **dict.fromkeys(("block_of", "block_sort_key", "blocks_in_order", "strip_wrappers"), ".blocks"),
    **dict.fromkeys(("Criterion", "parse_criterion"), ".criterion"),
    **dict.fromkeys(("DIFF_COLUMNS", "diff_checkpoints", "diff_table"), ".diff"),
    **dict.fromkeys(("find_checkpoints", "open_checkpoint", "siblings_between"), ".layout"),
    "check_run_checkpoints": ".run_checks",
    **dict.fromkeys(("SCAN_COLUMNS", "quick_check", "scan_checkpoint", "scan_table"), ".scan"),
    **dict.fromkeys(("STATS_COLUMNS", "STATUSES", "CheckpointInfo", "CheckpointRef", "DeepSpeedCounters",
                     "TensorTable"), ".types"),
    "DEFAULT_CHUNK_BYTES": ".units",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "block_of", "block_sort_key", "blocks_in_order", "strip_wrappers",
    "find_checkpoints", "open_checkpoint", "siblings_between",
    "quick_check", "scan_checkpoint", "scan_table", "diff_table", "TensorTable", "DeepSpeedCounters",
    "check_run_checkpoints",
    "diff_checkpoints", "BinarySearch", "candidates_between", "first_bad_in_full", "search_window",
    "Criterion", "parse_criterion",
    "CheckpointRef", "CheckpointInfo",
    "STATS_COLUMNS", "SCAN_COLUMNS", "DIFF_COLUMNS", "STATUSES", "DEFAULT_CHUNK_BYTES",
]
