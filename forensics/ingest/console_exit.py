"""The line a console's process printed as it exited, where the console ends with one (`exit_line`).

Python's multiprocessing resource tracker outlives the program it serves: where that program's interpreter goes away
with semaphores or shared memory still held (a job stopped by a signal, a script that never closed its workers), the
tracker warns `resource_tracker: There appear to be N leaked semaphore objects to clean up at shutdown` as it cleans
up. A console that ENDS with that warning (nothing after it but its own `warnings.warn(` source line) was written up
to its process's end: not a file copied part-way through a run that went on (RoyK0108_amc-tutor-study: mlx_lm.lora's
`Iter 320` of 600, then the warning, and nothing more). A warning with lines after it was some worker's, mid-run.
"""
from __future__ import annotations

import re

_SHUTDOWN = re.compile(r"resource_tracker: There appear to be \d+ leaked \w+ objects to clean up at shutdown")
# the source line Python's warnings module prints under the warning (`  warnings.warn('resource_tracker: ...`)
_WARNING_SOURCE = re.compile(r"^\s+warnings\.warn\(")


def exit_line(text: str) -> str | None:
    """The resource tracker's shutdown warning that ends `text` (the last of them, from `resource_tracker:` on), or
    None where the console ends otherwise."""
    if "at shutdown" not in text:
        return None
    last = None
    for line in reversed(text.rstrip().splitlines()[-200:]):
        said = _SHUTDOWN.search(line)
        if said:
            last = last or said.group(0)
        elif not _WARNING_SOURCE.match(line) and line.strip():
            break
    return last


# mlx_lm.lora's banner states the iterations it runs, a command line's `--iters` over its YAML's included
_MLX_PLAN = re.compile(r"^Starting training\.\.\., iters: (\d+)\s*$", re.MULTILINE)


def planned_iters(text: str) -> int | None:
    """The iterations mlx_lm.lora's `Starting training..., iters: N` banner says the run is to take (the last such
    banner's), or None: the console's own plan, ahead of any config file beside it (a CLI override)."""
    said = _MLX_PLAN.findall(text[:200_000])
    return int(said[-1]) if said else None
