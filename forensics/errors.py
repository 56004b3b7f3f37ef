"""The one exception tree of forensics.

The library raises these; only the CLI turns them into one-line messages. Errors of the
libraries we call (json, struct, protobuf, safetensors, torch) are wrapped where a file is
read, so a caller never has to know which parser failed.
"""
from __future__ import annotations


def os_reason(err: OSError) -> str:
    """An OSError as a short lower-case reason ("no such file or directory", "permission denied")."""
    return (err.strerror or str(err)).lower()


class ForensicsError(Exception):
    """Base class of every error forensics raises on purpose."""


class UnreadableFile(ForensicsError):
    """A file could not be read or parsed; `path` names it and `reason` says why."""

    def __init__(self, path, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class NotARunDirectory(ForensicsError):
    """The path holds nothing forensics knows how to read."""

    def __init__(self, path, reason: str = "no training logs or checkpoints found"):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class NoCheckpoints(ForensicsError):
    """A checkpoint operation found no checkpoint to work on."""

    def __init__(self, path, reason: str = "no checkpoint found"):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class BadOption(ForensicsError, ValueError):
    """An option's value is not one forensics understands (the message lists what it accepts)."""


class BadOutputPath(ForensicsError):
    """A file forensics was asked to write cannot be written there; checked before any work is done."""

    def __init__(self, path, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class SchedulerUnreachable(ForensicsError):
    """The Dask scheduler given with --dask cannot be used; `reason` says why."""

    def __init__(self, address: str, reason: str):
        self.address = address
        self.reason = reason
        super().__init__(f"cannot use the Dask scheduler {address}: {reason}")


class SeveralRuns(ForensicsError):
    """The folder holds several runs of one experiment tracker (W&B, MLflow) and nothing says which.

    `runs` are the runs (TrackerRun), `labels` how each is named in the message.
    """

    def __init__(self, path, runs, labels: list[str]):
        self.path = str(path)
        self.runs = list(runs)
        shown = ", ".join(labels[:8]) + (", ..." if len(labels) > 8 else "")
        super().__init__(f"{self.path}: {len(labels)} tracker runs ({shown}); name one with --run ID_OR_NAME")


class NoSuchRun(ForensicsError):
    """`--run` names no run of the folder's experiment trackers; the message lists the runs there are."""

    def __init__(self, path, selector: str, labels: list[str]):
        self.path = str(path)
        self.selector = selector
        shown = ", ".join(labels[:8]) + (", ..." if len(labels) > 8 else "")
        super().__init__(f"{self.path}: no run named {selector!r}; the runs here: {shown}")
