"""The profile's framework: a framework's own log files, banners and console lines, its record of the run's
arguments, its save folders and model-card tags, TRL's names, the Trainer's files; DeepSpeed, the engine under them,
last."""
from __future__ import annotations

import re

from ..config import RunConfig
from ..ingest.pretrain_lines import KIND_FRAMEWORKS
from ..discover.run_layout import RunLayout
from ..timeline import Timeline
from .record import UNKNOWN
from .trl import TRL_SFT_KEYS, trainer_source, trl_config_class, trl_signs

_MLX_SAYS = {"mlx": "MLX's mlx_lm trainable-parameters line in {source}: {text}",
             "mlx_lora": "mlx-examples' lora.py parameter lines in {source}: {text}",
             "mlx_trainer": "mlx-lm's trainer lines in {source}: {text}"}
# fields of TRL's SFTConfig that transformers' TrainingArguments does not have
_SFT_CONFIG_FIELDS = ("dataset_text_field", "packing", "completion_only_loss", "assistant_only_loss", "max_seq_length",
                      "dataset_kwargs")


# Fields of axolotl's AxolotlTrainingArguments (axolotl/core/training_args.py) that no other trainer's arguments
# have: its multipack sampler, ReLoRA, its MMLU bench eval, its quadratic warm-up. Two of them name axolotl.
_AXOLOTL_ARGS_FIELDS = ("sample_packing", "eval_sample_packing", "sample_packing_efficiency", "multipack_real_batches",
                        "relora_steps", "relora_warmup_steps", "lr_quadratic_warmup", "do_bench_eval", "bench_dataset")

# The package a training_args.bin's arguments class comes from, where it is a training framework's own subclass
# (LLaMA-Factory's `llamafactory.hparams.training_args.TrainingArguments`, its older `llmtuner.` name, ms-swift's)
_ARGUMENT_PACKAGES = (("llamafactory.", "llamafactory"), ("llmtuner.", "llamafactory"), ("swift.", "swift"),
                      ("axolotl.", "axolotl"))
# A checkout a run was started from, named in its output_dir (LLaMA-Factory's README runs from its own folder and
# saves under saves/): the folder's name as a whole path part
_FRAMEWORK_FOLDERS = {"llama-factory": "llamafactory", "llamafactory": "llamafactory", "ms-swift": "swift"}
# LLaMA-Factory's web UI saves each run under saves/<model>/<finetuning_type>/<run name>, and its README's examples
# do the same (saves/llama3-8b/lora/sft): the finetuning types are its own (lora, full, freeze, oft)
_FACTORY_SAVES = re.compile(r"(?:^|[\\/])saves[\\/][^\\/]+[\\/](?:lora|full|freeze|oft)[\\/][^\\/]+")


_CARD_WRITERS = {"axolotl": "Axolotl", "trl": "TRL", "hf_trainer": "the Hugging Face Trainer",
                 "keras": "transformers' Keras PushToHubCallback"}


def _said(evidence: dict, framework: str, why: str) -> str:
    evidence["framework"] = why
    return framework


def _arguments_owner(config: RunConfig) -> str | None:
    name = config.get("training_args_class")
    return next((framework for prefix, framework in _ARGUMENT_PACKAGES
                 if isinstance(name, str) and name.startswith(prefix)), None)


def _framework_folder(config: RunConfig) -> tuple[str, str] | None:
    """(framework, why) where output_dir or logging_dir runs through a framework's checkout or is the framework's
    own save folder, or None."""
    for key in ("output_dir", "logging_dir"):
        value = config.get(key)
        parts = re.split(r"[\\/]", value) if isinstance(value, str) else []
        found = next((part for part in parts if part.lower() in _FRAMEWORK_FOLDERS), None)
        if found:
            return _FRAMEWORK_FOLDERS[found.lower()], f"{key} runs inside a {found} checkout ({value}, " \
                                                      f"{config.source_of(key)})"
        saves = _FACTORY_SAVES.search(value) if isinstance(value, str) else None
        if saves:
            return "llamafactory", (f"{key} is LLaMA-Factory's save folder saves/<model>/<finetuning type>/<run> "
                                    f"({value}, {config.source_of(key)})")
    return None


def _framework(layout: RunLayout | None, config: RunConfig, timeline: Timeline, objective: str,
               evidence: dict) -> str:
    for step in (_from_logs_and_banners, _from_trainer_arguments, _from_tracked_arguments, _from_logged_names):
        found = step(layout, config, timeline, objective, evidence)
        if found is not None:
            return found
    return UNKNOWN


def _from_logs_and_banners(layout: RunLayout | None, config: RunConfig, timeline: Timeline, objective: str,
                           evidence: dict) -> str | None:
    """A framework's own log files, banners, record of its arguments or console lines."""
    kinds = [] if layout is None else [k for k in ("llamafactory_logs", "swift_logs") if getattr(layout, k)]
    if kinds:
        name = {"llamafactory_logs": "llamafactory", "swift_logs": "swift"}[kinds[0]]
        evidence["framework"] = f"{getattr(layout, kinds[0])[0].name} ({name}'s log)"
        return name
    factory = next((b for b in timeline.banners if b.kind == "llamafactory"), None)
    unsloth = any(b.kind == "unsloth" for b in timeline.banners)
    if factory is not None and unsloth:
        # LLaMA-Factory's use_unsloth runs Unsloth under it, which prints its banner: the wrapper's own logger
        # lines name the framework that was launched (vishnusureshperumbavoor_fine_tuning's `llamafactory-cli train`)
        return _said(evidence, "llamafactory", f"LLaMA-Factory's log line in {factory.source}: {factory.text[:120]} "
                                               "(Unsloth's banner beside it: the engine LLaMA-Factory ran)")
    if unsloth:
        evidence["framework"] = "Unsloth banner in the console log"
        return "unsloth"
    mlx = next((b for b in timeline.banners if b.kind in ("mlx", "mlx_lora", "mlx_trainer")), None)
    if mlx is not None:
        evidence["framework"] = _MLX_SAYS[mlx.kind].format(source=mlx.source, text=mlx.text.replace("\n", "; "))
        return "mlx"
    if factory is not None:
        evidence["framework"] = f"LLaMA-Factory's log line in {factory.source}: {factory.text[:120]}"
        return "llamafactory"
    webui_log = next((p for p in layout.text_logs if p.name == "running_log.txt"), None) if layout else None
    if webui_log is not None:  # LLaMA-Factory's web UI saves its run's console under this name
        evidence["framework"] = f"{webui_log.name} (the console LLaMA-Factory's web UI saves)"
        return "llamafactory"
    webui = next((b for b in timeline.banners if b.kind == "webui"), None)
    if webui is not None:
        evidence["framework"] = f"text-generation-webui in {webui.source}: {webui.text[:120]}"
        return "webui"
    said = config.get("_framework")
    if isinstance(said, str):  # ms-swift's args.json beside event files whose log the folder does not keep
        evidence["framework"] = f"{config.source_of('_framework')} (its own record of the run's arguments)"
        return said
    named = [kind for kind in timeline.console_kinds if kind in KIND_FRAMEWORKS]
    if named:
        evidence["framework"] = f"{named[0]} console lines"
        return KIND_FRAMEWORKS[named[0]]
    return None


def _from_trainer_arguments(layout: RunLayout | None, config: RunConfig, timeline: Timeline, objective: str,
                            evidence: dict) -> str | None:
    """The trainer's arguments class, the run's folders, the model card, the Trainer's state file."""
    trainer = trl_config_class(config)
    if trainer is not None and trainer[0].startswith("Unsloth"):  # Unsloth's subclass of a TRL trainer or config
        return _said(evidence, "unsloth", f"{trainer[0]}, Unsloth's patched TRL trainer"
                                          f"{' arguments' * trainer[0].endswith('Config')} ({trainer_source(config)})")
    if trainer is not None and config.get("card.tagged_by") == "unsloth":
        # Unsloth trains through TRL's own SFTConfig too, and tags the card it writes `unsloth` beside TRL's tags
        return _said(evidence, "unsloth", f"{trainer[0]}, TRL's trainer arguments ({trainer_source(config)}), in a "
                                          f"run whose model card Unsloth tagged ({config.source_of('card.tagged_by')})")
    if trainer is not None:
        evidence["framework"] = f"{trainer[0]}, TRL's trainer{' arguments' * trainer[0].endswith('Config')} " \
                                f"({trainer_source(config)})"
        return "trl"
    owner = _arguments_owner(config)
    if owner is not None:
        return _said(evidence, owner, f"{config.get('training_args_class')}, {owner}'s own arguments class "
                                      f"({config.source_of('training_args_class')})")
    folder = _framework_folder(config)
    if folder is not None:
        return _said(evidence, *folder)
    tagged = config.get("card.tagged_by")
    if isinstance(tagged, str):  # the tag the framework itself puts on the card it writes
        return _said(evidence, tagged, f"the model card's tags name {tagged} ({config.source_of('card.tagged_by')})")
    card = next(((source, meta["model_card"]) for source, meta in timeline.meta.items() if meta.get("model_card")),
                None)
    trainer_run = (card is not None and card[1] == "hf_trainer") or (layout is not None and layout.trainer_states)
    unsloth_adapter = _unsloth_adapter(config) if trainer_run and not trl_signs(timeline, objective) else None
    if unsloth_adapter is not None:  # Unsloth's trainers are Trainers: the Trainer's card and state file
        return _said(evidence, "unsloth", f"{unsloth_adapter}, on a Hugging Face Trainer's files")
    if card is not None and not (card[1] == "hf_trainer" and trl_signs(timeline, objective)):
        # (a TRL trainer is a Trainer: before TRL 0.12 its card was the Trainer's, `### Training results` and all)
        return _said(evidence, card[1], f"the model card {_CARD_WRITERS[card[1]]} writes beside the model ({card[0]})")
    if layout is not None and layout.trainer_states:
        if trl_signs(timeline, objective):
            evidence["framework"] = "trainer_state.json with TRL's metric names"
            return "trl"
        evidence["framework"] = "trainer_state.json (Hugging Face Trainer)"
        return "hf_trainer"
    return None


def _unsloth_adapter(config: RunConfig) -> str | None:
    """Why the run's adapter was made by Unsloth's get_peft_model, where adapter_config.json carries its mark: the
    `unsloth_fixed` its auto_mapping rewrite adds (unsloth_zoo's fix_lora_auto_mapping), or the `revision: unsloth`
    older releases set; else None. (An unsloth/ base model alone is no mark: plain Trainer and TRL runs load them.)"""
    if config.get("adapter.unsloth_fixed") is True:
        return (f"adapter_config.json's auto_mapping carries unsloth_fixed, the mark Unsloth's get_peft_model leaves "
                f"({config.source_of('adapter.unsloth_fixed')})")
    if config.get("adapter.revision") == "unsloth":
        return (f"adapter_config.json's revision 'unsloth', set by Unsloth's get_peft_model "
                f"({config.source_of('adapter.revision')})")
    return None


def _from_tracked_arguments(layout: RunLayout | None, config: RunConfig, timeline: Timeline, objective: str,
                            evidence: dict) -> str | None:
    """The TrainingArguments a tracker logged (W&B, MLflow, TensorBoard, DVCLive): whose fields they are."""
    tracker_source = config.source_of("per_device_train_batch_size") or ""
    # TrainingArguments, as HF's callbacks log them (W&B, MLflow, TensorBoard's 'args' text summary, DVCLive's
    # params.yaml: the only params.yaml read for them, ingest.config_files.dvclive_params_values)
    if tracker_source.endswith(("(W&B config)", "(MLflow params)", "TensorBoard 'args' text", "/params.yaml")) or \
            tracker_source == "params.yaml":
        axolotl_fields = [k for k in _AXOLOTL_ARGS_FIELDS if k in config.values]
        if len(axolotl_fields) >= 2:  # before TRL's: axolotl's arguments carry max_seq_length too
            evidence["framework"] = (f"Axolotl's own TrainingArguments fields ({', '.join(axolotl_fields[:3])}) in "
                                     f"{tracker_source}")
            return "axolotl"
        sft_fields = [k for k in _SFT_CONFIG_FIELDS if k in config.values]
        if sft_fields:  # the arguments are TRL's SFTConfig: fields TrainingArguments does not have
            evidence["framework"] = f"TRL SFTConfig's own fields ({', '.join(sft_fields[:3])}) in {tracker_source}"
            return "trl"
        evidence["framework"] = f"Hugging Face TrainingArguments in {tracker_source}"
        return "trl" if objective in ("preference", "rl") else "hf_trainer"
    return None


def _from_logged_names(layout: RunLayout | None, config: RunConfig, timeline: Timeline, objective: str,
                       evidence: dict) -> str | None:
    """TRL's metric names, the Trainer's callback tags, printed dicts and table, then DeepSpeed."""
    if objective in ("preference", "rl") and evidence.get("objective", "").startswith("metrics "):  # (a bare
        # `reward` is said "metric reward": any loop may print one, TRL's names are these plural ones)
        evidence["framework"] = f"TRL's metric names ({evidence['objective']})"
        return "trl"
    sft = next((k for k in TRL_SFT_KEYS if k in timeline.metrics), None)
    if sft is not None:  # before a DeepSpeed config: DeepSpeed is the engine under TRL's trainer, not the trainer
        evidence["framework"] = f"metric {sft} in the log (TRL's SFTTrainer)"
        return "trl"
    callback = next((source for source, meta in timeline.meta.items() if meta.get("hf_callback_tags")), None)
    if callback is not None:  # after TRL's own signs: TRL's trainers log through the same callback
        return _said(evidence, "trl" if objective in ("preference", "rl") else "hf_trainer",
                     f"the Hugging Face Trainer's TensorBoardCallback tags (train/ and eval/, with train/epoch and "
                     f"train/learning_rate, or the closing summary's train/train_runtime) in {callback}")
    printed = next(((source, meta["dict_lines"]) for source, meta in timeline.meta.items() if meta.get("dict_lines")),
                   None)
    if printed is not None:  # before a DeepSpeed config: DeepSpeed is the engine under the Trainer
        source, flavour = printed
        evidence["framework"] = (
            f"ms-swift's printed log dicts (global_step/max_steps) in {source}" if flavour == "swift"
            else f"the Hugging Face Trainer's printed log dicts ({{'loss': ..., 'epoch': ...}}, or "
                 f"train()'s closing {{'train_runtime': ..., 'train_loss': ...}}) in {source}")
        return flavour
    table = next(((source, meta.get("trainer_table") or meta["trainer_history"])
                  for source, meta in timeline.meta.items()
                  if meta.get("trainer_table") or meta.get("trainer_history")), None)
    if table is not None:  # TRL's trainers and Unsloth's are Trainers: the same table (and log_history)
        evidence["framework"] = f"{table[1]} in {table[0]}"
        return "trl" if objective in ("preference", "rl") else "hf_trainer"
    if any(k.startswith("ds.") for k in config.values):
        evidence["framework"] = "a DeepSpeed config"
        return "deepspeed"
    engine = next(((source, meta["console_deepspeed"]) for source, meta in timeline.meta.items()
                   if meta.get("console_deepspeed")), None)
    if engine is not None:  # last: DeepSpeed is the engine under any trainer named above
        return _said(evidence, "deepspeed", f"the DeepSpeed engine's own lines (its configuration print or its "
                                            f"progress report) in {engine[0]}: {engine[1]}")
    return None
