"""The checkpoint side of `analyze`: check every checkpoint of a run and measure the ones that matter.

`check_run_checkpoints` quick-checks each checkpoint (listing every non-finite tensor), then
adds full per-tensor stats to the last good, the first bad and the final one. Judging them
(Findings) is `analyzers.weights`.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Callable

from ..config import Thresholds
from ..errors import UnreadableFile, os_reason
from ..findings import Skipped
from .criterion import Criterion
from .layout import find_checkpoints
from .optimizer_file import optimizer_file_of
from .optimizer_stats import OptimizerState, read_optimizer_state
from ..torchpickle import read_deepspeed_counters
from .scan import quick_check, scan_checkpoint
from .types import CheckpointInfo, DeepSpeedCounters, first_bad_of, last_good_before_of

Progress = Callable[[str], None]


def check_run_checkpoints(layout, thresholds: Thresholds, workers: int | None = None,
                          progress: Progress | None = None) -> tuple[list[CheckpointInfo], list[Skipped]]:
    """Check every checkpoint of a run (a RunLayout or a folder); returns (infos by step, skipped files).

    Unreadable checkpoints come back with status "unreadable" and each bad file as a Skipped.
    DeepSpeed counters (skipped_steps, global_steps, ...) go to `info.deepspeed`, the measured
    optimizer state (HF Trainer's optimizer.pt) to `info.optimizer`.
    """
    criterion = Criterion(thresholds.absmax_bound)
    infos, skipped = [], []
    refs = find_checkpoints(layout)
    for i, ref in enumerate(refs, 1):
        if progress:
            progress(f"checking checkpoint {i} of {len(refs)}: {ref.name}")
        info = quick_check(ref, criterion, stop_at_first=False, workers=workers)
        skipped += info.unreadable_files
        counters, problems = _deepspeed_counters(ref)
        skipped += problems
        infos.append(replace(info, deepspeed=counters))
    infos = _with_optimizer_states(infos, thresholds, workers, progress, skipped)
    worth = _worth_full_stats(infos)
    scanned = {id(info): _with_full_stats(info, f"{i} of {len(worth)}", workers, progress)
               for i, info in enumerate(worth, 1)}
    return [scanned.get(id(info), info) for info in infos], skipped


def _with_optimizer_states(infos: list[CheckpointInfo], thresholds: Thresholds, workers: int | None,
                           progress: Progress | None, skipped: list[Skipped]) -> list[CheckpointInfo]:
    """`infos` with their measured optimizer states: every checkpoint's while all of them together stay
    within `thresholds.optimizer_read_budget` bytes, else only those of the checkpoints that matter most
    (last good, first bad, final), with a note of the others left unread."""
    files = {id(i): optimizer_file_of(i.ref.path if i.ref.path.is_dir() else i.ref.path.parent) for i in infos}
    sizes = {k: _size(f) for k, f in files.items() if f is not None}
    chosen = {id(i) for i in infos}
    if sum(sizes.values()) > thresholds.optimizer_read_budget:
        chosen = {id(i) for i in _worth_full_stats(infos)}
        left = [i.name for i in infos if id(i) in sizes and id(i) not in chosen]
        if left:
            skipped.append(Skipped(str(infos[0].ref.path.parent), (
                f"optimizer states of {len(left)} checkpoints not measured ({sum(sizes.values()) >> 30} GiB in all, "
                f"over the {thresholds.optimizer_read_budget >> 30} GiB budget): {', '.join(left[:5])}"
                + (" ..." if len(left) > 5 else ""))))
    out = []
    for info in infos:
        if id(info) not in sizes or id(info) not in chosen:
            out.append(info)
            continue
        optimizer, problem = _optimizer_state(info.ref, progress, workers)
        if problem:
            skipped.append(problem)
        out.append(replace(info, optimizer=optimizer, optimizer_problem=problem.reason if problem else None))
    return out


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _with_full_stats(info: CheckpointInfo, count: str, workers: int | None,
                     progress: Progress | None) -> CheckpointInfo:
    """`info` with the per-tensor stats of a full scan; unchanged when it cannot be read."""
    if progress:
        progress(f"scanning checkpoint {count}: {info.name}")
    try:
        return replace(info, stats=scan_checkpoint(info.ref, workers=workers), full_scan=True)
    except UnreadableFile:
        return info  # already reported by the quick check


def _worth_full_stats(infos: list[CheckpointInfo]) -> list[CheckpointInfo]:
    """The last good, the first bad (NaN/Inf, then over the bound) and the final checkpoint (each once).

    First bad and last good are chosen by the same rule the findings and the report use.
    """
    first_bad = first_bad_of(infos)
    over_bound = next((i for i in infos if i.status == "bad"), None)
    last_good = last_good_before_of(infos, first_bad)
    final = next((i for i in reversed(infos) if i.status in ("ok", "nonfinite", "bad")), None)
    chosen = []
    for info in (last_good, first_bad, over_bound, final):
        if info is not None and all(info is not c for c in chosen):
            chosen.append(info)
    return chosen


def _deepspeed_counters(ref) -> tuple[DeepSpeedCounters | None, list[Skipped]]:
    """Counters of the checkpoint's DeepSpeed model_states (rank 0 first), and unreadable ones."""
    paths = ref.aux_files or (ref.files if ref.kind == "deepspeed" else ())
    for path in sorted(paths, key=lambda p: Path(p).name):
        try:
            counters = read_deepspeed_counters(path)
        except UnreadableFile as err:
            return None, [Skipped(err.path, err.reason)]
        except OSError as err:
            return None, [Skipped(str(path), os_reason(err))]
        if counters:
            return DeepSpeedCounters.from_counters(counters, str(path)), []
    return None, []


def check_with_optimizer(ref, criterion: Criterion | None = None, workers: int | None = None) -> CheckpointInfo:
    """A quick check of `ref` and, where its weights read finite, the optimizer state saved beside it
    (a resume loads that too): the probe of `bisect`, measuring what `check_run_checkpoints` measures."""
    info = quick_check(ref, criterion, workers=workers)
    folder = ref.path if ref.path.is_dir() else ref.path.parent
    if info.status != "ok" or optimizer_file_of(folder) is None:
        return info
    optimizer, problem = _optimizer_state(ref, None, workers)
    return replace(info, optimizer=optimizer, optimizer_problem=problem.reason if problem else None)


def _optimizer_state(ref, progress: Progress | None,
                     workers: int | None) -> tuple[OptimizerState | None, Skipped | None]:
    """The measured optimizer state beside the checkpoint (None without one), or why it cannot be read."""
    try:
        state = read_optimizer_state(ref, progress=progress, workers=workers)
    except UnreadableFile as err:
        return None, Skipped(err.path, err.reason)
    except OSError as err:
        return None, Skipped(str(ref.path), os_reason(err))
    if state is not None and state.is_finite is None:  # nothing read proves nothing: said, never taken as finite
        return state, Skipped(state.file, "holds no Adam moments that could be read (an empty state, or entries "
                                          "the safe reader refused): not checked for NaN/Inf")
    return state, None
