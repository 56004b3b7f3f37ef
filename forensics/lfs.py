"""Git LFS pointers: the few lines git leaves in place of a large file when a clone skipped LFS.

A run folder cloned from GitHub or the Hugging Face Hub without `git lfs pull` holds, for every
tracked file (model.safetensors, optimizer.pt, and often trainer_state.json or event files), a text
stub like::

    version https://git-lfs.github.com/spec/v1
    oid sha256:aa48...
    size 3856

Read as the real file it is "invalid JSON" or a "header length over the limit"; the true reason,
and what to do, is that the file was never downloaded.
"""
from __future__ import annotations

import re
from pathlib import Path

from .errors import UnreadableFile

_HEAD = b"version https://git-lfs.github.com/spec/"
_MAX_POINTER = 1024  # a pointer is about 130 bytes; the spec caps it under 1024
_SIZE = re.compile(rb"^size (\d+)\s*$", re.MULTILINE)


def lfs_pointer_reason(path) -> str | None:
    """What to say about `path` when it is a Git LFS pointer, or None when it is not one (or cannot be read)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_MAX_POINTER + 1)
    except OSError:
        return None
    if not head.startswith(_HEAD) or len(head) > _MAX_POINTER:
        return None
    size = _SIZE.search(head)
    real = f" of the real {int(size.group(1)):,}-byte file" if size else ""
    return (f"a Git LFS pointer{real}, not the file itself (the clone skipped LFS): fetch it with `git lfs pull` "
            f"in the repository, or download {Path(path).name} again")


def unreadable_reason(err: UnreadableFile) -> str:
    """The reason a file could not be read, saying so when it is an LFS pointer rather than the parser's complaint."""
    return lfs_pointer_reason(err.path) or err.reason
