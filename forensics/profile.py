"""The run profile: what kind of run this was, stated up front, each field with its evidence.

`run_profile(layout, config, timeline, findings)` reads what analyze already has and says:
* method: "full" | "lora" | "qlora" | "peft" | "unknown" (adapter files and adapter_config.json,
  a 4-bit quantization config, LLaMA-Factory `finetuning_type` / ms-swift `train_type`, PEFT's and
  Unsloth's banners in the console, then words in the run's own names: "qlora", "lora", "full");
* objective: "sft" | "pretrain" | "preference" | "rl" | "reward" | "unknown", with `algorithm`
  ("dpo", "kto", "orpo", "grpo", "ppo", ...): the metric names TRL logs (rewards/chosen, logps/*:
  preference; completion_length, reward, kl: RL), verl's console (actor/pg_loss: RL, else SFT),
  LLaMA-Factory's `stage`, a one-label head whose first loss is ln 2 (a pairwise reward model),
  pre-training consoles (Megatron, OLMo, torchtitan, NeMo, nanochat base_train, autoresearch), a script's
  arguments that give its model's sizes and no weights to start from (argparse's Namespace line), a first
  loss at about ln(vocabulary) (random weights: from scratch), then the run's names;
* model_params: the checkpoint index's total, the model config, PEFT's "all params", or a size
  in the run's names ("Qwen2-7B", "llama-3-8b", "1.5B"), else None;
* precision: "bf16" | "fp16" | "fp32" | "unknown" from the training arguments / DeepSpeed config (or what a console
  prints of them: DeepSpeed's config print, XTuner's printed config, a launch line's --bf16, torchtune's model dtype), else
  "fp16" where the log shows a loss scaler skipping updates (a `skipped_steps` finding from a non-finite
  grad_norm the run recovered from, or Megatron's own count): bf16 and fp32 have no scaler to skip with;
* framework: "llamafactory" | "swift" | "xtuner" | "unsloth" | "webui" | "mlx" | "trl" | "megatron" | ... | "hf_trainer" |
  "deepspeed" | "unknown" (a framework's own log lines or logger names, its record of the run's arguments or command
  line, its save-folder pattern or model-card tag, TRL's names, the Trainer's files; DeepSpeed, the engine under
  them, last).
Unknown stays unknown: a field nothing points at is "unknown" (None for model_params), never a guess.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .analyzers.zero_in_first_epoch import CLASSIFIER_HEADS, CLASSIFIER_TASKS
from .analyzers.metrics import PERPLEXITY_NAMES, format_number
from .analyzers.never_learned import FRESH_HEAD_RANGE
from .config import RunConfig
from .findings import Finding
from .ingest.banners import mlx_objective
from .ingest.pretrain_lines import KIND_FRAMEWORKS, PRETRAINING_KINDS
from .run import RunLayout
from .timeline import Timeline, step_from_name

UNKNOWN = "unknown"

# (TRL's DPO logs `nll_loss` too where rpo_alpha is set: ORPO is told by its odds-ratio terms)
_PREFERENCE_ALGOS = (("kto", ("rewards/chosen_sum", "logps/chosen_sum")), ("orpo", ("log_odds_ratio", "log_odds_chosen")),
                     ("dpo", ("rewards/margins", "rewards/chosen", "logps/chosen")))
_RL_KEYS = ("completion_length", "completions/mean_length", "reward", "reward_std", "frac_reward_zero_std")
_PPO_KEYS = ("objective/kl", "policy/approxkl_avg", "ppo/mean_scores", "objective/rlhf_reward", "critic_loss")
# DeepSpeed-Chat's steps, each told by the lines it prints (ingest.deepspeed_chat)
_DSCHAT_OBJECTIVES = {"dschat_sft": ("sft", None), "dschat_rm": ("reward", None), "dschat_ppo": ("rl", "ppo"),
                      "dschat_dpo": ("preference", "dpo")}
# verl's RL trainers log the policy loss under this name; its SFT trainer logs train/loss (-> loss).
# Console line kinds of nanoGPT-family pre-training loops that print a HellaSwag eval (build-nanogpt's `N hella X`,
# llm.c's `s:N eval:X`): with that eval beside the loss, the run is pre-training
_HELLASWAG_KINDS = {"step_name_value": "build-nanogpt", "llmc": "llm.c"}
_VERL_RL_KEY = "actor/pg_loss"
# Logged by TRL's SFTTrainer only (the plain Trainer computes no token accuracy).
_TRL_SFT_KEYS = ("mean_token_accuracy", "eval_mean_token_accuracy")
_STAGES = {"sft": ("sft", None), "pt": ("pretrain", None), "rm": ("reward", None), "dpo": ("preference", "dpo"),
           "kto": ("preference", "kto"), "orpo": ("preference", "orpo"), "simpo": ("preference", "simpo"),
           "ppo": ("rl", "ppo"), "grpo": ("rl", "grpo")}
_NAME_OBJECTIVES = (("grpo", ("rl", "grpo")), ("ppo", ("rl", "ppo")), ("dpo", ("preference", "dpo")),
                    ("kto", ("preference", "kto")), ("orpo", ("preference", "orpo")), ("sft", ("sft", None)),
                    ("pretrain", ("pretrain", None)), ("finetune", ("sft", None)), ("fine-tune", ("sft", None)),
                    ("fine_tune", ("sft", None)))
_MODEL_NAME_KEYS = ("model.", "adapter.base_model")
# `stablelm-2-1_6b`, `stablelm-zephyr-3b`: an underscore between digits before the unit is a decimal point (1.6B)
# (not `Llama_3_1_8b` nor `gemma3_1B`, where underscores stand for every separator: 3.1 8B, Gemma 3 1B)
# (nor a family's version before it: `llama-3_8b`, `Llama-2_7b-hf`, `gemma-2_2b` are Llama 3 8B, Llama 2 7B, Gemma 2 2B)
_DECIMAL_UNDERSCORE = re.compile(r"(?<![^-/\s])(?:(?P<family>[a-z]+)-)?(?P<whole>\d)_(?P<part>\d[bm])(?![a-z0-9])",
                                 re.IGNORECASE)
_VERSIONED_FAMILIES = {"llama", "gemma", "mistral", "falcon", "olmo", "phi", "glm", "yi", "mpt"}


def _decimal_sizes(text: str) -> str:
    """`1_6b` as `1.6b` where the underscore is a decimal point (module note at _DECIMAL_UNDERSCORE)."""
    def point(m: re.Match) -> str:
        family = m.group("family")
        if family and family.lower() in _VERSIONED_FAMILIES:
            return m.group(0)
        return f"{family + '-' if family else ''}{m.group('whole')}.{m.group('part')}"
    return _DECIMAL_UNDERSCORE.sub(point, text)
_SIZE = re.compile(r"(?<![a-z0-9.])(\d{1,4}(?:\.\d{1,2})?)\s?([bm])(?![a-z0-9])", re.IGNORECASE)
_NAME_KEYS = ("model.name_or_path", "model._name_or_path", "output_dir", "run_name", "logging_dir", "hub_model_id",
              "best_model_checkpoint", "adapter.base_model_name_or_path")


@dataclass(frozen=True)
class RunProfile:
    """What kind of run this was. Fields say "unknown" (model_params None) where nothing points at a value.

    `evidence` maps each known field to the file, metric or name that said it.
    """

    method: str = UNKNOWN
    objective: str = UNKNOWN
    algorithm: str | None = None
    model_params: int | None = None
    precision: str = UNKNOWN
    framework: str = UNKNOWN
    evidence: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The `run_profile` of `analyze --json`."""
        return {"method": self.method, "objective": self.objective, "algorithm": self.algorithm,
                "model_params": self.model_params, "precision": self.precision, "framework": self.framework,
                "evidence": dict(self.evidence)}

    @property
    def unknown(self) -> list[str]:
        """The fields nothing pointed at."""
        values = {"method": self.method, "objective": self.objective, "precision": self.precision,
                  "framework": self.framework, "model_params": self.model_params}
        return [k for k, v in values.items() if v in (UNKNOWN, None)]


def run_profile(layout: RunLayout | None, config: RunConfig, timeline: Timeline,
                findings: list[Finding] = ()) -> RunProfile:
    """The profile of a run from what analyze read (layout, configuration, timeline metric names and banners)
    and the findings on its log (a loss scaler's skipped steps tell fp16)."""
    names = _names(layout, config)
    evidence: dict[str, str] = {}
    model_params = _model_params(config, timeline, names, evidence)
    method = _method(config, timeline, names, evidence, model_params)
    if method == "qlora" and str(evidence.get("model_params", "")).startswith("unsloth banner"):
        # Unsloth's early-2025 `X/Y` count of a 4-bit base is its packed weights (or the size its name gives), no
        # model size: the name, the config or nothing says it
        model_params = _model_params(config, timeline, names, evidence, packed_4bit=True)
    objective, algorithm = _objective(config, timeline, names, evidence, adapter=method in _ADAPTERS)
    if method == UNKNOWN and evidence.get("objective", "").endswith(_FROM_SCRATCH):
        # a model trained from random weights trains every weight: an adapter on random weights learns nothing
        evidence["method"] = "a model trained from random weights trains every weight (the objective's evidence)"
        method = "full"
    return RunProfile(method=method, objective=objective, algorithm=algorithm, model_params=model_params,
                      precision=_precision(config, findings, evidence, timeline), framework=_framework(layout, config, timeline,
                                                                                       objective, evidence),
                      evidence=evidence)


_RUN_FOLDER = "the run folder's name"


def _names(layout: RunLayout | None, config: RunConfig) -> list[tuple[str, str]]:
    """(text, where) of the run's own names: its folder, its log files, model and output names in its config."""
    out = []
    if layout is not None:
        out.append((_own_folder_name(Path(layout.root)), _RUN_FOLDER))
        out += [(str(p.relative_to(layout.root)), "a log file's path") for p in layout.log_files
                if p.is_relative_to(layout.root)]
    for key in _NAME_KEYS:
        value = config.get(key)
        if isinstance(value, str):
            out.append((value, f"{key} ({config.source_of(key)})"))
    return out


# a run's own names that say its method, in this order: LoRA's published variants train low-rank adapters too
# (DoRA, AdaLoRA, LongLoRA, LoRA+, rsLoRA, PiSSA, OLoRA, MiLoRA; CLoRA: OddFunction0205's clora- run)
_LORA_VARIANTS = ("clora", "dora", "adalora", "longlora", "loraplus", "rslora", "pissa", "olora", "milora")
_METHOD_WORDS = (("qlora", "qlora"), ("lora", "lora")) + tuple((w, "lora") for w in _LORA_VARIANTS) + (("full", "full"),)


def _word_in(names: list[tuple[str, str]], word: str) -> str | None:
    pattern = re.compile(rf"(?<![a-z]){word}(?![a-z])", re.IGNORECASE)
    return next((f"'{word}' in {where}: {text}" for text, where in names if pattern.search(text)), None)


def _method(config: RunConfig, timeline: Timeline, names, evidence: dict, model_params: int | None = None) -> str:
    said = config.get("method")
    if said in ("full", "lora", "qlora", "peft"):
        evidence["method"] = str(config.source_of("method"))
        return said
    chat = next(((src, m) for src, m in timeline.meta.items() if "console_lora_dim" in m), None)
    if chat is not None and any(kind in _DSCHAT_OBJECTIVES for kind in timeline.console_kinds):
        evidence["method"] = (f"DeepSpeed-Chat trains every weight unless --lora_dim is given ({chat[0]}: "
                              f"{chat[1]['console_lora_dim_line'][:120]})")
        return "lora" if chat[1]["console_lora_dim"] > 0 else "full"
    scratch = _console_from_scratch(timeline)
    if scratch is not None:  # random weights: every one of them is trained
        evidence["method"] = f"a model built from scratch ({scratch[0]}: {scratch[1]}): every weight trained"
        return "full"
    for banner in timeline.banners:
        if banner.kind == "webui":
            evidence["method"] = f"text-generation-webui LoRA training in {banner.source} (it trains LoRA adapters only)"
            return "lora"
        if banner.kind == "mlx_lora":
            evidence["method"] = (f"mlx-examples' lora.py in {banner.source} (it trains LoRA adapters only): "
                                  f"{banner.text.replace(chr(10), '; ')}")
            return "lora"
        if banner.trainable_params and banner.all_params and banner.trainable_params < 0.5 * banner.all_params:
            evidence["method"] = f"{banner.kind} banner in {banner.source}: {banner.trainable_params:,} of " \
                                 f"{banner.all_params:,} parameters trainable"
            return "lora"
        if banner.trainable_params and banner.trainable_params == banner.all_params:
            evidence["method"] = f"{banner.kind} banner in {banner.source}: all {banner.all_params:,} parameters trainable"
            return "full"
        if banner.trainable_params and not banner.all_params and model_params \
                and banner.trainable_params >= (1 - _ESTIMATE_SHARE) * model_params:
            evidence["method"] = (f"{banner.kind} banner in {banner.source}: {banner.trainable_params:,} trainable "
                                  f"parameters, the whole model (its size: see model_params)")
            return "full"
        if banner.trainable_params and not banner.all_params and model_params \
                and banner.trainable_params < 0.05 * model_params:  # Unsloth states the trainable count alone
            evidence["method"] = (f"{banner.kind} banner in {banner.source}: {banner.trainable_params:,} trainable "
                                  f"parameters of a model of about {model_params:,} ({evidence.get('model_params')})")
            return "lora"
    for word, method in _METHOD_WORDS:
        found = _word_in(names, word)
        if found:
            evidence["method"] = found
            return method
    return UNKNOWN


def _objective(config: RunConfig, timeline: Timeline, names, evidence: dict,
               adapter: bool = False) -> tuple[str, str | None]:
    metrics = set(timeline.metrics)
    if "verl" in timeline.console_kinds:  # before TRL's names: verl's score is our `reward`, GRPO or PPO alike
        rl = _VERL_RL_KEY in metrics
        if rl or "loss" in metrics:
            evidence["objective"] = (f"verl console lines with {_VERL_RL_KEY} (its RL trainer)" if rl
                                     else "verl console lines with train/loss (its SFT trainer)")
            return ("rl", None) if rl else ("sft", None)
    chat = next((kind for kind in timeline.console_kinds if kind in _DSCHAT_OBJECTIVES), None)
    if chat is not None:
        evidence["objective"] = f"DeepSpeed-Chat's {chat.split('_')[1].upper()} step lines in the console"
        return _DSCHAT_OBJECTIVES[chat]
    mlx = next((algo for b in timeline.banners if (algo := mlx_objective(b))), None)
    if mlx is not None:  # the trainer says what it trains: ORPO's chosen reward is no RL reward
        evidence["objective"] = f"mlx trainer's start line: Starting {mlx.upper().replace('_', ' ')} training"
        return ("rl", None if mlx == "rlhf" else mlx) if mlx in ("grpo", "ppo", "rlhf") else ("preference", mlx)
    ppo = [k for k in _PPO_KEYS if k in metrics]
    rl = [k for k in metrics if k in _RL_KEYS or (k.startswith("rewards/") and k.endswith("/mean"))]
    if rl == ["reward"] and not ppo and _pairwise_loss_at_chance(config, timeline) is None:
        # a hand-written loop's `reward=`: RL, but no trainer's names to tell which (a one-label head whose loss starts
        # at ln 2 is a reward model printing its score, told below)
        evidence["objective"] = "metric reward in the log (RL fine-tuning)"
        named = next(((algo, found) for algo in ("grpo", "ppo") if (found := _word_in(names, algo))), None)
        if named is not None:
            evidence["objective"] += f"; {named[1]}"
        return "rl", named[0] if named else None
    if ppo or rl and rl != ["reward"]:  # before the pairwise names: GRPO logs rewards/<func>/mean, never rewards/chosen
        evidence["objective"] = f"metrics {', '.join(sorted(ppo or rl)[:3])} in the log (RL fine-tuning)"
        return "rl", "ppo" if ppo else "grpo"
    for algo, keys in _PREFERENCE_ALGOS:
        hit = [k for k in keys if k in metrics]
        if hit and algo == "dpo" and "nll_loss" in metrics:  # DPO with rpo_alpha, or CPO / SimPO: the log cannot tell
            evidence["objective"] = f"metrics {', '.join(hit)}, nll_loss in the log (TRL's pairwise names)"
            return "preference", None
        if hit and (algo != "kto" or "rewards/margins" not in metrics):
            evidence["objective"] = f"metrics {', '.join(hit)} in the log (TRL's {algo.upper()} names)"
            return "preference", algo
    if "rewards/accuracies" in metrics and any(str(src).endswith("trainer_log.jsonl") for src in timeline.meta):
        # LLaMA-Factory's log callback writes a DPO/KTO stage's rewards/accuracies (as "accuracy")
        evidence["objective"] = "metric accuracy in LLaMA-Factory's trainer_log.jsonl (its pairwise rewards/accuracies)"
        return "preference", None
    sft = [k for k in _TRL_SFT_KEYS if k in metrics]
    if sft:
        evidence["objective"] = f"metric {sft[0]} in the log (TRL's SFTTrainer)"
        return "sft", None
    trainer = _trl_config_class(config)
    if trainer is not None:
        evidence["objective"] = f"{trainer[0]} ({_trainer_source(config)})"
        return trainer[1]
    stage = config.get("stage") or config.get("rlhf_type")
    if isinstance(stage, str) and stage.lower() in _STAGES:
        evidence["objective"] = f"stage {stage} ({config.source_of('stage') or config.source_of('rlhf_type')})"
        return _STAGES[stage.lower()]
    head = next(((src, m["console_value_head"]) for src, m in timeline.meta.items() if m.get("console_value_head")), None)
    if head is not None:  # (PPO loads a value head too, but logs its RL metrics: read above)
        evidence["objective"] = f"a value head trained on pairs, with no RL metric ({head[0]}: {head[1]}): a reward model"
        return "reward", None
    chance = _pairwise_loss_at_chance(config, timeline)
    if chance is not None:
        evidence["objective"] = (f"a one-label scoring head (num_labels 1, {config.source_of('model.num_labels')}) "
                                 f"whose first loss {chance:.4g} is about ln 2, a pairwise ranking loss at chance: "
                                 "a reward model")
        return "reward", None
    if config.get("init_from") == "scratch":  # nanoGPT's train.py
        evidence["objective"] = f"init_from scratch ({config.source_of('init_from')}){_FROM_SCRATCH}"
        return "pretrain", None
    sizes = config.get("model.built_from_sizes")
    if isinstance(sizes, str):  # a hand-written script that builds its model from the sizes it was given
        evidence["objective"] = (f"the script's arguments give the model's sizes ({sizes}) and name no weights to "
                                 f"start from ({config.source_of('model.built_from_sizes')}){_FROM_SCRATCH}")
        return "pretrain", None
    built = config.get("model.built_here")
    if isinstance(built, str):  # a notebook that defines its network (or configures a library's) and loads no weights
        evidence["objective"] = (f"the notebook builds its model ({built}) and loads no trained weights anywhere in "
                                 f"its code ({config.source_of('model.built_here')}){_FROM_SCRATCH}")
        return "pretrain", None
    pretraining = [kind for kind in timeline.console_kinds if kind in PRETRAINING_KINDS]
    if pretraining:
        # a pre-training loop may start from trained weights (continued pre-training); a first loss at the
        # random guess says this one did not, which tells the method too (`run_profile`)
        fresh = None if adapter else _starts_at_random_guess(timeline)
        scratch = "" if fresh is None else f", the first loss {fresh:.4g} (per token) at the random guess{_FROM_SCRATCH}"
        evidence["objective"] = f"{pretraining[0]} pre-training console log{scratch}"
        return "pretrain", None
    scratch = _console_from_scratch(timeline)
    if scratch is not None:
        evidence["objective"] = f"the console says so ({scratch[0]}: {scratch[1]}){_FROM_SCRATCH}"
        return "pretrain", None
    tokenizer = next(((src, m["console_trains_tokenizer"]) for src, m in timeline.meta.items()
                      if m.get("console_trains_tokenizer")), None)
    if tokenizer is not None:
        evidence["objective"] = f"it trains its own tokenizer ({tokenizer[0]}: {tokenizer[1]}){_FROM_SCRATCH}"
        return "pretrain", None
    # an adapter is never trained from scratch, nor a model loaded from trained weights however high its loss starts
    fresh = None if adapter or pretrained_base(config) else _starts_at_random_guess(timeline)
    if fresh is not None:
        where = ("about ln(vocabulary size)" if fresh >= FRESH_HEAD_RANGE[0] else
                 "far above where a fine-tune of a trained model starts (1 to 4), falling by half or more")
        evidence["objective"] = f"the first loss {fresh:.4g} (per token) is {where}{_FROM_SCRATCH}"
        return "pretrain", None
    hella = [_HELLASWAG_KINDS[kind] for kind in timeline.console_kinds if kind in _HELLASWAG_KINDS]
    if hella and "eval_hellaswag" in metrics and "loss" in metrics:
        # build-nanogpt / llm.c print a HellaSwag accuracy beside the token-stream train/val loss: the base-model
        # benchmark of their pre-training loops (a continued or resumed run starts below ln(vocab), but it is the same)
        evidence["objective"] = (f"a {hella[0]}-style console with a HellaSwag eval beside its train/val loss: the "
                                 "nanoGPT-family pre-training loop's own benchmark")
        return "pretrain", None
    own = [(text, where) for text, where in names if not where.startswith(_MODEL_NAME_KEYS)]
    supervised = _supervised_lm(config, timeline)
    for word, (objective, algo) in _NAME_OBJECTIVES:
        if word in _FINE_TUNE_WORDS and not supervised:
            continue
        # the run's own names only: a base model's path says what that model is or where it lies
        # (`/data/pretrain_dir/Llama-3.1`, `Qwen2-7B-DPO`), not what this run trains it for
        # (the run's folder by its own name, not the folders above it: `/data/finetune/...`, `_own_folder_name`)
        found = _word_in(own, word)
        if found and word in _PAIRWISE_NAMES and _first_loss_above(timeline, _PAIRWISE_START_MAX):
            continue  # a loss no pairwise objective starts at (DPO's is ln 2): the name is not what was trained
        if found:
            evidence["objective"] = found
            return objective, algo
    shown = next(((src, m["console_instruction_data"]) for src, m in timeline.meta.items()
                  if m.get("console_instruction_data")), None)
    if shown is not None and "loss" in metrics and supervised:
        evidence["objective"] = (f"instruction-tuning data in the console ({shown[0]}: {shown[1][:120]}), "
                                 "with no preference, RL or reward metrics: supervised fine-tuning")
        return "sft", None
    task = str(config.get("adapter.task_type") or "").upper()
    if adapter and task in _LM_TASKS and "loss" in metrics:
        # an adapter on a trained language model, on its language-model loss, with none of the preference, RL or
        # reward metrics looked for above: supervised fine-tuning (continued training of a trained model included)
        evidence["objective"] = (f"a {task} adapter ({config.source_of('adapter.task_type')}) trained on the language-"
                                 "model loss, with no preference, RL or reward metrics: supervised fine-tuning")
        return "sft", None
    seq2seq = _pretrained_seq2seq(config)
    on_loss = "loss" if "loss" in metrics else "eval_loss" if "eval_loss" in metrics else None
    if seq2seq is not None and on_loss and supervised:
        # a trained encoder-decoder learns to write a target for each input: there is no other way to train one on
        # its loss here (its pre-training, span corruption from scratch, starts at ln(vocabulary): told above). A run
        # shorter than its logging interval shows only the held-out loss of that same objective.
        trained_on = "trained on its targets' loss" if on_loss == "loss" else "evaluated on its targets' loss (eval_loss)"
        evidence["objective"] = (f"{seq2seq}, {trained_on} with no preference, RL or reward metrics: "
                                 "supervised (sequence-to-sequence) fine-tuning")
        return "sft", None
    return UNKNOWN, None


def pretrained_base(config: RunConfig) -> tuple[str, str] | None:
    """(name, where) of the trained model the run starts from: the `_name_or_path` that from_pretrained writes into
    the saved config.json (a model built with from_config writes it empty), the adapter's base, or the model its
    arguments load (model_name_or_path); else None."""
    for key in _TRAINED_START_KEYS:
        name = config.get(key)
        if isinstance(name, str) and name.strip():
            return name, f"{key}, {config.source_of(key)}"
    return None


_TRAINED_START_KEYS = ("model._name_or_path", "adapter.base_model_name_or_path", "model.name_or_path")


def _console_from_scratch(timeline: Timeline) -> tuple[str, str] | None:
    """(source, line) of a console line saying the model was built from random weights, or None."""
    return next(((src, m["console_from_scratch"]) for src, m in timeline.meta.items() if m.get("console_from_scratch")),
                None)


def _pretrained_seq2seq(config: RunConfig) -> str | None:
    """What says the run fine-tunes a trained encoder-decoder: the model's config (`is_encoder_decoder`, an
    `...ForConditionalGeneration` head) with the checkpoint it was loaded from, or Seq2SeqTrainingArguments with
    predict_with_generate; else None."""
    if config.get("model.is_encoder_decoder") is not True:
        return None
    architectures = config.get("model.architectures")
    head = next((n for n in (architectures if isinstance(architectures, list) else [architectures])
                 if isinstance(n, str) and n.endswith(("ForConditionalGeneration", "EncoderDecoderModel"))), None)
    start = config.get("model._name_or_path") or config.get("model.name_or_path")
    if head is None:
        return None
    if isinstance(start, str) and start.strip():
        return f"a trained encoder-decoder ({head} loaded from {start}, {config.source_of('model.architectures')})"
    if "Seq2Seq" in str(config.get("training_args_class") or "") and config.get("predict_with_generate") is True:
        return (f"an encoder-decoder ({head}, {config.source_of('model.architectures')}) trained with "
                f"Seq2SeqTrainingArguments' predict_with_generate ({config.source_of('predict_with_generate')})")
    return None


_LM_TASKS = ("CAUSAL_LM", "SEQ_2_SEQ_LM")
_FINE_TUNE_WORDS = ("finetune", "fine-tune", "fine_tune")


def classification_head(config: RunConfig) -> bool:
    """The model's config names a classification head (`...ForSequenceClassification`, an adapter's SEQ_CLS)."""
    architectures = config.get("model.architectures")
    names = architectures if isinstance(architectures, list) else [architectures]
    return (any(isinstance(n, str) and n.endswith(CLASSIFIER_HEADS) for n in names)
            or config.get("adapter.task_type") in CLASSIFIER_TASKS)


def _supervised_lm(config: RunConfig, timeline: Timeline) -> bool:
    """Whether words or data in the run can say supervised fine-tuning: not for a classification head, nor a loss that
    starts at about ln 2 (a pairwise objective at chance, a reward model on preference pairs)."""
    if classification_head(config):
        return False
    loss = _training_losses(timeline)
    return not (len(loss) and abs(float(loss[0]) - math.log(2)) <= _NEAR_LN2)


def _own_folder_name(root: Path) -> str:
    """The name the run's owner gave its folder: the folder analyzed, or, for a checkpoint folder of it
    (`checkpoint-3000`, `global_step3000`), the folder that holds it. The folders above are where the copy lies (a
    checkout called `...-sft`, a share of many runs), not what this run is."""
    root = root if root.name else root.resolve()
    return f"{root.parent.name}/{root.name}" if step_from_name(root.name) is not None else root.name


# fields of TRL's SFTConfig that transformers' TrainingArguments does not have
_SFT_CONFIG_FIELDS = ("dataset_text_field", "packing", "completion_only_loss", "assistant_only_loss", "max_seq_length",
                      "dataset_kwargs")
_PAIRWISE_NAMES = ("dpo", "kto")
_PAIRWISE_START_MAX = 1.5  # nats: DPO starts at ln 2, KTO under 1; a language model's loss starts above


# Fields of axolotl's AxolotlTrainingArguments (axolotl/core/training_args.py) that no other trainer's arguments
# have: its multipack sampler, ReLoRA, its MMLU bench eval, its quadratic warm-up. Two of them name axolotl.
_AXOLOTL_ARGS_FIELDS = ("sample_packing", "eval_sample_packing", "sample_packing_efficiency", "multipack_real_batches",
                        "relora_steps", "relora_warmup_steps", "lr_quadratic_warmup", "do_bench_eval", "bench_dataset")


def _pairwise_loss_at_chance(config: RunConfig, timeline: Timeline) -> float | None:
    """The first training loss of a model with a one-score head (num_labels 1: a reward model's, or a
    regressor's) when it is about ln 2, where a pairwise loss -log sigmoid(r_chosen - r_rejected) starts
    with untrained scores; else None."""
    if config.get("model.num_labels") != 1:
        return None
    loss = _training_losses(timeline)
    return float(loss[0]) if len(loss) >= 3 and abs(loss[0] - math.log(2)) <= _NEAR_LN2 else None


_NEAR_LN2 = 0.05  # the first logged loss is an average over the first logging interval: a little under ln 2


def _first_loss_above(timeline: Timeline, level: float) -> bool:
    loss = _training_losses(timeline)
    return bool(len(loss)) and float(loss[0]) > level


def _training_losses(timeline: Timeline) -> np.ndarray:
    frame = timeline.final()
    loss = frame.loc[frame["metric"] == "loss", "value"].to_numpy(dtype="float64")
    return loss[np.isfinite(loss)]


# The arguments class of TRL's trainers (and Unsloth's subclasses of them, UnslothSFTConfig, UnslothGRPOConfig):
# the class name ends in one of these, and says the objective.
_TRL_CONFIGS = (("SFTConfig", ("sft", None)), ("DPOConfig", ("preference", "dpo")),
                ("KTOConfig", ("preference", "kto")), ("ORPOConfig", ("preference", "orpo")),
                ("CPOConfig", ("preference", "cpo")),
                ("GRPOConfig", ("rl", "grpo")), ("RLOOConfig", ("rl", "rloo")), ("PPOConfig", ("rl", "ppo")),
                ("RewardConfig", ("reward", None)))


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


def _trl_signs(timeline: Timeline, objective: str) -> bool:
    """A preference / RL objective or TRL's SFT metrics: the trainer was TRL's."""
    return objective in ("preference", "rl") or any(k in timeline.metrics for k in _TRL_SFT_KEYS)


_CARD_WRITERS = {"axolotl": "Axolotl", "trl": "TRL", "hf_trainer": "the Hugging Face Trainer"}


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


def _trl_config_class(config: RunConfig) -> tuple[str, tuple[str, str | None]] | None:
    """(class name, (objective, algorithm)) where training_args.bin holds a TRL trainer's arguments, or a notebook's
    code builds one of TRL's trainers (`trainer_class`, trl.SFTTrainer: its SFTConfig's objective), else None."""
    for key, suffix_of in (("training_args_class", ""), ("trainer_class", "Trainer")):
        name = config.get(key)
        if not isinstance(name, str):
            continue
        short = name.rsplit(".", 1)[-1]
        is_trl = name.startswith("trl.") or short.startswith("Unsloth")
        config_name = short[: -len(suffix_of)] + "Config" if suffix_of and short.endswith(suffix_of) else short
        found = next(((short, said) for suffix, said in _TRL_CONFIGS if is_trl and config_name.endswith(suffix)), None)
        if found:
            return found
    return None


def _trainer_source(config: RunConfig) -> str | None:
    return config.source_of("training_args_class") or config.source_of("trainer_class")


def _starts_at_random_guess(timeline: Timeline) -> float | None:
    """The first logged training loss when it sits where a randomly initialised model's does, about
    ln(vocabulary) (9 to 13 for 8k to 440k tokens; a fine-tune of a trained model starts near 1 to 3), and
    the loss clearly falls from there: its last tenth `_CLEAR_FALL` under it, or a slow fall at nearly every
    point (a warm-up's first steps); a run stuck there is judged by never_learned, not profiled by it, and a
    wobble is no descent. A first point logged after some steps has already left ln(vocabulary): from
    `_SCRATCH_LOW` nats up it counts too when the loss then falls by 40% or more, gradually: above half its start
    over the first `_SLOW_SHARE` of the logged points (a fine-tune of a trained model never starts there unless
    something is broken at its start, and then it falls within a few steps: 8.3 -> 1.3 in ten). Else None."""
    for loss in (_training_losses(timeline), _per_token_losses_from_perplexity(timeline)):
        lo, hi = FRESH_HEAD_RANGE
        if len(loss) < 3 or not _SCRATCH_LOW <= loss[0] <= hi:
            continue
        tail = float(np.median(loss[-max(1, len(loss) // 10):]))
        steady = loss[-1] < loss[0] and float(np.mean(np.diff(loss) < 0)) >= _STEADY
        # random weights learn slowly: the loss stays above half its start over the log's first stretch, where a
        # fine-tune's bad start (a template, new tokens) is put right in a few steps however often it is logged
        gradual = bool(np.all(loss[:max(2, int(len(loss) * _SLOW_SHARE))] >= _HALVED * loss[0]))
        if loss[0] >= lo and (tail <= _CLEAR_FALL * loss[0] or steady) or gradual and tail <= _FELL * loss[0]:
            return float(loss[0])
    return None


_ADAPTERS = ("lora", "qlora", "peft")
_SCRATCH_LOW = 5.5  # nats (ln 245): a first loss this high that then falls gradually is a model learning from random
                    # weights (msh2481's 500-token vocabulary starts at ln 500 = 6.21; DanielPuentee's 1000-token one
                    # is at 6.27 by its first line, step 100; CollinPhipps' 5000-token one at 5.95 by step 200)
_HALVED = 0.5  # a fine-tune's broken start falls under half its first loss in one logging interval
_FELL = 0.6  # ... a model from random weights falls gradually, by 40% or more over the log
_SLOW_SHARE = 0.15  # ... staying above half its start over this share of the logged points
_FROM_SCRATCH = ": a model that starts from random weights, training from scratch"


def _per_token_losses_from_perplexity(timeline: Timeline) -> np.ndarray:
    """ln of the training perplexity a log holds beside its loss (a trainer whose `loss` is a sum logs the
    per-token value this way), or an empty array."""
    frame = timeline.final()
    ppl = frame.loc[frame["metric"].str.lower().isin(PERPLEXITY_NAMES), "value"].to_numpy(dtype="float64")
    ppl = ppl[np.isfinite(ppl) & (ppl > 0)]
    return np.log(ppl)


_CLEAR_FALL = 0.9  # a tenth under the first loss: a descent, not a fresh head's wobble
_STEADY = 0.8  # or down from one point to the next at this share of them


_UNSLOTH_SLASH = re.compile(r"Trainable parameters\s*=\s*[\d,]+\s*/\s*[\d,]+")


def _model_params(config: RunConfig, timeline: Timeline, names, evidence: dict,
                  packed_4bit: bool = False) -> int | None:
    """The model's size, from the files, a banner's count, the config's estimate, the log's own line or the name.
    packed_4bit: the base is loaded in 4 bits, so Unsloth's early-2025 `X/Y` total counts packed weights."""
    evidence.pop("model_params", None)
    n = config.get("n_params")
    estimated = str(config.source_of("n_params") or "").startswith("estimate")
    if isinstance(n, (int, float)) and n > 0 and not estimated:  # a count the files hold
        evidence["model_params"] = str(config.source_of("n_params"))
        return int(n)
    for banner in timeline.banners:  # a count the run printed beats an estimate from the config
        packed = packed_4bit and banner.kind == "unsloth" and _UNSLOTH_SLASH.search(banner.text)
        if banner.all_params and not packed:
            evidence["model_params"] = f"{banner.kind} banner in {banner.source}"
            return int(banner.all_params)
    if isinstance(n, (int, float)) and n > 0:
        counted = _counted_whole(config, timeline, n)
        if counted is not None:  # the Trainer counted every weight: an exact count beats the estimate
            evidence["model_params"] = (f"{counted.kind} banner in {counted.source}: {counted.trainable_params:,} "
                                        f"trainable, the whole of the model ({config.source_of('n_params')}: "
                                        f"{int(n):,})")
            return int(counted.trainable_params)
        evidence["model_params"] = str(config.source_of("n_params"))
        return int(n)
    for source, meta in timeline.meta.items():  # a script's own `N params` line: under a banner's or config's count
        said = meta.get("console_params_said")
        if isinstance(said, int) and said > 0:
            evidence["model_params"] = f"{source}: {meta.get('console_params_said_line', '')}"
            return said
    for text, where in sorted(names, key=_names_a_model_first):
        m = _SIZE.search(_decimal_sizes(text).replace("_", "-"))
        if m:
            size = float(m.group(1)) * (1e9 if m.group(2).lower() == "b" else 1e6)
            if 1e7 <= size <= 2e12:
                evidence["model_params"] = f"'{m.group(0)}' in {where}: {text}"
                return int(size)
    return None


_MODEL_NAME_KEYS = ("model.name_or_path", "model._name_or_path", "adapter.base_model_name_or_path")


def _names_a_model_first(name: tuple[str, str]) -> bool:
    """Sort key: the model's own name before the folder's and the files' (a notebook named for a template,
    `Llama3.2_(1B_and_3B)-Conversational.ipynb`, that loads `unsloth/Llama-3.2-3B-Instruct` trains the 3B)."""
    return not name[1].startswith(_MODEL_NAME_KEYS)


def _counted_whole(config: RunConfig, timeline: Timeline, n: float):
    """The trainable-count-only banner (the Trainer's, Unsloth's) whose count is the whole model's estimated size
    (within `_ESTIMATE_SHARE`), or None."""
    return next((b for b in timeline.banners if b.trainable_params and not b.all_params
                 and abs(b.trainable_params - n) <= _ESTIMATE_SHARE * n), None)


_ESTIMATE_SHARE = 0.05  # a size estimated from the config is within a few percent (norms and biases left out)


def _precision(config: RunConfig, findings, evidence: dict, timeline: Timeline) -> str:
    for key, name in (("bf16", "bf16"), ("ds.bf16.enabled", "bf16"), ("fp16", "fp16"), ("ds.fp16.enabled", "fp16")):
        if config.get(key) is True:
            evidence["precision"] = f"{key}=True ({config.source_of(key)})"
            return name
    unsloth = config.get("precision.unsloth_mixed")
    if unsloth in ("fp16", "bf16"):
        evidence["precision"] = (f"Unsloth's trainer turns on {unsloth} mixed precision where neither flag is set, "
                                 f"from the model's dtype ({config.source_of('precision.unsloth_mixed')})")
        return unsloth
    autocast = config.get("precision.autocast")
    if autocast in ("fp16", "bf16"):
        evidence["precision"] = (f"the training loop runs its forward pass under torch's autocast in {autocast} "
                                 f"({config.source_of('precision.autocast')})")
        return autocast
    loaded = config.get("model.load_dtype")
    if loaded in _HALF_LOADS:  # the weights themselves in half precision, no mixed-precision flag set: trained so
        evidence["precision"] = (f"the model's weights loaded in {loaded} ({config.source_of('model.load_dtype')}) "
                                 "and no mixed-precision flag set")
        return _HALF_LOADS[loaded]
    if config.get("fp16") is False and config.get("bf16") is False:
        evidence["precision"] = f"fp16 and bf16 both off ({config.source_of('fp16')})"
        return "fp32"
    if config.get("fp16") is False and any("bf16" not in keys for keys in config.whole_training_args()):
        # TrainingArguments has had a bf16 field since transformers 4.13: a release before it ran fp16 or fp32
        evidence["precision"] = f"fp16 off, and no bf16 field in its release's TrainingArguments ({config.source_of('fp16')})"
        return "fp32"
    scaler = next((f for f in findings if f.kind == "skipped_steps" and not f.evidence.get("grad_norm_zero")), None)
    if scaler is not None:
        evidence["precision"] = (f"a loss scaler skipped updates from step {scaler.step} (only fp16 has one; "
                                 "bf16 and fp32 runs apply or break on a non-finite gradient)")
        return "fp16"
    overflows = timeline.series("overflow").dropna()
    if len(overflows) and float(overflows.max()) > 0:
        evidence["precision"] = (f"a loss scaler reported overflowing gradients and lowered its scale (step "
                                 f"{int(overflows.index[0])}): only fp16 training scales its loss")
        return "fp16"
    scale = timeline.series("loss_scale").dropna()
    if len(scale) and float(scale.max()) > 1.0:  # (Megatron prints 1.0 for bf16 and fp32 runs)
        evidence["precision"] = (f"a dynamic loss scale is logged ({format_number(float(scale.iloc[0]))} at step "
                                 f"{int(scale.index[0])}): only fp16 training scales its loss")
        return "fp16"
    if config.get("precision.default_fp32") is True:
        evidence["precision"] = (f"the training loop in {config.source_of('precision.default_fp32')} asks for nothing "
                                 "below float32 (no autocast, half, bfloat16 or float16, no quantized load): the "
                                 "default, fp32")
        return "fp32"
    if config.get("precision.trainer_fp32"):
        evidence["precision"] = (f"the {config.get('precision.trainer_fp32')} the code builds in "
                                 f"{config.source_of('precision.trainer_fp32')} set neither fp16 nor bf16, and nothing "
                                 "else in it asks for mixed precision (no autocast, accelerate or DeepSpeed "
                                 "mixed_precision, Unsloth): the Trainer's default, fp32")
        return "fp32"
    return UNKNOWN


_HALF_LOADS = {"bfloat16": "bf16", "float16": "fp16"}
_MLX_SAYS = {"mlx": "MLX's mlx_lm trainable-parameters line in {source}: {text}",
             "mlx_lora": "mlx-examples' lora.py parameter lines in {source}: {text}",
             "mlx_trainer": "mlx-lm's trainer lines in {source}: {text}"}


def _framework(layout: RunLayout | None, config: RunConfig, timeline: Timeline, objective: str,
               evidence: dict) -> str:
    kinds = [] if layout is None else [k for k in ("llamafactory_logs", "swift_logs") if getattr(layout, k)]
    if kinds:
        name = {"llamafactory_logs": "llamafactory", "swift_logs": "swift"}[kinds[0]]
        evidence["framework"] = f"{getattr(layout, kinds[0])[0].name} ({name}'s log)"
        return name
    if any(b.kind == "unsloth" for b in timeline.banners):
        evidence["framework"] = "Unsloth banner in the console log"
        return "unsloth"
    mlx = next((b for b in timeline.banners if b.kind in ("mlx", "mlx_lora", "mlx_trainer")), None)
    if mlx is not None:
        evidence["framework"] = _MLX_SAYS[mlx.kind].format(source=mlx.source, text=mlx.text.replace("\n", "; "))
        return "mlx"
    factory = next((b for b in timeline.banners if b.kind == "llamafactory"), None)
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
    trainer = _trl_config_class(config)
    if trainer is not None and trainer[0].startswith("Unsloth"):  # Unsloth's subclass of a TRL trainer or config
        return _said(evidence, "unsloth", f"{trainer[0]}, Unsloth's patched TRL trainer"
                                          f"{' arguments' * trainer[0].endswith('Config')} ({_trainer_source(config)})")
    if trainer is not None:
        evidence["framework"] = f"{trainer[0]}, TRL's trainer{' arguments' * trainer[0].endswith('Config')} " \
                                f"({_trainer_source(config)})"
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
    card = next(((source, meta["model_card"]) for source, meta in timeline.meta.items() if meta.get("model_card")), None)
    if card is not None and not (card[1] == "hf_trainer" and _trl_signs(timeline, objective)):
        # (a TRL trainer is a Trainer: before TRL 0.12 its card was the Trainer's, `### Training results` and all)
        return _said(evidence, card[1], f"the model card {_CARD_WRITERS[card[1]]} writes beside the model ({card[0]})")
    if layout is not None and layout.trainer_states:
        if _trl_signs(timeline, objective):
            evidence["framework"] = "trainer_state.json with TRL's metric names"
            return "trl"
        evidence["framework"] = "trainer_state.json (Hugging Face Trainer)"
        return "hf_trainer"
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
    if objective in ("preference", "rl") and evidence.get("objective", "").startswith("metrics "):  # (a bare
        # `reward` is said "metric reward": any loop may print one, TRL's names are these plural ones)
        evidence["framework"] = f"TRL's metric names ({evidence['objective']})"
        return "trl"
    sft = next((k for k in _TRL_SFT_KEYS if k in timeline.metrics), None)
    if sft is not None:  # before a DeepSpeed config: DeepSpeed is the engine under TRL's trainer, not the trainer
        evidence["framework"] = f"metric {sft} in the log (TRL's SFTTrainer)"
        return "trl"
    callback = next((source for source, meta in timeline.meta.items() if meta.get("hf_callback_tags")), None)
    if callback is not None:  # after TRL's own signs: TRL's trainers log through the same callback
        return _said(evidence, "trl" if objective in ("preference", "rl") else "hf_trainer",
                     f"the Hugging Face Trainer's TensorBoardCallback tags (train/ and eval/, with train/epoch and "
                     f"train/learning_rate) in {callback}")
    printed = next(((source, meta["dict_lines"]) for source, meta in timeline.meta.items() if meta.get("dict_lines")),
                   None)
    if printed is not None:  # before a DeepSpeed config: DeepSpeed is the engine under the Trainer
        source, flavour = printed
        evidence["framework"] = (f"ms-swift's printed log dicts (global_step/max_steps) in {source}" if flavour == "swift"
                                 else f"the Hugging Face Trainer's printed log dicts ({{'loss': ..., 'epoch': ...}}) "
                                      f"in {source}")
        return flavour
    table = next(((source, meta["trainer_table"]) for source, meta in timeline.meta.items() if meta.get("trainer_table")),
                 None)
    if table is not None:  # TRL's trainers and Unsloth's are Trainers: the same table
        evidence["framework"] = f"{table[1]} in {table[0]}"
        return "trl" if objective in ("preference", "rl") else "hf_trainer"
    if any(k.startswith("ds.") for k in config.values):
        evidence["framework"] = "a DeepSpeed config"
        return "deepspeed"
    engine = next(((source, meta["console_deepspeed"]) for source, meta in timeline.meta.items()
                   if meta.get("console_deepspeed")), None)
    if engine is not None:  # last: DeepSpeed is the engine under any trainer named above
        return _said(evidence, "deepspeed", f"the DeepSpeed engine's configuration print in {engine[0]}: {engine[1]}")
    return UNKNOWN
