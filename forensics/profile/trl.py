"""TRL's signs for the profile: its trainers' arguments classes (and Unsloth's subclasses of them) and the metrics
only its SFTTrainer logs."""
from __future__ import annotations

from ..config import RunConfig
from ..timeline import Timeline

# Logged by TRL's SFTTrainer only (the plain Trainer computes no token accuracy).
TRL_SFT_KEYS = ("mean_token_accuracy", "eval_mean_token_accuracy")

# The arguments class of TRL's trainers (and Unsloth's subclasses of them, UnslothSFTConfig, UnslothGRPOConfig):
# the class name ends in one of these, and says the objective.
_TRL_CONFIGS = (("SFTConfig", ("sft", None)), ("DPOConfig", ("preference", "dpo")),
                ("KTOConfig", ("preference", "kto")), ("ORPOConfig", ("preference", "orpo")),
                ("CPOConfig", ("preference", "cpo")),
                ("GRPOConfig", ("rl", "grpo")), ("RLOOConfig", ("rl", "rloo")), ("PPOConfig", ("rl", "ppo")),
                ("RewardConfig", ("reward", None)))
# Unsloth's own classes (unsloth/trainer.py): UnslothTrainer subclasses TRL's SFTTrainer, and UnslothTrainingArguments
# TRL's SFTConfig (older releases transformers' TrainingArguments), adding embedding_learning_rate. They train on
# text the way SFTTrainer does, supervised pairs or raw text alike: Unsloth's continued pre-training notebooks use them
# too (NickKornienko_CMPE-297-HW3, kat-le_cmpe255-unsloth.ai-cpt), so they say sft only where no name says otherwise.
_UNSLOTH_SFT_CLASSES = ("UnslothTrainer", "UnslothTrainingArguments")


def trl_signs(timeline: Timeline, objective: str) -> bool:
    """A preference / RL objective or TRL's SFT metrics: the trainer was TRL's."""
    return objective in ("preference", "rl") or any(k in timeline.metrics for k in TRL_SFT_KEYS)


def trl_config_class(config: RunConfig) -> tuple[str, tuple[str, str | None]] | None:
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


def unsloth_sft_class(config: RunConfig) -> str | None:
    """Unsloth's own trainer or arguments class where the run names one (`_UNSLOTH_SFT_CLASSES`), else None."""
    for key in ("trainer_class", "training_args_class"):
        name = config.get(key)
        if isinstance(name, str) and name.rsplit(".", 1)[-1] in _UNSLOTH_SFT_CLASSES:
            return name.rsplit(".", 1)[-1]
    return None


def trainer_source(config: RunConfig) -> str | None:
    return config.source_of("training_args_class") or config.source_of("trainer_class")
