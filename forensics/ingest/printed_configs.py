"""What HF example scripts print about their own run, read as configuration: the arguments block and the model's
config (run_clm.py and kin log both at start-up; Yali-F/gpt-llama-text-gen's SLURM .out in tests/realworld).

* `Training/evaluation parameters TrainingArguments(` then one `name=value,` line per field and a closing `)`
  (also Seq2SeqTrainingArguments, TRL's SFTConfig / DPOConfig / ..., and a framework's own subclass printed the same
  way, LMFlow's `FinetunerArguments(` (src/lmflow/pipeline/finetuner.py) or a project's `CoDPOConfig(`, told by
  TrainingArguments' fields in it): `training_arguments(text)` gives the
  fields with their values read as literals (True, None, 5e-05, [] ...; `SchedulerType.LINEAR` as "linear"; any
  other text as a string, never evaluated).
* `Model config GPT2Config {` then the config's JSON, closed by a line `}`: `model_config(text)` gives the dict.
Both return {} where the log has none; only the first block counts (later ones repeat it).
"""
from __future__ import annotations

import json
import re
from typing import Any

from .console_text import bracket_depths

ARGS_KEY = "printed_training_args"  # LogRecords.texts keys: the blocks as JSON
MODEL_CONFIG_KEY = "printed_model_config"

_ARGS_START = re.compile(r"\b(?P<cls>\w*(?:Arguments|Config))\($")
# Fields every TrainingArguments repr holds: a framework's own subclass (LMFlow's `FinetunerArguments(`) is told by them
_TRAINING_ARGUMENTS_FIELDS = ("output_dir", "learning_rate")
_FIELD = re.compile(r"^(?P<key>[A-Za-z_]\w*)=(?P<value>.*?),?$")
_ENUM = re.compile(r"^[A-Z]\w*\.(?P<name>[A-Z0-9_]+)$")  # SchedulerType.LINEAR, IntervalStrategy.STEPS
_LITERALS = {"True": True, "False": False, "None": None, "[]": [], "{}": {}}
_TRL_CONFIGS = ("SFTConfig", "DPOConfig", "KTOConfig", "ORPOConfig", "CPOConfig", "GRPOConfig", "RLOOConfig",
                "PPOConfig", "RewardConfig")
_MODEL_CONFIG_START = re.compile(r"\bModel config \w+ \{$")
_MAX_LINES = 1000  # a block is a few hundred lines at most


def training_arguments(text: str) -> dict[str, Any]:
    """The fields of the first printed TrainingArguments block, with `__class__` where TRL's class is named (or
    ms-swift's, whose `[INFO:swift] args: ...` line prints its arguments, a plain dataclass's on one line)."""
    if "Arguments(" not in text and "Config(" not in text:
        return {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        swift = _SWIFT_ARGS.search(line)
        if swift is not None and swift.group("body") is not None:
            fields = _one_line_fields(swift.group("body"))
            if fields:
                return {**fields, "__class__": f"swift.{swift.group('cls')}"}
        m = _ARGS_START.search(line.rstrip())
        if m is None:
            continue
        fields = _fields(lines[i + 1:i + 1 + _MAX_LINES])
        subclass = not m.group("cls").endswith("TrainingArguments") and m.group("cls") not in _TRL_CONFIGS
        if subclass and not swift and not all(key in fields for key in _TRAINING_ARGUMENTS_FIELDS):
            continue  # some other arguments or config class printed over lines: not the trainer's
        if fields:
            trl = _trl_config_of(m.group("cls"))
            if trl:
                fields["__class__"] = f"trl.{trl}"
            elif swift:
                fields["__class__"] = f"swift.{m.group('cls')}"
            return fields
    return {}


# Hyper-parameters' names as a script's own arguments dict spells them (HF TrainingArguments' fields and the names the
# example scripts of transformers/examples/legacy/pytorch-lightning give them)
_HYPERPARAMETERS = frozenset({
    "weight_decay", "adam_epsilon", "adam_beta1", "adam_beta2", "warmup_steps", "warmup_ratio", "lr_scheduler_type",
    "max_grad_norm", "gradient_accumulation_steps", "num_train_epochs", "max_steps", "max_epochs", "seed",
    "max_seq_length", "train_batch_size", "eval_batch_size", "per_device_train_batch_size",
    "per_device_eval_batch_size", "logging_steps", "save_steps", "eval_steps", "n_gpu", "fp16", "bf16", "optim",
    # a torch optimizer's param group as DeepSpeed's config print shows it (`optimizer_params ....... {'lr': 0.0001,
    # 'betas': [0.9, 0.999], 'eps': 1e-08, 'weight_decay': 0.0}`): read as a record, its lr was a logged rate at step 0
    # ahead of the warm-up (Tjk20011226-cmd_Llama-chinese: a schedule that "ran out" at the first logged step)
    "betas", "eps"})
# What a logged record measures: a loss, an evaluation (eval_batch_size, a hyper-parameter, aside), a reward, a speed
_MEASUREMENT = re.compile(r"loss|reward|perplex|runtime|per_second|^eval_|(?:^|_)(?:acc|accuracy|score|ppl|f1)(?:_|$)")
_FEWEST_HYPERPARAMETERS = 2


def is_hyperparameter_dict(keys: list[str]) -> bool:
    """Whether a printed dict's keys are a run's configuration, not a logged record: two or more hyper-parameters'
    names and nothing that measures the run (joaorafaelm_notebooks prints its `args_dict`, `{'data_dir': 'swag_data',
    ..., 'learning_rate': 0.0003, 'weight_decay': 0.0, ...}`, before each of its three Lightning trainings; read
    as records, its learning rate made a training of its own, one with no loss)."""
    if any(key not in _HYPERPARAMETERS and _MEASUREMENT.search(key) for key in keys):
        return False
    return sum(1 for key in keys if key in _HYPERPARAMETERS) >= _FEWEST_HYPERPARAMETERS


def _trl_config_of(cls: str) -> str | None:
    """TRL's config class a printed class is or extends by its name (`DPOConfig`; a project's `CoDPOConfig`, printed
    with TrainingArguments' fields), or None."""
    return next((name for name in _TRL_CONFIGS if cls.endswith(name)), None)


# ms-swift's start-up line (swift/pipelines/base.py: `logger.info(f'args: {args}')`): a TrainingArguments subclass
# prints over lines as above; a plain dataclass (Megatron-SWIFT's MegatronSftArguments) on this one line
_SWIFT_ARGS = re.compile(r"\[INFO:swift\] args: (?P<cls>\w*Arguments)\((?:$|(?P<body>.+)\)\s*$)")
_ONE_LINE_FIELD = re.compile(r"^(?P<key>[A-Za-z_]\w*)=(?P<value>.*)$", re.S)
_QUOTED = re.compile(r"^(['\"])(?P<text>.*)\1$", re.S)


def _one_line_fields(body: str) -> dict[str, Any]:
    """`k=v, k2='text', k3=[1, 2]` (a dataclass repr's fields): split at the commas outside quotes and brackets."""
    out: dict[str, Any] = {}
    for part in _top_level_parts(body):
        m = _ONE_LINE_FIELD.match(part.strip())
        if m is None:
            return {}  # not a repr we know: say nothing rather than half of it
        quoted = _QUOTED.match(m.group("value"))
        out[m.group("key")] = quoted.group("text") if quoted else _literal(m.group("value"))
    return out


def _top_level_parts(body: str) -> list[str]:
    parts, start = [], 0
    for i, ch, depth in bracket_depths(body):
        if ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return [p for p in parts if p.strip()]


def _fields(lines: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for line in lines:
        line = line.strip()
        if line == ")":
            return out
        m = _FIELD.match(line)
        if m is None:
            return {}  # not the block we know: say nothing rather than half of it
        out[m.group("key")] = _literal(m.group("value"))
    return {}


def _literal(value: str) -> Any:
    if value in _LITERALS:
        return _LITERALS[value]
    enum = _ENUM.match(value)
    if enum:
        return enum.group("name").lower()
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value


def model_config(text: str) -> dict[str, Any]:
    """The first printed `Model config XConfig { ... }` block as a dict ({} where there is none or it is cut)."""
    if "Model config " not in text:
        return {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not _MODEL_CONFIG_START.search(line.rstrip()):
            continue
        body = ["{"]
        for part in lines[i + 1:i + 1 + _MAX_LINES]:
            body.append(part)
            if part.rstrip() == "}":
                try:
                    value = json.loads("\n".join(body))
                except ValueError:
                    break
                return value if isinstance(value, dict) else {}
        return {}
    return {}
