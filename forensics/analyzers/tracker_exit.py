"""A W&B run that did not finish, as its own log says: the exit record's non-zero code and the console W&B captured
(ingest/wandb.py's meta `exit_code`, `console_exception`, `console_saved`). The loss curve alone cannot say it: it
simply ends. One `run_crashed` finding (crash.py's kind: a run a crash stopped) at the log's last logged step:

* stopped by hand (the console ends in `KeyboardInterrupt`; W&B records exit code 255 for it): a warning where the
  console shows no save, since what the run learned may be lost (480284856_RLHF_Training: coati's SFT stopped two
  logging windows before its end, its save after fit never ran); info where it shows one - stopping is the owner's
  choice and the work was kept (bdytx5_grokking: nanoGPT's `saving checkpoint to out-shakespeare-char`, then stopped);
* crashed (a non-zero exit whose console ends in an error): a warning naming it;
* a non-zero exit with no error in the console: a warning, cause unknown (a signal, a launcher's kill);
* a run that reached its planned end (its last step at max_steps, or train()'s closing summary logged) and exited
  non-zero after: info, a failure in teardown (saving, uploading, W&B's shutdown), not of the training.

Silent for exit code 0, and for a log with no exit record (None): a run still being written, or one killed before W&B
could write its end - the log does not say which, so it says nothing. Nor where another finding already says the run
crashed (its console read on its own, crash.py).
"""
from __future__ import annotations

import math

from ..findings import Finding
from ..timeline import Timeline
from .crash import OUT_OF_MEMORY_ADVICE, out_of_memory
from .cut_short import CLOSING_KEYS
from .metrics import Metrics

_BY_HAND = "KeyboardInterrupt"
_CHECK_SAVE = ("The log cannot say whether a checkpoint was written after its last save line or step: check the "
               "output folder before relying on one.")


def detect_unfinished_tracker_run(timeline: Timeline, metrics: Metrics, max_steps, findings: list[Finding]
                                  ) -> list[Finding]:
    """One `run_crashed` finding per W&B log whose exit record says it did not finish (module docstring), or []."""
    if any(f.kind == "run_crashed" for f in findings):
        return []
    plan = _planned_steps(max_steps)
    out = []
    for source, meta in timeline.meta.items():
        code = meta.get("exit_code")
        steps = timeline.frame.loc[timeline.frame["source"] == source, "step"]
        if isinstance(code, bool) or not isinstance(code, int) or code == 0 or steps.empty:
            continue
        last = int(steps.max())
        planned = _planned_end_reached(metrics, plan, last)
        finding = (_teardown(source, meta, last, planned) if planned else _unfinished(source, meta, last, plan))
        out.append(finding)
    return out


def _planned_steps(max_steps) -> int | None:
    """The run's planned max_steps where its config gives a finite positive number, else None."""
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, float)) or not math.isfinite(max_steps):
        return None
    return int(max_steps) if max_steps > 0 else None


def _planned_end_reached(metrics: Metrics, plan: int | None, last: int) -> str:
    """What says the run reached its planned end ('' where nothing does)."""
    if any(key in metrics for key in CLOSING_KEYS):
        return "train()'s closing summary is logged"
    if plan is not None and plan <= last:
        return f"its last step {last} is its planned max_steps {plan}"
    return ""


def _teardown(source: str, meta: dict, last: int, planned: str) -> Finding:
    ended = meta.get("console_exception")
    message = (f"the run reached its planned end ({planned}), then exited with code {meta['exit_code']}"
               f"{f' ({ended})' if ended else ''}: a failure after training (saving, uploading, W&B's shutdown), not "
               f"of the training. Check that the final model was written.")
    return Finding("run_crashed", "info", last, message, evidence=_evidence(source, meta, teardown=True))


def _unfinished(source: str, meta: dict, last: int, plan: int | None) -> Finding:
    code, ended, saved = meta["exit_code"], meta.get("console_exception"), meta.get("console_saved")
    of_plan = f" of its planned {plan}" if plan is not None and plan > last else ""
    where = f"after step {last}{of_plan}"
    kept = (f"its console's last save line is '{saved}'. " if saved else
            "its console shows no checkpoint or model saved, so what it learned may be lost. ")
    curve = f"The curve up to step {last} is what the run learned; it did not finish. "
    if ended and ended.startswith(_BY_HAND):
        message = f"the run was stopped by hand {where}: its W&B console ends in {ended}, exit code {code}; "
        severity = "info" if saved else "warning"
    elif ended:
        message = f"the run crashed {where}: {ended} (its W&B console's last error), exit code {code}; "
        severity = "warning"
        curve += OUT_OF_MEMORY_ADVICE.strip() + " " if out_of_memory(ended) else ""
    else:
        message = (f"the run exited with code {code} {where} and its W&B console does not say why: the cause is "
                   "unknown (a signal, a launcher's or scheduler's kill, an error printed elsewhere); ")
        severity = "warning"
    return Finding("run_crashed", severity, last, message + kept + curve + _CHECK_SAVE,
                   evidence=_evidence(source, meta, teardown=False))


def _evidence(source: str, meta: dict, teardown: bool) -> dict:
    return {"source": source, "exit_code": meta["exit_code"], "exception": meta.get("console_exception"),
            "saved_line": meta.get("console_saved"), "after_planned_end": teardown,
            "out_of_memory": out_of_memory(meta.get("console_exception") or "")}
