"""Step numbers of console lines whose counter starts over, and the lines a loop prints once an epoch.

`numbered_on(events)` takes the stdout reader's events in file order (`("line", StepLine)` among others) and gives
them back with the steps of these kinds made to run on:

* MiniMind / baby-llama2-chinese `Epoch:[E/N](n/M)` lines (kind "epoch_bracket"), fairseq-py's legacy `| epoch E  n /
  M loss=...` lines ("fairseq_legacy") and OpenNMT-py's 2018 `Epoch E, n/M; acc: ...` ("opennmt_epoch"): (E - the
  first epoch) x M + n; fairseq's legacy epoch summaries ("fairseq_epoch") at the step line before them.
* A hand-written loop's lines (kind "generic") that print their epoch: numbered on by the epoch's own total or the
  counter's stride; their epoch becomes the epochs done, as the HF Trainer logs it.
* Such lines that print no epoch (and a BERT pre-training loop's, kind "masked_lm"): a counter back at its first
  value is a new epoch where the loss goes on, a new attempt where the loss is back where the log began.
* Once-an-epoch lines (kind "generic_epoch"): at step 1, 2, ..., or beside step lines at the epoch's last step
  (`once_an_epoch`).
* One or two hand-written lines in a whole file are prose (a notes file), not a loop's log: left out; two that one
  notebook cell's code printed, the cell logging nothing else, are its loop's log (`one_cell`).
* `uncounted_lines_numbered(events)`: lines that print no counter at all (kind "uncounted") are numbered 1, 2, ...
  in file order, where a file holds `_FEWEST_UNCOUNTED` or more of them (fewer are not a loop's log); lucidrains'
  `training loss: X` prints (kind "loss_print") likewise, their `validation loss: X` at the batch it followed;
  OpenNMT-py's `Validation perplexity: P` lines (kind "opennmt_valid") and llm.c's `val loss X` ("llmc_val") at the
  step line before them; a MetricLogger
  evaluation (`Test:  [N/M]` lines, kind "metric_logger_eval") by its last line, at the training line before it.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..restarts import back_at_the_start
from .console_lines.fields import StepLine
from .launch_banners import launches_so_far
from .once_an_epoch import epoch_lines_placed, shaped_epoch_lines
from .stepless_dating import held_out_prints_placed, ptb_progress_numbered


def numbered_on(events: list[tuple], one_cell: bool = False) -> list[tuple]:
    """The events with the steps of the kinds above numbered on (module docstring); `one_cell`: the events are what
    one notebook cell's code printed (`_without_stray_generic_lines`)."""
    events = _fairseq_summaries_placed(_epoch_brackets_numbered_on(events))
    events = _summaries_placed(ptb_progress_numbered(events), "ptb_epoch", ("ptb_progress",))
    events = _generic_epochs_numbered_on(shaped_epoch_lines(_without_stray_generic_lines(events, one_cell)))
    return held_out_prints_placed(epoch_lines_placed(_unprinted_epochs_numbered_on(events)))


# A file needs this many lines of a kind that prints no step to read them as a loop's prints: `key: value` lines with
# a loss are loose (a summary can hold a few); a scalar tensor printed alone on a line is one `print(loss)` a step.
_FEWEST_UNCOUNTED = {"uncounted": 20, "printed_tensor": 5}


def uncounted_lines_numbered(events: list[tuple]) -> list[tuple]:
    """Lines that print no step (kinds "uncounted" and "printed_tensor") at steps 1, 2, ... in file order, each
    kind on its own (each line is one print of the loop); none of a kind where the file holds fewer than its
    `_FEWEST_UNCOUNTED` lines. Numbered before anything compares steps: every line is at step 0 until then, and
    two lines alike (a loss stuck at 0.0) would read as one printed twice."""
    for kind in _LOOSE_PRINTS:  # a custom loss's print beside the Trainer's own lines: those are the log
        if _loss_logged_otherwise(events, kind):
            events = [e for e in events if not (e[0] == "line" and e[1].kind == kind)]
    for kind, fewest in _FEWEST_UNCOUNTED.items():
        events = _numbered_in_order(events, kind, fewest)
    events = _validations_placed(_loss_prints_numbered(events), "opennmt", "opennmt_valid")
    return _metric_logger_evaluations_placed(_validations_placed(events, "llmc_console", "llmc_val"))


def _metric_logger_evaluations_placed(events: list[tuple]) -> list[tuple]:
    """A MetricLogger evaluation (`Test:  [N/M]` lines, kind "metric_logger_eval"): its last line, whose global
    averages are the evaluation's means, at the step of the training line before it; the lines before its last are
    its running means over part of the set, left out, and so is an evaluation before any training line."""
    at = [i for i, e in enumerate(events) if e[0] == "line" and e[1].kind == "metric_logger_eval"]
    if not at:
        return events
    last_of_stretch = {i for k, i in enumerate(at) if k + 1 == len(at) or not _only_between(events, i, at[k + 1])}
    out, trained = [], None
    for i, event in enumerate(events):
        if event[0] == "line" and event[1].kind == "metric_logger":
            trained = event[1].step
        elif event[0] == "line" and event[1].kind == "metric_logger_eval":
            if i not in last_of_stretch or trained is None:
                continue
            event = ("line", replace(event[1], step=trained))
        out.append(event)
    return out


def _only_between(events: list[tuple], start: int, end: int) -> bool:
    """Whether no MetricLogger line of training comes between two indexes and the second evaluation line counts on
    from the first (the same evaluation, not the next one)."""
    if events[end][1].step <= events[start][1].step:
        return False
    return not any(e[0] == "line" and e[1].kind == "metric_logger" for e in events[start + 1:end])


# Prints of a loss alone that give way to any other record of the loss in the file
_LOOSE_PRINTS = ("printed_tensor", "loss_print")
# lucidrains' `training loss: X` prints (kind "loss_print"): one a batch, so a loop's log holds many; fewer are prose
_FEWEST_LOSS_PRINTS = 10


def _validations_placed(events: list[tuple], step_kind: str, valid_kind: str) -> list[tuple]:
    """A program's validation lines that print no step (OpenNMT-py's `Validation perplexity: P`, kind "opennmt_valid";
    llm.c's `val loss X`, "llmc_val") at the step of its step line before them (the validation ran after that step);
    none before any step line (another program's words, or an evaluation of the weights before any step)."""
    if not any(e[0] == "line" and e[1].kind == valid_kind for e in events):
        return events
    out, last = [], None
    for event in events:
        if event[0] == "line" and event[1].kind == step_kind:
            last = event[1].step
        elif event[0] == "line" and event[1].kind == valid_kind:
            if last is None:
                continue
            event = ("line", replace(event[1], step=last))
        out.append(event)
    return out


def _loss_logged_otherwise(events: list[tuple], kind: str) -> bool:
    """Whether a loss comes in any event but a line of `kind` (a dict line, a step line of another kind)."""
    return any(e[0] == "dict" and "loss" in e[2] or e[0] == "line" and e[1].kind != kind
               and "loss" in e[1].names for e in events)


def _loss_prints_numbered(events: list[tuple]) -> list[tuple]:
    """`training loss: X` prints at steps 1, 2, ... in file order (the n-th is batch n), each `validation loss: X`
    at the batch it followed; none where the file holds fewer than `_FEWEST_LOSS_PRINTS` training prints."""
    if not any(e[0] == "line" and e[1].kind == "loss_print" for e in events):
        return events
    n = sum(1 for e in events if e[0] == "line" and e[1].kind == "loss_print" and e[1].names == ("loss",))
    out, count = [], 0
    for event in events:
        if event[0] == "line" and event[1].kind == "loss_print":
            if n < _FEWEST_LOSS_PRINTS:
                continue
            count += event[1].names == ("loss",)
            event = ("line", replace(event[1], step=max(count, 1)))
        out.append(event)
    return out


def _numbered_in_order(events: list[tuple], kind: str, fewest: int) -> list[tuple]:
    n = sum(1 for e in events if e[0] == "line" and e[1].kind == kind)
    if n == 0:
        return events
    out, count = [], 0
    for event in events:
        if event[0] == "line" and event[1].kind == kind:
            if n < fewest:
                continue
            count += 1
            event = ("line", replace(event[1], step=count))
        out.append(event)
    return out


# the kinds of a hand-written loop's step line whose counter may start over each epoch without printing it (a BERT
# pre-training loop's `N step,  mlm : X, ...`: joonkeekim_AIGC_SilverIRIS counts 20 ... 6,940 twice)
_COUNTED_PER_EPOCH = ("generic", "masked_lm")


def _unprinted_epochs_numbered_on(events: list[tuple]) -> list[tuple]:
    """A hand-written loop's step counter that starts over from its first value without printing an epoch: a new
    epoch where the loss goes on from where it was (numbered on by the counter's stride), a new attempt where the
    loss is back near where the log began (left as it is: the timeline reads a restart). Told apart on a log scale,
    loss to loss. Where the script's start-up line was printed again before it (`launch_banners`), the loss must also
    sit nearer where the attempt before ended than where that attempt began: a launch starts the model anew, near its
    own first loss, and an epoch goes on near the last (jtaylor-eng_attention_experiments: 52 sessions appended to one
    log, a session of another model starting at 10.56 after one that went 240 -> 419 reads as going on by the log's
    first loss alone; a loop that prints `Starting training...` before each epoch is still one run)."""
    lines = [i for i, e in enumerate(events) if e[0] == "line" and e[1].kind in _COUNTED_PER_EPOCH
             and "epoch" not in dict(e[1].metrics)]
    if len(lines) < 3:
        return events
    out = list(events)
    first = events[lines[0]][1]
    first_loss = dict(first.metrics).get("loss")
    offset, last, last_loss, printed, attempt_first = 0, None, None, [], first_loss
    launches = launches_so_far(events)
    for before, i in zip([lines[0]] + lines, lines):
        record = events[i][1]
        loss = dict(record.metrics).get("loss")
        stride = _stride(printed, 1)
        restarted = last is not None and record.step + offset <= last and record.step <= first.step + stride
        if restarted and _goes_on(loss, last_loss, first_loss) and (
                launches[i] == launches[before] or _nearer_the_last(loss, last_loss, attempt_first)):
            offset = last + stride - record.step
            printed = []
        elif restarted:
            offset, printed, attempt_first = 0, [], loss  # a new attempt: its steps as printed
        last = record.step + offset
        printed.append(record.step)
        last_loss = loss if loss is not None else last_loss
        if offset:
            out[i] = ("line", StepLine(record.kind, last, record.total, record.metrics, record.cut))
    return out


def _goes_on(loss: float | None, last: float | None, first: float | None) -> bool:
    """Whether a loss goes on from the last one, not back at the log's first (`restarts.back_at_the_start`, on
    logarithms: a loss is a scale); False where a loss is missing or not positive (left as a new attempt)."""
    if not _all_positive(loss, last, first):
        return False
    return not back_at_the_start(math.log(loss), math.log(first), (math.log(last),))


def _nearer_the_last(loss: float | None, last: float | None, first: float | None) -> bool:
    """Whether a loss sits nearer the last one than `first` on a log scale (an epoch goes on where the one before
    ended; a launch starts the model anew, near its first loss); False where a loss is missing or not positive."""
    if not _all_positive(loss, last, first):
        return False
    return abs(math.log(loss / last)) < abs(math.log(loss / first))


def _all_positive(*losses: float | None) -> bool:
    return all(x is not None and np.isfinite(x) and x > 0 for x in losses)


# the kinds of a hand-written loop's lines (console_lines.hand_written), which no framework vouches for
HAND_WRITTEN_KINDS = ("generic", "generic_epoch")
_FEWEST_HAND_WRITTEN = 3
# ... where the lines are what one notebook cell's code printed: no notes file, the cell's own loop printed them, and
# a loop of one epoch prints its train line and its held-out line once (AugustinCombes_icu_MLM: `Epoch 1: train: loss
# 3.86; ...` / `Epoch 1: valid: loss 3.12; ...`; 6ma6X_nn4nlp-code: `iter 0: train loss/word=6.2583, ...` / `iter 0:
# dev loss/word=5.8742, ...`, then the cell died). One line alone is still left out: it may be a cell's summary of a
# training run elsewhere (`best epoch 3, loss 0.21`), and one point shows no course anyway. Only where the cell logs
# nothing else: beside a framework's log, one or two such lines are pieces of it the hand-written reader took
# (Arnab1181412_Text-Generation-...: a Keras log trimmed by its owner opens on two `1693/1694 [====>.] - ETA: 0s -
# loss: 2.4737` bar lines before its first `Epoch 49/50` header).
_FEWEST_HAND_WRITTEN_IN_ONE_CELL = 2


def _without_stray_generic_lines(events: list[tuple], one_cell: bool = False) -> list[tuple]:
    """A file's hand-written-loop lines only where it holds `_FEWEST_HAND_WRITTEN` or more (one cell's output that
    logs nothing else: `_FEWEST_HAND_WRITTEN_IN_ONE_CELL`): one or two are prose (`step 30 loss nan, then we switched
    to bf16` in a notes file), not a loop's log."""
    n = sum(1 for e in events if e[0] == "line" and e[1].kind in HAND_WRITTEN_KINDS)
    fewest = _FEWEST_HAND_WRITTEN_IN_ONE_CELL if one_cell and _hand_written_only(events) else _FEWEST_HAND_WRITTEN
    if n == 0 or n >= fewest or _beside_a_loss_bar(events):
        return events
    return [e for e in events if not (e[0] == "line" and e[1].kind in HAND_WRITTEN_KINDS)]


def _hand_written_only(events: list[tuple]) -> bool:
    """Whether the only records the events hold are a hand-written loop's lines (no dict, no other reader's line)."""
    return not any(e[0] == "dict" or e[0] == "line" and e[1].kind not in HAND_WRITTEN_KINDS for e in events)


def _beside_a_loss_bar(events: list[tuple]) -> bool:
    """Whether the file holds a progress bar's reading of a loss (kind "tqdm_postfix"): a loop's own output, no notes
    file, so a line it prints once an epoch beside the bar is its report, however few (shambhavikris_Reward_Alignment:
    one bar and one `Epoch: 1, Test Loss: ..., Acc: ...` line a reward model)."""
    return any(e[0] == "line" and e[1].kind == "tqdm_postfix" for e in events)


# Kinds whose printed step may count within an epoch beside it: a hand-written loop's, and DLLogger's `(epoch,
# iteration)` / `Epoch: E Iteration: i` (NVIDIA's image scripts count iterations within each epoch)
_COUNTED_IN_EPOCHS = ("generic", "dllogger")


def _generic_epochs_numbered_on(events: list[tuple]) -> list[tuple]:
    """A hand-written loop's lines (kind "generic") that print their epoch: a step counter that starts over when the
    epoch moves on is numbered on (by its own total, `Step n/M`, where printed; else from the last step of the epoch
    before), and the epoch becomes the epochs done before it (E - the first epoch printed: the loop counts from 0
    or 1, the log's first epoch is its 0)."""
    epoch_of = {i: dict(e[1].metrics).get("epoch") for i, e in enumerate(events)
                if e[0] == "line" and e[1].kind in _COUNTED_IN_EPOCHS}
    epoch_of = {i: e for i, e in epoch_of.items() if e is not None}
    if not epoch_of:
        return events
    first = min(epoch_of.values())
    running = _counter_goes_on(events, epoch_of)
    out, offset, epoch, last, printed = list(events), 0, None, 0, []
    for i, e in epoch_of.items():
        record = events[i][1]
        restarted = epoch is not None and e > epoch and record.step + offset <= last
        if record.total and not running:  # `Step n/M`: the epoch's own count of steps says where each epoch starts
            offset = int(e - first) * record.total
        elif restarted:
            # the counter started over with the epoch: on from the last step by the epoch's own stride (a loop
            # printing steps 0, 100, ..., 900 starts the next epoch at 1000, one printing 100 ... 1000 at 1100)
            stride = _stride(printed, max(record.step, 1))
            offset = last + stride - record.step
            printed = []
        epoch, last = e, record.step + offset
        printed.append(record.step)
        done = e - first + (record.step / record.total if record.total and not running else 0.0)
        metrics = tuple((k, done if k == "epoch" else v) for k, v in record.metrics)
        out[i] = ("line", StepLine(record.kind, last, record.total, metrics, record.cut))
    return out


def _counter_goes_on(events: list[tuple], epoch_of: dict) -> bool:
    """Whether the step counter went on past an epoch's change without starting over: the run's own count
    (CPM-2's `epoch 4/10 | global iteration 1370/3402` after `epoch 3/10 | global iteration 1360/3402`), whose
    total is the run's, not the epoch's."""
    changes = [(events[i][1].step, events[j][1].step)
               for (i, e), (j, f) in zip(epoch_of.items(), list(epoch_of.items())[1:]) if f > e]
    return bool(changes) and all(after > before for before, after in changes)


# Kinds of line that print batch n of an epoch's M beside their epoch E
_BATCH_OF_EPOCH = ("epoch_bracket", "fairseq_legacy", "opennmt_epoch")


def _epoch_brackets_numbered_on(events: list[tuple]) -> list[tuple]:
    """`Epoch:[E/N](n/M)` lines (and the other `_BATCH_OF_EPOCH` kinds) at step (E - the first epoch) x M + n, their
    epoch as the HF Trainer logs it (epochs done, a fraction): some scripts print E counted from 0, most from 1; the
    log's first epoch is its 0."""
    epochs = [dict(e[1].metrics)["epoch"] for e in events if e[0] == "line" and e[1].kind in _BATCH_OF_EPOCH]
    if not epochs:
        return events
    first = min(epochs)
    out = []
    for event in events:
        record = event[1] if event[0] == "line" else None
        if record is not None and record.kind in _BATCH_OF_EPOCH and record.total:
            done = dict(record.metrics)["epoch"] - first
            metrics = tuple((k, done + record.step / record.total if k == "epoch" else v) for k, v in record.metrics)
            event = ("line", replace(record, step=int(done) * record.total + record.step, metrics=metrics))
        out.append(event)
    return out


def _stride(printed: list[int], unknown: int) -> int:
    """The typical gap between the steps a loop printed in the current epoch; `unknown` before it printed two."""
    return int(np.median(np.diff(printed))) if len(printed) > 1 else unknown


_FAIRSEQ_PROGRESS = ("fairseq_legacy", "fairseq_inner")  # fairseq's progress lines, legacy and since 2020


def _fairseq_summaries_placed(events: list[tuple]) -> list[tuple]:
    """fairseq's epoch summaries (kind "fairseq_epoch", at their epoch E) placed among its progress lines
    (`_summaries_placed`)."""
    return _summaries_placed(events, "fairseq_epoch", _FAIRSEQ_PROGRESS)


def _summaries_placed(events: list[tuple], summary: str, progress: tuple[str, ...]) -> list[tuple]:
    """A program's epoch summaries (kind `summary`, at their epoch E: fairseq's, the TF PTB tutorial's): where the
    log has its progress lines (kinds `progress`), at the step of the last one before them with their held-out
    metrics only (the progress lines hold the training loss and its running mean; the epoch's mean would be a second
    value there), none before any; in a log of summaries alone (an epoch shorter than the progress bar's interval
    prints none), at step E - the first epoch + 1 with every metric, the epoch the epochs done."""
    epochs = [dict(e[1].metrics)["epoch"] for e in events if e[0] == "line" and e[1].kind == summary]
    if not epochs:
        return events
    stepped = any(e[0] == "line" and e[1].kind in progress for e in events)
    out, last = [], None
    for event in events:
        record = event[1] if event[0] == "line" else None
        if record is not None and record.kind in progress:
            last = record.step
        elif record is not None and record.kind == summary:
            done = dict(record.metrics)["epoch"] - min(epochs) + 1
            metrics = tuple((k, done if k == "epoch" else v) for k, v in record.metrics
                            if not stepped or k.startswith("eval_"))
            if not metrics or (stepped and last is None):
                continue
            event = ("line", replace(record, step=last if stepped else int(done), metrics=metrics))
        out.append(event)
    return out
