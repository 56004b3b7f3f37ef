"""Console records of several lines, fed line by line (the stdout reader calls `feed` on each and takes the record a
block completes):
* Composer / llm-foundry (composer/loggers/console_logger.py `log_to_console`): a `[batch=N/M]:` header
  (`[epoch=E][batch=b/n]:` when the duration is in epochs, `[token=N/M]:` in tokens), then one
  `	 Train name: value` line per metric (`loss/train/total`, `l2_norm/grad/global`, `lr-<Optimizer>/group0`);
  the step is the run's batch count (`time/batch`, logged at the batch's start, + 1) where the block holds it.
  An evaluation prints `[Eval batch=k/n] Eval on <label> data:` then `	 Eval metrics/<label>/<Metric>: X`
  lines (LanguageCrossEntropy -> eval_loss), at the last training batch (`ComposerBlock`).
* NeMo-RL (nemo_rl/algorithms/sft.py, grpo.py): `===== Step N/M =====`, then `  • Loss: X` (`  • Avg Reward: X`,
  `    • Validation loss: X`) among the step's other prints (`NemoRLBlock`).
* Keras `model.fit`: `Epoch E/N`, then `100/100 ━━━━ 5s 50ms/step - loss: X - val_loss: Y` (the epoch's means at
  its last batch; step E, `KerasEpochs`).
* mlx-lm's table (cli_ui.py): `  iter   train_loss ...` then `    10    2.300 ▼ ...` and `    10    val 2.100 ...`
  rows (`MlxTable`).
* EasyR1's console: `Step N` then the step's metrics as nested YAML (`actor:` / `  grad_norm: 0.3`; `.nan`), names
  joined with `/` (`YamlSteps`).
* a PPO loop's own prints under a dashed header (trl.PPOTrainer driven by hand, as in a course notebook):
  `------ STEP N ------`, then one `rewards/mean:<TAB>-14.7<TAB><---- a comment` line per metric (`DashedSteps`).
* OLMo (olmo/train.py `log_metrics_to_console`): a `[step=N/M]` (later `[step=N/M,epoch=E]`)
  header, then one `    name=value` line per metric; values above 1000 carry thousands
  commas. OLMo-core prints the same shape with names such as `train/CE loss`, and its evaluations as
  `Finished lm evals in 1.0 seconds. Metrics:` then `    CE loss=X` lines (eval_loss). Pairs on the
  header line itself (`[step=N] train/CrossEntropyLoss=2.1 optim/total_grad_norm=0.4`) count too.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from ...metric_names import keras_metric_name
from ...timeline import canonical_metric
from .fields import StepLine, FLOAT, _snake, number

_OLMO_HEADER = re.compile(r"\[step=(\d{1,18})(?:/(\d{1,18}))?[^\]]*\]")
_OLMO_INLINE_PAIR = re.compile(r"(?<![\w/])([A-Za-z][\w/.()-]*)=(\S+)")
_OLMO_BLOCK_LINE = re.compile(r"^\s+([A-Za-z][^=]*?)=(\S+)\s*$")


@dataclass
class OlmoBlock:
    """OLMo's `[step=N/M]` header and the `    name=value` lines under it, fed line by line.

    `feed(line)` returns the finished StepLine when a line ends the block (a non-metric line or
    the next header), else None; `close()` returns the block left open at the end of the file.
    """

    step: int | None = None
    total: int | None = None
    metrics: list = field(default_factory=list)
    prefix: str = ""  # "eval_" in an evaluation block
    last_step: int = 0

    def feed(self, line: str) -> StepLine | None:
        header = _OLMO_HEADER.search(line) if "[step=" in line else None
        if header:
            done = self.close()
            self.step, self.total = int(header.group(1)), int(header.group(2)) if header.group(2) else None
            self.metrics = [(canonical_metric(k), v) for k, raw in _OLMO_INLINE_PAIR.findall(line[header.end():])
                            if (v := number(raw)) is not None]
            return done
        if "evals in" in line and _OLMO_CORE_EVALS.search(line):
            done = self.close()
            self.step, self.prefix = self.last_step, "eval_"  # at the step the evaluation followed
            return done
        if self.step is None:
            return None
        m = _OLMO_BLOCK_LINE.match(line)
        value = number(m.group(2)) if m else None
        if m and value is not None:
            self.metrics.append((self.prefix + canonical_metric(m.group(1).strip()), value))
            return None
        return self.close()

    def close(self) -> StepLine | None:
        done = (StepLine("olmo", self.step, self.total, tuple(self.metrics))
                if self.step is not None and self.metrics else None)
        if done is not None and not self.prefix:
            self.last_step = done.step
        self.step, self.total, self.metrics, self.prefix = None, None, [], ""
        return done


# OLMo-core's evaluator callback: `Finished lm evals in 1.0 seconds. Metrics:` then `    CE loss=X` / `    PPL=Y`
_OLMO_CORE_EVALS = re.compile(r"\bFinished [\w-]+ evals in [\d.]+ seconds\. Metrics:\s*$")


# Composer's ConsoleLogger (module docstring)
_COMPOSER_HEADER = re.compile(r"^\[(?:epoch=\d{1,9}\]\[)?(?:batch|token|sample)=(\d{1,18})(?:/(\d{1,18}))?\]:\s*$")
_COMPOSER_EVAL_HEADER = re.compile(r"^\[Eval batch=\d{1,18}/\d{1,18}\] Eval on [^\n]*? data:\s*$")
_COMPOSER_LINE = re.compile(r"^\t (?:Train|Eval) (\S[^:]*): (\S+)\s*$")
_COMPOSER_NAMES = {"loss/train/total": "loss", "l2_norm/grad/global": "grad_norm",
                   "metrics/train/LanguagePerplexity": "ppl"}
_COMPOSER_LR = re.compile(r"^lr-\w+/group0$")
_COMPOSER_EVAL = re.compile(r"^metrics/(?!train/)[^/]+/Language(CrossEntropy|Perplexity)$")


@dataclass
class ComposerBlock:
    """Composer's `[batch=N/M]:` block and its `\t Train name: value` lines, and its evaluation block, fed line by
    line like `OlmoBlock`."""

    step: int | None = None
    metrics: list = field(default_factory=list)
    total: int | None = None
    last_train: int = 0

    def feed(self, line: str) -> StepLine | None:
        if line.startswith("["):
            header = _COMPOSER_HEADER.match(line)
            if header or _COMPOSER_EVAL_HEADER.match(line):
                done = self.close()
                if header:
                    self.step, self.total = int(header.group(1)), int(header.group(2)) if header.group(2) else None
                else:  # an evaluation: at the last training batch
                    self.step, self.total = self.last_train, None
                return done
        if self.step is None:
            return None
        m = _COMPOSER_LINE.match(line)
        value = number(m.group(2)) if m else None
        if m and value is not None:
            self.metrics.append((_composer_name(m.group(1)), value))
            return None
        return self.close()

    def close(self) -> StepLine | None:
        metrics = dict(self.metrics)
        step = self.step
        count = metrics.get("time/batch")
        if step is not None and count is not None and 0 <= count < 1e15:
            step = int(count) + 1  # the batch count at the batch's start; the header's is after it
        done = (StepLine("composer", step, self.total, tuple(self.metrics))
                if step is not None and self.metrics else None)
        if done is not None and "eval_loss" not in metrics:
            self.last_train = step
        self.step, self.total, self.metrics = None, None, []
        return done


@lru_cache(maxsize=256)
def _composer_name(name: str) -> str:
    if name in _COMPOSER_NAMES:
        return _COMPOSER_NAMES[name]
    if _COMPOSER_LR.match(name):
        return "learning_rate"
    m = _COMPOSER_EVAL.match(name)
    if m:
        return "eval_loss" if m.group(1) == "CrossEntropy" else "eval_ppl"
    return canonical_metric(name)


# NeMo-RL's algorithms (nemo_rl/algorithms/sft.py, grpo.py): `===== Step N/M =====`, then, among other prints,
# `📊 Training Results:` with `  • Loss: X` (`  • Avg Reward: X` in GRPO) and `📊 Validation Results:` with
# `    • Validation loss: X`
_NEMO_RL_HEADER = re.compile(r"^=+ Step (\d{1,18})/(\d{1,18}) =+\s*$")
_NEMO_RL_ITEM = re.compile(r"^\s+\u2022 ([A-Za-z][\w /()-]*?): (" + FLOAT + r")", re.IGNORECASE)
_NEMO_RL_NAMES = {"loss": "loss", "validation loss": "eval_loss", "avg reward": "reward", "grad norm": "grad_norm"}


@dataclass
class NemoRLBlock:
    """NeMo-RL's step block, fed line by line like `OlmoBlock`; it ends at the next step's header (or the file's
    end), since the step's other prints (`▶ Taking a training step...`) come between its results."""

    step: int | None = None
    total: int | None = None
    metrics: list = field(default_factory=list)

    def feed(self, line: str) -> StepLine | None:
        header = _NEMO_RL_HEADER.match(line) if "= Step " in line else None
        if header:
            done = self.close()
            self.step, self.total = int(header.group(1)), int(header.group(2))
            return done
        item = _NEMO_RL_ITEM.match(line) if self.step is not None and "\u2022" in line else None
        if item:
            name = item.group(1).strip().lower()
            self.metrics.append((_NEMO_RL_NAMES.get(name) or _snake(name), float(item.group(2))))
        return None

    def close(self) -> StepLine | None:
        done = (StepLine("nemo_rl", self.step, self.total, tuple(self.metrics))
                if self.step is not None and self.metrics else None)
        self.step, self.total, self.metrics = None, None, []
        return done


# Keras `model.fit` (keras/src/callbacks/progbar_logger.py, keras/src/utils/progbar.py): `Epoch E/N`, then the bar,
# `100/100 ━━━━ 5s 50ms/step - loss: X - val_loss: Y` (verbose=1, updated in place) or `100/100 - 5s - loss: X`
# (verbose=2); each metric is the epoch's running mean, final at the bar's last batch.
_KERAS_EPOCH = re.compile(r"^Epoch (\d{1,9})/(\d{1,9})\s*$")
# Keras's own bar after `n/N`: `━━━━` (Keras 3), `[=====>....]` (tf.keras) or ` - 5s` (verbose=2); not a tqdm
# bar.
# Keras 2.2's verbose=2 prints the epoch's end alone, with no count: ` - 131s - loss: 2.3976 - acc: 0.51`.
# A metric's name is the one its train_step returned, as written: a custom one may be capitalised (`- Loss: 252.1 -
# Perplexity: inf - val_Loss: 186.4`, Asocsar_GPT2), so the loss is found whatever its case.
_KERAS_BAR = re.compile(
    r"^\s*(?:(\d{1,12})/(\d{1,12}) (?:[\u2501\s]*\u2501|\[[=>.]+\]|- \d+m?s\b)|- \d+m?s\b).*?(?i: - loss: )")
# The cheap test before feeding a console's lines to `KerasEpochs`, with `Epoch ` in the text
KERAS_LOSS_MARKER = re.compile(r"(?i) - loss: ")
_KERAS_PAIR = re.compile(r" - ([A-Za-z][\w/]*): (" + FLOAT + r")", re.IGNORECASE)


@dataclass
class KerasEpochs:
    """Keras's `Epoch E/N` lines and their bars: `owns(line)` says a line is one (a bar's updates within an epoch
    are its own, read by nothing else); `feed(line)` gives the epoch's record at its last batch, at step E; `close()`
    the last update of a bar the text ends inside."""

    epoch: int | None = None
    epochs: int | None = None
    before: int = 0  # the epochs of earlier `fit` calls that ran to their end (fine-tuning after a frozen phase)
    unfinished: StepLine | None = None  # the last update of a bar whose epoch has not ended (yet)

    def owns(self, line: str) -> bool:
        return bool(_KERAS_EPOCH.match(line) or (self.epoch is not None and _KERAS_BAR.match(line)))

    def feed(self, line: str) -> StepLine | None:
        header = _KERAS_EPOCH.match(line)
        if header:
            epoch, epochs = int(header.group(1)), int(header.group(2))
            if self.epoch is not None and epoch <= self.epoch and self.epoch == self.epochs:
                self.before += self.epoch  # a new `fit` after one that finished: its epochs come after
            self.epoch, self.epochs, self.unfinished = epoch, epochs, None
            return None
        bar = _KERAS_BAR.match(line)
        metrics = tuple((keras_metric_name(name.lower()), float(raw)) for name, raw in _KERAS_PAIR.findall(line))
        if bar is not None and bar.group(1) != bar.group(2):  # an update within the epoch: its mean so far
            self.unfinished = self._partial(int(bar.group(1)), int(bar.group(2)), metrics)
            return None
        self.unfinished = None  # the epoch's last batch (a line with no count is the epoch's end)
        return StepLine("keras", self.before + self.epoch, None, metrics) if bar is not None and metrics else None

    def close(self) -> StepLine | None:
        """The last update of a bar that never completed, where the text ends inside an epoch (a fit stopped or cut
        mid-epoch: telecombcn-dl_2017-dlai-team8's only line is `1560/11407 [===>...] - ETA: 1:47 - loss: 6.4571`):
        the epoch's running mean over its batches so far, its epoch the fraction done; else None."""
        done, self.unfinished = self.unfinished, None
        return done

    def _partial(self, batches: int, total: int, metrics: tuple) -> StepLine | None:
        kept = tuple((name, value) for name, value in metrics if name != "eta")  # `- ETA: 1:47`, the time left
        if not kept or not 0 < batches < total:
            return None
        done = self.before + self.epoch - 1 + batches / total
        return StepLine("keras", self.before + self.epoch, None, kept + (("epoch", done),))


# mlx-lm's training table (mlx_lm/cli_ui.py TrainUI): a header `  iter   train_loss     tok/s     tokens`, then a row
# per report, `    10    2.300 ▼      210      4.1k`, and a validation row `    10    val 2.100    1.23s`
_MLX_HEADER = re.compile(r"^\s*iter\s+train_loss\s")
_MLX_ROW = re.compile(r"^\s*(\d{1,12})\s+(?:(val)\s+(" + FLOAT + r")\s+[\d.]+s"  # a validation row, or a training one
                     r"|(" + FLOAT + r")\s+[\u25bc\u25b2=-]?\s*[\d,.]+\s+[\d.]+[kMGT]?)\s*$", re.IGNORECASE)


@dataclass
class MlxTable:
    """mlx-lm's table, fed line by line: its rows after its header are its own (`owns`)."""

    started: bool = False

    def owns(self, line: str) -> bool:
        if _MLX_HEADER.match(line):
            self.started = True
            return True
        return self.started and _MLX_ROW.match(line) is not None

    def feed(self, line: str) -> StepLine | None:
        row = _MLX_ROW.match(line)
        if row is None:
            return None
        name, value = ("eval_loss", row.group(3)) if row.group(2) else ("loss", row.group(4))
        return StepLine("mlx", int(row.group(1)), None, ((name, float(value)),))


# EasyR1's console logger (verl/utils/logger/logger.py): `Step N`, then the step's metrics as a nested YAML dump
# (`actor:` / `  grad_norm: 0.3` / `critic:` / `  score:` / `    mean: 0.11`; a NaN `.nan`), names joined with `/`
_YAML_STEP = re.compile(r"^Step (\d{1,18})\s*$")
_YAML_KEY = re.compile(r"^( *)([A-Za-z_][\w@.-]*):(?: (\S+))?\s*$")
_YAML_FLOATS = {".nan": "nan", ".inf": "inf", "-.inf": "-inf", ".NaN": "nan", ".Inf": "inf", "-.Inf": "-inf"}


@dataclass
class YamlSteps:
    """`Step N` headers and the indented YAML under each, fed line by line like `OlmoBlock`; `owns` says a line is the
    block's (a header, or a `key:` line inside an open block)."""

    step: int | None = None
    metrics: list = field(default_factory=list)
    path: list = field(default_factory=list)  # (indent, key) of the open parents

    def owns(self, line: str) -> bool:
        return bool(_YAML_STEP.match(line)) or (self.step is not None and _YAML_KEY.match(line) is not None)

    def feed(self, line: str) -> StepLine | None:
        header = _YAML_STEP.match(line)
        if header:
            done = self.close()
            self.step = int(header.group(1))
            return done
        m = _YAML_KEY.match(line)
        indent, key, raw = len(m.group(1)), m.group(2), m.group(3)
        while self.path and self.path[-1][0] >= indent:
            self.path.pop()
        if raw is None:
            self.path.append((indent, key))
            return None
        value = number(_YAML_FLOATS.get(raw, raw))
        if value is not None:
            self.metrics.append((canonical_metric("/".join([k for _, k in self.path] + [key])), value))
        return None

    def close(self) -> StepLine | None:
        done = (StepLine("yaml_steps", self.step, None, tuple(self.metrics))
                if self.step is not None and self.metrics else None)
        self.step, self.metrics, self.path = None, [], []
        return done


# A hand-driven PPO loop's prints (the course notebooks around trl.PPOTrainer.step): `------ STEP N ------`, then one
# `name:<TAB>value` line per statistic the loop picked from `stats` (`rewards/mean`, `ppo/returns/mean`,
# `objective/kl`), each followed by an explanation after a tab (`<---- average reward over this batch`)
_DASHED_STEP = re.compile(r"^-{3,} ?STEP (\d{1,18}) ?-{3,}\s*$")
_TAB_METRIC = re.compile(r"^([A-Za-z_][\w/.@-]*):\t+(\S+)(?:\t.*)?\s*$")


@dataclass
class DashedSteps:
    """`------ STEP N ------` headers and the `name:<TAB>value` lines under each, fed line by line like `YamlSteps`;
    `owns` says a line is the block's (a header, or a metric line inside an open block)."""

    step: int | None = None
    metrics: list = field(default_factory=list)

    def owns(self, line: str) -> bool:
        return bool(_DASHED_STEP.match(line)) or (self.step is not None and _TAB_METRIC.match(line) is not None)

    def feed(self, line: str) -> StepLine | None:
        header = _DASHED_STEP.match(line)
        if header:
            done = self.close()
            self.step = int(header.group(1))
            return done
        m = _TAB_METRIC.match(line)
        value = number(m.group(2))
        if value is not None:
            self.metrics.append((canonical_metric(m.group(1)), value))
        return None

    def close(self) -> StepLine | None:
        done = (StepLine("dashed_steps", self.step, None, tuple(self.metrics))
                if self.step is not None and self.metrics else None)
        self.step, self.metrics = None, []
        return done
