"""forensics: explain, after the fact, why an LLM training or fine-tuning run broke.

The public API for scripts and notebooks; the CLI is a thin shell over it. Nothing here prints
or needs click, and torch is imported only to read .bin/.pt weights. What comes back:

    analyze(path)              Analysis: status, first_incident, findings, timeline, checkpoints, causes
    load_timeline(path)        Timeline: every logged scalar (.frame long, .wide() step x metric)
    scan_checkpoint(path)      DataFrame, one row per tensor (n_nan, n_inf, absmax, ..., block)
    diff_checkpoints(a, b)     DataFrame, one row per tensor (rel_change, became_nonfinite, ...)
    bisect(a, b)               BisectResult: last_good, first_bad, changes, the window's findings
    quick_check(path)          CheckpointInfo: is one checkpoint finite?
    find_checkpoints(path)     [CheckpointRef] of a run folder, by step

Errors are ForensicsError > UnreadableFile, NotARunDirectory, NoCheckpoints. In a notebook,
Analysis, Timeline, BisectResult and `Analysis.checkpoints` show themselves as HTML.

A walk through a shipped sample run that breaks (`sample_runs/` is in the source checkout):

>>> from pathlib import Path
>>> import forensics
>>> run = Path(forensics.__file__).parents[1] / "sample_runs" / "nan_masked"
>>> a = forensics.analyze(run)
>>> a.status, a.first_incident.kind, a.first_incident.step
('broken', 'nonfinite_metric', 35)
>>> window = a.timeline.wide().loc[25:45, ["loss", "grad_norm"]]    # NaN/Inf kept as data
>>> window["grad_norm"].isna().tolist(), window["loss"].tolist()[2:]
([False, False, True, True, True], [0.0, 0.0, 0.0])
>>> a.checkpoints.frame[["name", "step", "status"]].values.tolist()
[['checkpoint-20', 20, 'ok'], ['checkpoint-40', 40, 'nonfinite'], ['checkpoint-60', 60, 'nonfinite']]
>>> stats = forensics.scan_checkpoint(run / "checkpoint-40")
>>> stats.groupby("block")["n_nan"].sum().to_dict()
{'model.layers.0': 0, 'model.layers.1': 9344}
>>> changes = forensics.diff_checkpoints(run / "checkpoint-20", run / "checkpoint-40")
>>> sorted(changes.loc[changes["became_nonfinite"], "block"].unique())
['model.layers.1']
>>> r = forensics.bisect(run / "checkpoint-20", run / "checkpoint-60")
>>> r.last_good.name, r.first_bad.name, r.first_bad.nonfinite_blocks
('checkpoint-20', 'checkpoint-40', ['model.layers.1'])
>>> type(a.plot()).__name__
'Figure'
"""
from ._lazy import lazy_exports
from ._version import __version__

# Public names and the module that defines each. They are imported on first use (PEP 562), so
# `import forensics`, `forensics --version` and `--help` stay fast: pandas, numpy and matplotlib
# load only when an analysis is asked for.
_EXPORTS = {
    "analyze": ".analysis", "load_timeline": ".analysis", "Analysis": ".analysis",
    "bisect": ".bisection", "BisectResult": ".bisection",
    "CheckpointInfo": ".checkpoints", "CheckpointRef": ".checkpoints",
    "diff_checkpoints": ".checkpoints", "find_checkpoints": ".checkpoints", "quick_check": ".checkpoints",
    "scan_checkpoint": ".checkpoints",
    "RunConfig": ".config", "Thresholds": ".config",
    "ForensicsError": ".errors", "NoCheckpoints": ".errors", "NotARunDirectory": ".errors", "UnreadableFile": ".errors",
    "Cause": ".findings", "Finding": ".findings", "Skipped": ".findings",
    "Timeline": ".timeline",
    "compare": ".compare", "Comparison": ".compare", "RunProfile": ".profile",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    # functions
    "analyze", "load_timeline", "bisect", "scan_checkpoint", "diff_checkpoints", "quick_check", "find_checkpoints",
    # result types
    "Analysis", "Timeline", "Finding", "Cause", "Skipped", "RunConfig", "Thresholds",
    "CheckpointInfo", "CheckpointRef", "BisectResult",
    # errors
    "ForensicsError", "UnreadableFile", "NotARunDirectory", "NoCheckpoints",
    "__version__",
]
