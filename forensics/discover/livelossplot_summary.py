"""livelossplot's closing summary in a notebook cell: run.py's sniffing (log_hints) and ingest/notebook both ask.

`PlotLosses().send()` clears the cell at every update (IPython's clear_output), so a notebook keeps only the last one:
the plot as an image and its ExtremaPrinter's text, one block per group of metrics, each series a line

    log loss
    	training         	 (min:    1.227, max:    4.285, cur:    1.227)
    Loss
    	validation       	 (min:    1.501, max:    4.282, cur:    1.502)

(Joseph-Ajegetina_supervised-speech-recognition-transformers: a character GPT's train and validation loss, 61
updates). The three numbers are the extremes of a series and its last value, not a course: the order of the two
extremes is not said, only that both came before the last value or are it. `as_step_lines(text)` reads what that
order allows (`_points`): a series whose last value is its minimum fell from its maximum to it (two points, the
maximum first); one whose last value is its maximum rose to it from its minimum. One that ended between them is not
read: down to its minimum and back up, or up to its maximum and back down, the summary cannot say which, and read as
either it would be judged on a course the run may not have had (a held-out loss back up from its best is overfitting,
a spike that came back down is not). A group named like a loss gives the training series as the loss and the validation
series as the eval_loss, as `step N: <metric> <value>` lines a console reader reads, in step order; None where the text
holds no summary of a loss.
"""
from __future__ import annotations

import re

_NUMBER = r"[-+]?(?:nan|inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)"
_SERIES = re.compile(rf"^\t(?P<split>training|validation)\s+\t \(min:\s*(?P<min>{_NUMBER}), max:\s*(?P<max>{_NUMBER}), "
                     rf"cur:\s*(?P<cur>{_NUMBER})\)\s*$", re.IGNORECASE)
_GROUP = re.compile(r"^(?P<name>\S[^\t]*?)\s*$")
# the last value this close to an extreme (of the series' range) is at it: the summary prints three decimals
_AT_AN_EXTREME = 0.01


def as_step_lines(text: str) -> str | None:
    """The summary's series as `step N: metric value` lines (module docstring), or None where it holds no loss."""
    points: dict[str, list[float]] = {}
    in_a_loss_group = False
    for line in text.splitlines():
        series, named = _SERIES.match(line), _GROUP.match(line)
        if series and in_a_loss_group:
            metric = "loss" if series["split"] == "training" else "eval_loss"
            course = _points(*(float(series[k]) for k in ("min", "max", "cur")))
            if course:
                points.setdefault(metric, course)
        elif named:
            in_a_loss_group = "loss" in named["name"].lower()
    if not points:
        return None
    lines = sorted((k, metric != "loss", metric, value)
                   for metric, values in points.items() for k, value in enumerate(values))
    return "".join(f"step {k}: {metric} {value!r}\n" for k, _, metric, value in lines)


def _points(low: float, high: float, last: float) -> list[float]:
    """The course the extremes and the last value allow (module docstring), in order; [] where it ended between."""
    near = _AT_AN_EXTREME * (high - low)
    if last - low <= near:
        return [high, last]
    if high - last <= near:
        return [low, last]
    return []
