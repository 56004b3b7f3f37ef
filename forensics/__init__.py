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
__version__ = "0.1.0"

from .analysis import Analysis, analyze, load_timeline  # noqa: E402
from .bisection import BisectResult, bisect  # noqa: E402
from .checkpoints import (  # noqa: E402
    CheckpointInfo, CheckpointRef, diff_checkpoints, find_checkpoints, quick_check, scan_checkpoint,
)
from .config import RunConfig, Thresholds  # noqa: E402
from .errors import ForensicsError, NoCheckpoints, NotARunDirectory, UnreadableFile  # noqa: E402
from .findings import Cause, Finding, Skipped  # noqa: E402
from .timeline import Timeline  # noqa: E402

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
