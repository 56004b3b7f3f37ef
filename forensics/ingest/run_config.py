"""Gather a run's configuration from every file that states it into one `RunConfig`.

Sources, most authoritative first (`RunConfig.values[key]` keeps that order):
training_args.bin (the run root, then the newest checkpoint first), the TensorBoard `args`
text, Megatron's printed arguments in a console log (and an argparse Namespace line, printed TrainingArguments,
an mmengine runner's printed config, DeepSpeed's launch line, RWKV-LM's launch arguments), LLaMA-Factory
training_args.yaml, ms-swift args.json (2.x: sft_args.json) and W&B's wandb-metadata.json (the command line), a launch
command kept in a small text file beside the log (command.txt, run.sh), the code of the script (or quiet notebook)
that writes a metric log (`log_writing_script`), Megatron's `args` (newest `model_optim_rng.pt`
or torch_dist `common.pt`), DeepSpeed configs (embedded in `*optim_states.pt`, files in the run folder, the file named
by the `deepspeed` argument when it exists), config.json and the TensorBoard `model_config` text, adapter_config.json.
Counters saved beside checkpoints (`state.*`: loss scale, skipped steps) come from the newest file only.

DeepSpeed "auto" values are resolved from the training arguments the way HF does
(transformers/integrations/deepspeed.py `fill_match`). Derived facts: `method` ("full",
"lora", "qlora": `finetuning_method`) and `n_params` (`param_count`). What was looked for and not found
or not readable goes to `RunConfig.missing`, one line per problem.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Callable

from ..config import NOTEBOOK_CODE_SOURCE, RunConfig
from ..errors import UnreadableFile, os_reason
from ..findings import Skipped
from ..lfs import unreadable_reason
from ..discover.run_layout import RunLayout
from ..timeline import Timeline
from . import config_files as cf
from . import framework_configs as fc
from ._config_keys import is_number
from . import (card_axolotl, command_line, fairseq_config, megatron_args, mmengine_config, namespace_args,
               notebook_code, printed_configs, rwkv_args)
from .config_file_kinds import checkpoint_reader, config_files_by_kind
from .config_from_console import read_console_facts
from .console_lines import nanogpt, value_first
from .finetuning_method import derive_method
from .launch_facts import TEXT_LAUNCHES
from .log_writing_script import log_writing_script_values
from .report_precision import read_run_report, run_reports
from .mlflow_store import PARAMS_TEXT
from .model_card import read_model_card
from .param_count import LLAMA_LAYOUTS, exact_params, estimate_params
from .vocabulary import derive_vocab_size
from .tracker_config import derived_method, literal_values, tracker_config_values
from .wandb import CONFIG_TEXT
from .log_config_record import CONFIG_RECORD_TEXT


def read_run_config(layout: RunLayout, timeline: Timeline) -> RunConfig:
    """Read every configuration source of the run; bad files become `missing` lines, never errors. The sources are
    read most authoritative first (the module docstring's order): each step below reads its group in that order."""
    config = RunConfig()
    by_kind = config_files_by_kind(layout)
    for step in (_read_training_arguments, _read_printed_arguments, _read_tracker_and_framework_files,
                 _read_deepspeed_and_megatron, _read_model_and_adapter_files, _read_checkpoint_counters,
                 _read_console_facts_and_derive):
        step(config, layout, timeline, by_kind)
    return config


def _read_training_arguments(config: RunConfig, layout: RunLayout, timeline: Timeline, by_kind: dict) -> None:
    """training_args.bin (the run root, then the newest checkpoint first) and the TensorBoard `args` text."""
    for path in by_kind["training_args"]:
        _read_into(config, layout, path, cf.read_training_args_values)
    _read_text(config, timeline, "args", cf.training_args_values)


def _read_printed_arguments(config: RunConfig, layout: RunLayout, timeline: Timeline, by_kind: dict) -> None:
    """The arguments a console printed (Megatron's block, a Namespace, TrainingArguments, an mmengine config, the
    launch command, a tool's own), the code that writes the log, and the axolotl config a model card embeds."""
    _read_text(config, timeline, megatron_args.TEXT_KEY, megatron_args.config_values, "console log 'arguments' block")
    _read_text(config, timeline, namespace_args.TEXT_KEY, namespace_args.config_values,
               "console log's argparse Namespace line")
    _read_text(config, timeline, printed_configs.ARGS_KEY, cf.training_args_values,
               "console log's printed TrainingArguments")
    _read_text(config, timeline, mmengine_config.TEXT_KEY, dict, "console log's printed mmengine config")
    _read_text(config, timeline, command_line.TEXT_KEY, command_line.config_values,
               "console log's launch command (DeepSpeed's cmd = line)")
    _read_text(config, timeline, notebook_code.TEXT_KEY, dict, NOTEBOOK_CODE_SOURCE)
    _read_log_writing_script(config, layout)
    _read_text(config, timeline, rwkv_args.TEXT_KEY, rwkv_args.config_values,
               "RWKV-LM's train_log.txt (the last launch's arguments)")
    _read_text(config, timeline, value_first.TEXT_KEY, dict, "the launch line's DEFAULT_FLOAT (tinygrad's float dtype)")
    _read_text(config, timeline, nanogpt.DTYPE_TEXT_KEY, dict,
               "the console's printed nanoGPT dtype (train.py autocasts to it on a GPU; float16 with a GradScaler)")
    _read_text(config, timeline, fairseq_config.TEXT_KEY, dict, "console log's printed fairseq cfg ('common' group)")
    _read_card_axolotl(config, timeline)


def _read_tracker_and_framework_files(config: RunConfig, layout: RunLayout, timeline: Timeline, by_kind: dict) -> None:
    """W&B configs and MLflow params, then the frameworks' own argument files, a YAML configuration and the launch
    command kept beside the log."""
    _read_tracker_configs(config, layout, timeline)
    for kind, reader in (("llamafactory", fc.read_llamafactory_args), ("finetuning_args", fc.read_finetuning_args),
                         ("swift", fc.read_swift_args), ("autotrain", fc.read_autotrain_params),
                         ("ludwig", fc.read_ludwig_hyperparameters), ("model_metadata", fc.read_model_metadata),
                         ("yaml", cf.read_config_yaml), ("command", command_line.read_wandb_metadata),
                         ("launch", command_line.read_command_file)):
        for path in by_kind[kind]:
            _read_into(config, layout, path, reader)


def _read_deepspeed_and_megatron(config: RunConfig, layout: RunLayout, timeline: Timeline, by_kind: dict) -> None:
    """The DeepSpeed config embedded in `*optim_states.pt`, Megatron's `args`, and DeepSpeed config files (with the
    one the `deepspeed` argument names)."""
    for path in by_kind["optim_states"]:
        _read_into(config, layout, path, cf.read_optim_states)
    for path in by_kind["megatron"]:
        _read_into(config, layout, path, cf.read_megatron_args)
    for path in by_kind["deepspeed"] + _named_deepspeed_file(config, layout, by_kind["deepspeed"]):
        _read_into(config, layout, path, cf.read_deepspeed_config)


def _read_model_and_adapter_files(config: RunConfig, layout: RunLayout, timeline: Timeline, by_kind: dict) -> None:
    """config.json (and the model config a tracker or console printed), adapter_config.json, the model card, and the
    reports a run wrote beside its logs (`report_precision`)."""
    for path in by_kind["model_config"]:
        _read_into(config, layout, path, cf.read_model_config)
    _read_text(config, timeline, "model_config", cf.model_config_values)
    _read_text(config, timeline, printed_configs.MODEL_CONFIG_KEY, cf.model_config_values,
               "console log's printed model config")
    for path in by_kind["adapter"]:
        _read_into(config, layout, path, cf.read_adapter_config)
    for path in by_kind["model_card"]:
        if _readme_of_the_run(path, layout):
            _read_into(config, layout, path, read_model_card)
    for path in run_reports(layout.log_files):
        _read_into(config, layout, path, read_run_report)


def _readme_of_the_run(path: Path, layout: RunLayout) -> bool:
    """A README in the folder analyzed or in a folder on the way to one of the run's logs, weights or saved model's
    config (a checkpoint's model card, a project's README above its outputs/): a README of a library vendored beside
    the code (third_party/mingpt/README.md: "trained to predict the next token") speaks of another model."""
    folder = path.parent
    # a saved model's own files count as weights do: its weights are often git-ignored, its card and config kept
    saved = [p for p in layout.config_files if p.name in _SAVED_MODEL_FILES]
    return folder == layout.root or any(folder == p.parent or folder in p.parents
                                        for p in layout.log_files + layout.weight_files + saved)


_SAVED_MODEL_FILES = ("config.json", "adapter_config.json", "training_args.bin")


def _read_checkpoint_counters(config: RunConfig, layout: RunLayout, timeline: Timeline, by_kind: dict) -> None:
    """The counters saved beside checkpoints (GradScaler's, DeepSpeed's model states) and trainer_state.json's best
    checkpoint."""
    for path in by_kind["scaler"] + by_kind["model_states"]:
        _read_into(config, layout, path, checkpoint_reader(path))
    _read_best_checkpoint(config, timeline)


def _read_console_facts_and_derive(config: RunConfig, layout: RunLayout, timeline: Timeline, by_kind: dict) -> None:
    """What the console states of the run, then the facts derived from all read: the method, the parameter count,
    the vocabulary, and the sources looked for and absent."""
    read_console_facts(config, timeline)
    derive_method(config, layout)
    _derive_n_params(config, layout)
    derive_vocab_size(config)
    _note_absent_sources(config)


def _read_best_checkpoint(config: RunConfig, timeline: Timeline) -> None:
    """trainer_state.json's `best_model_checkpoint`: the output folder's path, which often names the model and
    method (`./eduadvisor-tinyllama-lora/checkpoint-50`) when nothing else in the run does."""
    for source, meta in timeline.meta.items():
        value = meta.get("best_model_checkpoint")
        if isinstance(value, str) and value and config.get("best_model_checkpoint") is None:
            config.add("best_model_checkpoint", value, source)


# --- reading and recording ----------------------------------------------------------------------

def _relative(layout: RunLayout, path: Path) -> str:
    try:
        return os.path.relpath(path, layout.root)
    except ValueError:  # another drive on Windows
        return str(path)


def _read_into(config: RunConfig, layout: RunLayout, path: Path, reader: Callable[[Path], dict]) -> None:
    source = _relative(layout, path)
    try:
        values = reader(path)
    except (UnreadableFile, OSError) as err:
        reason = unreadable_reason(err) if isinstance(err, UnreadableFile) else os_reason(err)
        config.missing.append(f"{source}: {reason}")
        config.unreadable_files.append(Skipped(str(path), reason))  # a refused pickle is said, never passed over
        return
    _record(config, values, source)


def _read_text(config: RunConfig, timeline: Timeline, name: str, to_values: Callable[[dict], dict],
               source: str = "") -> None:
    text = next((t for k, t in timeline.texts.items() if k.split("/")[0] == name), None)
    if text is None:
        return
    source = source or f"TensorBoard '{name}' text"
    launch = next((meta[TEXT_LAUNCHES][name] for meta in timeline.meta.values() if name in meta.get(TEXT_LAUNCHES, ())),
                  None)
    source = f"{source}, {launch}" if launch else source  # (of several launches appended to one console)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        config.missing.append(f"{source}: not JSON ({err.msg} at line {err.lineno})")
        return
    if not isinstance(value, dict):
        config.missing.append(f"{source}: expected a JSON object")
        return
    _record(config, to_values(value), source)


def _read_log_writing_script(config: RunConfig, layout: RunLayout) -> None:
    """The code of the script (or quiet notebook) beside a metric log that writes it (`log_writing_script`), after a
    notebook's own."""
    found = log_writing_script_values(Path(layout.root), list(layout.log_files), list(layout.scripts),
                                      list(layout.quiet_notebooks))
    if found is not None:
        _record(config, *found)


def _read_card_axolotl(config: RunConfig, timeline: Timeline) -> None:
    """The axolotl config a model card embeds (`card_axolotl`): each value with the card's lines that said it."""
    text = timeline.texts.get(card_axolotl.TEXT_KEY)
    if text is None:
        return
    said = json.loads(text)
    source = f"the axolotl {said['version']} config embedded in the model card"
    for key, value in said["values"].items():
        why = said["why"].get(key)
        _record(config, {key: value}, f"{source}: {why}" if why else source)


_TRACKER_TEXTS = {CONFIG_TEXT: ("W&B config", False), PARAMS_TEXT: ("MLflow params", True),
                  CONFIG_RECORD_TEXT: ("config record", False)}


def _read_tracker_configs(config: RunConfig, layout: RunLayout, timeline: Timeline) -> None:
    """W&B configs and MLflow params (texts keyed `<kind>/<file they came from>`), as the HF Trainer logged them."""
    for key, text in timeline.texts.items():
        kind, _, where = key.partition("/")
        if kind not in _TRACKER_TEXTS:
            continue
        what, values_are_text = _TRACKER_TEXTS[kind]
        source = f"{_relative(layout, Path(where.split('#')[0]))} ({what})"
        try:
            values = json.loads(text)
        except json.JSONDecodeError:  # written by our own reader: cannot happen, but never fail a report on it
            continue
        method = derived_method(literal_values(values) if values_are_text else values)
        _record(config, tracker_config_values(values, values_are_text), source)
        if method and config.get("method") is None:
            config.add("method", method[0], f"derived: {source} {method[1]}")


def _record(config: RunConfig, values: dict[str, Any], source: str) -> None:
    for key, value in values.items():
        if value == "auto" and key.startswith("ds."):
            value, source_of_value = _resolve_auto(config, key, source)
            if value == "auto" and key in config.values:
                continue  # a resolved value (e.g. the ds_config embedded in the optimizer states) is known
        else:
            source_of_value = source
        if not any(_same(value, seen.value) for seen in config.values.get(key, [])):
            config.add(key, value, source_of_value)
    if values and source not in config.sources:  # a README or YAML that holds no run settings is no source
        config.sources.append(source)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b or (is_number(a) and is_number(b) and a == b)


# HF fills these DeepSpeed "auto" values from TrainingArguments (integrations/deepspeed.py).
_AUTO_FROM_ARGS: dict[str, Callable[[RunConfig], Any]] = {
    "ds.gradient_clipping": lambda c: c.get("max_grad_norm"),
    "ds.fp16.enabled": lambda c: _either(c, "fp16", "fp16_full_eval"),
    "ds.bf16.enabled": lambda c: _either(c, "bf16", "bf16_full_eval"),
    "ds.train_micro_batch_size_per_gpu": lambda c: c.get("per_device_train_batch_size"),
    "ds.gradient_accumulation_steps": lambda c: c.get("gradient_accumulation_steps"),
    "ds.optimizer.params.lr": lambda c: c.get("learning_rate"),
    "ds.optimizer.params.eps": lambda c: c.get("adam_epsilon"),
    "ds.optimizer.params.weight_decay": lambda c: c.get("weight_decay"),
    "ds.scheduler.params.warmup_max_lr": lambda c: c.get("learning_rate"),
}


def _either(config: RunConfig, *keys: str) -> Any:
    seen = [config.get(k) for k in keys if config.get(k) is not None]
    return any(bool(v) for v in seen) if seen else None


def _resolve_auto(config: RunConfig, key: str, source: str) -> tuple[Any, str]:
    fill = _AUTO_FROM_ARGS.get(key)
    value = fill(config) if fill else None
    if value is None:
        return "auto", source
    return value, f"{source} ('auto', filled from the training arguments as HF does)"


def _named_deepspeed_file(config: RunConfig, layout: RunLayout, found: list[Path]) -> list[Path]:
    """The DeepSpeed config the `deepspeed` argument names, if it exists on this machine and was not read yet."""
    named = config.get("deepspeed")
    if not isinstance(named, str) or not named.strip():
        return []
    candidates = [Path(named).expanduser(), layout.root / named, layout.root / Path(named).name]
    seen = {p.resolve() for p in found}
    for candidate in candidates:
        try:
            if candidate.is_file():
                return [] if candidate.resolve() in seen else [candidate]
        except OSError:
            continue
    if not any(k.startswith("ds.") for k in config.values):
        config.missing.append(f"DeepSpeed config {named!r} named by the 'deepspeed' argument "
                              f"({config.source_of('deepspeed')}) was not found: DeepSpeed settings unknown")
    return []


# --- derived facts ------------------------------------------------------------------------------

def _derive_n_params(config: RunConfig, layout: RunLayout) -> None:
    for path in layout.weight_files:
        if path.name.endswith(".safetensors.index.json"):
            try:
                total = cf.read_json_object(path).get("metadata", {}).get("total_parameters")
            except (UnreadableFile, OSError):
                continue
            if isinstance(total, int) and total > 0:
                config.add("n_params", total, f"{_relative(layout, path)} (metadata.total_parameters)")
                return
    exact = exact_params(config)
    if exact and config.get("n_params") is None:
        config.add("n_params", exact, f"count from {config.source_of('model.model_type')} (the "
                                      f"{config.get('model.model_type')} layout, every weight and bias)")
        return
    estimate = estimate_params(config)
    if estimate and config.get("n_params") is None:  # a count the run logged (W&B config) beats an estimate
        sizes = ("d_model, encoder_layers, decoder_layers, ffn dims, vocab_size" if config.get("model.decoder_layers")
                 else "hidden_size, num_hidden_layers, intermediate_size, vocab_size")
        if str(config.get("model.model_type", "")).lower() in LLAMA_LAYOUTS:
            sizes += f"; the {config.get('model.model_type')} layout counted to the weight, norms included"
        config.add("n_params", estimate, f"estimate from {config.source_of('model.hidden_size')} ({sizes})")


def _note_absent_sources(config: RunConfig) -> None:
    args_keys = ("learning_rate", "max_grad_norm", "fp16", "bf16")
    if not any(config.get(k) is not None for k in args_keys):
        config.missing.append("no readable training_args.bin, TensorBoard 'args' text, LLaMA-Factory "
                              "training_args.yaml, ms-swift args.json, W&B config or MLflow params: learning rate, "
                              "warm-up, clipping and precision settings unknown")
    if not any(k.startswith("model.") for k in config.values):
        config.missing.append("no readable config.json or TensorBoard 'model_config' text: "
                              "model size, dtype and quantization unknown")
