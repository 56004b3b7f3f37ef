"""The steps of a console's loss-scaler lines, which print none: DeepSpeed's, apex's and DLLogger's overflow and
at-minimum lines.

`deepspeed_steps(events, train_total)` dates each by the training bar, the step lines or DeepSpeed's progress lines
around it. (The Trainer's dicts are dated in `console_steps`.)
"""
from __future__ import annotations

from .console_scan import AT_STEP_LINE
from .console_steps import restarting_totals


def deepspeed_steps(events: list[tuple], train_total: int | None) -> dict[int, int]:
    """Step of each overflow / at-minimum event: apex's and DLLogger's at the script's step line after it (else before
    it); others
    at the training bar n + 1, else the next training step
    line (Megatron-DeepSpeed prints the overflow during the iteration that line then reports; a
    script logging every N batches prints it during the batches that line then covers), else the
    nearest DeepSpeed `step=N` line (before or after), else the running count."""
    targets = [i for i, e in enumerate(events) if e[0] in ("overflow", "at_minimum")]
    if not targets:
        return {}
    progress = [i for i, e in enumerate(events) if e[0] == "ds_step"]
    iteration_after = _next_training_step(events)
    bar_n, bar_at = None, {}
    # with no training bar known, a bar drawn anew each time (`2/2` then `0/2`: loading checkpoint shards, a dataset
    # map) counts something else: its reading dated every overflow of gouqi666_deep-speed-chat's PPO at step 3
    loops = restarting_totals(events) if train_total is None else set()
    for i, event in enumerate(events):
        if event[0] == "bar" and (train_total is None or event[2] == train_total) and event[2] not in loops:
            bar_n = event[1]
        bar_at[i] = bar_n
    line_before, last = {}, None
    for i, event in enumerate(events):
        if event[0] == "line" and not event[1].metrics[0][0].startswith("eval_") and event[1].kind not in _EPOCH_LINES:
            last = event[1].step
        line_before[i] = last
    out = {}
    for count, i in enumerate(targets, 1):
        said = iteration_after.get(i) if iteration_after.get(i) is not None else line_before[i]
        if events[i][-1] == AT_STEP_LINE and said is not None:
            # apex's scaler prints inside the optimizer step of a script that prints its own step lines (NVIDIA's BERT:
            # `Step:338 ...`); a bar on the same line counts micro-batches (`Iteration: 5683/11037`), not steps
            out[i] = said
        elif bar_at[i] is not None:
            out[i] = bar_at[i] + 1
        elif iteration_after.get(i) is not None:
            out[i] = iteration_after[i]
        elif progress:
            nearest = min(progress, key=lambda p: abs(p - i))
            out[i] = events[nearest][1]
        else:
            out[i] = count
    return out


def _next_training_step(events: list[tuple]) -> dict[int, int | None]:
    """For each event index, the step of the first training step line (not an eval line) after it (or None)."""
    out: dict[int, int | None] = {}
    step = None
    for i in range(len(events) - 1, -1, -1):
        out[i] = step
        event = events[i]
        if event[0] == "line" and not event[1].metrics[0][0].startswith("eval_") and event[1].kind not in _EPOCH_LINES:
            step = event[1].step
    return out


# Lines printed once an epoch or evaluation, not once a step: no overflow belongs to the step they are put at
_EPOCH_LINES = ("dschat_sft", "dschat_rm", "dschat_dpo")
