"""The run profile: what kind of run this was, stated up front, each field with its evidence.

`run_profile(layout, config, timeline, findings)` reads what analyze already has and says:
* method: "full" | "lora" | "qlora" | "peft" | "unknown" (adapter files and adapter_config.json,
  a 4-bit quantization config, LLaMA-Factory `finetuning_type` / ms-swift `train_type`, PEFT's and
  Unsloth's banners in the console, then words in the run's own names: "qlora" (or "q-lora", "qdora"), "lora",
  "full"; then a Keras callback's model card, or a Trainer's of a release before PEFT existed, naming no adapter:
  "full");
* objective: "sft" | "pretrain" | "preference" | "rl" | "reward" | "classification" | "unknown", with `algorithm`
  ("dpo", "kto", "orpo", "grpo", "ppo", ...): the metric names TRL logs (rewards/chosen, logps/*:
  preference; completion_length, reward, kl: RL), verl's console (actor/pg_loss: RL, else SFT),
  LLaMA-Factory's `stage`, a one-label head whose first loss is ln 2 (a pairwise reward model), a
  classification head the model's config or the run's code names (classification),
  pre-training consoles (Megatron, OLMo, torchtitan, NeMo, nanochat base_train, autoresearch), a script's
  arguments that give its model's sizes and no weights to start from (argparse's Namespace line), a first
  loss at about ln(vocabulary) (random weights: from scratch), a notebook that trains a masked LM with the masking
  collator (pretrain), then the run's names, then the model card transformers wrote (an encoder-decoder fine-tune: sft;
  a causal LM on a raw-text corpus it names: pretrain);
* model_params: the checkpoint index's total, the model config, PEFT's "all params", the Trainer's (or Unsloth's)
  trainable count of a run that trains every weight, or a size in the run's names ("Qwen2-7B", "llama-3-8b",
  "1.5B"), else None;
* precision: "bf16" | "fp16" | "fp32" | "unknown" from the training arguments / DeepSpeed config (or what a console
  prints of them: DeepSpeed's config print, XTuner's printed config, a launch line's --bf16, torchtune's model dtype),
  else "fp16" where a Trainer checkpoint holds a GradScaler's scaler.pt (a release that keeps one for fp16 alone), or
  where the log shows a loss scaler skipping updates (a `skipped_steps` finding from a non-finite
  grad_norm the run recovered from, or Megatron's own count): bf16 and fp32 have no scaler to skip with; logged
  values held in a half precision say it too (every grad_norm a bfloat16 number: bf16; every eval_loss a float16
  number and not all bfloat16 ones: fp16, the model itself run in float16);
* framework: "llamafactory" | "swift" | "xtuner" | "unsloth" | "webui" | "mlx" | "trl" | "megatron" | ... | "hf_trainer"
  | "deepspeed" | "unknown" (a framework's own log lines or logger names, its record of the run's arguments or command
  line, its save-folder pattern or model-card tag, TRL's names (Unsloth's where Unsloth tagged the card), the marks
  Unsloth's get_peft_model leaves in adapter_config.json on a Trainer's files, the Trainer's files; DeepSpeed, the
  engine under them, last).
Unknown stays unknown: a field nothing points at is "unknown" (None for model_params), never a guess.

Each field is read in a module of its own: method, objective, size (model_params), precision, framework; names (the
run's own names), losses (where the training loss starts) and trl (TRL's signs) are what more than one of them reads.
"""
from __future__ import annotations

from ..config import RunConfig
from ..findings import Finding
from ..discover.run_layout import RunLayout
from ..timeline import Timeline
from .framework import _framework
from .method import ADAPTERS, _method
from .model_start import readme_from_scratch
from .names import _names
from .objective import FROM_SCRATCH, _objective
from .precision import _precision
from .record import UNKNOWN, RunProfile
from .size import _model_params


def run_profile(layout: RunLayout | None, config: RunConfig, timeline: Timeline,
                findings: list[Finding] = ()) -> RunProfile:
    """The profile of a run from what analyze read (layout, configuration, timeline metric names and banners)
    and the findings on its log (a loss scaler's skipped steps tell fp16)."""
    names = _names(layout, config)
    evidence: dict[str, str] = {}
    model_params = _model_params(config, timeline, names, evidence)
    method = _method(config, timeline, names, evidence, model_params)
    if method == "qlora":
        # Unsloth's early-2025 `X/Y` count of a 4-bit base is its packed weights, and so is a printed count that falls
        # well short of the size the names give: no model size, the name, the config or nothing says it
        model_params = _model_params(config, timeline, names, evidence, packed_4bit=True)
    if method == "full":
        # every weight trained: the count the Trainer (or Unsloth) prints of the trainable weights is the model's size
        model_params = _model_params(config, timeline, names, evidence, trained_whole=True)
    objective, algorithm = _objective(config, timeline, names, evidence, adapter=method in ADAPTERS)
    if method == UNKNOWN and evidence.get("objective", "").endswith(FROM_SCRATCH):
        # a model trained from random weights trains every weight: an adapter on random weights learns nothing
        evidence["method"] = "a model trained from random weights trains every weight (the objective's evidence)"
        method = "full"
    # a whole model whose README says it was trained from scratch, where nothing shows a trained start
    from_random = evidence.get("objective", "").endswith(FROM_SCRATCH) or (
        method == "full" and readme_from_scratch(config, timeline) is not None)
    return RunProfile(method=method, objective=objective, algorithm=algorithm, model_params=model_params,
                      precision=_precision(config, findings, evidence, timeline),
                      framework=_framework(layout, config, timeline, objective, evidence),
                      evidence=evidence, from_random_weights=from_random)
