"""Reader of captured console output: HF Trainer dict lines and DeepSpeed loss-scale lines.

`read(path)` returns one LogRecords (format "stdout") from a text log (FORMATS.md sections 6, 8):

* HF dict lines, 4.x `{'loss': 0.0, 'grad_norm': nan, ...}` and 5.x `{'loss': '0', ...}` (floats
  printed as quoted strings), eval lines `{'eval_loss': ...}`, the closing
  `{'train_runtime': ..., 'train_loss': ...}`, ms-swift's printed dicts, text-generation-webui's
  `Step: N {...}` lines. Pairs are pulled out with a regex (ast.literal_eval rejects `nan`), each
  value through float(); a dict must hold a training key (loss, eval_*, learning_rate, ...).
* The step of a dict: an explicit one (`Step: N`, `'global_step/max_steps': '10/100'`); else the
  nearest training progress bar fragment before it (`| 10/100 [..., 1.2it/s]`, bars of other
  totals - eval, tokenizing - are ignored); else its position x logging_steps, logging_steps
  estimated from the run's total steps when the log tells them. `meta["step_inferred"]` says
  which rule gave the steps when it was not explicit.
* DeepSpeed: `OVERFLOW! ... Attempted loss scale: X, reducing to Y` (and the float, fused-optimizer
  and hysteresis variants) -> `overflow` = 1 and `loss_scale` = the new scale; `step=N, skipped=K`
  progress lines -> `skipped_steps` = K at N; "Current loss scale already at minimum" ->
  `loss_scale_at_minimum` = 1. Their step: the training bar when there is one (the step being
  computed, n + 1), else the nearest DeepSpeed progress line, else their count.

Lines can be glued together by `\\r` (tqdm); they are split on both `\\n` and `\\r`. Bytes that
are not UTF-8 are replaced, never fatal.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from ..timeline import LogRecords, canonical_metric, empty_frame
from ._filetime import file_mtime

FORMAT = "stdout"

_DICT = re.compile(r"(?:Step:\s*(?P<step>\d{1,18})\s*)?\{(?P<body>[^{}]*)\}")
_PAIR = re.compile(r"""['"](?P<key>[^'"]+)['"]\s*:\s*(?P<val>'[^']*'|"[^"]*"|[^,}\s]+)""")
_BAR = re.compile(r"\|\s*(?P<n>\d{1,18})/(?P<total>\d{1,18})\s*\[[^\]]*?(?:it/s|s/it)\]")
_OVERFLOW = re.compile(
    r"(?:OVERFLOW!|overflow!|Overflow detected)[^\n]*?Attempted loss scale:\s*(?P<old>[\d.]+)"
    r"(?:,\s*reducing to\s*(?P<new>[\d.]+)|,\s*but hysteresis is)")
_DS_PROGRESS = re.compile(r"\bstep=(?P<step>\d{1,18}),\s*skipped=(?P<skipped>\d{1,18})\b")
_AT_MINIMUM = "Current loss scale already at minimum"
_LOG_KEYS = {"loss", "grad_norm", "learning_rate", "epoch", "train_runtime", "train_loss",
             "global_step/max_steps", "global_step", "iteration"}
_EXPLICIT_STEP_KEYS = ("global_step/max_steps", "iteration", "global_step", "step")


def read(path: Path) -> LogRecords:
    """Training metrics and DeepSpeed loss-scale events of one console log (module docstring)."""
    path = Path(path)
    raw = path.read_bytes()
    text = raw.decode("utf-8", errors="replace")
    events = _scan(text)
    meta: dict = {}
    replaced = "\ufffd" in text and b"\xef\xbf\xbd" not in raw
    frame = _frame(events, meta)
    return LogRecords(source=str(path), format=FORMAT, frame=frame, meta=meta, mtime=file_mtime(path),
                      warnings=("bytes that are not UTF-8 were replaced",) if replaced else ())


def _scan(text: str) -> list[tuple]:
    """Everything of interest, in file order: ('bar', n, total), ('dict', step|None, pairs),
    ('overflow', new_scale|None), ('ds_step', step, skipped), ('at_minimum',)."""
    events: list[tuple] = []
    for piece in re.split(r"[\r\n]", text):
        if "{" in piece:
            for m in _DICT.finditer(piece):
                pairs = _pairs(m.group("body"))
                if pairs is not None:
                    events.append(("dict", int(m.group("step")) if m.group("step") else None, pairs))
        if "/" in piece and "[" in piece:
            for m in _BAR.finditer(piece):
                events.append(("bar", int(m.group("n")), int(m.group("total"))))
        if "ttempted loss scale" in piece:
            m = _OVERFLOW.search(piece)
            if m:
                events.append(("overflow", float(m.group("new") or m.group("old"))))
        if "skipped=" in piece:
            for m in _DS_PROGRESS.finditer(piece):
                events.append(("ds_step", int(m.group("step")), int(m.group("skipped"))))
        if _AT_MINIMUM in piece:
            events.append(("at_minimum",))
    return events


def _pairs(body: str) -> dict | None:
    """The numeric pairs of a dict body, or None when it is not a training log dict."""
    found = {m.group("key"): m.group("val") for m in _PAIR.finditer(body)}
    if not any(k in _LOG_KEYS or k.startswith("eval_") for k in found):
        return None
    pairs = {}
    for key, val in found.items():
        if key in _EXPLICIT_STEP_KEYS:
            pairs[key] = val.strip("'\"")
            continue
        try:
            pairs[key] = float(val.strip("'\""))
        except ValueError:  # '0:09:01', 'True', a list: not a scalar
            continue
    return pairs


def _frame(events: list[tuple], meta: dict) -> pd.DataFrame:
    train_total = _training_bar_total(events)
    dict_steps, how = _dict_steps(events, train_total)
    if how:
        meta["step_inferred"] = how
    rows: list[tuple[int, str, float]] = []
    ds = _deepspeed_steps(events, train_total)
    for i, event in enumerate(events):
        if event[0] == "dict":
            for key, value in event[2].items():
                if key not in _EXPLICIT_STEP_KEYS:
                    rows.append((dict_steps[i], canonical_metric(key), value))
        elif event[0] == "overflow":
            rows.append((ds[i], "overflow", 1.0))
            rows.append((ds[i], "loss_scale", event[1]))
        elif event[0] == "ds_step":
            rows.append((event[1], "skipped_steps", float(event[2])))
        elif event[0] == "at_minimum":
            rows.append((ds[i], "loss_scale_at_minimum", 1.0))
    if not rows:
        return empty_frame()
    steps, metrics, values = zip(*rows)
    return pd.DataFrame({"step": np.array(steps, dtype=np.int64), "metric": np.array(metrics, dtype=object),
                         "value": np.array(values, dtype=np.float64), "wall_time": np.full(len(rows), math.nan)})


def _training_bar_total(events: list[tuple]) -> int | None:
    """The total of the training progress bar: the one most often seen right before a loss dict."""
    last_bar, seen = None, Counter()
    for event in events:
        if event[0] == "bar":
            last_bar = event[2]
        elif event[0] == "dict" and "loss" in event[2] and last_bar is not None:
            seen[last_bar] += 1
    return seen.most_common(1)[0][0] if seen else None


def _dict_steps(events: list[tuple], train_total: int | None) -> tuple[dict[int, int], str]:
    """Step of every dict event (by index): explicit, else the training bar, else the position."""
    steps: dict[int, int] = {}
    rules: Counter = Counter()
    bar_n = None
    n_train, last = 0, 0
    every = _logging_steps_estimate(events, train_total)
    for i, event in enumerate(events):
        if event[0] == "bar" and event[2] == train_total:
            bar_n = event[1]
        if event[0] != "dict":
            continue
        pairs = event[2]
        is_train = "loss" in pairs
        n_train += is_train
        step = event[1] if event[1] is not None else _explicit_step(pairs)
        if step is None and bar_n is not None:
            step, rule = bar_n, "the training progress bar before each line"
        elif step is None:
            step = n_train * every if is_train else last
            rule = f"position x logging_steps ({every})"
        else:
            rule = ""
        if rule:
            rules[rule] += 1
        steps[i] = last = step
    return steps, "; ".join(f"{rule} ({n} lines)" for rule, n in rules.items())


def _explicit_step(pairs: dict) -> int | None:
    for key in _EXPLICIT_STEP_KEYS:
        value = pairs.get(key)
        if value is not None:
            head = str(value).split("/")[0].strip()
            if head.isdigit() and len(head) <= 18:  # fits the int64 step column
                return int(head)
    return None


def _logging_steps_estimate(events: list[tuple], train_total: int | None) -> int:
    """logging_steps from the run's total steps / the number of train lines, when it is clean.

    The total comes from the training bar, else the summary's train_runtime x
    train_steps_per_second (rounded by HF to 3 decimals, hence the tolerance).
    """
    n_train = sum(1 for e in events if e[0] == "dict" and "loss" in e[2])
    summary = next((e[2] for e in events if e[0] == "dict" and "train_runtime" in e[2]), {})
    total = train_total or summary.get("train_runtime", 0) * summary.get("train_steps_per_second", 0)
    if not n_train or not total or not math.isfinite(total):
        return 1
    every = round(total / n_train)
    return every if every >= 1 and abs(total / n_train - every) < 0.05 * every + 0.05 else 1


def _deepspeed_steps(events: list[tuple], train_total: int | None) -> dict[int, int]:
    """Step of each overflow / at-minimum event: training bar n + 1, else the nearest DeepSpeed
    `step=N` line (before or after), else the running count of such events."""
    targets = [i for i, e in enumerate(events) if e[0] in ("overflow", "at_minimum")]
    if not targets:
        return {}
    progress = [i for i, e in enumerate(events) if e[0] == "ds_step"]
    bar_n, bar_at = None, {}
    for i, event in enumerate(events):
        if event[0] == "bar" and (train_total is None or event[2] == train_total):
            bar_n = event[1]
        bar_at[i] = bar_n
    out = {}
    for count, i in enumerate(targets, 1):
        if bar_at[i] is not None:
            out[i] = bar_at[i] + 1
        elif progress:
            nearest = min(progress, key=lambda p: abs(p - i))
            out[i] = events[nearest][1]
        else:
            out[i] = count
    return out
