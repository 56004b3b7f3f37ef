"""How much a configuration difference between two runs is likely to matter for what went wrong.

`rank_differences(aligned, broken)` takes the configuration keys on which runs disagree and the
findings of the run that broke, and returns each difference with a risk ("high", "medium", "low",
"none") and one line saying why, highest risk first. The rules know the usual suspects of the
incidents in INCIDENTS.md: precision and loss scaling (seed incidents 3 and 5), the learning rate
against the method, optimizer eps and betas, clipping, warm-up, DeepSpeed's communication and
reduce dtypes, quantization, batch size. Output paths, run names, seeds and logging intervals
cannot make a run break: they go last, as "none".
"""
from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass, replace
from typing import Any, Sequence

RISKS = ("high", "medium", "low", "none")

# Incident kinds grouped by what usually lies behind them (the analyzers' finding kinds).
_NUMERIC_KINDS = {"nonfinite_metric", "masked_nan_loss", "nonfinite_weights", "loss_scale_overflow",
                  "skipped_steps", "weights_near_fp16_limit", "loss_collapse"}
_OPTIMIZATION_KINDS = {"divergence", "grad_norm_spike", "loss_spike", "nonfinite_metric", "nonfinite_weights",
                       "loss_collapse", "lr_anomaly"}


@dataclass(frozen=True)
class Topic:
    """A family of configuration keys that matter for the same reason."""

    name: str
    patterns: tuple[str, ...]
    relevant_to: frozenset[str]  # incident kinds for which a difference here is high risk
    base: str                    # risk when the broken run shows none of those kinds
    why: str                     # why a difference here can matter, in one clause


_TOPICS = (
    Topic("precision", ("precision", "fp16", "bf16", "half_precision_backend", "fp16_opt_level", "fp16_backend",
                        "ds.fp16.enabled", "ds.bf16.enabled", "ds.amp.enabled", "model.torch_dtype", "model.dtype",
                        "tf32", "mixed_precision", "torch_dtype"),
          frozenset(_NUMERIC_KINDS), "medium",
          "fp16 holds values only up to 65504 and needs loss scaling; bf16 and fp32 do not overflow there"),
    Topic("deepspeed_dtypes", ("ds.communication_data_type", "ds.*reduce*dtype*", "ds.*data_types*",
                               "ds.grad_accum_dtype", "ds.data_types.*"),
          frozenset(_NUMERIC_KINDS | {"loss_collapse", "grad_norm_spike"}), "medium",
          "DeepSpeed reduces gradients in this dtype; a mismatch with the training precision broke seed incident 5"),
    Topic("loss_scaling", ("ds.fp16.loss_scale*", "ds.fp16.initial_scale_power", "ds.fp16.min_loss_scale",
                           "ds.fp16.hysteresis", "ds.fp16.*", "ds.loss_scale*"),
          frozenset(_NUMERIC_KINDS), "low",
          "the loss scaler decides when fp16 gradients overflow and steps are skipped"),
    Topic("learning_rate", ("learning_rate", "lr", "ds.optimizer.params.lr", "ds.scheduler.params.*lr*"),
          frozenset(_OPTIMIZATION_KINDS), "medium",
          "the step size: too high a learning rate for the method and model size diverges or overflows"),
    Topic("optimizer", ("adam_epsilon", "adam_beta1", "adam_beta2", "ds.optimizer.params.eps",
                        "ds.optimizer.params.betas*"),
          frozenset(_OPTIMIZATION_KINDS | _NUMERIC_KINDS), "medium",
          "Adam's eps and betas set how large an update can get when the second moment is small"),
    Topic("weight_decay", ("weight_decay", "ds.optimizer.params.weight_decay"),
          frozenset(), "low",
          "weight decay pulls the weights a little toward 0 each step: it shapes what the run converges to, "
          "it rarely makes a run break"),
    Topic("optimizer_type", ("optim", "optimizer", "optim_args", "ds.optimizer.*"),
          frozenset(_OPTIMIZATION_KINDS), "medium",
          "a different optimizer (or implementation: fused, 8-bit, paged) changes the update rule and its numerics"),
    Topic("clipping", ("max_grad_norm", "ds.gradient_clipping", "clip_grad", "gradient_clipping"),
          frozenset(_OPTIMIZATION_KINDS), "medium",
          "clipping bounds each update; without it one bad batch can move the weights far"),
    Topic("warmup", ("warmup_steps", "warmup_ratio", "lr_scheduler_type", "ds.scheduler.*", "lr_scheduler_kwargs"),
          frozenset(_OPTIMIZATION_KINDS), "medium",
          "warm-up and the schedule decide the step size in the first, most fragile steps"),
    Topic("quantization", ("quant.*", "load_in_4bit", "load_in_8bit", "quantization_bit", "bnb_4bit_*",
                           "double_quant*", "quantization*"),
          frozenset(_NUMERIC_KINDS | {"nonfinite_metric"}), "medium",
          "4-bit/8-bit quantization (double quantization especially) changes the numerics of every forward pass"),
    Topic("batch", ("per_device_train_batch_size", "gradient_accumulation_steps", "ds.train_batch_size",
                    "ds.train_micro_batch_size_per_gpu", "ds.gradient_accumulation_steps", "train_batch_size",
                    "global_batch_size", "micro_batch_size", "batch_size"),
          frozenset({"divergence", "grad_norm_spike", "loss_spike"}), "low",
          "the batch size sets gradient noise and the learning rate it tolerates"),
    Topic("method", ("method", "finetuning_type", "train_type", "adapter.*", "lora_*", "peft_*", "n_params"),
          frozenset(_OPTIMIZATION_KINDS), "medium",
          "the fine-tuning method sets the learning-rate range that is safe"),
    Topic("model", ("model.*", "model_name_or_path", "model_name", "model_type"),
          frozenset(), "medium",
          "a different model (or model config) can need a different precision and learning rate"),
    Topic("zero", ("ds.zero_optimization.*", "ds.zero_*", "zero_stage"),
          frozenset(_NUMERIC_KINDS), "low",
          "the ZeRO stage changes how gradients are partitioned and reduced"),
    Topic("attention", ("attn_implementation", "model._attn_implementation", "flash_attn", "sdpa",
                        "gradient_checkpointing", "model.use_cache"),
          frozenset(_NUMERIC_KINDS), "low",
          "the attention kernel decides where fp16 activations can overflow"),
)

# Keys that cannot make a run break: where it writes, what it is called, how often it logs or saves.
_IRRELEVANT = ("output_dir", "logging_dir", "run_name", "seed", "data_seed", "logging_steps", "logging_strategy",
               "logging_first_step", "save_steps", "save_strategy", "save_total_limit", "save_only_model",
               "eval_steps", "eval_strategy", "evaluation_strategy", "report_to", "hub_*", "push_to_hub",
               "resume_from_checkpoint", "overwrite_output_dir", "dataloader_*", "disable_tqdm", "*_dir",
               "deepspeed", "local_rank", "ddp_*", "tpu_*", "past_index", "ignore_data_skip", "*_path",
               "logging_nan_inf_filter", "include_*", "label_names", "remove_unused_columns", "*output*",
               "project", "experiment*", "wandb*", "trackio*", "ds.steps_per_print", "ds.wall_clock_breakdown",
               "model._name_or_path", "model.transformers_version", "ds.tensorboard.*", "ds.wandb.*")


@dataclass(frozen=True)
class RankedDifference:
    """One configuration key on which the runs disagree, with how much it is likely to matter.

    Fields:
        key: the configuration key (TrainingArguments names; `ds.` DeepSpeed; `model.` config.json ...).
        values: one value per run, in the runs' order (None where a run does not state it).
        sources: the file each value came from (None where absent).
        risk: "high", "medium", "low" or "none".
        why: one line: why this difference can (or cannot) explain what went wrong.
        topic: the family of keys it belongs to ("precision", "learning_rate", ...; "other").
        not_recorded: the runs (indices) whose files record no setting of this key's kind at all (no DeepSpeed
            config, say): their value is unknown, not the default, so the difference may not be one.
    """

    key: str
    values: tuple[Any, ...]
    sources: tuple[str | None, ...]
    risk: str
    why: str
    topic: str
    not_recorded: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "values": list(self.values), "sources": list(self.sources), "risk": self.risk,
                "why": self.why, "topic": self.topic, "not_recorded": list(self.not_recorded)}


def topic_of(key: str) -> Topic | None:
    """The first topic whose patterns match `key` (case-insensitive), or None."""
    lowered = key.lower()
    for topic in _TOPICS:
        if any(fnmatch.fnmatchcase(lowered, p) for p in topic.patterns):
            return topic
    return None


def is_irrelevant(key: str) -> bool:
    """Keys that only say where a run writes, what it is called, or how often it logs or saves."""
    lowered = key.lower()
    return any(fnmatch.fnmatchcase(lowered, p) for p in _IRRELEVANT) and topic_of(key) is None


def rank_differences(keys: Sequence[str], values: Sequence[Sequence[Any]], sources: Sequence[Sequence[str | None]],
                     broken_kinds: set[str], broken_index: int | None,
                     not_recorded: Sequence[Sequence[int]] | None = None) -> list[RankedDifference]:
    """Each differing key with its risk and reason, highest risk first (then by topic order, then key).

    Args:
        keys: the differing keys.
        values / sources: per key, one value (and its file) per run.
        broken_kinds: the finding kinds (error and warning) of the run that broke.
        broken_index: which run broke (its index), or None when none did.
        not_recorded: per key, the runs whose files record nothing of its kind (RankedDifference.not_recorded).
    """
    unknown = not_recorded or [()] * len(keys)
    ranked = [_unknown_side(_rank_one(k, tuple(v), tuple(s), broken_kinds, broken_index), tuple(u))
              for k, v, s, u in zip(keys, values, sources, unknown)]
    order = {name: i for i, name in enumerate(t.name for t in _TOPICS)}
    return sorted(ranked, key=lambda d: (RISKS.index(d.risk), order.get(d.topic, len(order)), d.key))


def _rank_one(key: str, values: tuple, sources: tuple, kinds: set[str], broken: int | None) -> RankedDifference:
    if is_irrelevant(key):
        return RankedDifference(key, values, sources, "none", "names, paths, seeds and logging intervals do not "
                                "change the training numerics", "other")
    topic = topic_of(key)
    if topic is None:
        return RankedDifference(key, values, sources, "low", "not a setting known to cause instability", "other")
    risk = "high" if kinds & topic.relevant_to else topic.base
    risk, extra = _adjust(topic.name, key, values, broken, risk)
    return RankedDifference(key, values, sources, risk, topic.why + extra, topic.name)


def _unknown_side(diff: RankedDifference, not_recorded: tuple[int, ...]) -> RankedDifference:
    """A setting known on one side only is not a known difference: at most low risk, and the reason says so."""
    if not not_recorded:
        return diff
    runs = ", ".join(str(i + 1) for i in not_recorded)
    risk = diff.risk if RISKS.index(diff.risk) >= RISKS.index("low") else "low"
    why = f"{diff.why}; not recorded for run {runs}, so whether the runs differ here is unknown"
    return replace(diff, risk=risk, why=why, not_recorded=not_recorded)


def _adjust(topic: str, key: str, values: tuple, broken: int | None, risk: str) -> tuple[str, str]:
    """Sharpen the topic's risk with the values themselves (which run had what)."""
    if topic == "learning_rate":
        ratio = _spread(values)
        if ratio is not None and ratio < 1.5 and risk == "high":
            return "medium", f" (the values differ only {ratio:.2g}x)"
        if ratio is not None and ratio >= 3:
            return ("high" if broken is not None else risk), f" (the values differ {ratio:.3g}x)"
    if topic == "clipping" and broken is not None and _disabled(values[broken]):
        return "high", "; the run that broke had clipping off"
    if (topic == "warmup" and broken is not None and key in ("warmup_steps", "warmup_ratio")
            and _disabled(values[broken])):
        return ("high" if risk != "low" else "medium"), "; the run that broke had no warm-up"
    if topic in ("precision", "deepspeed_dtypes") and broken is not None:
        said = values[broken]
        if said is not None and str(said).lower() in ("true", "fp16", "float16", "half", "fp32", "float32"):
            return risk, f"; the run that broke had {key} = {said}"
    return risk, ""


def _spread(values: tuple) -> float | None:
    numbers = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)
               and math.isfinite(float(v)) and float(v) > 0]
    if len(numbers) < 2:
        return None
    return max(numbers) / min(numbers)


def _disabled(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value == 0
    return str(value).lower() in ("0", "0.0", "none", "false")
