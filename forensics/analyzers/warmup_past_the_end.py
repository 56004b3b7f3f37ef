"""A warm-up as long as the run or longer: one `lr_anomaly` warning where the configured warm-up outlasted a run that
ran its plan, its rate still climbing at the end (`detect_warmup_past_the_end`, called with the run's configuration
by `run_findings`)."""
from __future__ import annotations

import numpy as np

from ..findings import Finding
from .metrics import LR, Metrics, finite, format_number


_FINISHED_EPOCHS = 0.99  # a log whose last epoch is this share of the planned epochs or more ran its whole plan


def _whole(value) -> int | None:
    """A configured step count as a whole number: an int, a numpy integer, a float with no fraction or a string of
    digits (a YAML or a tracker's config writes them so); else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = value.strip()
        return int(value) if value.isdigit() else None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and np.isfinite(value) and float(value).is_integer():
        return int(value)
    return None


def detect_warmup_past_the_end(metrics: Metrics, warmup_steps, max_steps, num_train_epochs) -> list[Finding]:
    """One `lr_anomaly` warning where the configured warm-up (`warmup_steps`) is as long as the whole run or longer,
    which ran its plan to the end (its last logged step within a logging interval of `max_steps`, or its last epoch
    `num_train_epochs`), and the logged rate was still climbing at its last point: the run never trained at its
    configured rate and its decay never began (ShiboJin's Qwen2-1.5B LoRA: warmup_steps 100, 84 steps in its 3 epochs,
    8.3e-06 of 1e-05 at the end; a warm-up of exactly max_steps climbs to the second-last step and drops to 0 at the
    last). A log cut short before its plan ended, or a rate that levelled off, is not this. Else []."""
    lr = finite(metrics[LR]) if LR in metrics else None
    warmup_steps, max_steps = _whole(warmup_steps), _whole(max_steps)
    if lr is None or len(lr) < 3 or warmup_steps is None:
        return []
    last_step, values = int(lr.index[-1]), lr.to_numpy()
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
    every = int(np.median(np.diff(lr.index.to_numpy())))
    ran_its_plan = (max_steps is not None and 0 < max_steps < last_step + max(every, 1)) or (
        isinstance(num_train_epochs, (int, float)) and num_train_epochs > 0 and epochs is not None and len(epochs)
        and float(epochs.iloc[-1]) >= _FINISHED_EPOCHS * num_train_epochs)
    # the run's length: its planned max_steps where it ran its plan (the last step may not be a logged one)
    length = max_steps if ran_its_plan and max_steps is not None and max_steps > last_step else last_step
    if warmup_steps == length and len(values) > 3 and values[-1] == 0.0:
        values = values[:-1]  # a warm-up as long as the run: the linear decay's one step ends at 0 on the last step
    if warmup_steps < length or not ran_its_plan or values[-1] < values.max() or values[-1] <= values[0]:
        return []
    longer = "is longer than" if warmup_steps > length else "is as long as"
    top = int(lr.index[len(values) - 1])
    message = (f"warmup_steps {warmup_steps} {longer} the run's {length} steps: the learning rate was still "
               f"rising at the end ({format_number(float(values[-1]))} at step {top}) and its decay never "
               "began, so the run never trained at its configured rate. Set the warm-up as a share of the run "
               "(warmup_ratio 0.03 to 0.1) or train longer.")
    return [Finding("lr_anomaly", "warning", int(lr.index[0]), message, end_step=last_step, metric=LR,
                    evidence={"warmup_steps": warmup_steps, "last_step": last_step, "last_lr": float(values[-1])})]
