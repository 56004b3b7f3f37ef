"""Where a metric-history JSON's lists of another length go on the run's step axis (json_history's dict of parallel
lists, `{"train_loss": [...], "eval_loss": [...], "steps": [...], "epochs": [...]}`):

* a per-epoch training list (an `epochs` list of its length, whole numbers 1..E) beside a longer per-step `steps`
  list is placed at each epoch's end: the last step times epoch / E (epochs of equal length);
* a held-out list longer than the training list, with no step list of its own, is placed at multiples of the run's
  `eval_steps` (in the file, or in the run's saved config beside it): the Hugging Face name, whose meaning is an
  evaluation after every `eval_steps`-th update, the first at `eval_steps` and none at step 0 (an own loop's
  `eval_interval` often evaluates at step 0 too, so that name says no place); one more evaluation than the interval
  fits is the closing `evaluate()` at the last step, taken only where it repeats the value before it (the same
  weights evaluated twice; duck3244_text_multi_classification: 22 evaluations, every 500 of 10,500 steps, the last
  one repeated);
* a training list with no step list beside it, in a summary that states its `logging_steps`, is placed every
  `logging_steps` from the first where that fits in a stated `total_steps`; else, where the summary states the run's
  `total_steps` a whole number of times its length, every total / length steps, the last at the last step: a
  Trainer's logs every `logging_steps` from the first (kasiranaweera_EduLM-Gemma4: 6 losses over 60 steps, at 10 ...
  60); a total it does not divide says no interval (a log every 9 or 10 steps both give 6 logs in 60). A `max_steps`
  is no total: a setting the run may have stopped short of (5 losses, max_steps 1000, logged every 100: 100 ... 500);
* anywhere else such a list is left unread and said: its steps cannot be told from the file.

Pure functions of the parsed lists.
"""
from __future__ import annotations


def epoch_end_steps(epochs: list, last_step) -> list[int] | None:
    """The step at which each epoch of a per-epoch list ends (whole epochs 1..E rising by one, the run's last step
    from its per-step list), or None where the epochs are not that or the steps do not split into them."""
    count = len(epochs)
    if not _is_count(last_step) or epochs != list(range(1, count + 1)) or last_step < count:
        return None
    return [round(last_step * epoch / count) for epoch in epochs]


def spaced_steps(total, count: int) -> list[int] | None:
    """The step of each of `count` logs spread over a run of `total` steps (the module docstring's rule), or None."""
    if not _is_count(total) or count < 1 or total % count:
        return None
    every = total // count
    return [every * i for i in range(1, count + 1)]


def stated_steps(every, total, count: int) -> list[int] | None:
    """The step of each of `count` logs of a summary that states its `logging_steps` (`every`) and/or its
    `total_steps`: at every `every` steps where that fits in the total (or no total is stated), else spread over the
    total (`spaced_steps`), else None. A `max_steps` is not such a total: a setting the run may never have reached."""
    if _is_count(every) and count >= 1 and (not _is_count(total) or count * every <= total):
        return [every * i for i in range(1, count + 1)]
    return spaced_steps(total, count)


def eval_steps_at_interval(held: list, every, last_step) -> list[int] | None:
    """The step of each evaluation of a held-out list logged every `every` steps of a run that ended at `last_step`
    (the module docstring's rule), or None where the list's length does not fit that interval."""
    if not (_is_count(every) and _is_count(last_step)) or every > last_step:
        return None
    fits = last_step // every
    steps = [every * j for j in range(1, fits + 1)]
    if len(held) == fits:
        return steps
    closing = len(held) == fits + 1 and last_step % every == 0 and held[-1] == held[-2]
    return steps + [last_step] if closing else None


def unplaced_note(name: str, count: int, train_count: int) -> str:
    """The line that says a held-out list was left unread (ingest warnings become a `partly read` note)."""
    return (f"{name} ({count} values) left unread: longer than the training loss list ({train_count}) with no step "
            "list of its own and no eval_steps that fits, so its steps cannot be told")


def _is_count(value) -> bool:
    return type(value) is int and value > 0
