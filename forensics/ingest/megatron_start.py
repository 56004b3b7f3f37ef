"""Where a Megatron console's weights start, as its `load_checkpoint` says (megatron/training/checkpointing.py, and
Megatron-DeepSpeed's megatron/checkpointing.py before it).

With `--load` given, Megatron prints ` loading checkpoint from DIR at iteration N` (` loading release checkpoint from
DIR` for a release checkpoint), then `  successfully loaded checkpoint from DIR at iteration N` (newer releases put
`[ t T, p P ]` before `at`). Iteration 0 is a start from weights trained elsewhere: a release checkpoint, a
`--finetune` load (both reset the iteration to 0), or one converted from another framework and saved at step 0
(inkcherry_Megatron-DeepSpeed: llama-7b-mega-ds-T2P2D2-from_hf); iteration N > 0 is the same run taken up again. Where
the directory holds no tracker file it prints `WARNING: could not find the metadata file ...` and `will not load any
checkpoints and will start from random`: random weights (the corpus's bigscience and nanotron pre-training consoles).
"""
from __future__ import annotations

import re

from .console_text import line_at

KEY = "megatron_weights_start"  # LogRecords.meta key: {"loaded": bool, "iteration": int | None, "line": str}

_LOADED = re.compile(r"successfully loaded checkpoint from \S+(?: \[[^\]\n]*\])? at iteration (\d+)")
_RELEASE = re.compile(r"loading release (?:distributed )?checkpoint from \S+")
_RANDOM = re.compile(r"will not load any checkpoints and will start from random")


def weights_start(text: str) -> dict | None:
    """What the console's first load says of the weights it trains (module docstring), or None where it says
    nothing: `loaded` (trained weights read) with the `iteration` they were read at (0 for a release), or not
    (random)."""
    found = [m for m in (_LOADED.search(text), _RELEASE.search(text), _RANDOM.search(text)) if m]
    if not found:
        return None
    first = min(found, key=lambda m: m.start())
    line = line_at(text, first.start()).strip()[:200]
    if first.re is _RANDOM:
        return {"loaded": False, "iteration": None, "line": line}
    return {"loaded": True, "iteration": int(first.group(1)) if first.re is _LOADED else 0, "line": line}
