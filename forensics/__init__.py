"""forensics: explain, after the fact, why an LLM training or fine-tuning run broke.

The public API (the CLI is a thin shell over it):

    import forensics
    a = forensics.analyze("./output")      # Analysis: status, findings, timeline, checkpoints, causes
    t = forensics.load_timeline("./output")
"""
__version__ = "0.1.0"

from .analysis import Analysis, analyze, load_timeline  # noqa: E402
from .config import RunConfig, Thresholds  # noqa: E402
from .errors import ForensicsError, NoCheckpoints, NotARunDirectory, UnreadableFile  # noqa: E402
from .findings import Cause, Finding, Skipped  # noqa: E402
from .timeline import Timeline  # noqa: E402

__all__ = [
    "analyze", "load_timeline", "Analysis", "Timeline", "Finding", "Cause", "Skipped",
    "RunConfig", "Thresholds", "ForensicsError", "UnreadableFile", "NotARunDirectory", "NoCheckpoints",
    "__version__",
]
