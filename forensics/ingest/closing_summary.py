"""The HF Trainer's closing summary in a console: the dict train() prints last (`{'train_runtime': ..., 'train_loss':
...}`, no step of its own), dated by the `TrainOutput(global_step=N, ..., metrics={...})` that train() returns and a
notebook cell shows after it, the same summary as its metrics (`dicts_and_bars` gives those metrics the step N).

Where no TrainOutput follows, the training bar's finished reading printed right after the summary dates it: tqdm
writes its bar's last line when train() closes it, after the summary dict, so a captured console shows the dict, then
`100% 3/3` (REICHIYAN_llm_ft_tinyllama: three `!python train_*.py` cells of 3 steps each, only the summaries logged;
the bar before a summary is the previous cell's finished one or this run's first draw `0% 0/3`, which dated the QLoRA
run's 13.70 at step 0 and split the runs wrongly).

Nothing else dates a summary with no train dict before it: a run whose logging_steps outlasted it, which the position
rule puts at step 0 - as if no optimizer step had run (yangoos57_Bert_For_Domain_Adaptation: two steps, logging_steps
5, train_loss 3.283 the mean of the two).
"""
from __future__ import annotations

from .dicts_and_bars import EXPLICIT_STEP_KEYS


def dated_by_train_output(events: list[tuple], steps: dict[int, int]) -> dict[int, int]:
    """`steps` (each dict event's, by index), each closing summary with no step of its own put at the step of the
    summary printed with one after it (a TrainOutput's) holding the same train_runtime, before any other training's
    train dict."""
    for i, event in enumerate(events):
        if not _undated_summary(event):
            continue
        for later in events[i + 1:]:
            if later[0] == "dict" and "loss" in later[2]:
                break
            if (later[0] == "dict" and later[1] is not None
                    and later[2].get("train_runtime") == event[2]["train_runtime"]):
                steps[i] = later[1]
                break
    return steps


def dated_by_finished_bar(events: list[tuple], steps: dict[int, int], train_total: int | None) -> dict[int, int]:
    """`steps`, each closing summary with no step of its own that no train dict precedes since the last finished bar
    put at the finished reading of the training bar (`train_total` of `train_total`) printed next after it, before
    any other dict (module docstring)."""
    if not train_total:
        return steps
    for i, event in enumerate(events):
        if not _undated_summary(event) or _train_dict_since_a_finished_bar(events[:i], train_total):
            continue
        later = next((e for e in events[i + 1:] if e[0] in ("dict", "bar")), None)
        if later is not None and later[0] == "bar" and later[1] == later[2] == train_total:
            steps[i] = train_total
    return steps


def _train_dict_since_a_finished_bar(events: list[tuple], train_total: int) -> bool:
    """Whether a train dict was logged after the last finished training bar (the run's own dicts date its summary)."""
    for event in reversed(events):
        if event[0] == "bar" and event[1] == event[2] == train_total:
            return False
        if event[0] == "dict" and "loss" in event[2]:
            return True
    return False


def _undated_summary(event: tuple) -> bool:
    pairs = event[2] if event[0] == "dict" else {}
    return "train_runtime" in pairs and "loss" not in pairs and event[1] is None and not any(
        key in pairs for key in EXPLICIT_STEP_KEYS)
