"""Reader of captured console output: HF Trainer dict lines and DeepSpeed loss-scale lines.

`read(path)` returns one LogRecords (format "stdout") from a text log (FORMATS.md sections 6, 8):

* HF dict lines, 4.x `{'loss': 0.0, 'grad_norm': nan, ...}` and 5.x `{'loss': '0', ...}` (floats
  printed as quoted strings), eval lines `{'eval_loss': ...}`, the closing
  `{'train_runtime': ..., 'train_loss': ...}`, ms-swift's printed dicts, text-generation-webui's
  `Step: N {...}` lines. Pairs are pulled out with a regex (ast.literal_eval rejects `nan`), each
  value through float(); a dict must hold a training key (loss, eval_*, learning_rate, ...).
* The step of a dict: an explicit one (`Step: N`, `'global_step/max_steps': '10/100'`); else the
  nearest training progress bar fragment before it (`| 10/100 [..., 1.2it/s]`, or Colab's ` 10% 10/100 [...]`; bars of
  other totals - eval, tokenizing - are ignored); where the bar's one reading comes after the dicts (a kept tail),
  back from it (`bar_after_the_dicts`); else its position x logging_steps, logging_steps
  estimated from the run's total steps when the log tells them; where it does not, its own
  `epoch` x the steps per epoch of the Trainer's banner (`Num Epochs`, `Total optimization steps`).
  `meta["step_inferred"]` says which rule gave the steps when it was not explicit.
* DeepSpeed: `OVERFLOW! ... Attempted loss scale: X, reducing to Y` (and the float, fused-optimizer
  and hysteresis variants; a hand-written scaler's `OVERFLOW! Scale value X -> Y`) -> `overflow` = how many at that step
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

This module reads the file and makes the frame; the work is split by what it is about: `console_text` (the text as
the processes printed it), `console_scan` (one pass over the lines: the events; `dicts_and_bars`: a line's dicts and
bars), `settled_lines` (the step lines settled), `console_steps` and `overflow_steps` (the dicts and the overflow lines
dated), `console_facts` and `console_recipes` (the setup a console states), `launch_facts` (of launches appended to
one file, the last's).
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from ..timeline import LogRecords, canonical_metric, empty_frame
from ._filetime import file_mtime
from ..decoding import decode_text
from ._frames import without_placeholders, without_unit_loss_scale
from . import (card_axolotl, command_line, early_stop_end, fairseq_config, megatron_args, megatron_end, megatron_start,
               mmengine_config, namespace_args, printed_configs, rwkv_args)
from .banners import find_banners, may_hold_banners
from .console_facts import console_facts, run_sign_facts
from .settled_lines import kinds_of, step_line_warnings
from .console_scan import scan
from .dicts_and_bars import EXPLICIT_STEP_KEYS, with_taken_losses
from .console_steps import AS_STATED, dict_steps, numbered_by_order, training_bar_total
from .console_text import as_printed
from .overflow_steps import deepspeed_steps
from .relaunched_dicts import relaunch_note
from .launch_banners import LAUNCH, launch_texts, launched_attempts
from .launch_facts import TEXT_LAUNCHES, banners_last_launch_first, last_launch_facts, last_launch_texts
from ..log_attempts import LAUNCHED_ATTEMPTS
from .console_lines.fields import StepLine
from .console_lines import nanogpt, tf_seq2seq, value_first
from .stated_logging import StatedLogging, stated_logging

# console_facts (its home: console_facts) read from here too
__all__ = ["FORMAT", "read", "read_console", "console_facts"]

FORMAT = "stdout"


def read(path: Path) -> LogRecords:
    """Training metrics and DeepSpeed loss-scale events of one console log (module docstring)."""
    path = Path(path)
    text, not_utf8 = decode_text(path.read_bytes())
    return read_console(text, path, [not_utf8] if not_utf8 else [], by_launch=True)


def read_console(text: str, path: Path, warnings: list[str], one_cell: bool = False,
                 by_launch: bool = False) -> LogRecords:
    """What `read` gives for a console's text once decoded (a notebook's cell outputs come this way too; `one_cell`:
    the text is what one cell's code printed, its hand-written loop's lines read however few: `step_numbering`).
    `by_launch`: the text is one file, to which several launches may have been appended: what a launch says of itself
    is read from the last that says it (`launch_facts`; a notebook's cells are no launches)."""
    text = as_printed(text)
    events = scan(text, one_cell)
    meta: dict = {}
    warnings = warnings + step_line_warnings(events)
    texts = _argument_texts(text)
    flavour = _dict_flavour(events)
    # (after the flavour: a loss named for how it was taken is no Trainer's)
    events = with_taken_losses(events, flavour)
    stated = stated_logging(texts, path) if flavour == "hf_trainer" else None  # (the Trainer's logging_steps)
    frame, attempt_launches = _frame(events, meta, _steps_per_epoch(text), _stated_plan(text), stated)
    uncounted = sum(1 for e in events if e[0] == "line" and (e[1].kind in ("uncounted", "printed_tensor")
                                                              or e[1].kind == "loss_print" and "loss" in e[1].names))
    notes: tuple[str, ...] = ()
    if uncounted:
        said = (f"{uncounted} loss lines print no step: each counted as one step, "
                f"numbered 1 to {uncounted} in file order")
        meta.setdefault("step_inferred", said)
        notes = (said,) if not frame.empty else ()
    if not frame.empty and any(e[0] == "line" and e[1].kind == "metric_logger" for e in events):
        notes += (_SMOOTHED_NOTE,)
    notes += _dict_numbering_notes(meta.get("step_inferred", ""), sum(1 for e in events if e[0] == "dict"
                                                                       and "loss" in e[2]))
    notes += relaunch_note(events)
    launches = launch_texts(text, events, attempt_launches) if by_launch else [text]
    meta.update(_own_facts(text, launches))
    if frame.empty:  # a run that crashed or stopped before its first logged step: what its console says of it
        meta.update(run_sign_facts(text))
    if flavour:
        meta["dict_lines"] = flavour
    if stopped := early_stop_end.early_stop_line(text):  # an early stop the run's own rule made (analyzers)
        meta[early_stop_end.KEY] = stopped
    kinds = kinds_of(events)
    if "megatron" in kinds:  # whether its log says why it ends (analyzers.megatron_cut)
        meta[megatron_end.KEY] = megatron_end.end_line(text)
        if meta[megatron_end.KEY] is None and (by_hand := megatron_end.stopped_by_hand(text)):
            meta[megatron_end.BY_HAND_KEY] = by_hand
        if (start := megatron_start.weights_start(text)) is not None:  # trained or random weights (profile, analyzers)
            meta[megatron_start.KEY] = start
    if any(kind in tf_seq2seq.KINDS for kind in kinds):  # a loop that trains until stopped (analyzers.crash)
        meta[tf_seq2seq.OPEN_ENDED_KEY] = tf_seq2seq.OPEN_ENDED
    if any(e[0] == "line" and e[1].kind.startswith("results_table") for e in events):
        meta.setdefault("trainer_table", "the Hugging Face Trainer's results table (its notebook or model-card form)")
    banners = _banners(launches, str(path))
    if len(launches) > 1:
        texts, meta[TEXT_LAUNCHES] = last_launch_texts(texts, [_argument_texts(launch) for launch in launches])
    return LogRecords(source=str(path), format=FORMAT, frame=frame, texts=texts, meta=meta,
                      mtime=file_mtime(path), console_kinds=kinds, banners=banners,
                      warnings=tuple(warnings), notes=notes)


def _own_facts(text: str, launches: list[str]) -> dict:
    """`console_facts` of the text; of several launches (`launches`), what each says of itself from the last that says
    it (`launch_facts`)."""
    whole = console_facts(text)
    return whole if len(launches) == 1 else last_launch_facts(whole, [console_facts(launch) for launch in launches])


def _banners(launches: list[str], source: str) -> tuple:
    """The banners of the text (`find_banners`); of several launches, the last launch's first."""
    found = [find_banners(launch.splitlines(), source) if may_hold_banners(launch) else () for launch in launches]
    return found[0] if len(found) == 1 else banners_last_launch_first(found)


def _dict_numbering_notes(how: str, dicts: int) -> tuple[str, ...]:
    """What the user is told where the printed dicts' steps are not the run's own: numbered by their order alone
    (nothing dates them), or by position x the logging interval the run's configuration states."""
    if dicts and numbered_by_order(how):
        return (f"{dicts} printed training dicts carry no step, and no progress bar, closing summary or stated "
                "logging_steps dates them: their steps are their order in the log (1, 2, 3 ...), not the run's "
                "optimizer steps",)
    stated = next((part for part in how.split("; ") if AS_STATED in part), None)
    return (f"the printed dicts carry no step: numbered {stated}",) if stated else ()


_SMOOTHED_NOTE = ("MetricLogger lines (`Epoch: [E]  [N/M]  ... loss: median (average)`): each training value read is "
                  "the median of its meter's window of recent iterations (about 20), a smoothed value, not the "
                  "iteration's own; an evaluation's (`Test:`) is its mean over the batches")


def _dict_flavour(events: list[tuple]) -> str | None:
    """Whose printed dicts a console holds: "swift" (ms-swift's carry `global_step/max_steps`), "hf_trainer" (the
    Trainer's ProgressCallback prints `{'loss': ..., 'learning_rate': ..., 'epoch': ...}` at each logging step, never
    a `step` key, and train() closes with `{'train_runtime': ..., 'train_samples_per_second': ..., 'train_loss': ...,
    'epoch': ...}`, its speed_metrics' names; TRL's and LLaMA-Factory's trainers are Trainers and print the same), or
    None."""
    dicts = [e[2] for e in events if e[0] == "dict"]
    if any("global_step/max_steps" in d for d in dicts):
        return "swift"
    if any(("epoch" in d and ("loss" in d and ("learning_rate" in d or "grad_norm" in d) or "eval_loss" in d)
            or all(k in d for k in _TRAIN_SUMMARY_KEYS)) and "step" not in d for d in dicts):
        return "hf_trainer"  # (a hand-written `print({'epoch': e, 'step': s, 'loss': l})` is not)
    return None


_TRAIN_SUMMARY_KEYS = ("train_runtime", "train_samples_per_second", "train_steps_per_second", "train_loss")


def _argument_texts(text: str) -> dict[str, str]:
    """Megatron's printed arguments as texts[megatron_args.TEXT_KEY], a script's argparse `Namespace(...)` line as
    texts[namespace_args.TEXT_KEY], an HF script's printed TrainingArguments and model config
    (`printed_configs`), an mmengine runner's printed config (`mmengine_config`), DeepSpeed's launch line
    (`command_line`), the arguments of RWKV-LM's last launch (`rwkv_args`), the axolotl config a model card embeds
    (`card_axolotl`) and the dtype a nanoGPT console prints (`console_lines.nanogpt`), each as JSON, when the log has
    them."""
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
                       (printed_configs.MODEL_CONFIG_KEY, printed_configs.model_config(text)),
                       (rwkv_args.TEXT_KEY, rwkv_args.parse(text)),
                       (value_first.TEXT_KEY, value_first.launch_dtype(text)),
                       (nanogpt.DTYPE_TEXT_KEY, nanogpt.printed_dtype(text)),
                       (card_axolotl.TEXT_KEY, card_axolotl.parse(text)),
                       (fairseq_config.TEXT_KEY, fairseq_config.parse(text))):
        if found:
            out[key] = json.dumps(found)
    return out


def _frame(events: list[tuple], meta: dict, per_epoch: float | None = None,
           plan: tuple[int, int] | None = None,
           stated: StatedLogging | None = None) -> tuple[pd.DataFrame, set[int]]:
    """The console's rows, and the indexes of the launch events that begin a new attempt (`launched_attempts`)."""
    train_total = training_bar_total(events)
    dated, how = dict_steps(events, train_total, per_epoch, stated)
    if how:
        meta["step_inferred"] = how
    steps: list[int] = []
    metrics: list[str] = []
    values: list[float] = []
    row_events: list[int] = []  # each row's event index
    at = 0

    def add(step: int, names, numbers) -> None:
        metrics.extend(names)
        values.extend(numbers)
        steps.extend([step] * (len(metrics) - len(steps)))
        row_events.extend([at] * (len(metrics) - len(row_events)))

    ds = deepspeed_steps(events, train_total)
    # several engines (a PPO's actor and critic) each skip one at the same step: the point counts them all
    overflows_at = Counter(ds[i] for i, event in enumerate(events) if event[0] == "overflow")
    for i, event in enumerate(events):
        at = i
        if event[0] == "dict":
            pairs = [(canonical_metric(k), v) for k, v in event[2].items() if k not in EXPLICIT_STEP_KEYS]
            add(dated[i], [k for k, _ in pairs], [v for _, v in pairs])
        elif event[0] == "overflow":
            add(ds[i], ("overflow", "loss_scale"), (float(overflows_at[ds[i]]), event[1]))
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
        return empty_frame(), set()
    engines = engine_skips(events)
    if engines:
        meta[ENGINE_SKIPS] = engines
    frame = pd.DataFrame({"step": np.array(steps, dtype=np.int64), "metric": np.array(metrics, dtype=object),
                          "value": np.array(values, dtype=np.float64), "wall_time": np.full(len(steps), math.nan)})
    launched: dict[int, list[int]] = {}
    if any(e[0] == LAUNCH for e in events):  # (the rows below only gain epochs or lose scale rows: attempts stay)
        launched = launched_attempts(frame, np.array(row_events), events)
        meta[LAUNCHED_ATTEMPTS] = sorted(launched)
    attempt_launches = {j for between in launched.values() for j in between}
    if plan and "epoch" not in metrics and "loss" in metrics and _plan_fits(plan, steps, events):
        frame = _with_epochs(frame, plan[1] / plan[0])
        meta["epoch_inferred"] = f"step / {plan[1] / plan[0]:g} steps per epoch, as the log's plan line states them"
    elif per_epoch and "epoch" not in metrics and "loss" in metrics and _results_table_only(events):
        # a results table has no epoch column; the Trainer's (or Unsloth's) banner says how many steps an epoch makes
        frame = _with_epochs(frame, per_epoch)
        meta["epoch_inferred"] = f"step / {per_epoch:g} steps per epoch, as the trainer's banner states them"
    elif per_epoch and "loss" in metrics and _results_table_only(events) and _paced_by_whole_epochs(events, per_epoch):
        frame = _with_epochs(frame[frame["metric"] != "epoch"].reset_index(drop=True), per_epoch)
        meta["epoch_inferred"] = (f"step / {per_epoch:g} steps per epoch, as the trainer's banner states them (the "
                                  "progress line's epoch is a whole number, the epochs done)")
    frame = without_unit_loss_scale(without_placeholders(frame) if "megatron" in kinds_of(events) else frame)
    return frame, attempt_launches


ENGINE_SKIPS = "deepspeed_engine_skips"


def engine_skips(events: list[tuple]) -> dict:
    """{'step': N, 'counts': [...]}: DeepSpeed's `skipped=` counts at the last progress step where several engines
    printed one after another (DeepSpeed-Chat's PPO: the actor's `step=100, skipped=6`, then the critic's `step=100,
    skipped=7`), in that order; {} where one engine prints them (a timeline keeps one value a step: the others' counts
    would be lost)."""
    groups: list[list[tuple]] = []
    for event in events:
        if event[0] != "ds_step":
            continue
        if groups and groups[-1][-1][1] == event[1]:
            groups[-1].append(event)
        else:
            groups.append([event])
    last = groups[-1] if groups else []
    return {"step": last[0][1], "counts": [e[2] for e in last]} if len(last) > 1 else {}


def _results_table_only(events: list[tuple]) -> bool:
    """Whether every step of the log comes from a results table (optimizer steps, as the banner counts them), the
    closing summary apart (train() returns `TrainOutput(..., metrics={'train_runtime': ..., 'epoch': 2.64})` under
    the table: DAViDChen1999_RLHF-Homework-Portfolio's Unsloth DPO notebook)."""
    kinds = {e[1].kind for e in events if e[0] == "line"}
    return kinds == {"results_table"} and not any(e[0] == "dict" and not _closing_summary(e[2]) for e in events)


def _closing_summary(pairs: dict) -> bool:
    return all(k in pairs for k in _TRAIN_SUMMARY_KEYS) and "loss" not in pairs


def _plan_fits(plan: tuple[int, int], steps: list[int], events: list[tuple]) -> bool:
    """A plan line's total is this run's: the training bar counts to it (the same steps, not micro-batches) and
    no step goes past it (one plan line of another run in the same log, or a resume, would)."""
    totals = {e[1].total for e in events if e[0] == "line" and e[1].total}
    return plan[1] in totals and max(steps) <= plan[1]


def _paced_by_whole_epochs(events: list[tuple], per_epoch: float) -> bool:
    """Whether a results table's epochs were paced from a progress line that printed a whole number of epochs under
    the banner's count at its last step (`[60/60 03:10, Epoch 1/2]`: the notebook callback prints int(state.epoch) when
    training ends, the epochs done, so 1 for 1.99), each row's epoch its step x that number / the last step, an
    undercount by up to one epoch. The banner's steps per epoch (`Num Epochs = 2 | Total steps = 60`: with max_steps
    its epochs are the steps over an epoch's, rounded up, so it errs the other way by less) date them instead, where
    the two agree on that whole number (the banner's epochs at the last step over it, by one epoch at most). The
    table's rows are read, not a closing summary's epoch after them."""
    dated = [(e[1].step, dict(zip(e[1].names, e[1].values)).get("epoch")) for e in events if e[0] == "line"]
    dated = [(step, epoch) for step, epoch in dated if epoch is not None]
    if not dated:
        return False
    steps, values = (np.array(column, dtype="float64") for column in zip(*dated))
    last, done = float(steps[-1]), float(values[-1])
    by_banner = last / per_epoch
    if last <= 0 or done <= 0 or done != math.floor(done) or not done < by_banner <= done + 1:
        return False
    return bool(np.allclose(values, steps * done / last))  # paced, not an Epoch column of the table's own


def _with_epochs(frame: pd.DataFrame, per_epoch: float) -> pd.DataFrame:
    """An `epoch` at every step that logged a loss, where the log prints none beside it but says how many steps
    an epoch makes: the step / steps-per-epoch that the HF Trainer logs as its own `epoch`."""
    losses = frame.index[frame["metric"] == "loss"]
    steps = frame.loc[losses, "step"].to_numpy()
    epochs = pd.DataFrame({"step": steps, "metric": "epoch", "value": steps / per_epoch, "wall_time": math.nan},
                          index=losses + 0.5)  # each right after its loss: the rows' order is the log's (resumes)
    return pd.concat([frame, epochs]).sort_index().reset_index(drop=True)


_NUM_EPOCHS = re.compile(r"Num [Ee]pochs = ([\d,]+)")  # SetFit prints `Num epochs = 1`
_TOTAL_OPT_STEPS = re.compile(r"Total (?:optimization )?steps = ([\d,]+)")  # Unsloth's banner: `Total steps = 90`
# A training script's own plan line, `2000 examples x 3 epochs = 375 steps` (Phiwain/LLM sft.py): the epochs and
# the optimizer steps they make, said together. Whole numbers only, never begun inside another number (a run of
# comma-separated token ids would make every comma a start: quadratic), nor a fraction (`0.5 epochs = 250 steps`).
_COUNT = r"(?<![\d.,])(\d{1,3}(?:,\d{3})+|\d{1,12})(?![\d.,]\d)"
_STATED_EPOCHS = re.compile(
    _COUNT + r"\s+epochs?\s*=\s*" + _COUNT + r"\s+(?:optimi[sz]ation\s+|optimizer\s+|training\s+)?"
    r"steps\b", re.IGNORECASE)


_MAX_EPOCHS = re.compile(r"^max_epochs = (\d{1,6})\s*$", re.MULTILINE)
_ITER_TOTAL = re.compile(r"Iter\(train\) \[\s*\d+/(\d+)\]")


# The banner's data and batch (`Num examples = 3,346`, `Total train batch size (w. parallel, distributed &
# accumulation) = 8`; Unsloth's `Total batch size (2 x 4 x 1) = 8`): the steps an epoch makes, whatever max_steps cut
_NUM_EXAMPLES = re.compile(r"Num examples = ([\d,]+)")
_TOTAL_BATCH = re.compile(r"Total (?:train )?batch size[^=\n]{0,60}= ([\d,]+)")


def _steps_per_epoch(text: str) -> float | None:
    """Optimizer steps per epoch from the HF Trainer's `***** Running training *****` banner (Unsloth's too), or
    None: its total steps over its epochs, unless max_steps stopped the run inside its first epoch (`Num Epochs = 1 |
    Total steps = 30` where its examples over its total batch make 418 steps): then those 418. (Only then: a GRPO
    batch counts completions, several a prompt, so examples over batch undercounts its epoch's steps.)"""
    epochs, total = _NUM_EPOCHS.search(text), _TOTAL_OPT_STEPS.search(text)
    if not epochs or not total:
        return None
    e, t = int(epochs.group(1).replace(",", "")), int(total.group(1).replace(",", ""))
    if e <= 0 or t <= 0:
        return None
    examples, batch = _NUM_EXAMPLES.search(text), _TOTAL_BATCH.search(text)
    if e == 1 and examples and batch:
        n, b = int(examples.group(1).replace(",", "")), int(batch.group(1).replace(",", ""))
        if b > 0 and n // b > t:  # (the Trainer: the batches a process makes, over the accumulation)
            return float(n // b)
    return t / e


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
