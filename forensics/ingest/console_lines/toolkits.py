"""Console step lines of research toolkits, example scripts and loggers, one line a step or an evaluation (fairseq's,
whose losses are bits, are `fairseq`'s):
* the transformers Flax examples (run_clm_flax.py, run_mlm_flax.py, run_t5_mlm_flax.py): `Step... (N | Loss: X, Learning
  Rate: Y)` and `Step... (N | Eval Loss: X | Eval Perplexity: Y)` (a line with no learning rate is an evaluation's: its
  fields eval_; kind "flax").
* fairseq2: `Train Metrics (step N) - NLL Loss: X | Gradient Norm: G | ... | Learning Rate: Y` (`Validation Metrics`:
  eval_); MaxText's `Completed eval after train step N, loss=X, perplexity=Y` (its `completed step: N, ..., loss: X`
  lines are generic ones); clu's LoggingWriter (t5x): `[N] collection=train loss=X, accuracy=Y` (other collections:
  eval_).
* OpenNMT-py (onmt/utils/statistics.py:125, Statistics.output): `Step 10/  300; acc: 41.0; ppl:  11.8; xent: 2.5;
  lr: 0.00100; sents: ...; bsz: ...; 12345/13456 tok/s;      6 sec;` (kind "opennmt"): xent is the loss (ppl =
  exp(xent)), acc -> accuracy_pct. Its 2018 line `Epoch  1, 12850/37527; acc:   3.99; ppl: 12792.57; xent:   9.46;
  3438 src tok/s; ...` (kind "opennmt_epoch"): batch N of M in epoch E, numbered on by `step_numbering`. Its
  validation's `[... INFO] Validation perplexity: P` / `Validation accuracy: A` lines (report_manager.py:154) give
  eval_ppl and eval_loss = ln P, eval_accuracy_pct (kind "opennmt_valid", placed at the step line before them by
  `step_numbering`).
* Joey NMT 1.x's validation line (joeynmt/training.py): `Validation result (greedy) at epoch  13, step     2000:
  token_accuracy:   5.90, loss: 41230.5117, ppl:  31.0412, duration: 10.2210s` (kind "joeynmt_valid", at its step):
  its loss is summed over the dev set's tokens, so the per-token eval_loss is ln(ppl), eval_ppl the ppl. Its training
  lines (`Epoch   2 Step:      200 Batch Loss:     4.812340 Tokens per Sec: ...`) are generic lines.
* The MetricLogger of DeiT / MAE / DETR / DINO and the LLaMA-Adapter / LLaMA2-Accessory scripts that copied it:
  `[17:11:05.859398] Epoch: [0]  [   30/13000]  eta: 2:17:53  lr: 0.000001  closs: 1.5078 (1.6011)  grad_norm: 0.9
  (1.1)  time: 0.61  data: 0.00  max mem: 20618` (kind "metric_logger"): step E x M + N; each meter prints the median
  of its recent window then its global average, and the median is read (a smoothed value); `loss`, else the first
  `*loss` meter (`closs`), is the loss. `Test:  [N/M]  ...` lines (kind "metric_logger_eval") are an evaluation:
  eval_ meters at their global average, the last line of each evaluation kept (`step_numbering`).
* torchtune's bar description `E|N|Loss: X:` before the bar itself (kind "torchtune"): step N, the recipe's
  global_step (the bar's own n, one ahead after the update, and each redraw are not the step).
* NVIDIA DLLogger's StdOutBackend (dllogger/logger.py, the DeepLearningExamples scripts): `DLL <timestamp> - <step>
  name : value [unit] name : value ...` (kind "dllogger"), the step as the script's step_format prints it: `Training
  Epoch: 0 Training Iteration: 2933` (BERT), `Epoch: 0 Iteration: 100`, `step: 100`, a bare `100` or the tuple `(0,
  100)`; the last counter is the step, an epoch beside it kept as a metric, a `Validation` step's fields eval_. Every
  numeric field is read: `step_loss` is the loss, a running `average_loss` beside it loss_avg (the loss where the line
  has no other). A line with no step (`()`, a run's closing summary) is not a step's; a `PARAMETER` line is the
  stdout reader's (`loss_scale : X` there is an overflow the scaler skipped).
"""
from __future__ import annotations

import math
import re

from ...timeline import canonical_metric
from .fields import StepLine, FLOAT, _record, _snake, number, perplexity_loss

# The MetricLogger of the facebookresearch vision repositories (DeiT, MAE, DETR, DINO: `util/misc.py` /
# `utils.py` `MetricLogger.log_every`) and the LLaMA-Adapter / LLaMA2-Accessory fine-tuning scripts that copied it:
# `Epoch: [E]  [N/M]  eta: 0:10:00  lr: X  closs: M (A)  grad_norm: M (A)  time: T  data: D  max mem: MB` (DINO
# `Epoch: [E/EPOCHS]`), `Test:  [N/M]  ...` for an evaluation; fields joined by two spaces
METRIC_LOGGER = re.compile(
    r"(?<![\w/])(?:Epoch: \[(\d{1,6})(?:/\d{1,6})?\]|(Test|Val(?:id|idation)?|Eval(?:uation)?):)"
    r"  \[\s*(\d{1,18})/(\d{1,18})\]")
_LOGGER_FIELD = re.compile(r"^([A-Za-z][\w]{0,40}(?: [a-z]{1,10})?): (\S+)(?: \((\S+)\))?$")
_LOGGER_SKIP = {"eta", "time", "data", "max mem", "iter_time", "data_time"}  # timings, memory: no metric


def _metric_logger(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """A MetricLogger line (kind "metric_logger", or "metric_logger_eval" for `Test:`): each meter prints `median
    (global average)` of its SmoothedValue window (the last ~20 iterations; a meter given its own format, such as
    the lr, its value alone), and the first number is read: the window's median, a smoothed value, not the
    iteration's own. For a training line step E x M + N (epochs from 0, as the loggers count them). A `Test:` line's
    meters are eval_ and read at their global average, the evaluation's mean over the batches so far (the last line
    of an evaluation holds its mean); its step is its batch N until `step_numbering` puts the evaluation's last line
    at the training step before it. The
    loss is `loss`, else the first meter whose name ends in `loss` (LLaMA-Adapter's `closs`); lr -> learning_rate.
    On the file's last line the last field may be cut: left out."""
    parts = [p for p in re.split(r"\s{2,}", line[m.end():].strip()) if p]
    cut = last_line and bool(parts)
    if cut:
        parts = parts[:-1]
    evaluating = bool(m.group(2))
    read: list[tuple[str, float]] = []
    for part in parts:
        field_m = _LOGGER_FIELD.match(part)
        if field_m is None or field_m.group(1) in _LOGGER_SKIP:
            continue
        value = number(field_m.group(3) if evaluating and field_m.group(3) else field_m.group(2))
        if value is not None:
            read.append((field_m.group(1), value))
    names = [name for name, _ in read]
    loss = "loss" if "loss" in names else next((n for n in names if n.lower().endswith("loss")), None)
    if loss is None:
        return None
    prefix = "eval_" if evaluating else ""
    metrics = [(prefix + ("loss" if name == loss else "learning_rate" if name == "lr" else _snake(name)), value)
               for name, value in read if not (prefix and name == "lr")]
    n, total = int(m.group(3)), int(m.group(4))
    if prefix:
        return StepLine("metric_logger_eval", n, None, tuple(metrics), cut=cut)  # (M: the evaluation's batches)
    return StepLine("metric_logger", int(m.group(1)) * total + n, None, tuple(metrics), cut=cut)


# fairseq2's LogMetricRecorder (src/fairseq2/metrics/recorders/log.py): `Train Metrics (step 12) - NLL Loss: 2.48 |
# Gradient Norm: 1.48 | ... | Learning Rate: 9.75e-05 | ...` (display names; `Validation Metrics (step N) - ...`)
FAIRSEQ2 = re.compile(r"\b(Train|Valid|Validation|Eval|Evaluation) Metrics \(step (\d{1,18})\) - (.*)$")
_FAIRSEQ2_NAMES = {"nll loss": "loss", "loss": "loss", "gradient norm": "grad_norm", "learning rate": "learning_rate"}
# MaxText's metric logger (src/maxtext/common/metric_logger.py): `Completed eval after train step 100, loss=2.1,
# perplexity=8.2, total_weights=..., avg_z_loss=...`
MAXTEXT_EVAL = re.compile(r"\bCompleted eval after train step (\d{1,18}), (.*)$")
# InternEvo / InternLM's training line (internlm/train/pipeline.py record_current_batch_training_metrics): `tflops=180.5
# step=23 loss=1.51 tgs (tokens/gpu/second)=3523.1 ... lr=4.2e-05 loss_scale=65536.0 grad_norm={'0_default': 1.04} ...`
INTERNEVO_STEP = re.compile(r"\bstep=(\d{1,18}) loss=")
_INTERNEVO_PAIR = re.compile(r"(?<![\w/])(loss|lr|loss_scale|acc|perplexity|grad_norm)=(?:\{'[^']*': )?"
                             r"(" + FLOAT + r")", re.IGNORECASE)


def _internevo(fields: str, step: int) -> StepLine | None:
    metrics = tuple((canonical_metric(k), float(v)) for k, v in _INTERNEVO_PAIR.findall(fields))
    return StepLine("internevo", step, None, metrics) if any(k == "loss" for k, _ in metrics) else None


GPT2_SIMPLE = re.compile(r"^\[(\d{1,18}) \| [\d.]+\] loss=(" + FLOAT + r")"
                          r" avg=(" + FLOAT + r")", re.IGNORECASE)
# clu's LoggingWriter (t5x, flax examples): `[12] collection=train accuracy=0.45, cross_ent_loss=2.3, loss=2.3, ...`
CLU_WRITER = re.compile(r"\[(\d{1,18})\] collection=(\w+) (.*)$")
_EQUALS_PAIR = re.compile(r"([A-Za-z][\w/.-]*)=(" + FLOAT + r")(?![\w.])", re.IGNORECASE)


# The transformers Flax examples (examples/flax/language-modeling/run_clm_flax.py:801-803, :826; run_mlm_flax.py,
# run_t5_mlm_flax.py print the same through tqdm.write): `Step... (10 | Loss: 2.4812345, Learning Rate: 4.9e-05)` and
# the evaluation's `Step... (100 | Eval Loss: 2.1 | Eval Perplexity: 8.2)`. A line without a learning rate is an
# evaluation's (run_mlm_flax's `Step... (N | Loss: X, Acc: Y)`). The whole line is the shape: every field a number.
FLAX_STEP = re.compile(
    r"^Step\.\.\. \((\d{1,18}) \| ((?:[A-Z][A-Za-z ]{0,30}: \S+(?:, | \| ))*[A-Z][A-Za-z ]{0,30}: \S+)\)\s*$")
_FLAX_NAMES = {"loss": "loss", "learning_rate": "learning_rate", "acc": "accuracy", "accuracy": "accuracy",
               "perplexity": "perplexity"}


def flax_step(m: re.Match) -> StepLine | None:
    fields = [field.split(": ") for field in re.split(r", | \| ", m.group(2))]
    values = [number(raw) if re.fullmatch(FLOAT, raw, re.IGNORECASE) else None for _, raw in fields]
    if None in values:
        return None
    names = [_snake(name) for name, _ in fields]
    held_out = "learning_rate" not in names
    metrics = []
    for name, value in zip(names, values):
        own = _FLAX_NAMES.get(name.removeprefix("eval_"), name.removeprefix("eval_"))
        metrics.append(("eval_" + own if held_out else own, value))
    if not any(name in ("loss", "eval_loss") for name, _ in metrics):
        return None
    return StepLine("flax", int(m.group(1)), None, tuple(metrics))


def _fairseq2(m: re.Match) -> StepLine | None:
    held_out = not m.group(1).startswith("Train")
    metrics = []
    for part in m.group(3).split(" | "):
        name, _, raw = part.partition(": ")
        value = number(raw.strip())
        if value is not None:
            own = _FAIRSEQ2_NAMES.get(name.strip().lower()) or _snake(name)
            metrics.append(("eval_" + own if held_out else own, value))
    return StepLine("fairseq2", int(m.group(2)), None, tuple(metrics)) if metrics else None


def _maxtext_eval(m: re.Match) -> StepLine | None:
    names = {"loss": "eval_loss", "perplexity": "eval_ppl"}
    metrics = tuple((names[k], float(v)) for k, v in _EQUALS_PAIR.findall(m.group(2)) if k in names)
    return StepLine("maxtext_eval", int(m.group(1)), None, metrics) if metrics else None


def clu_scalars(m: re.Match) -> StepLine | None:
    prefix = "" if m.group(2) == "train" else "eval_"
    metrics = tuple((prefix + canonical_metric(k), float(v)) for k, v in _EQUALS_PAIR.findall(m.group(3)))
    if not any(name.endswith("loss") for name, _ in metrics):
        return None
    return StepLine("clu", int(m.group(1)), None, metrics)


# OpenNMT-py's Statistics.output (onmt/utils/statistics.py:125): `Step 10/  300; acc: 41.0; ppl:  11.8; xent: 2.5;
# lr: 0.00100; sents:    3200; bsz: 1234/1345/32; 12345/13456 tok/s;      6 sec;` (`Step 10;` without train_steps;
# OpenNMT-py 2.x stops after `tok/s; 6 sec`). xent is the loss, ppl = exp(xent), acc a percentage.
OPENNMT_STEP = re.compile(r"\bStep\s*(\d{1,18})(?:/\s*(\d{1,18}))?; acc:\s*(" + FLOAT + r"); ppl:\s*(" + FLOAT
                           + r"); xent:\s*(" + FLOAT + r"); lr:\s*(" + FLOAT + r");")


# OpenNMT-py's report_manager.py:154-155 after a validation: `[2024-06-01 10:00:00,500 INFO] Validation perplexity:
# 11.2` and `... Validation accuracy: 41` (`%g`)
OPENNMT_VALID = re.compile(r"^\[[\d-]+ [\d:,]+ INFO\] Validation (perplexity|accuracy): (" + FLOAT + r")\s*$")


def _opennmt_valid(m: re.Match) -> StepLine:
    """A validation's perplexity (and eval_loss, its log: OpenNMT-py's ppl is exp(xent)) or accuracy (in %)."""
    value = float(m.group(2))
    if m.group(1) == "accuracy":
        return StepLine("opennmt_valid", 0, None, (("eval_accuracy_pct", value),))
    loss = perplexity_loss(value)
    return StepLine("opennmt_valid", 0, None, (("eval_loss", loss), ("eval_ppl", value)))


# Joey NMT 1.x's validation (joeynmt/training.py, TrainManager._validate):
# `Validation result (greedy) at epoch  13, step
#     2000: token_accuracy:   5.90, loss: 41230.5117, ppl:  31.0412, duration: 10.2210s` (later releases add `utility
# ...:` before the duration). Its `loss` is summed over every token of the dev set, so it grows with the set and is no
# per-token loss; the perplexity is exp(loss / tokens): ln(ppl) is the per-token eval loss, what the overfitting and
# eval analyzers compare with the training loss (the batch loss, per token).
JOEYNMT_VALID = re.compile(r"\bValidation result \([^)]{1,40}\) at epoch\s*(\d{1,9}), step\s*(\d{1,18}): .*?"
                            r"\bppl:\s*(" + FLOAT + r")", re.IGNORECASE)


def _joeynmt_valid(m: re.Match) -> StepLine:
    """Joey NMT's validation at its printed step: eval_loss = ln(ppl) and eval_ppl; the summed loss is not read. A
    perplexity of 0 or under is no model's (it is at least 1): the line's step is kept, none of its values."""
    ppl = float(m.group(3))
    if not ppl > 0:  # (NaN is read as it was printed: a non-finite evaluation)
        return StepLine("joeynmt_valid", int(m.group(2)), None, (("eval_loss", ppl), ("eval_ppl", ppl))) \
            if math.isnan(ppl) else StepLine("joeynmt_valid", int(m.group(2)), None, ())
    return StepLine("joeynmt_valid", int(m.group(2)), None, (("eval_loss", perplexity_loss(ppl)), ("eval_ppl", ppl)))


# OpenNMT-py's 2018 Statistics.output (onmt/Trainer.py:66, OpenNMT/OpenNMT-py 9d51f2c7 2018-04-29): `Epoch %2d,
# %5d/%5d; acc: %6.2f; ppl: %6.2f; xent: %6.2f; %3.0f src tok/s; %3.0f tgt tok/s; %6.0f s elapsed`: batch N of M
OPENNMT_EPOCH = re.compile(r"\bEpoch\s*(\d{1,9}),\s*(\d{1,18})/\s*(\d{1,18}); acc:\s*(" + FLOAT + r"); ppl:\s*("
                            + FLOAT + r"); xent:\s*(" + FLOAT + r");")


def _opennmt_epoch(m: re.Match) -> StepLine:
    """Batch N of M in epoch E (kept as a metric: `step_numbering` numbers the batches on across epochs)."""
    metrics = (("loss", float(m.group(6))), ("ppl", float(m.group(5))), ("accuracy_pct", float(m.group(4))),
               ("epoch", float(m.group(1))))
    return StepLine("opennmt_epoch", int(m.group(2)), int(m.group(3)), metrics)


def _opennmt(m: re.Match) -> StepLine:
    metrics = (("loss", float(m.group(5))), ("ppl", float(m.group(4))), ("accuracy_pct", float(m.group(3))),
               ("learning_rate", float(m.group(6))))
    return StepLine("opennmt", int(m.group(1)), int(m.group(2)) if m.group(2) else None, metrics)


# torchtune's recipes describe their tqdm bar as `pbar.set_description(f"{curr_epoch + 1}|{self.global_step}|Loss:
# {loss_to_log}")`: `1|12|Loss: 1.9749605655670166:   2%|▏  | 13/512 [00:35<...]`, redrawn (and read) more than once
TORCHTUNE_BAR = re.compile(r"^\s*\d{1,6}\|(\d{1,18})\|Loss: ([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf)):")
# DLLogger's StdOutBackend line: `DLL 2020-06-04 01:09:11.569757 - <step> name : value ...` (a script's own prefix
# format may drop the time: `DLL - `)
DLLOGGER = re.compile(r"^DLL (?:\d{4}-\d{2}-\d{2}[ T][\d:.]+ )?- (?P<step>.*?)\s*"
                      r"(?P<fields>(?<![^\s(,])[A-Za-z_][\w./-]* : .*)?$")
_DLL_FIELD = re.compile(r"(?:^|\s)([A-Za-z_][\w./-]*) : (\S+)")
_DLL_COUNTER = re.compile(r"(?i)\b(?:iteration|step)s?\s*(?::\s*)?(\d{1,18})\b")
_DLL_EPOCH = re.compile(r"(?i)\bepoch\s*(?::\s*)?(\d{1,9})\b")
_DLL_TUPLE = re.compile(r"^\(\s*(\d{1,18}(?:\s*,\s*\d{1,18})*)\s*,?\s*\)$")
_DLL_NAMES = {"step_loss": "loss", "train_loss": "loss", "lr": "learning_rate"}
_DLL_RUNNING = ("average_loss", "avg_loss", "running_loss")
_DLL_SPLITS = {"train": "", "training": "", "val": "val_", "validation": "val_", "eval": "eval_"}


def _dllogger(step_text: str, fields: str | None) -> StepLine | None:
    """A DLLogger step line (module docstring), or None: a PARAMETER line, a line with no step, no numeric field."""
    if not fields or step_text.startswith("PARAMETER"):
        return None
    epoch = None
    tup = _DLL_TUPLE.match(step_text)
    if tup:  # the default step_format: str(step) of a tuple, (epoch, iteration)
        counts = [int(n) for n in tup.group(1).split(",")]
        step, epoch = counts[-1], counts[0] if len(counts) > 1 else None
    elif step_text.isdigit():
        step = int(step_text)
    else:
        counters = _DLL_COUNTER.findall(step_text)
        if not counters:
            return None
        step = int(counters[-1])
        said = _DLL_EPOCH.search(step_text)
        epoch = int(said.group(1)) if said else None
    pairs = []
    for name, raw in _DLL_FIELD.findall(fields):
        value = number(raw)
        if value is not None:
            pairs.append((name, value))
    names = {name for name, _ in pairs}
    own = names & ({"loss", "step_loss", "train_loss"})
    held_out = "alidation" in step_text or "eval" in step_text.lower()
    metrics = []
    for name, value in pairs:
        split, dot, rest = name.partition(".")  # `train.loss`, `val.loss` (a script's own metric names)
        if dot and split in _DLL_SPLITS:
            name = f"{_DLL_SPLITS[split]}{rest}"
        if name in _DLL_RUNNING:
            name = "loss_avg" if own else "loss"
        else:
            name = canonical_metric(_DLL_NAMES.get(name, name))
        metrics.append(("eval_" + name if held_out and not name.startswith("eval_") else name, value))
    if epoch is not None and metrics:
        metrics.append(("epoch", float(epoch)))
    return _record("dllogger", step, None, metrics, False)
