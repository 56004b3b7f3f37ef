"""The fields of a pickled `TrainingArguments` (`training_args.bin`), read without executing it.

The reading itself (an unpickler that imports nothing) is `forensics.torchpickle`.
"""
from __future__ import annotations

from ..errors import UnreadableFile
from ..torchpickle import safe_unpickle_torch_file


def read_training_args(path) -> dict:
    """The fields of a pickled `TrainingArguments` (or subclass) as a plain dict.

    Enums come back as their values (`lr_scheduler_type='cosine'`), `torch.device` as its
    arguments, and the class name under `__class__`. Raises UnreadableFile when the file is
    not a pickled object with fields.
    """
    value = safe_unpickle_torch_file(path)
    if not isinstance(value, dict) or "__class__" not in value:
        raise UnreadableFile(path, "no pickled TrainingArguments object inside (found "
                                   f"{type(value).__name__})")
    return value
