"""The names a run's own framework gives the settings advice talks about (warm-up, clipping, rollouts per prompt).

Hugging Face TrainingArguments names (`warmup_ratio`, `max_grad_norm`) mean something only to the frameworks built on
the Trainer or that copy its names (TRL, Unsloth, LLaMA-Factory, ms-swift, Axolotl); an MLX, verl, Megatron or plain
PyTorch run is told the setting in its own terms, and a run of unknown framework in words with the Trainer's name
given as one example.
"""
from __future__ import annotations

from .architecture import own_setting_name
from .evidence import Facts

HF_NAMES = frozenset({"hf_trainer", "trl", "unsloth", "llamafactory", "swift", "axolotl", "autotrain"})

_WARM_UP = {
    "verl": "(actor_rollout_ref.actor.optim.lr_warmup_steps_ratio=0.03 to 0.1)",
    "megatron": "(--lr-warmup-fraction 0.03 to 0.1)",
    "deepspeed": "(the scheduler's warmup_num_steps: WarmupLR or WarmupDecayLR)",
    "mlx": "with a warm-up schedule (newer mlx_lm.lora takes one as lr_schedule's warmup in its YAML config; older "
           "versions have no flag for it)",
}
_CLIP = {
    "verl": "actor_rollout_ref.actor.grad_clip={norm}",
    "megatron": "--clip-grad {norm}",
    "deepspeed": "gradient_clipping {norm}",
    "lightning": "Trainer(gradient_clip_val={norm})",
    "nanogpt": "grad_clip = {norm}",
    "mlx": "mlx.optimizers.clip_grad_norm at {norm}",
}


def framework_of(facts: Facts) -> str:
    return facts.profile.framework if facts.profile is not None else "unknown"


def warm_up_advice(facts: Facts) -> str:
    """'warm up over the first 3-10% of steps' with how to, in the run's framework."""
    framework = framework_of(facts)
    how = "(warmup_ratio=0.03 to 0.1)" if framework in HF_NAMES else _WARM_UP.get(
        framework, "with a warm-up schedule (warmup_ratio=0.03 to 0.1 in the Hugging Face Trainer; "
        "torch.optim.lr_scheduler.LinearLR in a plain PyTorch loop)")
    return f"warm up over the first 3-10% of steps {how}"


def clip_setting(facts: Facts, norm: str) -> str:
    """How to clip gradients at `norm` (as text: "1.0", "0.3 to 1.0") in the run's framework, or by the script's own
    argument where its printed arguments have one."""
    framework = framework_of(facts)
    if framework in HF_NAMES:
        return f"max_grad_norm={norm}"
    own = own_setting_name(facts, "max_grad_norm")
    if own is not None:  # the script takes it as an argument of its own (ohalon's RNN: --clip)
        return f"--{own} {norm} (the script's own argument)"
    if framework in _CLIP:
        return _CLIP[framework].format(norm=norm)
    return f"torch.nn.utils.clip_grad_norm_ at {norm} (max_grad_norm={norm} in the Hugging Face Trainer)"


def rollouts_setting(facts: Facts) -> str:
    """The setting for how many completions are sampled per prompt, in the run's framework."""
    framework = framework_of(facts)
    if framework == "verl":
        return "actor_rollout_ref.rollout.n"
    return "num_generations" if framework in HF_NAMES else "the completions sampled per prompt"
