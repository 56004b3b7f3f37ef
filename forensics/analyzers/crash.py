"""A run a crash stopped: the GPU out of memory, a CUDA fault or NCCL, after the log's last training step.

A checkpoint saved before it is unaffected; the run did not finish, which the loss curve alone cannot say (it simply
ends). A warning at the last logged step of the log that holds the crash, with what to
change for an out-of-memory error. Read from the console's own lines (ingest.stdout `console_crash`).
"""
from __future__ import annotations

from ..findings import Finding
from ..timeline import Timeline


def detect_crash(timeline: Timeline) -> list[Finding]:
    """One `run_crashed` warning per console log that ends in a crash, or []."""
    findings = []
    for source, meta in timeline.meta.items():
        crash = meta.get("console_crash")
        steps = timeline.frame.loc[timeline.frame["source"] == source, "step"]
        if not crash or steps.empty:
            continue
        last = int(steps.max())
        memory = "out of memory" in crash.lower() or "OutOfMemory" in crash
        advice = (" Lower the batch or sequence length per device, turn on gradient checkpointing, or offload the "
                  "optimizer; then resume from the last checkpoint." if memory else
                  " Resume from the last checkpoint once the cause is fixed.")
        message = (f"the run stopped after step {last}: {crash}. It did not finish; a checkpoint saved before the "
                   f"crash is unaffected by it.{advice}")
        findings.append(Finding("run_crashed", "warning", last, message,
                                evidence={"source": source, "exception": crash, "out_of_memory": memory}))
    return findings
