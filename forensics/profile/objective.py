"""The profile's objective: sft, pretrain, preference, rl, reward or classification (with the algorithm where the log
names it), from the trainer's console lines and metric names, its arguments, a classification head the model's config
or code names, what says the model starts from random weights (`objective_scratch`), then the run's own names and data
(`objective_names`)."""
from __future__ import annotations

from ..config import RunConfig
from ..ingest.banners import mlx_objective
from ..timeline import Timeline
from .losses import pairwise_loss_at_chance
from .names import word_in
from .objective_names import classification_head, from_classification_head, from_names_and_data
from .objective_scratch import FROM_SCRATCH, from_scratch_signs
from .record import UNKNOWN
from .rl_config import from_rl_config, rl_recipe
from .trl import TRL_SFT_KEYS, trainer_source, trl_config_class

# (classification_head and FROM_SCRATCH are read from here too: run_findings, profile.__init__)
__all__ = ["classification_head", "_objective", "FROM_SCRATCH", "DSCHAT_OBJECTIVES"]

# (TRL's DPO logs `nll_loss` too where rpo_alpha is set: ORPO is told by its odds-ratio terms)
_PREFERENCE_ALGOS = (("kto", ("rewards/chosen_sum", "logps/chosen_sum")),
                     ("orpo", ("log_odds_ratio", "log_odds_chosen")),
                     ("dpo", ("rewards/margins", "rewards/chosen", "logps/chosen")))
_RL_KEYS = ("completion_length", "completions/mean_length", "reward", "reward_std", "frac_reward_zero_std")
# A hand-written loop's spread of its sampled rewards (TRL's reward_std in the other order): a reward model's trainer
# logs none (TRL's RewardTrainer: mean_reward, min_reward, max_reward, margin), nor does a supervised one
_LOOP_RL_KEYS = ("std_reward",)
_PPO_KEYS = ("objective/kl", "policy/approxkl_avg", "ppo/mean_scores", "objective/rlhf_reward", "critic_loss")
# DeepSpeed-Chat's steps, each told by the lines it prints (ingest.deepspeed_chat)
DSCHAT_OBJECTIVES = {"dschat_sft": ("sft", None), "dschat_rm": ("reward", None), "dschat_ppo": ("rl", "ppo"),
                      "dschat_dpo": ("preference", "dpo")}
# verl's RL trainers log the policy loss under this name; its SFT trainer logs train/loss (-> loss).
_VERL_RL_KEY = "actor/pg_loss"
_STAGES = {"sft": ("sft", None), "pt": ("pretrain", None), "rm": ("reward", None), "dpo": ("preference", "dpo"),
           "kto": ("preference", "kto"), "orpo": ("preference", "orpo"), "simpo": ("preference", "simpo"),
           "cpo": ("preference", "cpo"), "ppo": ("rl", "ppo"), "grpo": ("rl", "grpo")}
# The methods of OpenAI's fine-tuning jobs (ingest.tracker_config.openai_job_method)
_OPENAI_JOB_METHODS = {"supervised": ("sft", None), "dpo": ("preference", "dpo"), "reinforcement": ("rl", None)}


def _objective(config: RunConfig, timeline: Timeline, names, evidence: dict,
               adapter: bool = False) -> tuple[str, str | None]:
    metrics = set(timeline.metrics)
    for step in (_from_console_trainers, _from_metric_names, _from_arguments, from_rl_config,
                 from_classification_head, from_scratch_signs, from_names_and_data):
        found = step(config, timeline, names, evidence, adapter, metrics)
        if found is not None:
            return found
    return UNKNOWN, None


def _from_console_trainers(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                           metrics: set) -> tuple[str, str | None] | None:
    """verl's, DeepSpeed-Chat's and mlx's console lines, which say what they train."""
    if "verl" in timeline.console_kinds:  # before TRL's names: verl's score is our `reward`, GRPO or PPO alike
        rl = _VERL_RL_KEY in metrics
        if rl or "loss" in metrics:
            evidence["objective"] = (f"verl console lines with {_VERL_RL_KEY} (its RL trainer)" if rl
                                     else "verl console lines with train/loss (its SFT trainer)")
            return ("rl", None) if rl else ("sft", None)
    said = next(((src, m) for src, m in timeline.meta.items() if m.get("console_objective")), None)
    if said is not None:  # a trainer's printed config that says what it trains (verl's RL trainer), no step logged
        evidence["objective"] = f"{said[0]}: {said[1].get('console_objective_line', '')}"
        return said[1]["console_objective"], None
    chat = next((kind for kind in timeline.console_kinds if kind in DSCHAT_OBJECTIVES), None)
    if chat is not None:
        evidence["objective"] = f"DeepSpeed-Chat's {chat.split('_')[1].upper()} step lines in the console"
        return DSCHAT_OBJECTIVES[chat]
    mlx = next((algo for b in timeline.banners if (algo := mlx_objective(b))), None)
    if mlx is not None:  # the trainer says what it trains: ORPO's chosen reward is no RL reward
        evidence["objective"] = f"mlx trainer's start line: Starting {mlx.upper().replace('_', ' ')} training"
        return ("rl", None if mlx == "rlhf" else mlx) if mlx in ("grpo", "ppo", "rlhf") else ("preference", mlx)
    return None


def _from_metric_names(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                       metrics: set) -> tuple[str, str | None] | None:
    """The metric names RL and preference trainers log, LLaMA-Factory's pairwise accuracy, TRL's SFT metrics."""
    ppo = [k for k in _PPO_KEYS if k in metrics]
    rl = [k for k in metrics if k in _RL_KEYS or (k.startswith("rewards/") and k.endswith("/mean"))]
    loop = sorted(k for k in metrics if k in _LOOP_RL_KEYS)
    if (rl == ["reward"] or (loop and rl in ([], ["reward"]))) and not ppo \
            and pairwise_loss_at_chance(config, timeline) is None:
        # a hand-written loop's `reward=` or reward spread: RL, but no trainer's names to tell which (a one-label head
        # whose loss starts at ln 2 is a reward model printing its score, told below)
        evidence["objective"] = f"metric {', '.join(rl + loop)} in the log (RL fine-tuning)"
        return "rl", _loop_algorithm(config, names, evidence)
    # before the pairwise names: GRPO logs rewards/<func>/mean, never rewards/chosen
    if ppo or (rl and rl != ["reward"]):
        evidence["objective"] = f"metrics {', '.join(sorted(ppo or rl)[:3])} in the log (RL fine-tuning)"
        return "rl", "ppo" if ppo else "grpo"
    for algo, keys in _PREFERENCE_ALGOS:
        hit = [name for k in keys if (name := _logged(k, metrics))]
        if hit and algo == "dpo" and _logged("nll_loss", metrics):  # DPO with rpo_alpha, or CPO / SimPO: can't tell
            evidence["objective"] = f"metrics {', '.join(hit)}, nll_loss in the log (TRL's pairwise names)"
            return "preference", None
        if hit and (algo != "kto" or not _logged("rewards/margins", metrics)):
            evidence["objective"] = f"metrics {', '.join(hit)} in the log (TRL's {algo.upper()} names)"
            return "preference", algo
    if "rewards/accuracies" in metrics and any(str(src).endswith("trainer_log.jsonl") for src in timeline.meta):
        # LLaMA-Factory's log callback writes a DPO/KTO stage's rewards/accuracies (as "accuracy")
        evidence["objective"] = "metric accuracy in LLaMA-Factory's trainer_log.jsonl (its pairwise rewards/accuracies)"
        return "preference", None
    sft = [k for k in TRL_SFT_KEYS if k in metrics]
    if sft and trl_config_class(config) is None:  # (a TRL arguments class names its trainer itself: read next)
        evidence["objective"] = f"metric {sft[0]} in the log (TRL's SFTTrainer)"
        return "sft", None
    return None


def _loop_algorithm(config: RunConfig, names, evidence: dict) -> str | None:
    """The algorithm of a hand-written RL loop, where its config's recipe (`rl_recipe`) or its own names say it; the
    saying added to the objective's evidence."""
    recipe = rl_recipe(config)
    named = recipe or next(((algo, found) for algo in ("grpo", "ppo") if (found := word_in(names, algo))), None)
    if named is None:
        return None
    evidence["objective"] += f"; {named[1]}"
    return named[0]


def _logged(name: str, metrics: set) -> str | None:
    """`name` as the log has it: TRL's trainers log their evaluation under `eval_<name>` (`eval_rewards/margins`), and a
    model card's results table keeps the evaluation's columns alone (argilla_notux's Rewards/margins); else None."""
    return next((k for k in (name, "eval_" + name) if k in metrics), None)


def _from_arguments(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                    metrics: set) -> tuple[str, str | None] | None:
    """A TRL arguments class, LLaMA-Factory's / ms-swift's stage, an OpenAI fine-tuning job's method, a reward model's
    value head, a notebook loop's pairwise preference loss (`notebook_code.pairwise`) or a one-label head."""
    trainer = trl_config_class(config)
    if trainer is not None:
        evidence["objective"] = f"{trainer[0]} ({trainer_source(config)})"
        return trainer[1]
    stage = config.get("stage") or config.get("rlhf_type")
    if isinstance(stage, str) and stage.lower() in _STAGES:
        evidence["objective"] = f"stage {stage} ({config.source_of('stage') or config.source_of('rlhf_type')})"
        return _STAGES[stage.lower()]
    job = config.get("openai_job.method")
    if job in _OPENAI_JOB_METHODS:  # a hosted job's record says what it trained: no log line or name is needed
        evidence["objective"] = f"an OpenAI fine-tuning job, method {job} ({config.source_of('openai_job.method')})"
        return _OPENAI_JOB_METHODS[job]
    head = next(((src, m["console_value_head"]) for src, m in timeline.meta.items() if m.get("console_value_head")),
                None)
    if head is not None:  # (PPO loads a value head too, but logs its RL metrics: read above)
        evidence["objective"] = (f"a value head trained on pairs, with no RL metric ({head[0]}: {head[1]}): "
                                 "a reward model")
        return "reward", None
    pairwise = config.get("loss.pairwise_function")
    if isinstance(pairwise, str):  # the loop's own code: what its loss starts at does not unsay it (sarahxgh's 27.4)
        evidence["objective"] = (f"the training loop computes {pairwise}(), a pairwise logistic loss of the chosen "
                                 f"against the rejected answers ({config.source_of('loss.pairwise_function')})")
        return "preference", "dpo" if "dpo" in pairwise.lower() else None
    chance = pairwise_loss_at_chance(config, timeline)
    if chance is not None:
        evidence["objective"] = (f"a one-label scoring head (num_labels 1, {config.source_of('model.num_labels')}) "
                                 f"whose first loss {chance:.4g} is about ln 2, a pairwise ranking loss at chance: "
                                 "a reward model")
        return "reward", None
    return None
