"""Which of a notebook's cells belong to the kernel session that ran its judged training, for the run profile.

A notebook keeps each cell's last execution count, and the counts start again at 1 when the kernel restarts: a
notebook worked on over several sessions holds the cells of each (an Unsloth 4-bit attempt, then, after a restart,
a full fine-tune with the plain Trainer), and a session run from the top that skipped some cells leaves those with
the counts of an older one. What configured the judged training is the code its own session ran before it, and the
banners that session printed; the other sessions' cells ran in another process.

One kernel gives each count once, from 1. So the session's cells are found by walking up from the training cell
(count T), taking each cell whose count the session has not given yet (a count it has is another session's) until
it has given every count below T; a cell up there counted above T ran again after the training, but sits above it
and most likely ran before it too (a cell shows only its last count). Its count 1 does not end the walk: the cell run
first after a restart (an environment setting) may sit below the cells it then ran; above that cell the walk goes on
only through cells counted below T that the session has not given, and the first other counted cell (a count it
has, or one above T) ends it: from there up the cells are an older session's. Then down from the training
cell, taking the counts below T the session has not given (a cell placed lower but run earlier) up to the first
count it has; a lower cell counted above T ran only after it (an inference reload, the next experiment).
Uncounted cells are kept wherever they sit: they belong to no session, and the code reader decides whether they
ran (an output, a silent cell before one) and what their code, run or not, says of what was meant. A notebook with
one count on every counted cell, or an uncounted training cell, is one session, every cell kept. A notebook saved
with every count cleared keeps its cells down to the training cell: below it, in the only order left, is what ran
after it or never (06Anirudh24_Always-On-Policy-Prompts-for-Efficient-RLHF: a RewardTrainer script pasted below the
SFTTrainer cell whose table is the notebook's only training output, with no output of its own).
"""
from __future__ import annotations


def ran_up_to(cells: list[dict], trained: int) -> list[int]:
    """The indices (into `cells`) of the cells of the session of cell `trained` that ran before it, it too (module
    docstring). What ran after it (an inference reload, the next experiment) configured nothing of it."""
    last = _count(cells[trained])
    if not any(_count(cell) is not None for cell in cells):
        return list(range(trained + 1))  # every count cleared: the notebook's order is the only order left
    if last is None or not _counts_tell_sessions(cells):
        return list(range(len(cells)))
    kept, given = _above(cells, trained)
    for i in range(trained + 1, len(cells)):
        count = _count(cells[i])
        if count in given:
            break
        if count is not None and count < last:
            kept.append(i)
            given.add(count)
    uncounted = [i for i, cell in enumerate(cells) if _count(cell) is None]
    return sorted(set(kept) | set(uncounted))


def session_start(cells: list[dict], trained: int) -> int:
    """The index of the cell where the session of cell `trained` began: the topmost cell above it that the session ran
    (its count 1 among them); 0 where the session's count 1 is not found (every cell above is then read as the
    session's)."""
    if _count(cells[trained]) is None or not _counts_tell_sessions(cells):
        return 0
    kept, given = _above(cells, trained)
    return min(kept) if 1 in given else 0


def _above(cells: list[dict], trained: int) -> tuple[list[int], set[int]]:
    """The counted cells from `trained` up to where its session began (module docstring), and their counts."""
    last = _count(cells[trained])
    kept, given = [trained], {last}
    for i in range(trained - 1, -1, -1):
        if given >= set(range(1, last + 1)):
            break
        count = _count(cells[i])
        fits = count is not None and count not in given and (count < last or 1 not in given)
        if fits:
            kept.append(i)
            given.add(count)
        elif count is not None and 1 in given:  # above its count 1, a cell the session cannot have run first
            break
    return kept, given


def judged_training(runs: list[list[int]], cells: list[dict]) -> list[int]:
    """Of a notebook's trainings (each its cells' indices, in cell order), the one judged: the last, unless no cell of
    it ran where an earlier training's did (a cell with no execution count under counted ones is output saved from
    elsewhere: ucaokylong_LLM_learning's last table is Unsloth's template run of 30 steps, kept in a cell with no count,
    while the owner's 1,479-step run is counted 14)."""
    counted = [run for run in runs if any(_count(cells[i]) is not None for i in run)]
    return counted[-1] if counted else runs[-1]


def _counts_tell_sessions(cells: list[dict]) -> bool:
    """Whether the counts can be a kernel's record: not one count on every counted cell (each showing 1: a notebook
    put together by a tool), which says nothing of what ran together."""
    return len({_count(cell) for cell in cells} - {None}) > 1


def _count(cell: dict):
    """A cell's execution count (nbformat 3 named it `prompt_number`); None for a cell that is not code or did not
    run, and for a value no kernel gives (a kernel counts from 1; JSON's true is no count)."""
    if cell.get("cell_type") != "code":
        return None
    count = cell.get("execution_count", cell.get("prompt_number"))
    return count if isinstance(count, int) and not isinstance(count, bool) and count >= 1 else None
