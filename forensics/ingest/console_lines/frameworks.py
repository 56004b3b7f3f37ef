"""Console step lines of the large-scale training frameworks, one line a logging interval:
* Megatron-LM / Megatron-DeepSpeed (megatron/training/training.py `training_log`, printed
  every `log_interval` by the last rank): ` iteration N/ M | key: value | ... |`. Each field is
  `key: value |`, so only fields closed by `|` are read (a line cut mid-write keeps its
  complete fields). `lm loss` is the loss averaged over the interval's advanced iterations;
  `number of skipped iterations` (fp16 overflows) and `number of nan iterations` (skipped
  iterations whose loss was NaN/Inf) are counts per interval. The validation line
  ` validation loss at iteration N | lm loss value: X | lm loss PPL: Y |` gives eval_loss /
  eval_ppl. Launcher prefixes (`[default7]:`, `[rank0]:`, `0: `, a timestamp) are ignored. Megatron-LM of 2019-20
  (and the forks of it, Chinese-Transformer-XL among them) printed most fields without the colon: ` iteration N/ M |
  elapsed time per iteration (ms): T | learning rate X | lm loss X | loss scale X |`; such a field is read where its
  name is one Megatron prints (or ends in `loss`) and the iteration is the line's first field (a fork's line that puts
  its own fields first, `epoch 3/ 10 | global iteration N/ M | ...`, is read as a generic line, its epoch with it).
* GPT-NeoX prints Megatron's line with `lm_loss` (and ` validation results at iteration N | lm_loss value: X |`);
  nanotron (src/nanotron/logging/base.py) `iteration: N / M | ... | grad_norm: G | lm_loss: X | lr: Y | ...`
  with values through its `human_format` (`81.9K`; kind "nanotron").
* NeMo (PyTorch Lightning's TQDMProgressBar with NeMo's logged metrics in the postfix):
  `Epoch 0: 47%|...| 7/15 [06:19<07:13, reduced_train_loss=11.50, global_step=5.000,
  consumed_samples=12288.0, train_step_timing in s=49.50]`; reduced_train_loss -> loss,
  lr -> learning_rate, val_loss -> eval_loss; Lightning's own smoothed `loss` is left out.
* NeMo 2.0 (nemo/lightning/pytorch/callbacks/progress_printer.py, ProgressPrinter): `Training epoch 0, iteration 9/29
  | lr: 1.9e-05 | global_batch_size: 8 | global_step: 9 | reduced_train_loss: 2.345 | train_step_timing in s: 0.345 |
  consumed_samples: 80`, with ` | val_loss: X | val_ppl: Y` appended at a validation (kind "nemo2"): its step is the
  printed global_step (0-based, as NeMo's Lightning bar prints it too); reduced_train_loss -> loss, lr ->
  learning_rate, val_loss -> eval_loss, val_ppl -> eval_ppl.
* MindSpore MindFormers (mindformers/core/callback/callback.py:485/:490, MFLossMonitor): `{ Epoch:[  1/  1],
  step:[   10/   30], loss: 2.345, per_step_time: 345ms, lr: 1.9e-05, overflow cond: False, loss_scale: 1.0,
  global_norm: [1.234], train_throughput_per_npu: 123.456T` (not in sink mode `loss:[2.345/2.400]`, the step's loss
  then the running mean; kind "mindformers"): step n + (E - 1) x M; global_norm -> grad_norm, per_step_time ->
  step_time_ms, `overflow cond: True` -> an `overflow` point, the `T` throughput -> tflops_per_npu.
* torchtitan (torchtitan/components/metrics.py `MetricsProcessor.log`):
  `step: N  loss: X  grad_norm: Y  memory: 20.21GiB(21.27%)  tps: 1,016  tflops: 58.88  mfu: 5.95%`.
* torchtitan-derived trainers that print the step's metrics as `name=value` pairs (saforem2's mmm.train):
  `step=10 global_avg_loss=11.10 global_max_loss=12.19 throughput(tps)=112.29 mfu(%)=1.74 end_to_end(s)=16.41`
  (kind "titan_key_value"). Read only where `step=N` opens the pairs and a `*loss=` field comes right after it, and
  every word after it is such a pair (prose that says `step=3` is none); global_avg_loss (the loss averaged over the
  ranks, torchtitan's loss_metrics/global_avg_loss) is the loss, global_max_loss (the worst rank's) keeps its name,
  and a unit in brackets becomes a suffix as in verl's names (`mfu(%)` -> mfu_pct, `end_to_end(s)` -> end_to_end_s).
* verl (verl/utils/logger/aggregate_logger.py `concat_dict_to_str`, its console logger for SFT and RL
  trainers): `step:N - train/loss:X - train/lr(1e-3):Y - train/time(s):Z`, every numeric metric as
  `name:value` joined by ` - ` (kind "verl"). A scale in the name is undone (`lr(1e-3)` prints the LR
  in units of 1e-3: 0.01 is 1e-5) and a unit becomes a suffix (`time(s)` -> time_s); numpy 2 scalars
  print as `np.float64(0.5)`. RL names keep verl's spelling except those the timeline knows
  (actor/grad_norm -> grad_norm, critic/score/mean -> reward, ...).
* RWKV-LM's trainer and its forks (RWKV-PEFT, RWKV-LM-LoRA: src/trainer.py `on_train_epoch_end`) write train_log.txt,
  each launch under its `NEW RUN <timestamp>` head (`rwkv_args` reads the arguments printed there), then a line a
  mini-epoch (`epoch_steps` optimizer steps): `{epoch_begin + current_epoch} {mean loss:.6f} {exp(loss):.4f}
  {lr:.8f} {datetime.now()} {current_epoch}`, e.g. `0 1.179688 3.2534 0.00001001 2025-05-27 10:59:28.237880 0` (kind
  "rwkv"): the first number, the mini-epoch counted from the run's start (a resume's epoch_begin included), is the
  step; the loss is the mini-epoch's mean, the LR the one it ended at (the perplexity is exp of that loss: left out).
"""
from __future__ import annotations

import math
import re
from functools import lru_cache

from ...timeline import canonical_metric
from .fields import StepLine, FLOAT, _fields, _record, _snake, number

MEGATRON_ITERATION = re.compile(r"\biteration(:?)\s+(\d{1,18})\s*/\s*(\d{1,18})\s*\|")  # `iteration:` is nanotron's
_MEGATRON_FIELD = re.compile(r"\s*([^|:]+?)\s*:([^|]*)\|")
# old Megatron's field without a colon: `learning rate 6.300E-06 `, `lm loss NAN `, `loss scale 64.0 `
_MEGATRON_BARE_FIELD = re.compile(r"^\s*([A-Za-z][A-Za-z _()/-]*?)\s+([-+]?(?:nan|inf|\d[\d.]*(?:[eE][-+]?\d+)?))\s*$",
                                  re.IGNORECASE)
# Megatron's `validation loss at iteration N |`, GPT-NeoX's ` validation results at iteration N |`
MEGATRON_VALIDATION = re.compile(r"validation (?:loss|results) at iteration\s+(\d{1,18})\b[^|]*\|")
# Megatron's field names -> the timeline's (the loss keys go through `_loss_name`).
_MEGATRON_KEYS = {
    "consumed samples": "consumed_samples",
    "consumed tokens": "consumed_tokens",
    "skipped samples": "skipped_samples",
    "elapsed time per iteration (ms)": "iteration_time_ms",
    "elapsed time per iteration (s)": "iteration_time_s",
    "throughput per gpu (tflop/s/gpu)": "tflops_per_gpu",
    "learning rate": "learning_rate",
    "global batch size": "global_batch_size",
    "loss scale": "loss_scale",
    "grad norm": "grad_norm",
    "num zeros": "num_zeros",
    "params norm": "params_norm",
    "number of skipped iterations": "skipped_iterations",
    "number of nan iterations": "nan_iterations",
    "samples per second": "samples_per_second",
    "tflops": "tflops",
}

# Lightning's bar: `Epoch E: 47%|####| N/M [06:19<07:13, reduced_train_loss=11.50, global_step=5.000, ...]`
# or, without a length, `Epoch E: : Nit [00:04, 4.36s/it, ...]`.
_NEMO_BAR = re.compile(r"Epoch (\d+):[^\[\r\n]*?\b(\d+)(?:/(\d+)|it)\s*\[([^\]]*reduced_train_loss=[^\]]*)\]")
_NEMO_PAIR = re.compile(r"([A-Za-z_][\w/ ]*?)=([^,\]]+)")
# Lightning's own `loss` is a running mean over the bar's window, `global_step` the step itself.
_NEMO_SKIP = {"loss", "v_num", "global_step", "consumed_samples"}

TITAN = re.compile(r"\bstep:\s*(\d{1,18})(?:/(\d{1,18}))?\s+(?:=\s*[\d.]+%\s+)?loss:\s")
_TITAN_PAIR = re.compile(r"([a-z_]+):\s*(\S+)")
_TITAN_NAMES = {"memory": "memory_gib", "mfu": "mfu_pct"}  # max reserved GiB; % of peak FLOPS
TITAN_KEY_VALUE = re.compile(r"\bstep=(\d{1,18})\s+(?=\w*loss=)")
_TITAN_KEY_VALUE_PAIR = re.compile(r"([A-Za-z_]\w*)(?:\(([^()\s]*)\))?=(\S+)")
_TITAN_KEY_VALUE_NAMES = {"global_avg_loss": "loss"}
# (the loss and LR in their fixed decimals, the local time to the microsecond: no other console prints this line)
RWKV_EPOCH = re.compile(r"^(\d{1,9}) ((?:nan|inf|\d+\.\d{6})) (?:nan|inf|\d+\.\d+) (\d+\.\d{8}) "
                        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})? \d{1,9}\s*$")
VERL_STEP = re.compile(r"(?<![\w/])step:(\d{1,18}) - (?=[^\s:]+:)")
_VERL_FIELD = re.compile(r"([^\s:][^:]*?)(?:\(([^()]*)\))?:(?:np\.\w+\()?([-+\w.]+)\)?")
_VERL_UNITS = {"s": "_s", "ms": "_ms", "%": "_pct"}


# NeMo 2.0's ProgressPrinter (nemo/lightning/pytorch/callbacks/progress_printer.py): `Training epoch 0, iteration 9/29 |
# lr: 1.9e-05 | global_batch_size: 8 | global_step: 9 | reduced_train_loss: 2.345 | train_step_timing in s: 0.345 |
# consumed_samples: 80`, with ` | val_loss: 2.861 | val_ppl: 17.57` appended at a validation
NEMO2_PROGRESS = re.compile(r"\bTraining epoch (\d{1,9}), iteration (\d{1,18})/(\d{1,18}) \|")
_NEMO2_NAMES = {"val_ppl": "eval_ppl"}  # the others through canonical_metric (reduced_train_loss, lr, val_loss)


def nemo2_progress(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """NeMo 2.0's progress line at its printed `global_step` (0-based, as NeMo's Lightning bar prints it too; the
    iteration as printed where it is missing); read when a loss is among its fields."""
    metrics, cut = _fields(line[m.end():].split("|"), last_line)
    metrics = [(_NEMO2_NAMES.get(name, name), value) for name, value in metrics]
    found = dict(metrics)
    step = found.get("global_step", float(m.group(2)))
    if not ("loss" in found or "eval_loss" in found) or not math.isfinite(step) or step != int(step):
        return None
    return _record("nemo2", int(step), None, [(k, v) for k, v in metrics if k != "global_step"], cut)


# MindSpore MindFormers' MFLossMonitor (mindformers/core/callback/callback.py:485 in dataset sink mode, :490 not):
# `{ Epoch:[  1/  1], step:[   10/   30], loss: 2.345, per_step_time: 345ms, lr: 1.9e-05, overflow cond: False,
# loss_scale: 1.0, global_norm: [1.234], train_throughput_per_npu: 123.456T`; not in sink mode the loss is
# `loss:[2.345/2.400]` (the step's loss / the epoch's running mean); `%5.3f` of a NaN prints `loss:   nan`
MINDFORMERS = re.compile(r"\{ Epoch:\[\s*(\d{1,9})/\s*(\d{1,9})\], step:\[\s*(\d{1,18})/\s*(\d{1,18})\], (?=loss:)")
_MINDFORMERS_FIELD = re.compile(r"^\s*([a-z][a-z_ ]*?):\s*\[?\s*(" + FLOAT + r"|True|False)\s*(ms|T)?(?:/" + FLOAT
                                + r")?\]?", re.IGNORECASE)
_MINDFORMERS_NAMES = {"per_step_time": "step_time", "global_norm": "grad_norm", "overflow cond": "overflow",
                      "train_throughput_per_npu": "tflops_per_npu"}  # its `T`: TFLOPS
_MINDFORMERS_UNITS = {"ms": "_ms"}


def _mindformers(m: re.Match, line: str) -> StepLine | None:
    """MindFormers' loss line at step n + (epoch - 1) x the steps an epoch makes (`step:[n/M]` counts within the
    epoch); `overflow cond: True` is an `overflow` point (as DeepSpeed's OVERFLOW! lines give one), False none."""
    metrics = []
    for part in line[m.end():].split(","):
        field = _MINDFORMERS_FIELD.match(part)
        if field is None:
            continue
        key, raw = field.group(1).strip().lower(), field.group(2)
        name = _MINDFORMERS_NAMES.get(key) or canonical_metric(_snake(key))
        if raw.lower() in ("true", "false"):
            if name == "overflow" and raw.lower() == "true":
                metrics.append((name, 1.0))
            continue
        metrics.append((name + _MINDFORMERS_UNITS.get((field.group(3) or "").lower(), ""), float(raw)))
    if not any(name == "loss" for name, _ in metrics):
        return None
    step = (int(m.group(1)) - 1) * int(m.group(4)) + int(m.group(3))
    return StepLine("mindformers", step, int(m.group(2)) * int(m.group(4)), tuple(metrics))


def _megatron(fields: str, step: int, total: int | None, prefix: str, last_line: bool,
              kind: str = "megatron", bare: bool = False) -> StepLine | None:
    """The fields of a Megatron line after its iteration; `bare`: old Megatron's fields without a colon are read too."""
    metrics = []
    for key, value in _MEGATRON_FIELD.findall(fields):  # only fields closed by "|"
        parsed = number(value)
        if parsed is not None:
            metrics.append((prefix + _megatron_name(key), parsed))
    if bare:
        for part in fields.split("|")[:-1]:  # only fields closed by "|"
            m = _MEGATRON_BARE_FIELD.match(part) if ":" not in part else None
            if m and _old_megatron_name(m.group(1)):
                metrics.append((prefix + _megatron_name(m.group(1)), float(m.group(2))))
    if not metrics:
        return None
    cut = last_line and bool(fields[fields.rfind("|") + 1:].strip())
    return StepLine(kind, step, total, tuple(metrics), cut=cut)


@lru_cache(maxsize=256)
def _megatron_name(key: str) -> str:
    lowered = key.lower().replace("-", " ")  # Megatron-DeepSpeed forks print `lm-loss`
    if lowered in _MEGATRON_KEYS:
        return _MEGATRON_KEYS[lowered]
    lowered = lowered.replace("_", " ")  # GPT-NeoX prints `lm_loss`, `lm_loss value`, `lm_loss_ppl value`
    if lowered in _MEGATRON_KEYS:  # nanotron's grad_norm
        return _MEGATRON_KEYS[lowered]
    for suffix, name in ((" loss ppl value", "ppl"), (" loss value", "loss"), (" loss ppl", "ppl"), (" loss", "loss")):
        if lowered.endswith(suffix):  # 'lm loss' -> loss, 'mtp_1 loss' -> mtp_1_loss
            head = lowered[: -len(suffix)].strip()
            return name if head == "lm" else f"{_snake(head)}_{name}"
    return canonical_metric(_snake(lowered))  # nanotron's lr


def _old_megatron_name(key: str) -> bool:
    """A colon-less field's name that Megatron prints: one of its known keys, or a loss."""
    lowered = key.lower().replace("-", " ").replace("_", " ").strip()
    return lowered in _MEGATRON_KEYS or lowered == "loss" or lowered.endswith(" loss")


def nemo_bar(line: str) -> StepLine | None:
    """The last NeMo bar state on a line (tqdm redraws with \\r; the reader splits on it too).

    Its step is NeMo's printed `global_step` when it is exact ("5.000", "188.0"); when tqdm cut
    it to 3 significant digits ("2e+3"), the bar's `epoch x M + N - 1` (M batches per epoch).
    """
    matches = list(_NEMO_BAR.finditer(line))
    if not matches:
        return None
    m = matches[-1]
    raw = {k.strip(): v.strip() for k, v in _NEMO_PAIR.findall(m.group(4))}
    pairs = {k: number(v) for k, v in raw.items()}
    printed = raw.get("global_step", "e")
    if "e" not in printed.lower() and pairs["global_step"] is not None:  # exact: "5.000", "188.0"
        step = int(round(pairs["global_step"]))
    elif m.group(3):
        step = int(m.group(1)) * int(m.group(3)) + int(m.group(2)) - 1
    else:
        return None
    metrics = tuple((canonical_metric(k), v) for k, v in pairs.items() if v is not None and k not in _NEMO_SKIP)
    return StepLine("nemo", step, None, metrics) if metrics else None


def titan(text: str, step: int, total: int | None) -> StepLine | None:
    metrics = []
    for key, value in _TITAN_PAIR.findall(text):
        parsed = number(value)
        if key != "step" and parsed is not None:
            metrics.append((_TITAN_NAMES.get(key) or canonical_metric(key), parsed))
    return StepLine("torchtitan", step, total, tuple(metrics)) if metrics else None


def titan_key_values(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """A torchtitan-derived trainer's `step=N name=value ...` line (module docstring), or None where a word after
    `step=N` is no `name=value` pair."""
    pairs = line[m.end():].split()
    cut = last_line and len(pairs) > 1
    metrics = []
    for pair in pairs[:-1] if cut else pairs:
        field = _TITAN_KEY_VALUE_PAIR.fullmatch(pair)
        if field is None:
            return None
        value = number(field.group(3))
        if value is not None:
            name = _TITAN_KEY_VALUE_NAMES.get(field.group(1), field.group(1))
            metrics.append(_verl_metric(name, field.group(2), value))
    return _record("titan_key_value", int(m.group(1)), None, metrics, cut)


def _verl(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """verl's `step:N - name:value - ...` line; a part that is no such pair is passed over (verl prints
    only numbers, so it is a name this reader cannot spell, not prose)."""
    parts = line[m.end():].rstrip().split(" - ")
    cut = last_line and len(parts) > 1
    metrics = []
    for part in parts[:-1] if cut else parts:
        field = _VERL_FIELD.fullmatch(part.strip())
        value = number(field.group(3)) if field else None
        if value is not None:
            metrics.append(_verl_metric(field.group(1), field.group(2), value))
    # verl names its metrics train/loss, actor/..., critic/...; a bare `step:N - loss:X` is some other script's
    kind = "verl" if any("/" in raw for raw in parts) else "key_value"
    return _record(kind, int(m.group(1)), None, metrics, cut)


def _verl_metric(name: str, bracket: str | None, value: float) -> tuple[str, float]:
    """`train/lr`, `1e-3`, 0.01 -> (learning_rate, 1e-5); `train/time`, `s`, 6.1 -> (time_s, 6.1)."""
    scale = number(bracket) if bracket else None
    if scale is not None:
        return canonical_metric(name), value * scale
    name = canonical_metric(name)
    unit = _VERL_UNITS.get(bracket or "", "")
    return name + unit if bracket is None or unit else f"{name}_{_snake(bracket)}", value


def rwkv_epoch(m: re.Match) -> StepLine:
    """RWKV-LM's train_log.txt line of a mini-epoch (module docstring): its mean loss and last LR at its number."""
    return StepLine("rwkv", int(m.group(1)), None, (("loss", float(m.group(2))), ("learning_rate", float(m.group(3)))))
