"""The profile's objective: sft, pretrain, preference, rl or reward (with the algorithm where the log names it),
from the trainer's console lines and metric names, its arguments, what says the model starts from random weights
(`model_start`), then the run's own names and data."""
from __future__ import annotations

import math

from ..analyzers.never_learned import FRESH_HEAD_RANGE
from ..analyzers.pairwise_start import PAIRWISE_START_MAX
from ..analyzers.zero_in_first_epoch import CLASSIFIER_HEADS, CLASSIFIER_TASKS
from ..config import RunConfig
from ..ingest.banners import mlx_objective
from ..ingest.pretrain_lines import PRETRAINING_KINDS
from ..timeline import Timeline
from .losses import (_character_model_at_step_zero, _first_loss_above, _pairwise_loss_at_chance,
                     _starts_at_random_guess, _training_losses, _NEAR_LN2)
from .model_start import (_console_from_scratch, _console_seq2seq_trainer, _fresh_model_config, _pretrained_seq2seq,
                          _where_the_loss_starts, pretrained_base)
from .names import _MODEL_NAME_KEYS, _RUN_FOLDER, _word_in
from .record import UNKNOWN
from .trainer_card import card_objective
from .trl import _TRL_SFT_KEYS, _trainer_source, _trl_config_class, _unsloth_sft_class

# (TRL's DPO logs `nll_loss` too where rpo_alpha is set: ORPO is told by its odds-ratio terms)
_PREFERENCE_ALGOS = (("kto", ("rewards/chosen_sum", "logps/chosen_sum")), ("orpo", ("log_odds_ratio", "log_odds_chosen")),
                     ("dpo", ("rewards/margins", "rewards/chosen", "logps/chosen")))
_RL_KEYS = ("completion_length", "completions/mean_length", "reward", "reward_std", "frac_reward_zero_std")
_PPO_KEYS = ("objective/kl", "policy/approxkl_avg", "ppo/mean_scores", "objective/rlhf_reward", "critic_loss")
# DeepSpeed-Chat's steps, each told by the lines it prints (ingest.deepspeed_chat)
_DSCHAT_OBJECTIVES = {"dschat_sft": ("sft", None), "dschat_rm": ("reward", None), "dschat_ppo": ("rl", "ppo"),
                      "dschat_dpo": ("preference", "dpo")}
# Console line kinds of nanoGPT-family pre-training loops that print a HellaSwag eval (build-nanogpt's `N hella X`,
# llm.c's `s:N eval:X`): with that eval beside the loss, the run is pre-training
_HELLASWAG_KINDS = {"step_name_value": "build-nanogpt", "llmc": "llm.c"}
# verl's RL trainers log the policy loss under this name; its SFT trainer logs train/loss (-> loss).
_VERL_RL_KEY = "actor/pg_loss"
_STAGES = {"sft": ("sft", None), "pt": ("pretrain", None), "rm": ("reward", None), "dpo": ("preference", "dpo"),
           "kto": ("preference", "kto"), "orpo": ("preference", "orpo"), "simpo": ("preference", "simpo"),
           "ppo": ("rl", "ppo"), "grpo": ("rl", "grpo")}
# The methods of OpenAI's fine-tuning jobs (ingest.tracker_config.openai_job_method)
_OPENAI_JOB_METHODS = {"supervised": ("sft", None), "dpo": ("preference", "dpo"), "reinforcement": ("rl", None)}
_FINE_TUNE_WORDS = ("finetune", "fine-tune", "fine_tune", "finetuning", "fine-tuning", "fine_tuning")
# The -ing form names an activity as often as a run: a folder called `LLM-finetuning` or `eval-prompt-vs-finetuning`
# holds a project (a repository of notebooks, a comparison), so it is read only in the names of the run's own files
# and outputs (`gpt2_finetuning.ipynb`, an output_dir), not in the name of the folder analyzed.
_FINE_TUNING_WORDS = _FINE_TUNE_WORDS[3:]
# Continued pre-training named by the run itself: `continue_pretraining/`, `Continued_pretraining_Spanish.ipynb`, an
# output dir `knowledge-mistral7b_cpt-lr5e-06`. Like the -ing words above these name an activity (a folder of a
# course's notebooks, `cpt4ta`), so they are read in the names of the run's own files and outputs alone; `pretrained`
# (a base model's folder, `...-pretrained`) is no such word.
_CONTINUED_PRETRAINING_WORDS = ("pretraining", "cpt")
_OWN_FILES_WORDS = _FINE_TUNING_WORDS + _CONTINUED_PRETRAINING_WORDS
_NAME_OBJECTIVES = (("grpo", ("rl", "grpo")), ("ppo", ("rl", "ppo")), ("dpo", ("preference", "dpo")),
                    ("kto", ("preference", "kto")), ("orpo", ("preference", "orpo")),
                    # (shambhavikris_Reward_Alignment's `reward_model_training.ipynb`: four pairwise reward models)
                    ("reward_model", ("reward", None)), ("reward-model", ("reward", None)), ("sft", ("sft", None)),
                    ("pretrain", ("pretrain", None))) + tuple((w, ("sft", None)) for w in _FINE_TUNE_WORDS) + tuple(
    # after the fine-tune words: `cpt` is also a model family (fnlp/cpt-base), `finetune_cpt-base_csl.log` a fine-tune
    (w, ("pretrain", None)) for w in _CONTINUED_PRETRAINING_WORDS)
_FROM_SCRATCH = ": a model that starts from random weights, training from scratch"
_PAIRWISE_NAMES = ("dpo", "kto")


def _objective(config: RunConfig, timeline: Timeline, names, evidence: dict,
               adapter: bool = False) -> tuple[str, str | None]:
    metrics = set(timeline.metrics)
    for step in (_from_console_trainers, _from_metric_names, _from_arguments, _from_scratch_signs, _from_names_and_data):
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
    chat = next((kind for kind in timeline.console_kinds if kind in _DSCHAT_OBJECTIVES), None)
    if chat is not None:
        evidence["objective"] = f"DeepSpeed-Chat's {chat.split('_')[1].upper()} step lines in the console"
        return _DSCHAT_OBJECTIVES[chat]
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
    sft = [k for k in _TRL_SFT_KEYS if k in metrics]
    if sft and _trl_config_class(config) is None:  # (a TRL arguments class names its trainer itself: read next)
        evidence["objective"] = f"metric {sft[0]} in the log (TRL's SFTTrainer)"
        return "sft", None
    return None


def _logged(name: str, metrics: set) -> str | None:
    """`name` as the log has it: TRL's trainers log their evaluation under `eval_<name>` (`eval_rewards/margins`), and a
    model card's results table keeps the evaluation's columns alone (argilla_notux's Rewards/margins); else None."""
    return next((k for k in (name, "eval_" + name) if k in metrics), None)


def _from_arguments(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                    metrics: set) -> tuple[str, str | None] | None:
    """A TRL arguments class, LLaMA-Factory's / ms-swift's stage, an OpenAI fine-tuning job's method, a reward model's
    value head, a notebook loop's pairwise preference loss (`notebook_code.pairwise`) or a one-label head."""
    trainer = _trl_config_class(config)
    if trainer is not None:
        evidence["objective"] = f"{trainer[0]} ({_trainer_source(config)})"
        return trainer[1]
    stage = config.get("stage") or config.get("rlhf_type")
    if isinstance(stage, str) and stage.lower() in _STAGES:
        evidence["objective"] = f"stage {stage} ({config.source_of('stage') or config.source_of('rlhf_type')})"
        return _STAGES[stage.lower()]
    job = config.get("openai_job.method")
    if job in _OPENAI_JOB_METHODS:  # a hosted job's record says what it trained: no log line or name is needed
        evidence["objective"] = f"an OpenAI fine-tuning job, method {job} ({config.source_of('openai_job.method')})"
        return _OPENAI_JOB_METHODS[job]
    head = next(((src, m["console_value_head"]) for src, m in timeline.meta.items() if m.get("console_value_head")), None)
    if head is not None:  # (PPO loads a value head too, but logs its RL metrics: read above)
        evidence["objective"] = f"a value head trained on pairs, with no RL metric ({head[0]}: {head[1]}): a reward model"
        return "reward", None
    pairwise = config.get("loss.pairwise_function")
    if isinstance(pairwise, str):  # the loop's own code: what its loss starts at does not unsay it (sarahxgh's 27.4)
        evidence["objective"] = (f"the training loop computes {pairwise}(), a pairwise logistic loss of the chosen "
                                 f"against the rejected answers ({config.source_of('loss.pairwise_function')})")
        return "preference", "dpo" if "dpo" in pairwise.lower() else None
    chance = _pairwise_loss_at_chance(config, timeline)
    if chance is not None:
        evidence["objective"] = (f"a one-label scoring head (num_labels 1, {config.source_of('model.num_labels')}) "
                                 f"whose first loss {chance:.4g} is about ln 2, a pairwise ranking loss at chance: "
                                 "a reward model")
        return "reward", None
    return None


def _from_scratch_signs(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                        metrics: set) -> tuple[str, str | None] | None:
    """What says the model starts from random weights: pre-training."""
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
    trained = None if adapter else config.get("model.tokenizer_trained")
    if isinstance(trained, str):
        evidence["objective"] = (f"the notebook trains its own tokenizer ({trained}) and loads no trained weights "
                                 f"anywhere in its code ({config.source_of('model.tokenizer_trained')}){_FROM_SCRATCH}")
        return "pretrain", None
    # an adapter is never trained from scratch, nor a model loaded from trained weights however high its loss starts
    vocab = config.get("model.vocab_size")
    first = _training_losses(timeline)
    base = pretrained_base(config, float(first[0]) if len(first) else None)
    fresh = None if adapter or base else _starts_at_random_guess(timeline, vocab)
    if fresh is not None and fresh < FRESH_HEAD_RANGE[0] and card_objective(timeline, {}) == ("sft", None):
        # a first loss under any ln(vocabulary) that falls by half is read as random weights' only where nothing names
        # the start: a card's trained encoder-decoder (AnnaR's distilbart-xsum-1-1, one layer each side, first epoch
        # 5.67) starts high on a new task and is a fine-tune; a model built over random weights from the same named
        # config would start at ln(vocabulary), which the rule above still reads
        fresh = None
    if fresh is not None:
        where = _where_the_loss_starts(fresh, vocab, config)
        evidence["objective"] = f"the first loss {fresh:.4g} (per token) is {where}{_FROM_SCRATCH}"
        return "pretrain", None
    fresh = None if adapter or base else _character_model_at_step_zero(timeline)
    if fresh is not None:
        evidence["objective"] = (f"the first held-out loss, measured before any update (at step 0, or level with "
                                 f"the training loss), is {fresh:.4g}, about ln(a character vocabulary), and falls to "
                                 f"under half of it{_FROM_SCRATCH}")
        return "pretrain", None
    # (a first loss logged after many steps is far under ln(vocabulary): the config still says where it began)
    own_vocabulary = None if adapter else _fresh_model_config(config)
    if own_vocabulary is not None:
        evidence["objective"] = f"{own_vocabulary}{_FROM_SCRATCH}"
        return "pretrain", None
    hella = [_HELLASWAG_KINDS[kind] for kind in timeline.console_kinds if kind in _HELLASWAG_KINDS]
    if hella and "eval_hellaswag" in metrics and "loss" in metrics:
        # build-nanogpt / llm.c print a HellaSwag accuracy beside the token-stream train/val loss: the base-model
        # benchmark of their pre-training loops (a continued or resumed run starts below ln(vocab), but it is the same)
        evidence["objective"] = (f"a {hella[0]}-style console with a HellaSwag eval beside its train/val loss: the "
                                 "nanoGPT-family pre-training loop's own benchmark")
        return "pretrain", None
    return None


def _from_names_and_data(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                         metrics: set) -> tuple[str, str | None] | None:
    """What a notebook's code trains on, the run's own names, its instruction data, an adapter's task, a trained
    encoder-decoder."""
    for step in (_from_notebook_data, _from_own_names, _from_sft_signs, _from_seq2seq, _from_model_card):
        found = step(config, timeline, names, evidence, adapter, metrics)
        if found is not None:
            return found
    return None


def _from_notebook_data(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                        metrics: set) -> tuple[str, str | None] | None:
    """Before the names: what a notebook's code trains on says the objective whatever the notebook is called."""
    raw_text = config.get("data.raw_text_lm")
    if isinstance(raw_text, str) and metrics & {"loss", "eval_loss"}:  # (AliN75_Memorization logs the eval loss only)
        # StaticOwl_dpnlp's `fine_tune.ipynb` trains gpt2-xl on chunks of a text file with labels = input_ids,
        # next-token training on raw text whatever the notebook is called
        evidence["objective"] = (f"the notebook's code trains its causal LM on plain text with labels = input_ids "
                                 f"and no prompt or response written around it ({raw_text}, "
                                 f"{config.source_of('data.raw_text_lm')}): next-token training on raw text")
        return "pretrain", None
    masked = config.get("data.masked_lm")
    if isinstance(masked, str) and not adapter and metrics & {"loss", "eval_loss", "train_loss"}:
        # masked-token prediction is BERT's pre-training objective: a trained BERT given more of it is further
        # pre-trained on the new text (domain adaptation), not fine-tuned to a task
        evidence["objective"] = (f"the notebook's code trains a masked language model on its masked tokens ({masked}, "
                                 f"{config.source_of('data.masked_lm')}): masked-LM pre-training")
        return "pretrain", None
    return None


def _from_own_names(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                    metrics: set) -> tuple[str, str | None] | None:
    """A word of the run's own names (`_NAME_OBJECTIVES`)."""
    # (a launched script whose name says two stages, `pretrain_and_sft.py`, runs both: which one this log is, it does
    # not say)
    own = [(text, where) for text, where in names if not where.startswith(_MODEL_NAME_KEYS)
           and not (where.startswith(_SCRIPT_KEY) and _stages_named(text) > 1)]
    supervised = _supervised_lm(config, timeline)
    for word, (objective, algo) in _NAME_OBJECTIVES:
        if word in _FINE_TUNE_WORDS and not supervised:
            continue
        # the run's own names only: a base model's path says what that model is or where it lies
        # (`/data/pretrain_dir/Llama-3.1`, `Qwen2-7B-DPO`), not what this run trains it for
        # (the run's folder by its own name, not the folders above it: `/data/finetune/...`, `_own_folder_name`)
        found = _word_in([n for n in own if n[1] != _RUN_FOLDER] if word in _OWN_FILES_WORDS else own, word)
        if found and word in _PAIRWISE_NAMES and _first_loss_above(timeline, PAIRWISE_START_MAX):
            continue  # a loss no pairwise objective starts at (DPO's is ln 2): the name is not what was trained
        if found:
            evidence["objective"] = found
            return objective, algo
    return None


def _from_sft_signs(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                    metrics: set) -> tuple[str, str | None] | None:
    """Unsloth's SFT classes, instruction data in the console, an adapter on a language model's loss."""
    supervised = _supervised_lm(config, timeline)
    unsloth = _unsloth_sft_class(config)
    if unsloth is not None and "loss" in metrics and supervised:  # (after the names: continued pre-training uses it too)
        evidence["objective"] = (f"{unsloth} ({_trainer_source(config)}), Unsloth's subclass of TRL's SFTTrainer and its "
                                 "arguments, and no name of the run says continued pre-training: supervised fine-tuning")
        return "sft", None
    shown = next(((src, m["console_instruction_data"]) for src, m in timeline.meta.items()
                  if m.get("console_instruction_data")), None)
    if shown is not None and "loss" in metrics and supervised:
        evidence["objective"] = (f"instruction-tuning data in the console ({shown[0]}: {shown[1][:120]}), "
                                 "with no preference, RL or reward metrics: supervised fine-tuning")
        return "sft", None
    template = next(((src, m["card_chat_template"]) for src, m in timeline.meta.items() if m.get("card_chat_template")),
                    None)
    if template is not None and "loss" in metrics and supervised:
        evidence["objective"] = (f"the model card's prompt template is a chat format ({template[0]}: {template[1]}), "
                                 "with no preference, RL or reward metrics: supervised (chat) fine-tuning")
        return "sft", None
    task, where = _adapter_task(config, timeline)
    if adapter and task in _LM_TASKS and "loss" in metrics:
        # an adapter on a trained language model, on its language-model loss, with none of the preference, RL or
        # reward metrics looked for above: supervised fine-tuning (continued training of a trained model included)
        evidence["objective"] = (f"a {task} adapter ({where}) trained on the language-"
                                 "model loss, with no preference, RL or reward metrics: supervised fine-tuning")
        return "sft", None
    unsloth_adapter = _unsloth_adapter_banner(timeline) if adapter else None
    if unsloth_adapter is not None and "loss" in metrics and supervised:
        # Unsloth's trainer trains a LoRA on a trained (causal) language model, as a CAUSAL_LM adapter above: with
        # none of the preference, RL or reward metrics looked for and no name saying continued pre-training (read
        # above), supervised fine-tuning (hussien_MedQA's pasted notebook output, 0.43% of Qwen3-14B trained)
        evidence["objective"] = (f"Unsloth's training banner shows a LoRA adapter on a trained model ({unsloth_adapter}), "
                                 "trained on the language-model loss with no preference, RL or reward metrics: "
                                 "supervised fine-tuning")
        return "sft", None
    return None


def _from_seq2seq(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                  metrics: set) -> tuple[str, str | None] | None:
    """A trained encoder-decoder learns to write a target for each input: there is no other way to train one on its
    loss here (its pre-training, span corruption from scratch, starts at ln(vocabulary): told above). A run shorter
    than its logging interval shows only the held-out loss of that same objective."""
    seq2seq = _pretrained_seq2seq(config) or _console_seq2seq_trainer(timeline)
    on_loss = "loss" if "loss" in metrics else "eval_loss" if "eval_loss" in metrics else None
    if seq2seq is not None and on_loss and _supervised_lm(config, timeline):
        trained_on = "trained on its targets' loss" if on_loss == "loss" else "evaluated on its targets' loss (eval_loss)"
        evidence["objective"] = (f"{seq2seq}, {trained_on} with no preference, RL or reward metrics: "
                                 "supervised (sequence-to-sequence) fine-tuning")
        return "sft", None
    return None


def _from_model_card(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                     metrics: set) -> tuple[str, str | None] | None:
    """What the model card transformers wrote says the model was trained on (`trainer_card.card_objective`), for a
    language model's loss (not a classification head's, nor a pairwise one at ln 2)."""
    return card_objective(timeline, evidence) if _supervised_lm(config, timeline) else None


def _adapter_task(config: RunConfig, timeline: Timeline) -> tuple[str, str | None]:
    """(the adapter's task_type, where it is said): its config's, else the one the PEFT class a Trainer's console
    names is made for (`console_peft_task`); ("", None) where neither says."""
    task = str(config.get("adapter.task_type") or "").upper()
    if task:
        return task, str(config.source_of("adapter.task_type"))
    said = next(((src, m["console_peft_task"]) for src, m in timeline.meta.items() if m.get("console_peft_task")), None)
    if said is None:
        return "", None
    peft_class = "PeftModelForCausalLM" if said[1] == "CAUSAL_LM" else "PeftModelForSeq2SeqLM"
    return said[1], f"the Trainer's console names the model class it trains, PEFT's {peft_class}: {said[0]}"


def _unsloth_adapter_banner(timeline: Timeline) -> str | None:
    """`source: N of M parameters trainable` of an Unsloth training banner whose trained share is a LoRA's alone (under
    `_LORA_ALONE_SHARE`), else None. Continued pre-training with Unsloth trains the embeddings and the head beside the
    LoRA, a far larger share (unslothai_unsloth_issue1145: 982,515,712 of a 3B model)."""
    banner = next((b for b in timeline.banners if b.kind == "unsloth" and b.trainable_params and b.all_params
                   and b.trainable_params < _LORA_ALONE_SHARE * b.all_params), None)
    if banner is None:
        return None
    return f"{banner.source}: {banner.trainable_params:,} of {banner.all_params:,} parameters trainable"


_LORA_ALONE_SHARE = 0.1  # LoRA matrices: a few % of a model at most; a 128k vocabulary's embeddings and head are 13% of 8B


def _stages_named(text: str) -> int:
    """How many objectives the words of `text` say (`_NAME_OBJECTIVES`)."""
    return len({objective for word, (objective, _) in _NAME_OBJECTIVES if _word_in([(text, "")], word)})


_SCRIPT_KEY = "launch.script"


_LM_TASKS = ("CAUSAL_LM", "SEQ_2_SEQ_LM")


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
