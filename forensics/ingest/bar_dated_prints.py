"""A loop's scalar tensor prints dated by the progress bar they follow: one print each time the bar moves on one.

A hand-written loop that wraps its epochs in tqdm (`for ep in tqdm(range(n_episodes))`) and prints its loss once an
epoch shows the bar's reading, then the print, once an epoch: `10%|...| 1/10 [01:05<09:46, 65.18s/it]`, then
`tf.Tensor(8.88289, shape=(), dtype=float32)`, then `2/10 [...]` and the next (AaronBarbosa12_transformer_model,
stopped at 4/10). Such prints (kind "printed_tensor") carry no step, and a file of fewer than five is too few for
`step_numbering` to call them a loop's (a bare tensor may be anything printed a few times). The bar says what they
are: where every print comes right after a reading of one bar (one total) whose count goes up by one from print to
print, at least `_FEWEST` times, each print is that pass's, dated at the bar's count (kind "bar_dated_print").
Anything else (a print with no bar before it, two prints on one reading, a bar that starts over) is left to
`step_numbering`.
"""
from __future__ import annotations

from dataclasses import replace

_KIND = "printed_tensor"
BAR_DATED = "bar_dated_print"
_FEWEST = 3  # two prints after two readings could be anything printed twice


def prints_dated_by_their_bar(events: list[tuple]) -> list[tuple]:
    """The events with each scalar tensor print at the count of the bar reading before it (module docstring), or
    the events as they are."""
    prints = [i for i, e in enumerate(events) if e[0] == "line" and e[1].kind == _KIND]
    if len(prints) < _FEWEST:
        return events
    counts = [_reading_before(events, i, after) for i, after in zip(prints, [-1] + prints[:-1])]
    if any(c is None for c in counts) or len({total for _, total in counts}) != 1 \
            or any(b[0] != a[0] + 1 for a, b in zip(counts, counts[1:])):
        return events
    out = list(events)
    for i, (n, total) in zip(prints, counts):
        out[i] = ("line", replace(events[i][1], kind=BAR_DATED, step=n, total=total))
    return out


def _reading_before(events: list[tuple], at: int, after: int) -> tuple[int, int] | None:
    """The (n, total) of the last bar reading between the print before (index `after`) and this one (index `at`),
    or None where no bar moved between them."""
    return next(((e[1], e[2]) for e in reversed(events[after + 1:at]) if e[0] == "bar"), None)
