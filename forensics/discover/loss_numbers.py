"""Loss files of numbers only: what only the FILE NAME says is a loss (`losses.txt`, `val_losses.txt`, `loss_log.txt`).

A hand-written loop often appends its losses to a file of its own with no word in it: one bare number a line
(`f.write(f"{loss}\\n")`: Salman313ali_LLM_from_scratch's train_losses.txt / val_losses.txt), a counter and the value
(`1,6.2338`: Max-An_poemGen's loss_log.txt; `1_1.8458`: HAOzj_GEC's train_loss.txt / val_loss.txt), or the train and
evaluation losses and the epoch (`706.34<TAB>50.13<TAB>0`: JulesBelveze_text-summarizer's losses.txt). Nothing in such
a file says what it is, so it is one only where both hold:

  - the name says loss (a `loss` / `losses` word in its stem: `losses`, `train_loss`, `loss_log`, `valLoss`), and the
    split where it says one (`val`, `valid`, `validation`, `eval`, `dev`, `test` -> held out; `train` -> training),
    and no word that says the numbers are something else (`_NOT_A_CURVE_WORDS`: `loss_weights.txt` is no curve);
  - every line is the same number of numeric cells (1 to 3, split by spaces, tabs, `,`, `;` or `_`).

`loss_columns(rows, split)` then says what each column is: a counter (whole numbers that count up by one stride and may
start again, a new launch) is the step; the other columns are losses - one named by the file's split, or two in a file
that names no split (train first, then the evaluation, as scripts write them). Four numbers a line are read only as a
nanoGPT-style loop's `step,loss,tok/s,lr` (wadkisson_Personal-Chatbot's loss_history.txt): the counter first, the
loss right after it, and one other column of learning-rate-sized values (`_is_lr_sized`); the fourth column (a
throughput, a norm: nothing says which) is not read. Anything else is not read.

A loop may instead rewrite the whole list every epoch (`f.write(str(train_losses))`: hyunwoongko's transformer and its
forks' result/train_loss.txt, `[6.739, 5.912, ...]`), closed or, where the loop was still running, unclosed
(`[5.617, 5.063, ...,`): `listed_numbers` reads such a file as a number a line (one cell each), under the same rules.
Or it writes the iteration and the loss as pairs on a line, `1: 5.9341 | 2: 5.8312 | `, after a line of the launch's
settings (`MAX_LENGTH: 20, MIN_COUNT: 3, RNN: LSTM, ...,`), a launch appended to the file each time
(RohollahHS_ChatBot's outputs/train_loss.txt): `counted_pairs` reads the pairs as (step, loss) rows, the `i:` saying
which number is the counter; every other line must be such a settings line (`name: value,` fields, none naming a loss).
"""
from __future__ import annotations

import re
from pathlib import PurePath

# where such files are kept: text files, or a headerless table named .csv / .tsv
LOSS_FILE_SUFFIXES = {".txt", ".log", ".out", ".csv", ".tsv", ".dat", ""}
MIN_LINES = 3  # fewer numbers say nothing of a curve (and are no evidence of the shape)
MAX_CELLS = 4  # four only as `step,loss,<unread>,lr` (loss_columns)

_WORD = re.compile(r"[a-z]+")
_HELD_OUT_WORDS = {"val", "valid", "validation", "eval", "evaluation", "dev", "test"}
_TRAIN_WORDS = {"train", "training", "tr"}
# words in a loss file's name that say its numbers are something else than a loss over time (loss_weights,
# loss_config, token_loss_mask, loss_scale) or more than a loss (train_loss_acc: which column is which?). A DENY-list,
# not an allow-list: the other words beside a loss are a run's own tags (model_loss, lstm_loss, loss_run1, losses_final,
# gpt2_train_loss, train_loss_lora), and those files are loss curves
_NOT_A_CURVE_WORDS = {"weight", "weights", "config", "configs", "cfg", "conf", "mask", "masks", "acc", "accs",
                      "accuracy", "scale", "scales", "scaler", "type", "types", "param", "params", "parameters", "coef",
                      "coefs", "coeff", "coeffs", "coefficient", "coefficients", "fn", "func", "function", "settings",
                      "args", "hparams", "ratio", "factor", "factors"}
_CELL_SPLIT = re.compile(r"[ \t,;_]+")
_NUMBER = re.compile(r"(?i)^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?$|^[-+]?(?:nan|inf|infinity)$")
_WHOLE = re.compile(r"^\d+$")


def loss_file_split(name: str) -> str | None:
    """What a file's name says: "train", "eval", or "" (a loss, no split named); None where it names no loss.

    >>> [loss_file_split(n) for n in ("losses.txt", "val_losses.txt", "train_loss.txt", "loss_log.txt", "valLoss.csv")]
    ['', 'eval', 'train', '', 'eval']
    >>> [loss_file_split(n) for n in ("trainloss.txt", "epoch_losses", "loss_history.log")]
    ['train', '', '']
    >>> [loss_file_split(n) for n in ("glossary.txt", "train.log", "losses.json", "closs.txt", "loss_weights.txt")]
    [None, None, None, None, None]
    """
    path = PurePath(name)
    if path.suffix.lower() not in LOSS_FILE_SUFFIXES or _names_something_else(path.stem):
        return None
    return loss_stem_split(path.stem)


def _names_something_else(stem: str) -> bool:
    """Whether a word of a file name's stem says its numbers are no loss curve (loss_weights, train_loss_acc)."""
    return bool(_NOT_A_CURVE_WORDS & set(_stem_words(stem)))


def loss_stem_split(stem: str) -> str | None:
    """What a file name's stem says, whatever the suffix (a JSON list of losses is named as a text one is:
    jyuno426_sym-math's valid_losses.json): "train", "eval", "" or None, as `loss_file_split`.

    >>> [loss_stem_split(s) for s in ("valid_losses", "train_losses", "loss_log", "history")]
    ['eval', 'train', '', None]
    """
    words = set(_stem_words(stem))
    glued = {w[:-len(end)] for w in words for end in ("losses", "loss") if w.endswith(end)}  # trainloss, val_losses
    if not glued & ({""} | _HELD_OUT_WORDS | _TRAIN_WORDS):
        return None
    words |= glued
    return "eval" if _HELD_OUT_WORDS & words else "train" if _TRAIN_WORDS & words else ""


def _stem_words(stem: str) -> list[str]:
    return _WORD.findall(re.sub(r"([a-z])([A-Z])", r"\1_\2", stem).lower())  # valLoss -> val_loss


def number_cells(line: str) -> tuple[str, ...] | None:
    """The cells of a line that holds numbers only (1 to `MAX_CELLS`), else None.

    >>> number_cells("1_1.8458632230758667"), number_cells("706.34\\t50.12\\t0"), number_cells("epoch 1 loss 2")
    (('1', '1.8458632230758667'), ('706.34', '50.12', '0'), None)
    """
    cells = tuple(c for c in _CELL_SPLIT.split(line.strip()) if c)
    if not 1 <= len(cells) <= MAX_CELLS or not all(_NUMBER.match(c) for c in cells):
        return None
    return cells


def numeric_lines(text: str) -> list[tuple[str, ...]] | None:
    """The cells of every line of `text` (a file, or its head: a last line with no line end may be cut and is left
    out where it is not the others' shape), None unless each line is numbers only, all of one width, and there are at
    least `MIN_LINES`."""
    listed = listed_numbers(text)
    if listed is not None:
        return listed if len(listed) >= MIN_LINES else None
    lines = [line for line in text.splitlines() if line.strip()]
    rows = [number_cells(line) for line in lines]
    if rows and not text.endswith(("\n", "\r")) and _cut(rows):
        rows = rows[:-1]
    if len(rows) < MIN_LINES or any(r is None for r in rows) or len({len(r) for r in rows}) != 1:
        return None
    return rows


def listed_numbers(text: str) -> list[tuple[str]] | None:
    """The numbers of a file that is one Python / JSON list of numbers, a cell a row; None for anything else (a list
    of lists or strings, words after the list). An unclosed list (a loop rewriting it was stopped, or the head of a
    long file was read) ends at its last number followed by a comma: a number after the last comma may be cut.

    >>> listed_numbers("[6.7, 5.9, 5.5]"), listed_numbers("[5.6, 5.0, 4.8,"), listed_numbers("[5.6, 5.0, 4.83")
    ([('6.7',), ('5.9',), ('5.5',)], [('5.6',), ('5.0',), ('4.8',)], [('5.6',), ('5.0',)])
    >>> listed_numbers("[[1, 6.7], [2, 5.9]]"), listed_numbers("[6.7, 5.9] done"), listed_numbers("6.7\\n5.9")
    (None, None, None)
    """
    body = text.strip()
    if not body.startswith("["):
        return None
    closed = body.endswith("]")
    if not closed and "]" in body:
        return None  # words after the list
    cells = [c.strip() for c in body[1:-1 if closed else None].split(",")]
    if not closed:
        cells = cells[:-1]  # after the last comma: nothing, or a number that may be cut
    elif cells[-1] == "":
        cells = cells[:-1]  # a trailing comma
    if not all(_NUMBER.match(c) for c in cells):
        return None
    return [(c,) for c in cells]


_PAIR = re.compile(r"(\d{1,9}):\s*(\S+?)\s*\|")
# Each part of a field reads characters no other part may (a value ends at its `|` or space; the spaces after a colon
# are the value's own): a line that fails is answered at once, not after every split of its fields is tried.
_PAIR_LINE = re.compile(r"^(?:\s*\d{1,9}:\s*[^\s|]+\s*\|)+\s*$")
_SETTINGS_LINE = re.compile(r"^(?:\s*[A-Za-z][\w.-]*:[^,:|]*,)+\s*$")


def counted_pairs(text: str) -> list[tuple[int, str, str]] | None:
    """The (launch, counter, loss) of each pair of a file of `i: loss | ` lines, each launch's after its settings line
    (module docstring; the launch counts the settings lines before the pair), at least `MIN_LINES` pairs; None where
    any line is neither (a word, a field naming a loss, a pair whose value is no number). A last line with no line end
    that is neither (the head of a long file) may be cut and is left out.

    >>> counted_pairs("LR: 0.0001, RNN: GRU,\\n1: 8.8310 | \\nLR: 0.0001, RNN: LSTM,\\n1: 5.93 | 2: 5.83 | ")
    [(1, '1', '8.8310'), (2, '1', '5.93'), (2, '2', '5.83')]
    >>> counted_pairs("epoch: 1, loss: 2.3,\\n1: 2.31 | 2: 2.20 | 3: 2.11 | \\n") is None
    True
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and not text.endswith(("\n", "\r")) and not _PAIR_LINE.match(lines[-1]) \
            and not _SETTINGS_LINE.match(lines[-1]):
        lines = lines[:-1]
    pairs, launch = [], 0
    for line in lines:
        if _PAIR_LINE.match(line):
            found = _PAIR.findall(line)
            if not all(_NUMBER.match(value) for _, value in found):
                return None
            pairs += [(launch, counter, value) for counter, value in found]
        elif _SETTINGS_LINE.match(line) and "loss" not in line.lower():
            launch += 1
        else:
            return None
    return pairs if len(pairs) >= MIN_LINES else None


def _cut(rows: list[tuple[str, ...] | None]) -> bool:
    """Whether the last line (one with no line end) is not the shape of the first: cut where the head was read."""
    return rows[-1] is None or (rows[0] is not None and len(rows[-1]) != len(rows[0]))


def is_loss_numbers(text: str, split: str) -> bool:
    """Whether `text` (a file named as a loss, `split` what its name says) is a loss file of numbers only whose
    columns are told apart (module docstring)."""
    if counted_pairs(text) is not None:
        return True
    rows = numeric_lines(text)
    return rows is not None and loss_columns(rows, split) is not None


def loss_columns(rows: list[tuple[str, ...]], split: str) -> tuple[str, ...] | None:
    """Each column's part: "step" (the counter), a loss's name ("loss", "eval_loss"), "learning_rate", or "" (not
    read); None where the columns cannot be told apart (two counters, a split-named file with two losses, three
    losses, four columns that are not `step,loss,<unread>,lr`).

    >>> loss_columns([("1", "6.2"), ("2", "5.5"), ("3", "5.1")], "")
    ('step', 'loss')
    >>> loss_columns([("706.3", "50.1", "0"), ("47.8", "46.3", "1"), ("44.8", "44.9", "2")], "")
    ('loss', 'eval_loss', 'step')
    >>> loss_columns([("2.1",), ("1.5",), ("1.3",)], "eval")
    ('eval_loss',)
    >>> loss_columns([("0", "10.97", "27893.4", "0.000001"), ("1", "10.96", "121293.3", "0.000002"),
    ...               ("2", "10.92", "120805.0", "0.000003")], "")
    ('step', 'loss', '', 'learning_rate')
    """
    width = len(rows[0])
    if width == 4:
        return _step_loss_and_lr(rows, split)
    counters = [i for i in range(width) if _is_counter([r[i] for r in rows])]
    if len(counters) > 1 or (counters and width == 1):
        return None
    losses = width - len(counters)
    if losses == 1:
        names = ["eval_loss" if split == "eval" else "loss"]
    elif losses == 2 and split == "":
        names = ["loss", "eval_loss"]
    else:
        return None
    return tuple("step" if i in counters else names.pop(0) for i in range(width))


def _step_loss_and_lr(rows: list[tuple[str, ...]], split: str) -> tuple[str, ...] | None:
    """A four-number line read as a loop prints it, `step,loss,tok/s,lr` (wadkisson_Personal-Chatbot's
    loss_history.txt): a counter first, the loss (named by the split) next, and of the last two exactly one column of
    learning-rate-sized values; the other is not read. None for any other four numbers."""
    columns = [[r[i] for r in rows] for i in range(4)]
    if not _is_counter(columns[0]) or _is_counter(columns[1]) or _is_lr_sized(columns[1]):
        return None
    lr_sized = [i for i in (2, 3) if _is_lr_sized(columns[i])]
    if len(lr_sized) != 1:
        return None
    loss = "eval_loss" if split == "eval" else "loss"
    return tuple("step" if i == 0 else loss if i == 1 else "learning_rate" if i in lr_sized else "" for i in range(4))


# An Adam learning rate is 1e-6 to ~1e-3 (6e-4 in wadkisson_Personal-Chatbot's loop); a loss is not under 1e-2 at
# every line from its first
_MAX_LR = 1e-2


def _is_lr_sized(cells: list[str]) -> bool:
    """Every value above 0 and at most `_MAX_LR`: the size of a learning rate, never of a whole run's loss."""
    values = [float(c) for c in cells]
    return all(0 < v <= _MAX_LR for v in values)


def _is_counter(cells: list[str]) -> bool:
    """Whole numbers that count up by one stride (1, 2, 3 or 100, 200), starting again where a new launch appends."""
    if not all(_WHOLE.match(c) for c in cells):
        return False
    values = [int(c) for c in cells]
    ups = [b - a for a, b in zip(values, values[1:]) if b > a]
    restarts = sum(1 for a, b in zip(values, values[1:]) if b <= a)
    return bool(ups) and len(set(ups)) == 1 and restarts <= len(ups) // 10 + 1
