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
  estimated from the run's total steps when the log tells them; where it does not, its own
  `epoch` x the steps per epoch of the Trainer's banner (`Num Epochs`, `Total optimization steps`). `meta["step_inferred"]` says
  which rule gave the steps when it was not explicit.
* DeepSpeed: `OVERFLOW! ... Attempted loss scale: X, reducing to Y` (and the float, fused-optimizer
  and hysteresis variants; a hand-written scaler's `OVERFLOW! Scale value X -> Y`) -> `overflow` = 1
  and `loss_scale` = the new scale; `step=N, skipped=K`
  progress lines -> `skipped_steps` = K at N; "Current loss scale already at minimum" ->
  `loss_scale_at_minimum` = 1. Their step: the training bar when there is one (the step being
  computed, n + 1), else the next step line's step, else the nearest DeepSpeed progress line,
  else their count.
* DeepSpeed-Chat's evaluation, epoch-loss and PPO lines (`deepspeed_chat`).
* The HF Trainer's results tables, its notebook progress table copied as text and its model card's `### Training
  results` (`results_table`).
* The MetricLogger lines of DeiT / MAE / DETR / DINO / LLaMA-Adapter (`Epoch: [E]  [N/M]  ... closs: M (A)`; values
  smoothed over a window, said in a note) and step lines of the pre-training stacks and small training scripts
  (`pretrain_lines`), tqdm bars with a
  loss in their postfix among them (kept where the postfix changed; epoch bars numbered on), a hand-written loop's
  lines and MiniMind's `Epoch:[E/N](n/M)` lines (their counters numbered on across epochs: `step_numbering`).

Lines can be glued together by `\\r` (tqdm); they are split on both `\\n` and `\\r`. Bytes that
are not UTF-8 are replaced, never fatal.
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..timeline import LogRecords, canonical_metric, empty_frame
from ._filetime import file_mtime
from ..decoding import decode_text
from ._frames import without_placeholders, without_unit_loss_scale
from . import command_line, megatron_args, mmengine_config, namespace_args, printed_configs
from .stated_logging import StatedLogging, stated_logging
from .step_numbering import numbered_on, uncounted_lines_numbered
from .banners import find_banners, may_hold_banners
from .pretrain_lines import (ANSI, STEP_LINE_MARKERS, TQDM_LOSS_POSTFIX, ComposerBlock, KerasEpochs, MlxTable,
                             NemoRLBlock, OlmoBlock, StepLine, YamlSteps, DashedSteps, has_generic_line, parse_line)
from .deepspeed_chat import MARKERS as CHAT_MARKERS, DeepSpeedChat
from .results_table import MARKERS as TABLE_MARKERS, ResultsTable, html_tables_as_text

FORMAT = "stdout"

# a dict line, with the step a prefix may give: `Step: 12 {...}`, OpenRLHF's `✨ Global step 12: {...}`, slime's
# `step 12: {...}` and `rollout 12: {...}`
_DICT = re.compile(r"(?:(?:Step:|Global step|\bstep|\brollout)\s*(?P<step>\d{1,18}):?\s*)?\{(?P<body>[^{}]*)\}")
_PAIR = re.compile(r"""['"](?P<key>[^'"]+)['"]\s*:\s*(?P<val>'[^']*'|"[^"]*"|[^,}\s]+)""")
_BAR = re.compile(r"\|\s*(?P<n>\d{1,18})/(?P<total>\d{1,18})\s*\[[^\]]*?(?:it/s|s/it)\]")
_OVERFLOW = re.compile(
    r"(?:OVERFLOW!|overflow!|Overflow detected)[^\n]*?Attempted loss scale:\s*(?P<old>[\d.]+)"
    r"(?:,\s*reducing to\s*(?P<new>[\d.]+)|,\s*but hysteresis is)")
# A hand-written scaler's `OVERFLOW! Scale value 4294967296 -> 2147483648` (Barber0/LLM-pretrain loss_scaler.py).
_SCALE_VALUE = re.compile(r"OVERFLOW! Scale value (?P<old>\d+) -> (?P<new>\d+)")
# apex amp's dynamic loss scaler (apex/amp/scaler.py; `loss scaler N` names which of several, since 2019): `Gradient
# overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0`, before it `Gradient overflow.  Skipping step,
# reducing loss scale to 32768.0` (apex/fp16_utils, the FP16_Optimizer of NVIDIA's BERT and Megatron scripts)
_APEX_OVERFLOW = re.compile(r"Gradient overflow\.\s+Skipping step,\s*(?:loss scaler \d+\s*)?reducing loss scale to\s*"
                            r"(?P<new>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)")
# NVIDIA's DeepLearningExamples scripts log the scale through DLLogger when the scaler skipped a step (BERT's
# run_pretraining.py: `dllogger.log(step="PARAMETER", data={"loss_scale": ...})` in its overflow branch): `DLL
# 2020-06-04 01:04:20.355678 - PARAMETER loss_scale : 2.9103830456733704e-11`
_DLL_SCALE = re.compile(r"^DLL (?:[\d\-]+[ T][\d:.]+ )?- PARAMETER loss_scale : (?P<new>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)\s*$")
# an overflow printed inside the optimizer step of a script that prints its own step lines: dated by those lines
_AT_STEP_LINE = "at_step_line"
_DS_PROGRESS = re.compile(r"\bstep=(?P<step>\d{1,18}),\s*skipped=(?P<skipped>\d{1,18})\b")
_AT_MINIMUM = "Current loss scale already at minimum"
_LOG_KEYS = {"loss", "grad_norm", "learning_rate", "epoch", "train_runtime", "train_loss", "policy_loss", "gpt_loss",
             "embedding_loss", "loss/train", "loss/eval",
             "global_step/max_steps", "global_step", "iteration"}
# ‘ ’ “ ” read as the ' and " of a printed dict (`{‘loss’: 1.45, ...}` pasted through an editor that curls quotes)
_TYPOGRAPHIC_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_EXPLICIT_STEP_KEYS = ("global_step/max_steps", "iteration", "global_step", "step", "steps",  # steps: see _explicit_step
                       "system/global_step")  # ROLL's


# What torchrun (`[rank0]: `, `[default0]: `) and srun before it (`0: [default0]: `) put before each line of a process:
# gone, so that a line reads as that process printed it (block and table shapes are anchored at the line's start);
# the copies every rank prints of one step are dropped later (`_without_rank_copies`).
_LAUNCHER_PREFIX = re.compile(r"^(?:\d+: )?\[(?:rank|default)\d+\]: ?", re.MULTILINE)


# What a log collector puts before every line: `docker logs -t` / `kubectl logs --timestamps` an RFC 3339 time
# (`2024-05-01T12:00:00.123456789Z `), `srun --label` the task's number (`0: `; taken off only where nearly every line
# has one, since a script may print `0: ...` itself)
_RFC3339_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}) ", re.MULTILINE)
_TASK_LABEL = re.compile(r"^\d{1,4}: ", re.MULTILINE)
# Ray's prefix on what an actor or task prints (`(pretraining, pid=4112) `, `(MyActor pid=4112, ip=10.0.0.1) `), inside
# srun's label when both are there; taken off, like the task's label, only where nearly every line has one
_RAY_ACTOR = re.compile(r"^\((?:[\w.:-]+,? )?pid=\d{1,9}(?:, ip=[\d.]+)?\) ", re.MULTILINE)


def _without_line_stamps(text: str) -> str:
    if _RFC3339_STAMP.match(text):
        text = _RFC3339_STAMP.sub("", text)
    for label in (_TASK_LABEL, _RAY_ACTOR):
        text = _without_collector_label(text, label)
    return text


def _without_collector_label(text: str, label: re.Pattern) -> str:
    """The text without `label` at its lines' starts, where a few distinct labels stand on nearly every line (a
    loop's own `100: loss 2.3` lines count up instead)."""
    if not label.match(text):
        return text
    head = [line for line in text[:200_000].split("\n")[:500] if line.strip()]
    labels = [m.group(0) for line in head if (m := label.match(line))]
    if head and len(labels) >= 0.9 * len(head) and len(set(labels)) <= _MAX_TASK_LABELS:
        text = label.sub("", text)
    return text


_MAX_TASK_LABELS = 16


def read(path: Path) -> LogRecords:
    """Training metrics and DeepSpeed loss-scale events of one console log (module docstring)."""
    path = Path(path)
    text, not_utf8 = decode_text(path.read_bytes())
    return read_console(text, path, [not_utf8] if not_utf8 else [])


def read_console(text: str, path: Path, warnings: list[str]) -> LogRecords:
    """What `read` gives for a console's text once decoded (a notebook's cell outputs come this way too)."""
    text = ANSI.sub("", text) if "\x1b" in text else text
    text = text.replace("\x00", "") if "\x00" in text else text  # a file overwritten while its writer appended
    text = _LAUNCHER_PREFIX.sub("", text) if "]:" in text else text
    text = _without_line_stamps(text.replace("\r\n", "\n") if "\r\n" in text else text)
    text = html_tables_as_text(text)
    events = _scan(text)
    meta: dict = {}
    warnings = warnings + _step_line_warnings(events)
    texts = _argument_texts(text)
    flavour = _dict_flavour(events)
    stated = stated_logging(texts, path) if flavour == "hf_trainer" else None  # (the Trainer's logging_steps)
    frame = _frame(events, meta, _steps_per_epoch(text), _stated_plan(text), stated)
    uncounted = sum(1 for e in events if e[0] == "line" and (e[1].kind in ("uncounted", "printed_tensor")
                                                              or e[1].kind == "loss_print" and "loss" in e[1].names))
    notes: tuple[str, ...] = ()
    if uncounted:
        said = f"{uncounted} loss lines print no step: each counted as one step, numbered 1 to {uncounted} in file order"
        meta.setdefault("step_inferred", said)
        notes = (said,) if not frame.empty else ()
    if not frame.empty and any(e[0] == "line" and e[1].kind == "metric_logger" for e in events):
        notes += (_SMOOTHED_NOTE,)
    notes += _dict_numbering_notes(meta.get("step_inferred", ""), sum(1 for e in events if e[0] == "dict"
                                                                       and "loss" in e[2]))
    meta.update(console_facts(text))
    if flavour:
        meta["dict_lines"] = flavour
    kinds = kinds_of(events)
    if any(e[0] == "line" and e[1].kind.startswith("results_table") for e in events):
        meta.setdefault("trainer_table", "the Hugging Face Trainer's results table (its notebook or model-card form)")
    banners = find_banners(text.splitlines(), str(path)) if may_hold_banners(text) else ()
    return LogRecords(source=str(path), format=FORMAT, frame=frame, texts=texts, meta=meta,
                      mtime=file_mtime(path), console_kinds=kinds, banners=banners,
                      warnings=tuple(warnings), notes=notes)


def _dict_numbering_notes(how: str, dicts: int) -> tuple[str, ...]:
    """What the user is told where the printed dicts' steps are not the run's own: numbered by their order alone
    (nothing dates them), or by position x the logging interval the run's configuration states."""
    if dicts and how and all(part.startswith(_BY_ORDER) for part in how.split("; ")):
        return (f"{dicts} printed training dicts carry no step, and no progress bar, closing summary or stated "
                "logging_steps dates them: their steps are their order in the log (1, 2, 3 ...), not the run's "
                "optimizer steps",)
    stated = next((part for part in how.split("; ") if _AS_STATED in part), None)
    return (f"the printed dicts carry no step: numbered {stated}",) if stated else ()


_SMOOTHED_NOTE = ("MetricLogger lines (`Epoch: [E]  [N/M]  ... loss: median (average)`): each training value read is "
                  "the median of its meter's window of recent iterations (about 20), a smoothed value, not the "
                  "iteration's own; an evaluation's (`Test:`) is its mean over the batches")


def _dict_flavour(events: list[tuple]) -> str | None:
    """Whose printed dicts a console holds: "swift" (ms-swift's carry `global_step/max_steps`), "hf_trainer" (the
    Trainer's ProgressCallback prints `{'loss': ..., 'learning_rate': ..., 'epoch': ...}` at each logging step, never
    a `step` key;
    TRL's and LLaMA-Factory's trainers are Trainers and print the same), or None."""
    dicts = [e[2] for e in events if e[0] == "dict"]
    if any("global_step/max_steps" in d for d in dicts):
        return "swift"
    if any("epoch" in d and ("loss" in d and ("learning_rate" in d or "grad_norm" in d) or "eval_loss" in d)
           and "step" not in d for d in dicts):  # a hand-written `print({'epoch': e, 'step': s, 'loss': l})` is not
        return "hf_trainer"
    return None


def _argument_texts(text: str) -> dict[str, str]:
    """Megatron's printed arguments as texts[megatron_args.TEXT_KEY], a script's argparse `Namespace(...)` line as
    texts[namespace_args.TEXT_KEY], an HF script's printed TrainingArguments and model config
    (`printed_configs`), an mmengine runner's printed config (`mmengine_config`) and DeepSpeed's launch line
    (`command_line`), each as JSON, when the log has them."""
    out = {}
    if "end of arguments" in text:
        args = megatron_args.parse_block(text.splitlines())
        if args:
            out[megatron_args.TEXT_KEY] = json.dumps(args)
    namespace = namespace_args.parse(text)
    if namespace:
        out[namespace_args.TEXT_KEY] = json.dumps(namespace)
    for key, found in ((printed_configs.ARGS_KEY, printed_configs.training_arguments(text)),
                       (mmengine_config.TEXT_KEY, mmengine_config.parse(text)),
                       (command_line.TEXT_KEY, command_line.console_arguments(text)),
                       (printed_configs.MODEL_CONFIG_KEY, printed_configs.model_config(text))):
        if found:
            out[key] = json.dumps(found)
    return out


# The Trainer's `log_metrics("eval", metrics)` (examples' run_clm.py and kin, trainer_pt_utils.py): `***** eval metrics
# *****` then `  eval_loss               =     1.6123` rows; the closing evaluation's only print in a console
_EVAL_METRICS_HEAD = re.compile(r"^\s*\*{5} eval metrics \*{5}\s*$")
_METRICS_ROW = re.compile(r"^\s+(\w+)\s*=\s*(\S+)\s*$")


def _number_or_none(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:  # `0:00:01.20`, `456789GF`
        return None


def _scan(text: str) -> list[tuple]:
    """Everything of interest, in file order: ('bar', n, total), ('dict', step|None, pairs),
    ('overflow', new_scale|None), ('ds_step', step, skipped), ('at_minimum',)."""
    events: list[tuple] = []
    pieces = re.split(r"\r\n|[\r\n]", text)  # a CRLF is one break (an empty piece would end an OLMo block)
    olmo = OlmoBlock()
    composer = ComposerBlock() if "]:\n\t " in text or "]:\r\n\t " in text else None
    nemo_rl = NemoRLBlock() if "= Step " in text and "\u2022" in text else None
    keras = KerasEpochs() if "Epoch " in text and " - loss: " in text else None
    mlx = MlxTable() if "train_loss" in text and "iter" in text else None
    yaml_steps = YamlSteps() if "\nStep " in text and ":\n  " in text else None
    dashed = DashedSteps() if " STEP " in text and ":\t" in text else None
    # most logs have none: skip the work
    step_lines = any(marker in text for marker in STEP_LINE_MARKERS) or bool(TQDM_LOSS_POSTFIX.search(text)) or (
        has_generic_line(text))
    table = ResultsTable() if any(marker in text for marker in TABLE_MARKERS) else None
    chat = DeepSpeedChat() if any(marker in text for marker in CHAT_MARKERS) else None
    block: dict | None = None  # the Trainer's `***** eval metrics *****` block being read
    stepped = False  # a step line was read (what comes before it is the script's start-up)
    dumped: list[int] = []  # DLLogger loss_scale lines before the first step line
    for index, piece in enumerate(pieces):
        if block is not None:
            row = _METRICS_ROW.match(piece)
            if row:
                value = _number_or_none(row.group(2))
                if value is not None:
                    block[row.group(1)] = value
                continue
            if block.get("eval_loss") is not None:
                events.append(("dict", None, block))
            block = None
        if "metrics *****" in piece and _EVAL_METRICS_HEAD.match(piece):
            block = {}
            continue
        owner = next((table for table in (keras, mlx, yaml_steps, dashed) if table is not None and table.owns(piece)),
                     None)
        if owner is not None:  # a table's line is its own: no other reader takes it
            record = owner.feed(piece)
            if record:
                events.append(("line", record))
            continue
        record = step_lines and (olmo.feed(piece) or (composer is not None and composer.feed(piece))
                                 or (nemo_rl is not None and nemo_rl.feed(piece))
                                 or parse_line(piece, last_line=index == len(pieces) - 1))
        if table is not None and not record:
            record = table.feed(piece)
        if chat is not None and not record:
            record = chat.feed(piece)
        elif chat is not None:
            chat.saw_step(record.step)
        if record:
            events.append(("line", record))
            stepped = True
        if "{" in piece or "/" in piece and "[" in piece:
            events.extend(_dicts_and_bars(piece))
        if "ttempted loss scale" in piece or "Scale value" in piece:
            m = _OVERFLOW.search(piece) or _SCALE_VALUE.search(piece)
            if m:
                events.append(("overflow", float(m.group("new") or m.group("old"))))
        elif "Gradient overflow." in piece:
            m = _APEX_OVERFLOW.search(piece)
            if m:
                events.append(("overflow", float(m.group("new")), _AT_STEP_LINE))
        elif piece.startswith("DLL ") and "PARAMETER" in piece:
            m = _DLL_SCALE.match(piece)
            if m:
                if not stepped:
                    dumped.append(len(events))
                events.append(("overflow", float(m.group("new")), _AT_STEP_LINE))
        if "skipped=" in piece:
            for m in _DS_PROGRESS.finditer(piece):
                events.append(("ds_step", int(m.group("step")), int(m.group("skipped"))))
        if _AT_MINIMUM in piece:
            events.append(("at_minimum",))
    if block and block.get("eval_loss") is not None:
        events.append(("dict", None, block))
    if len(dumped) == 1:  # one, before any step: the script's arguments dumped a line each, its configured scale
        del events[dumped[0]]
    for reader in (olmo, composer, nemo_rl, yaml_steps, dashed):
        last = reader.close() if reader is not None else None
        if last is not None:
            events.append(("line", last))
    return numbered_on(_nemo2_evaluations_once(_tqdm_postfix_changes(_without_rank_copies(
        uncounted_lines_numbered(events)))))


def _dicts_and_bars(piece: str) -> list[tuple]:
    """The printed dicts and progress-bar readings of one piece of text, in the order they stand in it. A capture whose
    carriage returns were deleted holds on one line every bar redraw since the last dict, then the dict: the reading
    just before a dict is the step it was logged at (the Trainer moves its bar on before it logs)."""
    if "\u2018" in piece or "\u201c" in piece:  # typographic quotes, as an editor or a web page pasted them
        piece = piece.translate(_TYPOGRAPHIC_QUOTES)
    found: list[tuple[int, tuple]] = []
    if "{" in piece:
        for m in _DICT.finditer(piece):
            pairs = _pairs(m.group("body"))
            if pairs is not None:
                found.append((m.start(), ("dict", _prefix_step(m, piece), pairs)))
    if "/" in piece and "[" in piece:
        for m in _BAR.finditer(piece):
            found.append((m.start(), ("bar", int(m.group("n")), int(m.group("total")))))
    return [event for _, event in sorted(found, key=lambda f: f[0])]


def _nemo2_evaluations_once(events: list[tuple]) -> list[tuple]:
    """NeMo 2.0's progress printer repeats the last validation's `val_loss` on every training line after it (a
    progress-bar metric): an eval value is kept where it changes, not where it is printed again. Before the first
    validation it was never there, so the first line after it averages it over part of the interval (0.975 for a
    val_loss of 1.95): a first value under the next line's is that partial average, left out."""
    lines = [i for i, e in enumerate(events) if e[0] == "line" and e[1].kind == "nemo2"]
    if not lines:
        return events
    out = list(events)
    kept: dict[str, float] = {}
    for at, i in enumerate(lines):
        record: StepLine = events[i][1]
        following = dict(events[lines[at + 1]][1].metrics) if at + 1 < len(lines) else {}
        metrics = []
        for name, value in record.metrics:
            if name.startswith("eval_"):
                partial = name not in kept and following.get(name, value) > value
                if partial or kept.get(name) == value:
                    kept.setdefault(name, math.nan)  # (a NaN is no value: the next line's is kept)
                    continue
                kept[name] = value
            metrics.append((name, value))
        out[i] = ("line", replace(record, metrics=tuple(metrics)))
    return out


def _tqdm_postfix_changes(events: list[tuple]) -> list[tuple]:
    """tqdm postfix lines numbered on across a bar that restarts (each epoch, with or without `Epoch E` in its
    label: (epoch - the first epoch) x total + n, or the totals of the bars before it + n), and kept where the
    postfix changed: each redraw repeats the last value set. A value that never changes is all the log has, so
    then every redraw is kept (a loss stuck at 0.0 for 300 steps is 300 points, not one)."""
    postfix = [e[1] for e in events if e[0] == "line" and e[1].kind == "tqdm_postfix"]
    if not postfix:
        return events
    first_epoch = min((dict(r.metrics)["epoch"] for r in postfix if "epoch" in dict(r.metrics)), default=None)
    values_of = [tuple(pair for pair in r.metrics if pair[0] != "epoch") for r in postfix]
    keep_all = len(set(values_of)) <= 2
    out: list[tuple] = []
    last: dict = {}  # per bar (its total): the last values kept, the last n, the steps of the passes before
    last_n: dict = {}
    offset: dict = {}
    trained_to: dict = {}  # epoch (or _LAST) -> the last training step its bar reached
    for event in events:
        if event[0] == "line" and event[1].kind == "tqdm_postfix":
            record: StepLine = event[1]
            bar = record.total
            values = tuple(pair for pair in record.metrics if pair[0] != "epoch")
            epoch = dict(record.metrics).get("epoch")
            if epoch is None and bar and record.step < last_n.get(bar, 0):
                offset[bar] = offset.get(bar, 0) + bar  # the bar started over: the next pass
            last_n[bar] = record.step
            if epoch is not None and bar:
                event = ("line", replace(record, step=int((epoch - first_epoch) * bar) + record.step))
            elif offset.get(bar):
                event = ("line", replace(record, step=offset[bar] + record.step))
            event = _evaluation_placed(event, trained_to, epoch)  # (a redraw left out below still says where it is)
            if (values, epoch) == last.get(bar) and not keep_all:  # (another epoch's pass is no redraw)
                continue
            last[bar] = (values, epoch)
        elif event[0] == "line" and event[1].kind == "generic_epoch" and trained_to:
            event = _evaluation_placed(event, trained_to, dict(event[1].metrics).get("epoch"))
        out.append(event)
    return out


def _evaluation_placed(event: tuple, trained_to: dict, epoch: float | None) -> tuple:
    """An evaluation's record (a validation bar's, or an `Epoch: E, Validation Loss: X` line) at the training step
    its epoch's bar reached, not at its own count of eval batches or epochs; a training record is noted as the
    step its epoch reached."""
    record: StepLine = event[1]
    evaluated = all(name.startswith("eval_") for name, _ in record.metrics if name != "epoch")
    if not evaluated:
        trained_to[epoch] = trained_to[_LAST] = record.step
        return event
    if epoch in trained_to or (epoch is None and _LAST in trained_to):  # (an `Evaluating` bar names no epoch)
        return ("line", replace(record, step=trained_to[epoch if epoch is not None else _LAST]))
    return event


_LAST = "last"  # trained_to's key for the last training step seen, whatever its epoch


def kinds_of(events: list[tuple]) -> tuple[str, ...]:
    """The kinds of step line among the events ("megatron", "olmo", ...), in the order first seen."""
    return tuple(dict.fromkeys(e[1].kind for e in events if e[0] == "line"))


def _without_rank_copies(events: list[tuple]) -> list[tuple]:
    """Drop a step line that repeats one already seen at the same step (every rank printing it).

    Only copies within one stretch of the same step go; a resume that logs a step again later
    (after other steps) is kept, so the timeline still sees the attempt.
    """
    out, seen, current = [], set(), None
    for event in _epoch_line_copies_dropped(events):
        if event[0] == "line" and event[1].kind != "generic_epoch":
            record: StepLine = event[1]
            if record.step != current:
                current, seen = record.step, set()
            key = (record.kind, record.metrics)
            if key in seen:
                continue
            seen.add(key)
        out.append(event)
    return out


def _epoch_line_copies_dropped(events: list[tuple]) -> list[tuple]:
    """Epoch-only lines (kind "generic_epoch") less their rank copies: only where every such line comes k times in a
    row (k ranks printing each; the last may have fewer, the log cut before every rank printed it), one of each
    kept. Their step is the epoch, so a loop printing one a batch repeats a loss within an epoch (a bf16 loss takes
    few values) without any rank printing it twice."""
    at = [i for i, e in enumerate(events) if e[0] == "line" and e[1].kind == "generic_epoch"]
    runs, i = [], 0
    while i < len(at):
        j = i
        while j + 1 < len(at) and events[at[j + 1]][1] == events[at[i]][1]:
            j += 1
        runs.append(j - i + 1)
        i = j + 1
    whole = runs[:-1] if len(runs) > 1 and runs[-1] < runs[0] else runs  # the last line's copies may be cut off
    if not runs or min(whole) < 2 or len(set(whole)) > 1:
        return events
    copies, k = set(), runs[0]
    for n in range(0, len(at), k):
        copies.update(at[n + 1:n + k])
    return [e for i, e in enumerate(events) if i not in copies]


def _step_line_warnings(events: list[tuple]) -> list[str]:
    cut = [e[1] for e in events if e[0] == "line" and e[1].cut]
    return [f"the last line (step {r.step}) is cut mid-write; its complete fields were kept" for r in cut]


def _prefix_step(m: re.Match, line: str) -> int | None:
    """The step a dict line's prefix names; not a lowercase `step N:` on a line that names an epoch too (a loop's
    `epoch 2 step 10: {...}` counts within the epoch)."""
    if not m.group("step"):
        return None
    counts_within = m.group(0).startswith(("step", "rollout")) and "epoch" in line[:m.start()].lower()
    return None if counts_within else int(m.group("step"))


def _pairs(body: str) -> dict | None:
    """The numeric pairs of a dict body, or None when it is not a training log dict."""
    # ROLL tags a metric with its reduction (`actor/pg_loss@sum`); slime prefixes `train/`
    found = {m.group("key").split("@")[0]: m.group("val") for m in _PAIR.finditer(body)}
    if not any(k in _LOG_KEYS or k.startswith("eval_") or canonical_metric(k) in _LOG_KEYS for k in found):
        return None
    pairs = {}
    for key, val in found.items():
        if key in _EXPLICIT_STEP_KEYS:
            pairs[key] = val.strip("'\"")
            continue
        try:
            pairs[key] = float(_WRAPPED.sub(lambda m: m.group(1) or m.group(2), val.strip("'\"")))
        except ValueError:  # '0:09:01', 'True', a list: not a scalar
            continue
    for theirs, ours in _OWN_LOSS_KEYS:  # the step rules below tell a training dict by its `loss`
        if theirs in pairs and ours not in pairs:
            pairs[ours] = pairs.pop(theirs)
    return pairs


# Trainers that print the loss under a name of their own: SetFit's `embedding_loss`, the HF course's Accelerate loop's
# `loss/train` (and `loss/eval`), OpenRLHF's `gpt_loss`
_OWN_LOSS_KEYS = (("embedding_loss", "loss"), ("eval_embedding_loss", "eval_loss"), ("loss/train", "loss"),
                  ("loss/eval", "eval_loss"), ("gpt_loss", "loss"))


# A scalar printed inside its wrapper: numpy 2's repr (`np.float64(0.25)`) or a torch tensor's (`tensor(2.31,
# device='cuda:0')`, cut at its first comma by `_PAIR`).
_WRAPPED = re.compile(r"^(?:np|numpy)\.(?:float|int)\d*\(([^()]*)\)$|^tensor\(([^(),]*)\)?$")


def _frame(events: list[tuple], meta: dict, per_epoch: float | None = None,
           plan: tuple[int, int] | None = None, stated: StatedLogging | None = None) -> pd.DataFrame:
    train_total = _training_bar_total(events)
    dict_steps, how = _dict_steps(events, train_total, per_epoch, stated)
    if how:
        meta["step_inferred"] = how
    steps: list[int] = []
    metrics: list[str] = []
    values: list[float] = []

    def add(step: int, names, numbers) -> None:
        metrics.extend(names)
        values.extend(numbers)
        steps.extend([step] * (len(metrics) - len(steps)))

    ds = _deepspeed_steps(events, train_total)
    for i, event in enumerate(events):
        if event[0] == "dict":
            pairs = [(canonical_metric(k), v) for k, v in event[2].items() if k not in _EXPLICIT_STEP_KEYS]
            add(dict_steps[i], [k for k, _ in pairs], [v for _, v in pairs])
        elif event[0] == "overflow":
            add(ds[i], ("overflow", "loss_scale"), (1.0, event[1]))
        elif event[0] == "ds_step":
            add(event[1], ("skipped_steps",), (float(event[2]),))
        elif event[0] == "at_minimum":
            add(ds[i], ("loss_scale_at_minimum",), (1.0,))
        elif event[0] == "line":
            record: StepLine = event[1]
            add(record.step, record.names, record.values)
            if record.total is not None:
                meta["max_steps"] = record.total
    if not steps:
        return empty_frame()
    frame = pd.DataFrame({"step": np.array(steps, dtype=np.int64), "metric": np.array(metrics, dtype=object),
                          "value": np.array(values, dtype=np.float64), "wall_time": np.full(len(steps), math.nan)})
    if plan and "epoch" not in metrics and "loss" in metrics and _plan_fits(plan, steps, events):
        frame = _with_epochs(frame, plan[1] / plan[0])
        meta["epoch_inferred"] = f"step / {plan[1] / plan[0]:g} steps per epoch, as the log's plan line states them"
    elif per_epoch and "epoch" not in metrics and "loss" in metrics and _results_table_only(events):
        # a results table has no epoch column; the Trainer's (or Unsloth's) banner says how many steps an epoch makes
        frame = _with_epochs(frame, per_epoch)
        meta["epoch_inferred"] = f"step / {per_epoch:g} steps per epoch, as the trainer's banner states them"
    return without_unit_loss_scale(without_placeholders(frame) if "megatron" in kinds_of(events) else frame)


def _results_table_only(events: list[tuple]) -> bool:
    """Whether every step of the log comes from a results table (optimizer steps, as the banner counts them)."""
    kinds = {e[1].kind for e in events if e[0] == "line"}
    return kinds == {"results_table"} and not any(e[0] == "dict" for e in events)


def _plan_fits(plan: tuple[int, int], steps: list[int], events: list[tuple]) -> bool:
    """A plan line's total is this run's: the training bar counts to it (the same steps, not micro-batches) and
    no step goes past it (one plan line of another run in the same log, or a resume, would)."""
    totals = {e[1].total for e in events if e[0] == "line" and e[1].total}
    return plan[1] in totals and max(steps) <= plan[1]


def _with_epochs(frame: pd.DataFrame, per_epoch: float) -> pd.DataFrame:
    """An `epoch` at every step that logged a loss, where the log prints none beside it but says how many steps
    an epoch makes: the step / steps-per-epoch that the HF Trainer logs as its own `epoch`."""
    losses = frame.index[frame["metric"] == "loss"]
    steps = frame.loc[losses, "step"].to_numpy()
    epochs = pd.DataFrame({"step": steps, "metric": "epoch", "value": steps / per_epoch, "wall_time": math.nan},
                          index=losses + 0.5)  # each right after its loss: the rows' order is the log's (resumes)
    return pd.concat([frame, epochs]).sort_index().reset_index(drop=True)


def _training_bar_total(events: list[tuple]) -> int | None:
    """The total of the training progress bar: the one most often seen right before a loss dict; where no bar comes
    before one (a paste of the log's tail, its finished bar last), the total of a finished bar after the closing
    summary dict (`train_runtime`)."""
    last_bar, seen = None, Counter()
    for event in events:
        if event[0] == "bar":
            last_bar = event[2]
        elif event[0] == "dict" and "loss" in event[2] and last_bar is not None:
            seen[last_bar] += 1
    if seen:
        return seen.most_common(1)[0][0]
    summary = next((i for i, e in enumerate(events) if e[0] == "dict" and "train_runtime" in e[2]), None)
    finished = [e[2] for e in events[summary:] if e[0] == "bar" and e[1] == e[2]] if summary is not None else []
    return finished[-1] if finished else None


# What a console log prints about the run's setup, for the run configuration (see `console_facts`).
# DeepSpeed's config print: `bfloat16_enabled ..... True` (before 0.16), `float16_config ..... enabled=True ...` (later)
_DS_PRECISION = re.compile(r"^.*?\b(?:(bfloat16|fp16)_enabled\s*\.{3,}\s*True|(bfloat16|float16)_config\s*\.{3,}\s*"
                           r"enabled=True\b.*?)\s*$", re.MULTILINE)
# ... and the DeepSpeed engine's own start-up lines: the run went through a DeepSpeed engine
_DS_ENGINE = re.compile(r"^.*?\bDeepSpeedEngine configuration:\s*$", re.MULTILINE)
# OLMo's printed TrainConfig (`precision='amp_bf16'`), Composer's printed YAML config (`precision: amp_bf16`)
_AMP_PRECISION = re.compile(r"\bprecision(?:='amp_(bf16|fp16)'|: amp_(bf16|fp16)\b)|compute dtype: torch\.(bfloat16|float16)\b")
# torchtune's recipes: `Model is initialized with precision torch.bfloat16.` (the dtype it trains in: no autocast)
_TORCHTUNE_PRECISION = re.compile(r"^.*?\bModel is initialized with precision torch\.(bfloat16|float16|float32)\b.*$",
                                  re.MULTILINE)
# Unsloth switching a model that cannot train in float16 to float32 (Gemma 3 on a T4): `Unsloth: Switching to float32
# training since model cannot work with float16`, `Unsloth: Using float16 precision for gemma3 won't work! Using float32.`
# (the second names the model type it is about: a notebook may try one model and train another)
_UNSLOTH_FP32 = re.compile(r"Unsloth: Switching to (float32) training\b[^\n]*")
_UNSLOTH_FP32_FOR = re.compile(r"Unsloth: Using float16 precision for (\S+) won't work! Using (float32)\b[^\n]*")
# A script's own `Model params : 299,392,704  (0.299B)` line (the whole model's count, a parenthesis after it at most)
_MODEL_PARAMS_SAID = re.compile(r"^[ \t]*(?i:model param(?:eter)?s)[ \t]*[:=][ \t]*([\d,]{4,})(?:[ \t]+\([^()\n]{1,30}\))?"
                                r"[ \t]*\r?$", re.MULTILINE)
# OLMo's `Total number of parameters: N`; a parameter summary's `Total params: N` / `Total Parameters: N`.
_TOTAL_PARAMS = re.compile(r"(?i:total) (?:number of parameters|[Pp]aram(?:eter)?s)[ \t]*[:=][ \t]*([\d,]{4,})[ \t]*\r?$",
                           re.MULTILINE)
# A console that says its base model was loaded in 4 bits (`Loading model with 4-bit quantization...`, a printed
# `load_in_4bit=True`, a bitsandbytes 4-bit model name, LLaMA-Factory's `Quantizing model to 4 bit with bitsandbytes.`)
# or names QLoRA: an adapter on it is QLoRA.
_LOADED_4BIT = re.compile(r"(?i:\b4-bit quantiz|\bload_in_4bit\W{1,3}True\b|\bbnb[-_]4bit\b|\bquantizing (?:the )?model to 4 ?bit\b)|(?<![A-Za-z0-9_=])Q(?:LoRA|LORA)(?![A-Za-z0-9_=])")
# A line that loads a model (a load word in English, Chinese, Japanese, Korean, Spanish, French, German) and names 4
# bits (`4bit`, `4-bit`, `nf4`, `load_in_4bit`) beside it: `加载 4bit 基座: Qwen/Qwen2.5-1.5B-Instruct` (loading
# the 4-bit base), `Loading the base in 4bit (nf4)`. A `4bit` elsewhere (a kernel, a merge, a flag listed) is no load.
# bitsandbytes' 4-bit layer by its class name, in a printed model (`(q_proj): Linear4bit(in_features=4096, ...`, PEFT's
# `lora.Linear4bit(`) or in bitsandbytes' own warning (`Input type into Linear4bit is torch.float16`): the weights
# are 4-bit, whatever the line says beside it (`bias=False` is no negation)
_FOUR_BIT_LAYER = re.compile(r"(?<![A-Za-z0-9_])Linear4bit(?![A-Za-z0-9_])")
_FOUR_BIT_WORD = re.compile(r"(?i)(?<![A-Za-z0-9])(?:4[-_ ]?bits?|nf4|load_in_4bit)(?![A-Za-z0-9])")
_LOAD_WORD = re.compile(r"(?i)\b(?:load|loads|loading|loaded|cargando|cargado|chargement|charg[ée]e?|lade|laden|geladen)\b"
                        r"|加载|載入|载入|読み込|ロード|로드|불러")
_NEGATED_CJK = re.compile(r"不|未|没有|沒有|無し|しない|않")  # `不加载 4bit` (not loading in 4 bits)
# ... unless the line says it is not so (`Full fine-tuning (no QLoRA)`, `without 4-bit quantization`)
_NEGATED = re.compile(r"\b(?:no|not|without|False|disabled?)\b", re.IGNORECASE)
# DeepSpeed-Chat's launch line (`cmd = deepspeed main.py --data_path ... --lora_dim 128 ...`)
_DSCHAT_CMD = re.compile(r"^.*\bcmd = \S*(?:deepspeed|python3?)\S* [^\n]*\bmain\.py\b[^\n]*$", re.MULTILINE)
_LORA_DIM = re.compile(r"--lora_dim[ =](\d+)")
# LLaMA-Factory loading or saving a value head (its reward-model and PPO stages; trl's AutoModelForCausalLMWithValueHead)
_VALUE_HEAD = re.compile(r"llamafactory\.model\.model_utils\.valuehead|Value head model saved|does not contain value head weights")
# The model card a trainer writes beside its model (README.md): whose it is, and the card's own precision line (the
# Trainer writes `- mixed_precision_training: Native AMP` only for fp16: transformers/modelcard.py)
_CARD_OWNERS = (("axolotl", re.compile(r"Built with Axolotl|^axolotl version:", re.MULTILINE)),
                ("trl", re.compile(r"^This model was trained with \[?(?:SFT|DPO|ORPO|KTO|GRPO|PPO|Reward)|^- TRL: ", re.MULTILINE)),
                ("hf_trainer", re.compile(r"^### Training results\s*$", re.MULTILINE)))
# A warning raised from the code of one of TRL's trainers (`.../site-packages/trl/trainer/sft_trainer.py:158:
# UserWarning: You passed ... to the SFTTrainer`): that trainer ran. Its class, by the module's name.
_TRL_TRAINERS = {"sft": "SFTTrainer", "dpo": "DPOTrainer", "kto": "KTOTrainer", "orpo": "ORPOTrainer",
                 "cpo": "CPOTrainer", "grpo": "GRPOTrainer", "rloo": "RLOOTrainer", "ppo": "PPOTrainer",
                 "reward": "RewardTrainer"}
_TRL_TRAINER_WARNING = re.compile(r"[\\/]trl[\\/]trainer[\\/](" + "|".join(_TRL_TRAINERS) + r")_trainer\.py:\d+: \w*Warning\b")
_CARD_FP16 = re.compile(r"^- mixed_precision_training: Native AMP\s*$", re.MULTILINE)
# parameter-golf's train_gpt.py: `model_params:26829913`, a line of its own
# nanochat's base_train.py before its `Parameter counts:` table: `Number of parameters: 560,988,160`, a line of its own
_NUMBER_OF_PARAMS = re.compile(r"^Number of parameters: ([\d,]{4,})[ \t]*\r?$", re.MULTILINE)
_MODEL_PARAMS = re.compile(r"^model_params[ \t]*[:=][ \t]*(\d{4,})[ \t]*\r?$", re.MULTILINE)
# MiniMind's trainer_utils.py: `Model Params: 25.83M` (millions, two decimals)
_MODEL_PARAMS_M = re.compile(r"^Model Params: (\d{1,6}(?:\.\d{1,3})?)M[ \t]*\r?$", re.MULTILINE)
# nanochat's `COMPUTE_DTYPE: torch.float32 (...)` (scripts/base_train.py, chat_sft.py): no autocast, this is the dtype.
_COMPUTE_DTYPE = re.compile(r"^COMPUTE_DTYPE: torch\.(bfloat16|float16|float32)\b.*$", re.MULTILINE)
# a bitsandbytes 4-bit config printed as it is loaded (Unsloth's vLLM `Bitsandbytes config using kwargs = {...,
# 'load_in_4bit': True, 'bnb_4bit_compute_dtype': 'bfloat16', ...}`): the 4-bit layers compute, and train, in that dtype
_BNB_COMPUTE = re.compile(r"""['"]load_in_4bit['"]: True\b[^\n]*?['"]bnb_4bit_compute_dtype['"]: ['"]?(?:torch\.)?"""
                          r"""(bfloat16|float16|float32)\b""")
# nanochat base_train / autoresearch train.py: `Parameter counts:`, one `name : 1,234` line each, `total : N`.
_PARAMETER_COUNTS = re.compile(r"^Parameter counts:[ \t]*\r?\n(?:[ \t]*\w+[ \t]*: [\d,]+[ \t]*\r?\n){0,30}?"
                               r"[ \t]*total[ \t]*: ([\d,]{4,})[ \t]*\r?$", re.MULTILINE)
# A script's own line with a count before the word: `Modele charge: 958,950,144 params (step 21000)`. A count of part
# of the model (nanoGPT's `num decayed parameter tensors: 50, with 124,354,560 parameters`, a module tree's `wte:
# Embedding (38,633,472 parameters)`, `Vision encoder: 303,507,456 params`, an adapter's) is no model size: lines
# naming a part are passed over, and of the rest the largest count is the model's.
_SAID_COUNT = re.compile(r"(?<![\d,.(])(\d{1,3}(?:,\d{3}){2,}|\d{7,})\s+param(?:eter)?s\b", re.IGNORECASE)
# the count after its name: `Model parameters: 124,439,808`, `Total parameters = 1234567890`
_NAMED_COUNT = re.compile(r"\b(?:model|total)\s+param(?:eter)?s\s*[:=]\s*(\d{1,3}(?:,\d{3}){2,}|\d{7,})(?![\d,.])|"
                          # ... or the whole before the trainable part: `596,049,920 total, 596,049,920 trainable parameters`
                          r"(?<![\d,.])(\d{1,3}(?:,\d{3}){2,}|\d{7,})\s+total(?=\s*,\s*[\d,]+\s+trainable\s+param(?:eter)?s\b)",
                          re.IGNORECASE)
_PART_WORDS = re.compile(r"\b(?:(?:non-)?trainable|frozen|embeddings?|decayed|tensors?|groups?|stages?|ranks?|q?lora|peft|"
                         r"adapters?|encoders?|vision|visual|lm[_ ]head|heads?:|teacher|student|reward|critic|"
                         r"reference|ref|draft|pruned?|missing|skipped|unexpected|updated|experts?|active|optimizer|"
                         r"processed)\b", re.IGNORECASE)
# DeepSpeed's PipelineEngine, once per stage: `RANK=0 STAGE=0 LAYERS=14 [0, 14) STAGE_PARAMS=... TOTAL_PARAMS=N (...)
# UNIQUE_PARAMS=N (...)`; UNIQUE_PARAMS counts tied weights once, the model's size.
_PIPE_PARAMS = re.compile(r"^.*?\bUNIQUE_PARAMS=(\d{4,})\b.*$", re.MULTILINE)
# A run that trains its own tokenizer first (B4rtekk1/CGPT: `Training BPE tokenizer on 1024 MiB ...`): a model whose
# vocabulary is new has no trained weights to start from.
_TRAINS_TOKENIZER = re.compile(r"^[ \t]*Training (?:a |the |new )?(?:BPE |WordPiece |Unigram |SentencePiece |byte-level )?"
                               r"tokenizer\b.*$", re.MULTILINE | re.IGNORECASE)
# A script that says it builds its model from random weights (nanoGPT's train.py: `Initializing a new model from
# scratch`, printed where init_from is 'scratch'; the same words in other loops).
_FROM_SCRATCH_LINE = re.compile(r"^[ \t]*(?:Initializ(?:ing|e) (?:a )?new model from scratch|(?:Training|Building|Creating) "
                                r"(?:a )?new model from scratch)\b.*$", re.MULTILINE | re.IGNORECASE)
# Instruction-tuning data a console shows: Alpaca's prompt template (`Below is an instruction that describes a task`),
# its `### Instruction:` heading, a dataset's columns printed as `['instruction', 'input', 'output']`, or an Alpaca
# dataset's path on a data line (not AlpacaFarm's preference pairs). Supervised fine-tuning trains on such pairs (a
# pairwise or RL run's own metrics are read before this is asked).
_INSTRUCTION_DATA = re.compile(r"Below is an instruction that describes a task|^[ \t'\"]*### Instruction:"
                               r"|\[\s*'instruction',\s*(?:'input',\s*)?'(?:output|response)'"
                               r"|^(?!.*(?:preference|pairwise|chosen|rejected|reward|comparison|dpo))"
                               r".*\bdata(?:set)?\w*\b.*\balpaca[\w.-]*\.json.*$"
                               # torchtune's instruction and chat dataset builders, as its resolved config names them
                               r"|_component_: torchtune\.datasets\.(?:alpaca\w*|instruct|chat|slimorca|samsum|grammar)"
                               r"_dataset\b", re.MULTILINE | re.IGNORECASE)
# torchtune's recipe start (torchtune/config/_utils.py `log_config`): `Running LoRAFinetuneRecipeSingleDevice with
# resolved config:` then the YAML; the model builder in it says QLoRA (`_component_: torchtune.models.llama3.qlora_llama3_8b`)
_TORCHTUNE_RECIPE = re.compile(r"\bRunning (\w+Recipe\w*) with resolved config:")
_TORCHTUNE_BUILDER = re.compile(r"_component_: torchtune\.models\.[\w.]*?\.(q?lora|dora)_\w+")
# axolotl's log format (src/axolotl/logging_config.py): `[time] [INFO] [axolotl.train.execute_training:203] [PID:1] ...`
_AXOLOTL_LOGGER = re.compile(r"\[axolotl\.[\w.]+:\d+\]")
_LORA_COUNT = re.compile(r"^LoRA \u53c2\u6570\u91cf: [\d.]+ ?M\b.*$", re.MULTILINE)
_MAXTEXT_DTYPE = re.compile(r"Config param dtype: (bfloat16|float16|float32)\b")
# ms-swift's logger (swift/utils/logger.py): `[INFO:swift] ...` (2.x and 3.x)
_SWIFT_LOGGER = re.compile(r"^\[INFO:swift\][^\n]*", re.MULTILINE)
# LitGPT's scripts print their hyperparameters with pprint: `{'checkpoint_dir': PosixPath(...), ..., 'precision':
# 'bf16-true', ..., 'lora_r': 8, ...}` (Lightning Fabric's precision names; `quantize: 'bnb.nf4'` is QLoRA)
_LITGPT_PRECISION = re.compile(r"'precision': '(bf16|16|32)-(?:true|mixed)'")
_LITGPT_PRECISIONS = {"bf16": "bf16", "16": "fp16", "32": "fp32"}
_PRECISION_NAMES = {"bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16", "float32": "fp32"}
# verl's RL trainer prints its whole config with pprint at start (`{'actor_rollout_ref': {'actor': {...`): the policy
# model's `'lora_rank': 0` (no adapter: every weight trained; verl's default) comes first, in actor_rollout_ref.model,
# and the actor's FSDP config holds its mixed-precision `'dtype': 'bfloat16'` (its `model_dtype` is the stored weights')
_VERL_CONFIG = re.compile(r"\{'actor_rollout_ref': \{")
_VERL_LORA_RANK = re.compile(r"'lora_rank': (\d+),")
_VERL_FSDP_DTYPE = re.compile(r"'fsdp_config': \{(?:[^\n]*\n){0,40}?[^\n]*?'(?:param_)?dtype': '(bfloat16|bf16|float16|fp16|"
                              r"float32)'")


def console_facts(text: str) -> dict:
    """Setup facts a console log states, with the line that states them: DeepSpeed's config print
    (`bfloat16_enabled ..... True`, later `float16_config ..... enabled=True`; its `DeepSpeedEngine configuration:`
    head as `console_deepspeed`), OLMo's TrainConfig (`precision='amp_bf16'`), LLaMA-Factory's
    `compute dtype: torch.bfloat16`, nanochat's `COMPUTE_DTYPE: torch.float32`, torchtune's `Model is initialized
    with precision torch.bfloat16.`, Unsloth's `Switching to float32 training`, and the parameter
    count of OLMo (`Total number of parameters: 1,279,787,008`) and of nanochat / autoresearch
    (`Parameter counts:` ... `total : 6,389,802`, or the older `Number of parameters: N`), a parameter summary's `Total params: N`, a script's `Model params :
    N`, parameter-golf's
    `model_params:N` or DeepSpeed's pipeline `UNIQUE_PARAMS=N`; apart from those, the largest `958,950,144 params` a script's line says (`console_params_said`,
    which ranks under a PEFT banner's count and a config's), the line saying the base was loaded in 4 bits
    (`console_4bit`; `console_4bit_layers` where bitsandbytes' 4-bit layers were seen), a value head loaded or saved
    (`console_value_head`), instruction-tuning data shown
    (`console_instruction_data`: Alpaca's template, its `### Instruction:` heading, an instruction dataset's columns), how
    often tensorboardX warned that a value handed to its writer was NaN or Inf (`console_nonfinite_written`), which of TRL's
    trainers raised a warning from its own module (`console_trl_trainer`: "SFTTrainer"), and whose model card a README is (`model_card`: "axolotl", "trl" or "hf_trainer"; its
    `mixed_precision_training: Native AMP` line is fp16). Keys: `console_precision` ("bf16" | "fp16" | "fp32"), `console_n_params`, each with
    `<key>_line`."""
    out: dict = {}
    m = (_DS_PRECISION.search(text) or _AMP_PRECISION.search(text) or _COMPUTE_DTYPE.search(text)
         or ("bnb_4bit_compute_dtype" in text and _BNB_COMPUTE.search(text))
         or ("Model is initialized with precision" in text and _TORCHTUNE_PRECISION.search(text))
         or ("Unsloth: " in text and _UNSLOTH_FP32.search(text)))
    if m:
        out["console_precision"] = _PRECISION_NAMES[next(g for g in m.groups() if g)]
        out["console_precision_line"] = m.group(0).strip()[-160:]
    elif "Unsloth: " in text and (m := _UNSLOTH_FP32_FOR.search(text)):
        out["console_precision"], out["console_precision_model"] = "fp32", m.group(1)
        out["console_precision_line"] = m.group(0).strip()[-160:]
    m = _TOTAL_PARAMS.search(text) or _PARAMETER_COUNTS.search(text) or _MODEL_PARAMS.search(text) or (
        "Number of parameters: " in text and _NUMBER_OF_PARAMS.search(text)) or (
        "UNIQUE_PARAMS=" in text and _PIPE_PARAMS.search(text)) or _MODEL_PARAMS_SAID.search(text) or (
        "model parallel rank" in text and _megatron_whole_model(text))
    if m:
        out["console_n_params"] = int(m.group(1).replace(",", ""))
        out["console_n_params_line"] = _line_at(text, m.start(1)).strip()[-160:]  # the total's own line
    elif "Model Params: " in text and (m := _MODEL_PARAMS_M.search(text)):
        out["console_n_params"], out["console_n_params_line"] = round(float(m.group(1)) * 1e6), m.group(0).strip()
    for key, value in _recipe_facts(text).items():
        out.setdefault(key, value)  # a precision said above (DeepSpeed's, ...) stands
    m = _INSTRUCTION_DATA.search(text) if "nstruction" in text or "lpaca" in text or "torchtune.datasets." in text else None
    if m:
        out["console_instruction_data"] = text[m.start():].split("\n", 1)[0].strip()[:160]  # from the match on
    m = _DS_ENGINE.search(text) if "DeepSpeedEngine configuration" in text else None
    if m:
        out["console_deepspeed"] = m.group(0).strip()[-160:]
    m = _TRAINS_TOKENIZER.search(text) if "okenizer" in text else None
    if m:
        out["console_trains_tokenizer"] = m.group(0).strip()[-160:]
    m = _FROM_SCRATCH_LINE.search(text) if "from scratch" in text.lower() else None
    if m:
        out["console_from_scratch"] = m.group(0).strip()[-160:]
    if "Training results" in text or "Axolotl" in text or "xolotl version" in text or "trained with" in text:
        owner = next((name for name, pattern in _CARD_OWNERS if pattern.search(text)), None)
        if owner:
            out["model_card"] = owner
        m = _CARD_FP16.search(text)
        if m and "console_precision" not in out:
            out["console_precision"], out["console_precision_line"] = "fp16", m.group(0).strip()
    m = _DSCHAT_CMD.search(text) if "main.py" in text else None
    if m:  # DeepSpeed-Chat trains every weight unless --lora_dim says otherwise
        lora = _LORA_DIM.search(m.group(0))
        out["console_lora_dim"], out["console_lora_dim_line"] = int(lora.group(1)) if lora else 0, m.group(0).strip()[:200]
    m = _VALUE_HEAD.search(text) if "alue head" in text or "valuehead" in text else None
    if m:
        out["console_value_head"] = _line_at(text, m.start()).strip()[-160:]
    said = _said_4bit(text) if "4" in text or "LORA" in text.upper() else None
    if said:
        out["console_4bit"] = said
        out["console_4bit_layers"] = bool(_FOUR_BIT_LAYER.search(said))
    said = _said_param_count(text) if "aram" in text or "ARAM" in text else None
    if said is not None:
        out["console_params_said"], out["console_params_said_line"] = said
    crash = _final_crash(text) if "rror" in text else None
    if crash:
        out["console_crash"] = crash
    m = _TRL_TRAINER_WARNING.search(text) if "_trainer.py:" in text else None
    if m:
        out["console_trl_trainer"] = _TRL_TRAINERS[m.group(1)]
        line = _line_at(text, m.start())
        out["console_trl_trainer_line"] = line[line.find(m.group(0)) + 1:].strip()[:200]  # from trl/trainer/ on
    written = _nonfinite_written_after_the_first_loss(text) if "found in input tensor" in text else 0
    if written:
        out["console_nonfinite_written"] = written
    return out


def _nonfinite_written_after_the_first_loss(text: str) -> int:
    """How many of tensorboardX's NaN-or-Inf warnings come after the console's first logged loss: those before it
    are an fp16 scaler's first overflowing steps (their grad_norm inf), which it logs before any loss line."""
    first = _LOGGED_LOSS.search(text)
    return sum(1 for m in _TENSORBOARD_NONFINITE.finditer(text) if first is None or m.start() > first.start())


_LOGGED_LOSS = re.compile(r"(?i)\bloss['\"]?\s*[:=]")


# tensorboardX's check_nan (x2num.py), on a value handed to its writer: `logging.warning('NaN or Inf found in input
# tensor.')`, printed as `WARNING:root:NaN or Inf found in input tensor.` or bare in a notebook's stream
_TENSORBOARD_NONFINITE = re.compile(r"^(?:WARNING:root:|Warning: )?NaN or Inf found in input tensor\.?\s*$",
                                    re.MULTILINE | re.IGNORECASE)


def _recipe_facts(text: str) -> dict:
    """The framework and method torchtune's recipe start, ms-swift's or axolotl's logger names or LitGPT's printed
    hyperparameters say (`console_framework`, `console_method`, each with `console_framework_line`), and LitGPT's
    precision."""
    out: dict = {}
    m = _TORCHTUNE_RECIPE.search(text) if "with resolved config" in text else None
    if m:
        builder = _TORCHTUNE_BUILDER.search(text)
        kind = builder.group(1) if builder else "lora" if m.group(1).startswith(("LoRA", "Lora")) else (
            "full" if m.group(1).startswith("Full") else None)
        out.update(console_framework="torchtune", console_framework_line=m.group(0))
        if kind:
            out["console_method"] = "qlora" if kind == "qlora" else "lora" if kind in ("lora", "dora") else "full"
    m = _SWIFT_LOGGER.search(text) if "[INFO:swift]" in text else None
    if m:
        out.update(console_framework="swift", console_framework_line=m.group(0).strip()[:160])
    m = _LORA_COUNT.search(text) if "LoRA" in text else None
    if m:  # MiniMind's LoRA script (trainer/train_lora.py): `LoRA 参数量: 0.262 M`
        out.update(console_method="lora", console_method_line=m.group(0).strip())
    m = _MAXTEXT_DTYPE.search(text) if "Config param dtype: " in text else None
    if m:  # MaxText's pyconfig prints every parameter: `Config param dtype: bfloat16`
        out.update(console_framework="maxtext", console_framework_line=m.group(0))
        out["console_precision"], out["console_precision_line"] = _PRECISION_NAMES[m.group(1)], m.group(0)
    m = _AXOLOTL_LOGGER.search(text) if "[axolotl." in text else None
    if m:
        out.update(console_framework="axolotl", console_framework_line=_line_at(text, m.start()).strip()[-160:])
    if "paddlenlp commit id" in text:
        out.update(_paddlenlp_facts(text))
    m = _VERL_CONFIG.search(text) if "'actor_rollout_ref'" in text else None
    if m:
        out.update(_verl_config_facts(text[m.start():]))
    m = _LITGPT_PRECISION.search(text) if "'precision': '" in text and "PosixPath(" in text else None
    if m:
        out.update(console_framework="litgpt", console_framework_line=m.group(0))
        out["console_precision"], out["console_precision_line"] = _LITGPT_PRECISIONS[m.group(1)], m.group(0)
        if "'lora_r': " in text:
            out["console_method"] = "qlora" if "'quantize': 'bnb.nf4" in text else "lora"
    return out


def _verl_config_facts(config: str) -> dict:
    """The method (`'lora_rank': 0` full, else LoRA) and the actor's mixed precision that verl's printed config says."""
    out: dict = {}
    rank = _VERL_LORA_RANK.search(config)
    if rank:
        out["console_method"] = "lora" if int(rank.group(1)) > 0 else "full"
        out["console_method_line"] = f"verl's printed config: {_squeezed_line(config, rank.start())}"
    dtype = _VERL_FSDP_DTYPE.search(config)
    if dtype:
        out["console_precision"] = _PRECISION_NAMES[dtype.group(1)]
        out["console_precision_line"] = (f"verl's printed config, the actor's fsdp_config: "
                                         f"{_squeezed_line(config, dtype.start(1))}")
    return out


def _squeezed_line(text: str, at: int) -> str:
    """The line holding position `at`, its runs of spaces (pprint's indent, a Ray worker's prefix) made one."""
    return " ".join(_line_at(text, at).split())[-120:]


# PaddleNLP's Trainer prints its arguments one a line under `Model / Data / Training Configuration Arguments` headers,
# each block opened by `paddle commit id` and `paddlenlp commit id` lines (paddlenlp/trainer/argparser.py,
# training_args.py `print_config`): `[2024-12-31 16:43:30,888] [   DEBUG] - bf16                          : True`
_PADDLENLP_FIELD = re.compile(r"^\[[^\]\n]*\] \[\s*DEBUG\] - (\w+)\s*: ?(.*?)\s*$", re.MULTILINE)
_PADDLENLP_ADAPTERS = ("lora", "prefix_tuning", "vera", "lokr", "reft", "pissa", "use_mora")
_PADDLENLP_COMMIT = re.compile(r"^.*\] - paddlenlp commit id\s*: \S*$", re.MULTILINE)
_PADDLENLP_QUANTIZED = ("nf4", "fp4")  # weight_quantize_algo of a QLoRA run (int8/int4 quantize a full model too)


def _paddlenlp_facts(text: str) -> dict:
    """Framework paddlenlp, the method (LoRA, QLoRA where the base is nf4/fp4-quantized, another adapter, else full)
    and the precision (bf16 / fp16 flags, fp32 with both off) PaddleNLP's printed arguments say; a field printed
    again by a later launch in the same file stands."""
    commit = _PADDLENLP_COMMIT.search(text)
    if commit is None:
        return {}
    out: dict = {"console_framework": "paddlenlp", "console_framework_line": commit.group(0).strip()}
    fields = {m.group(1): (m.group(2), m.group(0)) for m in _PADDLENLP_FIELD.finditer(text)}
    on = [name for name in _PADDLENLP_ADAPTERS if fields.get(name, ("",))[0] == "True"]
    if on:
        quantized = on[0] == "lora" and fields.get("weight_quantize_algo", ("",))[0] in _PADDLENLP_QUANTIZED
        out["console_method"] = "qlora" if quantized else "lora" if on[0] == "lora" else "peft"
        out["console_method_line"] = fields[on[0]][1].strip()
    elif "lora" in fields and "prefix_tuning" in fields:  # the model arguments printed, no adapter on
        out["console_method"], out["console_method_line"] = "full", fields["lora"][1].strip()
    flags = {name: fields[name] for name in ("bf16", "fp16") if name in fields}
    half = next((name for name in ("bf16", "fp16") if flags.get(name, ("",))[0] == "True"), None)
    if half:
        out["console_precision"], out["console_precision_line"] = half, flags[half][1].strip()
    elif len(flags) == 2 and all(value == "False" for value, _ in flags.values()):
        out["console_precision"], out["console_precision_line"] = "fp32", flags["fp16"][1].strip()
    return out


# What stops a training process from outside its own code: the GPU out of memory, a CUDA fault, NCCL (a collective
# timed out, a rank died). An error of the script itself, an interrupt or a logger's own failure is not this.
# (a notebook's error output names the exception's class alone: `OutOfMemoryError: CUDA out of memory`)
_CRASH = re.compile(r"^(?:(?:torch\.(?:cuda\.)?)?OutOfMemoryError: .*|RuntimeError: (?:CUDA out of memory|CUDA error|NCCL).*"
                    r"|torch\.distributed\.DistBackendError: .*)$", re.MULTILINE)


_LOSS_WORD = re.compile(r"(?i)loss")


def _final_crash(text: str) -> str | None:
    """The exception line of a crash (`_CRASH`) after the log's last loss: the run stopped there; None elsewhere
    (an out-of-memory error of an earlier attempt, or one an evaluation caught, comes before a later loss)."""
    last = None
    for last in _CRASH.finditer(text):
        pass
    if last is None or _LOSS_WORD.search(text, last.end()):  # (a results table's header says `Training Loss`)
        return None
    return last.group(0).strip()[:200]


# Megatron prints each model-parallel rank's share (`> number of parameters on (tensor, pipeline) model parallel rank
# (0, 0): 1040517632`); with one tensor and one pipeline rank (its arguments block) rank (0, 0) holds the whole model.
_MEGATRON_RANK_PARAMS = re.compile(r"number of parameters on \(tensor, pipeline\) model parallel rank \(0, 0\): (\d{4,})")
_MEGATRON_PARALLEL = re.compile(r"(?m)^(?:\d+: )?(?:\[(?:default|rank)\d+\]:)?\s*(tensor|pipeline)_model_parallel_size "
                                r"\.{2,} ?(\d+)\s*$")


def _megatron_whole_model(text: str) -> re.Match | None:
    """Megatron's count for rank (0, 0) where the arguments say one tensor and one pipeline rank, else None."""
    sizes = {m.group(1): int(m.group(2)) for m in _MEGATRON_PARALLEL.finditer(text)}
    if sizes.get("tensor") != 1 or sizes.get("pipeline") != 1:
        return None
    return _MEGATRON_RANK_PARAMS.search(text)


def _line_at(text: str, at: int) -> str:
    """The line (between newlines or carriage returns) that holds position `at`."""
    start = max(text.rfind("\n", 0, at), text.rfind("\r", 0, at)) + 1
    ends = [k for k in (text.find("\n", at), text.find("\r", at)) if k >= 0]
    return text[start:min(ends, default=len(text))]


def _said_4bit(text: str) -> str | None:
    """The first line saying the base was loaded in 4 bits (or naming QLoRA) and not saying it was not, else the first
    line naming bitsandbytes' 4-bit layer (`_FOUR_BIT_LAYER`), else the first short line that loads a model and names
    4 bits beside it (`_FOUR_BIT_WORD` with `_LOAD_WORD`, in any of several languages), or None."""
    for m in _LOADED_4BIT.finditer(text):
        line = _line_at(text, m.start()).strip()
        if not _NEGATED.search(line):
            return line[-160:]
    m = _FOUR_BIT_LAYER.search(text) if "Linear4bit" in text else None
    if m:
        return _line_at(text, m.start()).strip()[-160:]
    for m in _FOUR_BIT_WORD.finditer(text):
        line = _line_at(text, m.start()).strip()
        if len(line) <= 200 and _LOAD_WORD.search(line) and not _NEGATED.search(line) \
                and not _NEGATED_CJK.search(line):
            return line[-160:]
    return None


def _said_param_count(text: str) -> tuple[int, str] | None:
    """The largest `N params` a line says that names no part of the model (`_SAID_COUNT`; a count in millions or
    billions, `0.209729 M parameters` as Karpathy's GPT prints it, `95.87M params`), with its line. A part's words
    count before the number and in its own clause after it (`trainable params: N`, `N frozen params`), not in a
    note that follows (`95.87M params (policy trainable, reference frozen)`)."""
    best = None
    for m in [*_SAID_COUNT.finditer(text), *_NAMED_COUNT.finditer(text), *_SCALED_COUNT.finditer(text)]:
        line = _line_at(text, m.start())
        count = _count_of(m)
        if len(line) <= 300 and not _names_a_part(text, m) and count >= 1000 and (best is None or count > best[0]):
            best = (count, line.strip()[-160:])
    return best


# A count in millions or billions before `params` (the unit a capital, so `5 m params` of prose is no count)
_SCALED_COUNT = re.compile(r"(?<![\w.,])(\d{1,4}(?:\.\d{1,6})?)\s?([MB])\s+param(?:eter)?s\b")


def _count_of(m: re.Match) -> int:
    if m.re is _SCALED_COUNT:
        return round(float(m.group(1)) * (1e6 if m.group(2) == "M" else 1e9))
    return int(next(g for g in m.groups() if g).replace(",", ""))


def _names_a_part(text: str, m: re.Match) -> bool:
    """Whether the words of a count's line before it, or of its clause after it, name a part of the model."""
    line_start = max(text.rfind("\n", 0, m.start()), text.rfind("\r", 0, m.start())) + 1
    after = _line_at(text, m.start())[m.end() - line_start:]
    clause = re.split(r"[(,;\[]", after, maxsplit=1)[0]
    return bool(_PART_WORDS.search(text[line_start:m.end()]) or _PART_WORDS.search(clause))


_NUM_EPOCHS = re.compile(r"Num [Ee]pochs = ([\d,]+)")  # SetFit prints `Num epochs = 1`
_TOTAL_OPT_STEPS = re.compile(r"Total (?:optimization )?steps = ([\d,]+)")  # Unsloth's banner: `Total steps = 90`
# A training script's own plan line, `2000 examples x 3 epochs = 375 steps` (Phiwain/LLM sft.py): the epochs and
# the optimizer steps they make, said together. Whole numbers only, never begun inside another number (a run of
# comma-separated token ids would make every comma a start: quadratic), nor a fraction (`0.5 epochs = 250 steps`).
_COUNT = r"(?<![\d.,])(\d{1,3}(?:,\d{3})+|\d{1,12})(?![\d.,]\d)"
_STATED_EPOCHS = re.compile(_COUNT + r"\s+epochs?\s*=\s*" + _COUNT + r"\s+(?:optimi[sz]ation\s+|optimizer\s+|training\s+)?"
                            r"steps\b", re.IGNORECASE)


_MAX_EPOCHS = re.compile(r"^max_epochs = (\d{1,6})\s*$", re.MULTILINE)
_ITER_TOTAL = re.compile(r"Iter\(train\) \[\s*\d+/(\d+)\]")


def _steps_per_epoch(text: str) -> float | None:
    """Optimizer steps per epoch from the HF Trainer's `***** Running training *****` banner, or None."""
    epochs, total = _NUM_EPOCHS.search(text), _TOTAL_OPT_STEPS.search(text)
    if not epochs or not total:
        return None
    e, t = int(epochs.group(1).replace(",", "")), int(total.group(1).replace(",", ""))
    return t / e if e > 0 and t > 0 else None


_EPOCHS_EQUAL = re.compile(r"epochs?\s*=", re.IGNORECASE)


def _stated_plan(text: str) -> tuple[int, int] | None:
    """(epochs, steps) of a script's plan line (`... 3 epochs = 375 steps`), or of an mmengine / XTuner config printed
    in the log (`max_epochs = 8`) beside its `Iter(train) [  10/1344]` lines; or None. Looked for around each
    `epochs =` only: the full pattern over a whole console (every digit a possible start) takes seconds."""
    if "max_epochs = " in text and "Iter(train)" in text:
        epochs, iters = _MAX_EPOCHS.search(text), _ITER_TOTAL.search(text)
        if epochs and iters and int(epochs.group(1)) > 0:
            return int(epochs.group(1)), int(iters.group(1))
    for m in _EPOCHS_EQUAL.finditer(text):
        stated = _STATED_EPOCHS.search(text[max(0, m.start() - 40):m.end() + 80])
        if stated is not None:
            epochs, steps = (int(g.replace(",", "")) for g in stated.groups())
            return (epochs, steps) if epochs > 0 and steps > 0 else None
    return None


def _dict_steps(events: list[tuple], train_total: int | None, per_epoch: float | None = None,
                stated: StatedLogging | None = None) -> tuple[dict[int, int], str]:
    """Step of every dict event (by index): explicit, else the training bar, else the position.

    When the bars disagree with the dicts' own epochs, stdout was block-buffered (nohup, a pipe)
    while tqdm wrote to unbuffered stderr: the dicts come out in bursts, after bars that ran
    ahead. Their order is still right, so the bars are not used for them then.

    The position rule counts the train dicts from the run's first step. A resumed run (its bar jumps from 0 to the
    checkpoint's step) logs only from there, so where the position rule dated the dicts (no bar did) and their own
    epochs x the steps an epoch makes (the banner's,
    else the finished bar's total over the closing summary's epoch) put them more than `_POSITION_SLACK` logging
    intervals (or a hundredth of an epoch, the rounding of a printed epoch) away from their positions, the epochs
    date them. `stated`: the logging interval the run states (`stated_logging`), for the position rule.
    """
    steps, how = _steps_by_rules(events, train_total, use_bars=True, per_epoch=per_epoch, stated=stated)
    if _bars_run_ahead(events, steps):
        steps, how = _steps_by_rules(events, train_total, use_bars=False, per_epoch=per_epoch, stated=stated)
        how += "; the progress bars ran ahead of the buffered dict lines (their epochs say so), so not used"
        if per_epoch and _bars_run_ahead(events, steps):
            # the banner's steps per epoch are not the dicts' (max_steps stopped inside one epoch: `Num Epochs = 1 |
            # Total steps = 30` over 6470 steps' worth of data): their epochs would put them all on one step
            steps, how = _steps_by_rules(events, train_total, use_bars=False, stated=stated)
            how += "; the banner's steps per epoch do not fit the dicts' epochs, so not used"
    if "position x logging_steps" in how and "progress bar before" not in how:  # (bar-dated dicts are right)
        per = per_epoch or _bar_steps_per_epoch(events, train_total)
        every, _ = _logging_interval(events, train_total, stated)
        if per and _positions_off_their_epochs(events, steps, per, every):
            by_epoch, rules = _steps_by_rules(events, train_total, use_bars=False, per_epoch=per, by_epoch=True)
            if not _bars_run_ahead(events, by_epoch):
                steps, how = by_epoch, rules + ("; the positions x logging_steps did not fit the dicts' own epochs "
                                                "(a resumed run logs from its checkpoint's step)")
    return steps, how


_POSITION_SLACK = 2  # logging intervals a dict's position-rule step may be off its epoch's step


def _bar_steps_per_epoch(events: list[tuple], train_total: int | None) -> float | None:
    """Steps an epoch makes from a finished training bar: its total over the closing summary dict's epoch."""
    summary = next((e[2] for e in events if e[0] == "dict" and "train_runtime" in e[2]), {})
    epoch = summary.get("epoch")
    if not train_total or not epoch or not math.isfinite(epoch) or epoch <= 0 or (
            _steps_reached(events, train_total) != train_total):
        return None
    return train_total / epoch


def _positions_off_their_epochs(events: list[tuple], steps: dict[int, int], per_epoch: float, every: int) -> bool:
    """Whether the train dicts' steps (by position) sit, in the median, further from their own epochs x per_epoch
    than `_POSITION_SLACK` logging intervals and a hundredth of an epoch."""
    off = [abs(steps[i] - e[2]["epoch"] * per_epoch) for i, e in enumerate(events)
           if e[0] == "dict" and "loss" in e[2] and "epoch" in e[2] and e[1] is None and _explicit_step(e[2]) is None]
    return bool(off) and float(np.median(off)) > max(_POSITION_SLACK * every, 0.01 * per_epoch)


def _bars_run_ahead(events: list[tuple], steps: dict[int, int]) -> bool:
    """Whether two train dicts without a step of their own got steps that their epochs contradict:
    the same step for different epochs, or a later epoch at a lower step."""
    seen: list[tuple[int, float]] = []
    for i, event in enumerate(events):
        pairs = event[2] if event[0] == "dict" else {}
        if "loss" in pairs and "epoch" in pairs and event[1] is None and _explicit_step(pairs) is None:
            seen.append((steps[i], pairs["epoch"]))
    return any((s2 == s1 and e2 != e1) or (s2 < s1 and e2 > e1) for (s1, e1), (s2, e2) in zip(seen, seen[1:]))


def _steps_by_rules(events: list[tuple], train_total: int | None, use_bars: bool, per_epoch: float | None = None,
                    by_epoch: bool = False, stated: StatedLogging | None = None) -> tuple[dict[int, int], str]:
    """Each dict's step (`_dict_steps`); `by_epoch`: a train dict with an epoch is dated by it whatever the logging
    interval."""
    steps: dict[int, int] = {}
    rules: Counter = Counter()
    bar_n = None
    bar_used = False  # the last bar has dated a train dict already
    n_train, last, last_train = 0, 0, 0
    dated_by: list[tuple[int, str]] = []  # (event index, the rule that dated it) of each train dict
    every, said = _logging_interval(events, train_total, stated)
    first_at_one = said is not None and said.first_step  # logging_first_step: a dict at step 1, then every N
    # a capture that kept a single reading of the training bar, mid-run (a paste whose other bar lines were dropped):
    # the train dicts after the first it dates go on from it; where bars recur, dicts between two readings share a bar
    # (buffered stdout, a bar drawn every few logs) and other rules place them
    readings = [e[1] for e in events if e[0] == "bar" and e[2] == train_total]
    epochs = {e[2].get("epoch") for e in events if e[0] == "dict" and "loss" in e[2]}
    one_bar = len(readings) == 1 and train_total is not None and readings[0] < train_total \
        and len(epochs) <= 1  # not a finished bar, and no epochs that tell the dicts apart (the epoch rule reads them)
    for i, event in enumerate(events):
        if event[0] == "bar" and event[2] == train_total and use_bars:
            bar_n, bar_used = event[1], False
        if event[0] == "line":  # an eval dict after a loop's step lines belongs to the last of them
            last = max(last, event[1].step)
        if event[0] != "dict":
            continue
        pairs = event[2]
        is_train = "loss" in pairs
        n_train += is_train
        step = event[1] if event[1] is not None else _explicit_step(pairs)
        if step is None and bar_n is not None and bar_used and is_train and one_bar:
            step, rule = last_train + every, f"{_AFTER_THE_BAR}, by logging_steps ({every})"
        elif step is None and bar_n is not None:
            step, rule = bar_n, _BY_BAR
        elif step is None and (every == 1 or by_epoch) and per_epoch and is_train and "epoch" in pairs:
            # no bar and no clean logging interval: the dict's own epoch x the banner's steps per epoch
            step, rule = max(1, round(pairs["epoch"] * per_epoch)), f"epoch x {per_epoch:g} steps per epoch"
        elif step is None:
            step = (1 if n_train == 1 else (n_train - 1) * every) if first_at_one and is_train else (
                n_train * every if is_train else last)
            rule = f"position x logging_steps ({every}{_AS_STATED} in {said.source})" if said else (
                f"position x logging_steps ({every})")
        else:
            rule = ""
        if rule:
            rules[rule] += 1
        if is_train:
            dated_by.append((i, rule))
            bar_used, last_train = bar_n is not None, step
        steps[i] = last = step
    if _before_the_first_bar(steps, dated_by):
        rules["back from the first bar-dated line"] += 1
    if use_bars and _ahead_of_their_bar(events, steps, dated_by, train_total):
        rules["a line printed just before its bar's step"] += 1
    return steps, "; ".join(f"{rule} ({n} lines)" for rule, n in rules.items())


_BY_BAR = "the training progress bar before each line"
_AS_STATED = ", as stated"
_BY_ORDER = "position x logging_steps (1) "  # (the rule's text where nothing gave the interval)
_AFTER_THE_BAR = "on from the last bar-dated line"


def _before_the_first_bar(steps: dict[int, int], dated_by: list[tuple[int, str]]) -> bool:
    """Train dicts dated by their position ahead of the first one a progress bar dates (a paste or a capture that
    begins after its bar line) are put back from that one by the bar-dated lines' own spacing, not numbered from the
    start of the run (LLaVA issue 918: a first dict with no bar above it, then dicts at bars 2565-2569). Returns whether
    any moved."""
    barred = [i for i, rule in dated_by if rule == _BY_BAR or rule.startswith(_AFTER_THE_BAR)]
    if len(barred) < 2:
        return False
    leading = [i for i, rule in dated_by[:[i for i, _ in dated_by].index(barred[0])] if rule.startswith("position")]
    spacing = max(1, int(round(float(np.median(np.diff([steps[i] for i in barred]))))))
    first = steps[barred[0]]
    if not leading or first - spacing * len(leading) < 0:
        return False
    for k, i in enumerate(leading):
        steps[i] = first - spacing * (len(leading) - k)
    return True


def _ahead_of_their_bar(events: list[tuple], steps: dict[int, int], dated_by: list[tuple[int, str]],
                        train_total: int | None) -> bool:
    """A train dict that the bar before it dates at the previous train dict's step, where the training bar goes on to
    that step + 1 before the next dict and the next dict sits higher still: tqdm's stderr and the Trainer's stdout
    came out of order (the dict before its bar's redraw), so it is that step + 1. Returns whether any moved."""
    moved = False
    for k in range(1, len(dated_by)):
        i, rule = dated_by[k]
        if rule != _BY_BAR or steps[i] != steps[dated_by[k - 1][0]]:
            continue
        until = dated_by[k + 1][0] if k + 1 < len(dated_by) else len(events)
        bars = [e[1] for e in events[i + 1:until] if e[0] == "bar" and e[2] == train_total]
        later = steps[dated_by[k + 1][0]] if k + 1 < len(dated_by) else None
        if steps[i] + 1 in bars and (later is None or later > steps[i] + 1):
            steps[i] += 1
            moved = True
    return moved


def _explicit_step(pairs: dict) -> int | None:
    """The step a dict line names. `steps` (the HF course's Accelerate loop: completed steps) counts only in a dict
    with no `epoch`: a loop's `{'epoch': 1, 'steps': 50, ...}` counts within each epoch."""
    for key in _EXPLICIT_STEP_KEYS:
        if key == "steps" and "epoch" in pairs:
            continue
        value = pairs.get(key)
        if value is not None:
            head = str(value).split("/")[0].strip()
            if head.isdigit() and len(head) <= 18:  # fits the int64 step column
                return int(head)
    return None


def _logging_interval(events: list[tuple], train_total: int | None,
                      stated: StatedLogging | None) -> tuple[int, StatedLogging | None]:
    """The logging interval (`_logging_steps_estimate`), else the one the run states, else 1; and the statement where
    it was used. A stated last step (W&B's summary) over the train dicts gives one as a closing summary's does.
    Neither is used where the dicts' epochs say the run resumed: counted from step 0 the positions would be off by
    the checkpoint's step, and the summary's step over the dicts logged since the resume is no interval."""
    every = _logging_steps_estimate(events, train_total)
    if every > 1 or stated is None or _resumed_by_epochs(events):
        return every, None
    if stated.every is not None:
        return stated.every, stated
    n_train = sum(1 for e in events if e[0] == "dict" and "loss" in e[2])
    every = _clean_interval(stated.last_step, n_train)
    return (every, stated) if every > 1 else (1, None)


def _resumed_by_epochs(events: list[tuple]) -> bool:
    """Whether the train dicts' epochs start well past 0: further than two of their own spacings and the print's
    rounding (0.01 of an epoch), as a run resumed from a checkpoint logs (epoch 1.01, 1.02, ... after one epoch)."""
    epochs = [e[2]["epoch"] for e in events if e[0] == "dict" and "loss" in e[2]
              and isinstance(e[2].get("epoch"), (int, float)) and math.isfinite(e[2]["epoch"])]
    if len(epochs) < 2:
        return False
    spacing = (epochs[-1] - epochs[0]) / (len(epochs) - 1)
    return epochs[0] > 2 * abs(spacing) + 0.01


def _logging_steps_estimate(events: list[tuple], train_total: int | None) -> int:
    """logging_steps from the run's total steps / the number of train lines, when it is clean.

    The total comes from the training bar (as far as it got: a run stopped at 829/1954 logged 829
    steps' worth of lines), else the summary's train_runtime x train_steps_per_second (rounded by HF
    to 3 decimals, hence the tolerance).
    """
    n_train = sum(1 for e in events if e[0] == "dict" and "loss" in e[2])
    summary = next((e[2] for e in events if e[0] == "dict" and "train_runtime" in e[2]), {})
    total = _steps_reached(events, train_total) or summary.get("train_runtime", 0) * summary.get(
        "train_steps_per_second", 0)
    return _clean_interval(total, n_train)


def _clean_interval(total: float | None, n_train: int) -> int:
    """total / n_train where it is a whole number of steps (within the rounding of HF's summary), else 1."""
    if not n_train or not total or not math.isfinite(total):
        return 1
    every = round(total / n_train)
    return every if every >= 1 and abs(total / n_train - every) < 0.05 * every + 0.05 else 1


def _steps_reached(events: list[tuple], train_total: int | None) -> int | None:
    """The training bar's furthest position: its total when the run finished, less where it stopped."""
    furthest = max((e[1] for e in events if e[0] == "bar" and e[2] == train_total), default=0) if train_total else 0
    return furthest or train_total


def _deepspeed_steps(events: list[tuple], train_total: int | None) -> dict[int, int]:
    """Step of each overflow / at-minimum event: apex's and DLLogger's at the script's step line after it (else before
    it); others
    at the training bar n + 1, else the next training step
    line (Megatron-DeepSpeed prints the overflow during the iteration that line then reports; a
    script logging every N batches prints it during the batches that line then covers), else the
    nearest DeepSpeed `step=N` line (before or after), else the running count."""
    targets = [i for i, e in enumerate(events) if e[0] in ("overflow", "at_minimum")]
    if not targets:
        return {}
    progress = [i for i, e in enumerate(events) if e[0] == "ds_step"]
    iteration_after = _next_training_step(events)
    bar_n, bar_at = None, {}
    for i, event in enumerate(events):
        if event[0] == "bar" and (train_total is None or event[2] == train_total):
            bar_n = event[1]
        bar_at[i] = bar_n
    line_before, last = {}, None
    for i, event in enumerate(events):
        if event[0] == "line" and not event[1].metrics[0][0].startswith("eval_") and event[1].kind not in _EPOCH_LINES:
            last = event[1].step
        line_before[i] = last
    out = {}
    for count, i in enumerate(targets, 1):
        said = iteration_after.get(i) if iteration_after.get(i) is not None else line_before[i]
        if events[i][-1] == _AT_STEP_LINE and said is not None:
            # apex's scaler prints inside the optimizer step of a script that prints its own step lines (NVIDIA's BERT:
            # `Step:338 ...`); a bar on the same line counts micro-batches (`Iteration: 5683/11037`), not steps
            out[i] = said
        elif bar_at[i] is not None:
            out[i] = bar_at[i] + 1
        elif iteration_after.get(i) is not None:
            out[i] = iteration_after[i]
        elif progress:
            nearest = min(progress, key=lambda p: abs(p - i))
            out[i] = events[nearest][1]
        else:
            out[i] = count
    return out


def _next_training_step(events: list[tuple]) -> dict[int, int | None]:
    """For each event index, the step of the first training step line (not an eval line) after it (or None)."""
    out: dict[int, int | None] = {}
    step = None
    for i in range(len(events) - 1, -1, -1):
        out[i] = step
        event = events[i]
        if event[0] == "line" and not event[1].metrics[0][0].startswith("eval_") and event[1].kind not in _EPOCH_LINES:
            step = event[1].step
    return out


# Lines printed once an epoch or evaluation, not once a step: no overflow belongs to the step they are put at
_EPOCH_LINES = ("dschat_sft", "dschat_rm", "dschat_dpo")
