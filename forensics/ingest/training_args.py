"""The fields of a pickled `TrainingArguments` (`training_args.bin`), read without executing it.

The reading itself (an unpickler that imports nothing) is `forensics.torchpickle`. Some older trainers
(LLaMA-Factory's early releases) wrote the arguments' JSON under the same name: that is read as JSON.
"""
from __future__ import annotations

from ..errors import UnreadableFile
from ..torchpickle import safe_unpickle_torch_file
from ._jsonfile import read_json_object


def read_training_args(path) -> dict:
    """The fields of a pickled `TrainingArguments` (or subclass) as a plain dict.

    Enums come back as their values (`lr_scheduler_type='cosine'`), `torch.device` as its
    arguments, and the class name under `__class__`. Raises UnreadableFile when the file is
    not a pickled object with fields.
    """
    if _is_json_text(path):
        args = read_json_object(path)
        if "output_dir" not in args:  # every TrainingArguments has one; a model's config.json has none
            raise UnreadableFile(path, "JSON text without TrainingArguments' fields (no output_dir): not training "
                                       "arguments")
        return args
    value = safe_unpickle_torch_file(path)
    if not isinstance(value, dict) or "__class__" not in value:
        raise UnreadableFile(path, "no pickled TrainingArguments object inside (found "
                                   f"{type(value).__name__})")
    return value


def _is_json_text(path) -> bool:
    """The file starts with `{` (blanks aside): TrainingArguments.to_json_string() saved under the .bin name."""
    try:
        with open(path, "rb") as fh:
            return fh.read(64).lstrip().startswith(b"{")
    except OSError:
        return False  # the pickle reader says what is wrong with the file
