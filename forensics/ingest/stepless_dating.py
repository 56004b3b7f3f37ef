"""The steps of console lines that print none (console_lines.stepless): dated by the lines around them.

* `headed_lines_dated(events)`: short loss lines with no counter (kind "headed") under an epoch section header
  (`=== Epoch 3/20 ===`) become that epoch's once-an-epoch lines (kind "generic_epoch", numbered with the others by
  `step_numbering`); only where every such line sits under a header and no header's section holds two values of one
  metric (a loop's stepless prints within an epoch are not its epoch's). Else none is read. The headers go. Lines
  with a held-out loss before a first header that counts from 1 are the evaluation before training (step 0, kind
  BEFORE_TRAINING); a lone held-out loss after the last section's own is the test after training (left out). In a
  file without headers, headed lines after the last stepped line are the run's closing prints (left out).
* `ptb_progress_numbered(events)`: the TF PTB tutorial's running lines at (epochs before + fraction) x the epoch's
  size where the line prints it, else at 1, 2, ... in file order (the n-th print); an epoch starts where the
  fraction goes back.
* `held_out_prints_placed(events)`: a `bpc = X` print (kind "held_out_print") at the step of the last step line
  before it (the evaluation ran after that epoch); none before any.
"""
from __future__ import annotations

from dataclasses import replace

from .console_lines.fields import StepLine

# the kind of a line measured before the first epoch's header (`_before_the_first`): at step 0, not numbered as an epoch
BEFORE_TRAINING = "before_training"


def headed_lines_dated(events: list[tuple]) -> list[tuple]:
    """The events less the epoch headers, with the headed lines dated by them or left out (module docstring)."""
    if not any(e[0] == "epoch_header" for e in events):
        return _closing_prints_dropped(events)
    dated, header, seen = {}, _before_the_first(events), set()
    closing = _closing_evaluation(events)
    for i, event in enumerate(events):
        if event[0] == "epoch_header":
            header, seen = event, set()
        elif event[0] == "line" and event[1].kind == "headed" and i != closing:
            names = set(event[1].names)
            if header is None or names & seen:
                dated = {}
                break
            seen |= names
            dated[i] = _under(event[1], header)
    return [("line", dated[i]) if i in dated else e for i, e in enumerate(events)
            if e[0] != "epoch_header" and (i in dated or not (e[0] == "line" and e[1].kind == "headed"))]


def _closing_prints_dropped(events: list[tuple]) -> list[tuple]:
    """The events less the headed lines after the file's last line with a step of its own, where no header dates
    them: the run's closing print of a value its series already holds, no step of its own (mrunmayee3108_deep-learning:
    `Training loss:  0.1951...` printed from the history after model.fit's 300 epoch lines, which at step 0 read as
    the run's start, and epoch 1's 3.47 as an 18x spike)."""
    last = max((i for i, e in enumerate(events) if e[0] == "line" and e[1].kind != "headed" and e[1].step > 0),
               default=None)
    if last is None:
        return events
    return [e for i, e in enumerate(events) if i < last or not (e[0] == "line" and e[1].kind == "headed")]


def _closing_evaluation(events: list[tuple]) -> int | None:
    """The index of the file's last headed line where it is a held-out loss alone, after the last header's section
    already holds one, and two headers or more came before: the test after the last epoch (BlayvasD_GPT-Histories'
    `Test Loss: 2.3667` after epoch 100's `Validation Loss` / `Training Loss`; `_held_out_alone`), left out, not the
    sign of a loop printing within its epochs; else None."""
    headed = [i for i, e in enumerate(events) if e[0] == "line" and e[1].kind == "headed"]
    headers = [i for i, e in enumerate(events) if e[0] == "epoch_header"]
    if not headed or len(headers) < 2 or not _held_out_alone(events[headed[-1]][1]):
        return None
    last_section = [i for i in headed[:-1] if i > headers[-1]]
    return headed[-1] if any("eval_loss" in events[i][1].names for i in last_section) else None


def _held_out_alone(record: StepLine) -> bool:
    """Whether a headed line holds a held-out loss and nothing but held-out values: `Test Loss: 2.3667`, or a test
    perplexity read as its loss beside it (Yanhan-ss_speech-recognition's `Test perplexity: 187.62` after epoch 5's
    `Validation perplexity`)."""
    return "eval_loss" in record.names and all(name.startswith("eval_") for name in record.names)


def _before_the_first(events: list[tuple]) -> tuple | None:
    """The section the lines before the first header sit in: where they hold a held-out loss and the headers count
    epochs from 1, the evaluation before training (BlayvasD_GPT-Histories: `Validation Loss: 2.9626` / `Training Loss:
    2.5578`, then `Training epoch 1`), epoch 0; else none (a training loss alone there, or under headers that count
    from 0, is no epoch's: nothing is dated)."""
    first = next((i for i, e in enumerate(events) if e[0] == "epoch_header"), None)
    if first is None or events[first][1] < 1:
        return None
    before = [e[1] for e in events[:first] if e[0] == "line" and e[1].kind == "headed"]
    return (BEFORE_TRAINING, 0, events[first][2]) if any("eval_loss" in r.names for r in before) else None


def _under(record: StepLine, header: tuple) -> StepLine:
    """A headed line as its epoch's once-an-epoch line (kind "generic_epoch", at the header's epoch E); one before
    the first header as the measure before training (kind BEFORE_TRAINING, at step 0, epoch 0)."""
    epoch, kind = header[1], BEFORE_TRAINING if header[0] == BEFORE_TRAINING else "generic_epoch"
    return StepLine(kind, epoch, header[2], record.metrics + (("epoch", float(epoch)),), record.cut)


def ptb_progress_numbered(events: list[tuple]) -> list[tuple]:
    """The TF PTB tutorial's running lines numbered (module docstring), their epoch the epochs done."""
    out, epochs_done, last_fraction, count = [], 0, None, 0
    for event in events:
        if event[0] == "line" and event[1].kind == "ptb_progress":
            record = event[1]
            fraction = dict(record.metrics)["epoch"]
            if last_fraction is not None and fraction <= last_fraction:
                epochs_done += 1
            last_fraction, count = fraction, count + 1
            step = round((epochs_done + fraction) * record.total) if record.total else count
            metrics = tuple((k, epochs_done + fraction if k == "epoch" else v) for k, v in record.metrics)
            event = ("line", replace(record, step=step, metrics=metrics))
        out.append(event)
    return out


def held_out_prints_placed(events: list[tuple]) -> list[tuple]:
    """`bpc = X` prints at the step of the last step line before them; none before any (module docstring)."""
    if not any(e[0] == "line" and e[1].kind == "held_out_print" for e in events):
        return events
    out, last = [], None
    for event in events:
        if event[0] == "line" and event[1].kind == "held_out_print":
            if last is None:
                continue
            event = ("line", replace(event[1], step=last))
        elif event[0] == "line":
            last = event[1].step
        out.append(event)
    return out
