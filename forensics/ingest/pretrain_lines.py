"""Console lines of the pre-training stacks, each with its own step: Megatron, OLMo, NeMo, torchtitan.

`parse_line(line)` turns one console line (ANSI colour codes already removed) into a
`StepLine` or None; `OlmoBlock` gathers OLMo's multi-line records. The stdout reader calls
both and puts the rows in file order with its other events.

* Megatron-LM / Megatron-DeepSpeed (megatron/training/training.py `training_log`, printed
  every `log_interval` by the last rank): ` iteration N/ M | key: value | ... |`. Each field is
  `key: value |`, so only fields closed by `|` are read (a line cut mid-write keeps its
  complete fields). `lm loss` is the loss averaged over the interval's advanced iterations;
  `number of skipped iterations` (fp16 overflows) and `number of nan iterations` (skipped
  iterations whose loss was NaN/Inf) are counts per interval. The validation line
  ` validation loss at iteration N | lm loss value: X | lm loss PPL: Y |` gives eval_loss /
  eval_ppl. Launcher prefixes (`[default7]:`, `[rank0]:`, `0: `, a timestamp) are ignored.
* OLMo (olmo/train.py `log_metrics_to_console`): a `[step=N/M]` (later `[step=N/M,epoch=E]`)
  header, then one `    name=value` line per metric; values above 1000 carry thousands
  commas. OLMo-core prints the same shape with names such as `train/CE loss`. Pairs on the
  header line itself (`[step=N] train/CrossEntropyLoss=2.1 optim/total_grad_norm=0.4`) count too.
* NeMo (PyTorch Lightning's TQDMProgressBar with NeMo's logged metrics in the postfix):
  `Epoch 0: 47%|...| 7/15 [06:19<07:13, reduced_train_loss=11.50, global_step=5.000,
  consumed_samples=12288.0, train_step_timing in s=49.50]`; reduced_train_loss -> loss,
  lr -> learning_rate, val_loss -> eval_loss; Lightning's own smoothed `loss` is left out.
* torchtitan (torchtitan/components/metrics.py `MetricsProcessor.log`):
  `step: N  loss: X  grad_norm: Y  memory: 20.21GiB(21.27%)  tps: 1,016  tflops: 58.88  mfu: 5.95%`.

Names go through `canonical_metric` (lm loss, CE loss, CrossEntropyLoss -> loss; grad norm ->
grad_norm; ...). A `loss scale` that is 1.0 on every line is no dynamic scaler at all (bf16 and
fp32 runs print 1.0), so it is dropped by the reader, not reported as a scale at its floor.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from ..timeline import canonical_metric

# Every step line holds one of these; a log holding none needs no line-by-line look.
STEP_LINE_MARKERS = ("iteration", "[step=", "step:", "reduced_train_loss=")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_NUMBER = re.compile(r"^[-+]?(?:nan|inf(?:inity)?|(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)", re.IGNORECASE)

_MEGATRON_ITERATION = re.compile(r"\biteration\s+(\d{1,18})\s*/\s*(\d{1,18})\s*\|")
_MEGATRON_FIELD = re.compile(r"\s*([^|:]+?)\s*:([^|]*)\|")
_MEGATRON_VALIDATION = re.compile(r"validation loss at iteration\s+(\d{1,18})\b[^|]*\|")
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

_OLMO_HEADER = re.compile(r"\[step=(\d{1,18})(?:/(\d{1,18}))?[^\]]*\]")
_OLMO_INLINE_PAIR = re.compile(r"(?<![\w/])([A-Za-z][\w/.()-]*)=(\S+)")
_OLMO_BLOCK_LINE = re.compile(r"^\s+([A-Za-z][^=]*?)=(\S+)\s*$")

# Lightning's bar: `Epoch E: 47%|####| N/M [06:19<07:13, reduced_train_loss=11.50, global_step=5.000, ...]`
# or, without a length, `Epoch E: : Nit [00:04, 4.36s/it, ...]`.
_NEMO_BAR = re.compile(r"Epoch (\d+):[^\[\r\n]*?\b(\d+)(?:/(\d+)|it)\s*\[([^\]]*reduced_train_loss=[^\]]*)\]")
_NEMO_PAIR = re.compile(r"([A-Za-z_][\w/ ]*?)=([^,\]]+)")
# Lightning's own `loss` is a running mean over the bar's window, `global_step` the step itself.
_NEMO_SKIP = {"loss", "v_num", "global_step", "consumed_samples"}

_TITAN = re.compile(r"\bstep:\s*(\d{1,18})(?:/(\d{1,18}))?\s+(?:=\s*[\d.]+%\s+)?loss:\s")
_TITAN_PAIR = re.compile(r"([a-z_]+):\s*(\S+)")
_TITAN_NAMES = {"memory": "memory_gib", "mfu": "mfu_pct"}  # max reserved GiB; % of peak FLOPS


@dataclass(frozen=True)
class StepLine:
    """One console record: its kind ("megatron", "olmo", "nemo", "torchtitan"), step, total steps if
    printed, the metrics in print order, and whether a cut tail lost fields."""

    kind: str
    step: int
    total: int | None
    metrics: tuple[tuple[str, float], ...]
    cut: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.metrics)

    @property
    def values(self) -> tuple[float, ...]:
        return tuple(value for _, value in self.metrics)


def number(text: str) -> float | None:
    """The number a field starts with ("1.552E+00", "76,631", "NAN", "13372.8/13364.7"); else None."""
    try:
        return float(text)  # the usual case, fast
    except ValueError:
        pass
    m = _NUMBER.match(text.strip())
    if not m:
        return None
    try:
        return float(m.group(0).replace(",", ""))
    except ValueError:
        return None


def parse_line(line: str, last_line: bool = False) -> StepLine | None:
    """The record a Megatron or torchtitan line holds, or None (OLMo headers: see OlmoBlock)."""
    if "iteration" in line:
        m = _MEGATRON_ITERATION.search(line)
        if m:
            return _megatron(line[m.end():], int(m.group(1)), int(m.group(2)), "", last_line)
        m = _MEGATRON_VALIDATION.search(line)
        if m:
            return _megatron(line[m.end():], int(m.group(1)), None, "eval_", last_line)
    if "reduced_train_loss=" in line:
        return _nemo_bar(line)
    if "loss:" in line and "step:" in line:
        m = _TITAN.search(line)
        if m:
            return _titan(line[m.start():], int(m.group(1)), int(m.group(2)) if m.group(2) else None)
    return None


def _megatron(fields: str, step: int, total: int | None, prefix: str, last_line: bool) -> StepLine | None:
    metrics = []
    for key, value in _MEGATRON_FIELD.findall(fields):  # only fields closed by "|"
        parsed = number(value)
        if parsed is not None:
            metrics.append((prefix + _megatron_name(key), parsed))
    if not metrics:
        return None
    cut = last_line and bool(fields[fields.rfind("|") + 1:].strip())
    return StepLine("megatron", step, total, tuple(metrics), cut=cut)


@lru_cache(maxsize=256)
def _megatron_name(key: str) -> str:
    lowered = key.lower().replace("-", " ")  # Megatron-DeepSpeed forks print `lm-loss`
    if lowered in _MEGATRON_KEYS:
        return _MEGATRON_KEYS[lowered]
    for suffix, name in ((" loss value", "loss"), (" loss ppl", "ppl"), (" loss", "loss")):
        if lowered.endswith(suffix):  # 'lm loss' -> loss, 'mtp_1 loss' -> mtp_1_loss
            head = lowered[: -len(suffix)].strip()
            return name if head == "lm" else f"{_snake(head)}_{name}"
    return _snake(lowered)


def _snake(key: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", key.lower()).strip("_")


def _nemo_bar(line: str) -> StepLine | None:
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


def _titan(text: str, step: int, total: int | None) -> StepLine | None:
    metrics = []
    for key, value in _TITAN_PAIR.findall(text):
        parsed = number(value)
        if key != "step" and parsed is not None:
            metrics.append((_TITAN_NAMES.get(key) or canonical_metric(key), parsed))
    return StepLine("torchtitan", step, total, tuple(metrics)) if metrics else None


@dataclass
class OlmoBlock:
    """OLMo's `[step=N/M]` header and the `    name=value` lines under it, fed line by line.

    `feed(line)` returns the finished StepLine when a line ends the block (a non-metric line or
    the next header), else None; `close()` returns the block left open at the end of the file.
    """

    step: int | None = None
    total: int | None = None
    metrics: list = field(default_factory=list)

    def feed(self, line: str) -> StepLine | None:
        header = _OLMO_HEADER.search(line) if "[step=" in line else None
        if header:
            done = self.close()
            self.step, self.total = int(header.group(1)), int(header.group(2)) if header.group(2) else None
            self.metrics = [(canonical_metric(k), v) for k, raw in _OLMO_INLINE_PAIR.findall(line[header.end():])
                            if (v := number(raw)) is not None]
            return done
        if self.step is None:
            return None
        m = _OLMO_BLOCK_LINE.match(line)
        value = number(m.group(2)) if m else None
        if m and value is not None:
            self.metrics.append((canonical_metric(m.group(1).strip()), value))
            return None
        return self.close()

    def close(self) -> StepLine | None:
        done = StepLine("olmo", self.step, self.total, tuple(self.metrics)) if self.step is not None and self.metrics else None
        self.step, self.total, self.metrics = None, None, []
        return done
