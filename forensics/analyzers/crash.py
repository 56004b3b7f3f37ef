"""What a console's own lines say that its logged numbers do not: a crash, and non-finite values it never logged.

* A run a crash stopped: the GPU out of memory, a CUDA fault or NCCL, after the log's last training step. A
  checkpoint saved before it is unaffected; the run did not finish, which the loss curve alone cannot say (it simply
  ends). A warning at the last logged step of the log that holds the crash, with what to change for an
  out-of-memory error (ingest.stdout `console_crash`). Where the loop has no planned end (the TF seq2seq tutorial's
  `while True`), the shell's `Killed` is how it stops: an info finding, not a warning. Where the console printed
  train()'s closing summary at its last step, the training finished and the crash came in what the script ran next
  (a merge, an export): an info finding too, the status the training's own.
* tensorboardX's `NaN or Inf found in input tensor.`, printed where a value handed to its writer was non-finite,
  in a log whose own numbers are all finite: some metric the console does not show (most often a grad_norm, the
  Trainer's notebook table holds the loss alone) went NaN or Inf. A warning by the log's last step: the console
  cannot say which metric or when (Kosmasu's Gemma QLoRA notebook: one such line among 2,770 finite losses).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..findings import Finding
from ..ingest.console_lines.tf_seq2seq import OPEN_ENDED_KEY
from ..ingest.console_warnings import LAUNCHER_KILLED
from ..timeline import Timeline
from .cut_short import CLOSING_KEYS


def detect_crash(timeline: Timeline) -> list[Finding]:
    """One `run_crashed` finding per console log that ends in a crash, or []: a warning, or info where a loop with no
    planned end (`OPEN_ENDED_KEY`) was killed from outside, the only way such a run ends."""
    findings = []
    for source, meta in timeline.meta.items():
        crash = meta.get("console_crash")
        steps = timeline.frame.loc[timeline.frame["source"] == source, "step"]
        if timeline.frame.empty:
            findings += _stopped_before_a_metric(source, meta)
        if not crash or steps.empty:
            continue
        last = int(steps.max())
        if meta.get(OPEN_ENDED_KEY) and _stopped_from_outside(crash):
            findings.append(_open_ended_stop(source, last, crash, meta[OPEN_ENDED_KEY]))
            continue
        if _trained_to_the_end(timeline, source, last):
            findings.append(_after_training(source, last, crash))
            continue
        memory = out_of_memory(crash)
        advice = (OUT_OF_MEMORY_ADVICE if memory else
                  _KILLED_ADVICE if _stopped_from_outside(crash) else
                  " Resume from the last checkpoint once the cause is fixed.")
        message = (f"the run stopped after step {last}: {crash}. It did not finish; a checkpoint saved before the "
                   f"crash is unaffected by it.{advice}")
        findings.append(Finding("run_crashed", "warning", last, message,
                                evidence={"source": source, "exception": crash, "out_of_memory": memory}))
    return findings


def _stopped_from_outside(crash: str) -> bool:
    """Whether the crash line is the shell's `Killed` or DeepSpeed's launcher's SIGKILL (a signal from outside the
    program), not an error it raised."""
    return (crash.startswith(_KILLED_BY_SHELL) and "Killed" in crash) or (
        crash.startswith(LAUNCHER_KILLED) and "SIGKILL" in crash)


def _open_ended_stop(source: str, last: int, crash: str, loop: str) -> Finding:
    """An info `run_crashed`: a run whose loop has no planned end was stopped from outside, the only way it ends; what
    it saved by its last logged block is its product (only the steps since are lost)."""
    message = (f"the run was stopped after step {last}: {crash}. Its training loop has no planned end ({loop}), so "
               f"being killed is how it ends: the checkpoint of its last logged step is what it made, only the "
               f"steps after it are lost.")
    return Finding("run_crashed", "info", last, message,
                   evidence={"source": source, "exception": crash, "out_of_memory": False, "open_ended_loop": True})


def _trained_to_the_end(timeline: Timeline, source: str, last: int) -> bool:
    """Whether the console printed train()'s closing summary (`train_runtime` and kin) at its last logged step: train()
    returned, so a crash after it came in what the script ran next (a merge, an export, an evaluation)."""
    rows = timeline.frame[(timeline.frame["source"] == source) & timeline.frame["metric"].isin(CLOSING_KEYS)]
    return not rows.empty and int(rows["step"].max()) >= last


def _after_training(source: str, last: int, crash: str) -> Finding:
    """An info `run_crashed`: the training finished, then a later stage of the same script stopped (andres-villavicencio
    smallville-agents: 'Training complete!', the adapter saved, then CUDA out of memory exporting to GGUF)."""
    memory = out_of_memory(crash)
    redo = (" If that stage's output is needed, run it again on its own with the GPU's memory free (load the saved "
            "model in a fresh process)." if memory else "")
    message = (f"the training finished at step {last} (train()'s closing summary was printed), then what the script "
               f"ran after it stopped: {crash}. The training and what it saved are not affected.{redo}")
    return Finding("run_crashed", "info", last, message,
                   evidence={"source": source, "exception": crash, "out_of_memory": memory, "after_training": True})


def out_of_memory(error: str) -> bool:
    """Whether an error line is the GPU's out-of-memory error (`CUDA out of memory`, `torch.OutOfMemoryError`)."""
    return "out of memory" in error.lower() or "OutOfMemory" in error


OUT_OF_MEMORY_ADVICE = (" Lower the batch or sequence length per device, turn on gradient checkpointing, or offload "
                        "the optimizer; then resume from the last checkpoint.")
# A job the shell reports `Killed` (or DeepSpeed's launcher, return code -9) got SIGKILL, which a Python process cannot
# catch or print: most often the kernel's out-of-memory killer (host RAM, not the GPU's), or a scheduler enforcing its
# time or memory limit.
_KILLED_BY_SHELL = "the shell: "
_KILLED_ADVICE = (" A job killed so (the shell's `Killed`, a launcher's return code -9) got a signal it could not "
                  "catch, most often the kernel's out-of-memory killer (host RAM: data loader workers, a dataset held "
                  "in memory) or the scheduler's time or memory limit: check `dmesg` or the job's accounting, then "
                  "resume from the last checkpoint.")


def _stopped_before_a_metric(source: str, meta: dict) -> list[Finding]:
    """A `run_crashed` warning for a training console (`console_run_signs`) that logged no metric and whose last
    traceback ends in an exception: the run stopped before its first logged step (out of memory on the first batch,
    an assertion of the parallel wrapper, stopped by hand), which is all its log can say."""
    signs = meta.get("console_run_signs") or ()
    # (a notebook's error output names the exception without Python's traceback header: the crash line says it)
    ended = (meta.get("console_final_exception") or meta.get("console_crash")) if signs else None
    if not ended:
        return []
    if "training_finished" in signs:  # trained, then failed at saving or uploading: no crash of the training
        return []
    memory = out_of_memory(ended)
    by_hand = ended.startswith("KeyboardInterrupt")
    advice = (" Lower the batch or sequence length per device, turn on gradient checkpointing, or offload the "
              "optimizer, then start it again." if memory else
              "" if by_hand else " Fix what raised it and start the run again.")
    message = (f"the run {'was stopped by hand' if by_hand else 'crashed'} before it logged a single metric: "
               f"{ended} (the last traceback of {Path(source).name}). Nothing was learned that its log can "
               f"show.{advice}")
    return [Finding("run_crashed", "warning", 0, message,
                    evidence={"source": source, "exception": ended, "out_of_memory": memory,
                              "before_first_step": True})]


def detect_unlogged_nonfinite(timeline: Timeline) -> list[Finding]:
    """One `nonfinite_unlogged` warning per console whose tensorboardX writer saw a NaN or Inf while every value the
    console itself logged is finite, or [] (module docstring)."""
    findings = []
    for source, meta in timeline.meta.items():
        count = meta.get("console_nonfinite_written")
        values = timeline.frame.loc[timeline.frame["source"] == source, ["step", "value"]]
        if values.empty:  # its records read from another file of the run (a checkpoint's trainer_state.json)
            values = timeline.frame[["step", "value"]]
        if not count or values.empty or not np.all(np.isfinite(values["value"].to_numpy(dtype="float64"))):
            continue
        message = (f"TensorBoard's writer warned 'NaN or Inf found in input tensor.' {count} time"
                   f"{'s' * (count > 1)} in this console while every value it logged is finite: a metric it does "
                   "not show (most often grad_norm; with fp16, a step the loss scaler skipped) went NaN or Inf, and "
                   "the console cannot say which or when. Open the run's TensorBoard event files to find the metric "
                   "and the step.")
        findings.append(Finding("nonfinite_unlogged", "warning", int(values["step"].max()), message,
                                evidence={"source": source, "warnings": int(count)}))
    return findings
