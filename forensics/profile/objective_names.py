"""The profile's objective from the run's own names and data: what a notebook's code trains on, a word of the
run's names (`_NAME_OBJECTIVES`), instruction data, an adapter's task, a trained encoder-decoder, the model card."""
from __future__ import annotations

import math

from ..analyzers.pairwise_start import PAIRWISE_START_MAX
from ..analyzers.zero_in_first_epoch import CLASSIFIER_HEADS, CLASSIFIER_TASKS
from ..config import NOTEBOOK_CODE_SOURCE, RunConfig
from ..ingest.notebook_code.data import MASKED_LM_HEAD
from ..metric_names import is_held_out
from ..timeline import Timeline
from .losses import first_loss_outside, training_losses, NEAR_LN2
from .model_start import _console_seq2seq_trainer, pretrained_seq2seq
from .names import MODEL_NAME_KEYS, RUN_FOLDER, word_in
from .trainer_card import DENOISING_NAME, card_objective
from .trl import trainer_source, unsloth_sft_class

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
_PAIRWISE_NAMES = ("dpo", "kto")
# The run folder's name is the project's (a repository of an SFT and a DPO stage, hcygit1_lab2-math-reasoning-lora-dpo):
# its pairwise word is taken only where the log's first loss lies where a pairwise loss starts (a log with a preference
# trainer's metrics was read before the names). DPO's starts at ln 2 (every margin 0 at its first step); a first value
# averaged over the first logging interval lies under it, by `_PAIRWISE_FALL_MAX` at the most (KTO's loss starts near
# 0.5, inside it; an SFT log starting at 0.40 in `qwen-math-dpo` is not); one batch's loss under dropout may lie a
# little above it (`_PAIRWISE_NOISE_MAX`: PhuocThuan246's mT5 DPO loop, 0.7443 at step 0; hcygit1's SFT log starts at
# 1.095). A name nearer the log (its own file name, an output_dir) keeps the looser `PAIRWISE_START_MAX` alone.
# Not ORPO's word: its loss adds the answers' NLL, so where it starts does not tell it from SFT.
_PAIRWISE_FALL_MAX = 0.25  # nats under ln 2: the most a first logging interval's mean falls from ln 2
_PAIRWISE_NOISE_MAX = 2 * NEAR_LN2  # nats over ln 2: a single batch's margins under dropout, not yet trained
_PAIRWISE_CHANCE = (math.log(2) - _PAIRWISE_FALL_MAX, math.log(2) + _PAIRWISE_NOISE_MAX)


def from_names_and_data(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                         metrics: set) -> tuple[str, str | None] | None:
    """What a notebook's code trains on, the run's own names, its instruction data, an adapter's task, a trained
    encoder-decoder."""
    for step in (_from_notebook_data, _from_own_names, _from_sft_signs, _from_seq2seq, _from_model_card,
                 _from_masked_lm_head, _from_rouge_scores, _from_readme_words):
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
    pairs = config.get("data.prompt_response_lm")
    if isinstance(pairs, str) and metrics & {"loss", "eval_loss"} and _supervised_lm(config, timeline):
        # BlayvasD_GPT-Histories' prompt / completion pairs joined by the sep token, labels = the inputs: the
        # next-token loss over a written prompt and its answer, whatever the notebook or the folder is called
        evidence["objective"] = (f"the code writes each example from a prompt and its response ({pairs}, "
                                 f"{config.source_of('data.prompt_response_lm')}) and trains the causal LM on its "
                                 "own input tokens: supervised fine-tuning on prompt / response pairs")
        return "sft", None
    return None


def _from_own_names(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                    metrics: set) -> tuple[str, str | None] | None:
    """A word of the run's own names (`_NAME_OBJECTIVES`)."""
    # (a launched script whose name says two stages, `pretrain_and_sft.py`, runs both: which one this log is, it does
    # not say)
    own = [(text, where) for text, where in names if not where.startswith(MODEL_NAME_KEYS)
           and not (where.startswith(_SCRIPT_KEY) and _stages_named(text) > 1)]
    # the names nearer the log before the run folder's: a repository named for its method (`..._ORPO`) may hold the log
    # of another stage, which the log file's own name (`sft_log.txt`) or its output_dir says (Paul33333_ORPO)
    supervised = _supervised_lm(config, timeline)
    nearer = _objective_word([n for n in own if n[1] != RUN_FOLDER], timeline, supervised)
    # (the -ing and pre-training words name an activity in a folder's name: read in the run's own files alone)
    folder = _objective_word([n for n in own if n[1] == RUN_FOLDER], timeline, supervised, _OWN_FILES_WORDS,
                             pairwise_start=_PAIRWISE_CHANCE)
    if nearer is None and folder is None:
        return None
    said, objective, algo = nearer or folder
    if nearer is not None and folder is not None and folder[1:] != nearer[1:]:
        said += f"; taken over {folder[0]} (the folder holds the project, the nearer name this run)"
    evidence["objective"] = said
    return objective, algo


def _objective_word(names, timeline: Timeline, supervised: bool, passed_over: tuple[str, ...] = (),
                    pairwise_start: tuple[float, float] = (-math.inf, PAIRWISE_START_MAX)
                    ) -> tuple[str, str, str | None] | None:
    """(what said it, objective, algorithm) of the first word of `_NAME_OBJECTIVES` in `names` (a run's own names
    only: a base model's path says what that model is or where it lies, `/data/pretrain_dir/Llama-3.1`,
    `Qwen2-7B-DPO`, not what this run trains it for), else None. A pairwise word (dpo, kto) is passed over where the
    first training loss lies outside `pairwise_start` (low, high)."""
    for word, (objective, algo) in _NAME_OBJECTIVES:
        if word in passed_over or (word in _FINE_TUNE_WORDS and not supervised):
            continue
        found = word_in(names, word)
        if found and word in _PAIRWISE_NAMES and first_loss_outside(timeline, *pairwise_start):
            continue  # a loss no pairwise objective starts at (DPO's is ln 2): the name is not what was trained
        if found:
            return found, objective, algo
    return None


def _from_sft_signs(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                    metrics: set) -> tuple[str, str | None] | None:
    """Unsloth's SFT classes, instruction data in the console, an adapter on a language model's loss."""
    supervised = _supervised_lm(config, timeline)
    unsloth = unsloth_sft_class(config)
    # (after the names: continued pre-training uses it too)
    if unsloth is not None and "loss" in metrics and supervised:
        evidence["objective"] = (f"{unsloth} ({trainer_source(config)}), Unsloth's subclass of TRL's SFTTrainer and "
                                 "its arguments, and no name of the run says continued pre-training: "
                                 "supervised fine-tuning")
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
        evidence["objective"] = (f"Unsloth's training banner shows a LoRA adapter on a trained model "
                                 f"({unsloth_adapter}), "
                                 "trained on the language-model loss with no preference, RL or reward metrics: "
                                 "supervised fine-tuning")
        return "sft", None
    return None


def _from_seq2seq(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                  metrics: set) -> tuple[str, str | None] | None:
    """A trained encoder-decoder learns to write a target for each input: there is no other way to train one on its
    loss here (its pre-training, span corruption from scratch, starts at ln(vocabulary): told above). A run shorter
    than its logging interval shows only the held-out loss of that same objective."""
    seq2seq = pretrained_seq2seq(config) or _console_seq2seq_trainer(timeline)
    on_loss = "loss" if "loss" in metrics else "eval_loss" if "eval_loss" in metrics else None
    if seq2seq is not None and on_loss and _supervised_lm(config, timeline):
        trained_on = ("trained on its targets' loss" if on_loss == "loss"
                      else "evaluated on its targets' loss (eval_loss)")
        evidence["objective"] = (f"{seq2seq}, {trained_on} with no preference, RL or reward metrics: "
                                 "supervised (sequence-to-sequence) fine-tuning")
        return "sft", None
    return None


def _from_model_card(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                     metrics: set) -> tuple[str, str | None] | None:
    """What the model card transformers wrote says the model was trained on (`trainer_card.card_objective`), for a
    language model's loss (not a classification head's, nor a pairwise one at ln 2)."""
    return card_objective(timeline, evidence) if _supervised_lm(config, timeline) else None


def _from_masked_lm_head(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                         metrics: set) -> tuple[str, str | None] | None:
    """The trained model's config names a masked-LM head (`BertForMaskedLM`: config.json, or the model config the HF
    callbacks log to MLflow / W&B) and the run logs that model's own loss, with no adapter: masked-token prediction,
    BERT's pre-training objective, given to a trained BERT as further pre-training on new text (domain adaptation)
    or to a fresh one as pre-training (chenmargalit_10X-ML-Engineer's MLflow params)."""
    # a class the notebook's code names is no trained model's saved config: there the code's collator decides
    # (`_from_notebook_data`)
    saved = [v for v in config.values.get("model.architectures", []) if v.source != NOTEBOOK_CODE_SOURCE]
    if not saved:
        return None
    listed = saved[0].value if isinstance(saved[0].value, list) else [saved[0].value]
    masked_only = bool(listed) and all(isinstance(a, str) and a.endswith(MASKED_LM_HEAD) for a in listed)
    if adapter or not masked_only or not metrics & {"loss", "eval_loss", "train_loss"}:
        return None
    evidence["objective"] = (f"the model's config names a masked-LM head ({listed[0]}, {saved[0].source}): "
                             "masked-token prediction, pre-training")
    return "pretrain", None


# How that evidence begins: it says the task, not that the weights were trained (`run_findings` reads it so)
ROUGE_EVIDENCE = "the run scores its generations by ROUGE against reference texts"


def _from_rouge_scores(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                       metrics: set) -> tuple[str, str | None] | None:
    """A held-out ROUGE score beside a language model's loss: what the model generates scored against reference texts,
    the measure of summarization and other generation to a target (Seq2SeqTrainer's predict_with_generate, a card's
    Rouge1 / Rouge2 columns, LLaMA-Factory's predict_rouge-*): a supervised sequence-to-sequence task. The last of the
    steps: a run's names or code say more where they speak (a continued pre-training that also scores ROUGE on the
    side). Not BLEU, which also scores the free text of a plain language model (a Keras word model on a book)."""
    rouge = sorted(m for m in metrics if "rouge" in m.lower() and is_held_out(m))
    if not rouge or not _supervised_lm(config, timeline) or not metrics & {"loss", "eval_loss", "train_loss"}:
        return None
    own = [text for text, _ in names] + [str(m.get("card_model_name") or "") for m in timeline.meta.values()]
    if any(DENOISING_NAME.search(text) for text in own):  # restoring masked text: denoising pre-training continued
        return None
    evidence["objective"] = (f"{ROUGE_EVIDENCE} ({rouge[0]}): a supervised sequence-to-sequence task")
    return "sft", None


def _from_readme_words(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                       metrics: set) -> tuple[str, str | None] | None:
    """A README of the run that says in so many words its model is trained on next-token prediction
    (`ingest.readme_objective`), for a language model's loss: pre-training (continued, where it starts from trained
    weights). Prose, so the last of the steps: every reading of the run's own files above outranks it."""
    said = config.get("model.readme_lm_objective")
    where = config.source_of("model.readme_lm_objective")
    if not isinstance(said, str):  # a Trainer's model card kept under another name (the card read as a log)
        where, said = next(((src, m["card_lm_objective"]) for src, m in timeline.meta.items()
                            if m.get("card_lm_objective")), (None, None))
    if said is None or not _supervised_lm(config, timeline) or not metrics & {"loss", "eval_loss", "train_loss"}:
        return None
    evidence["objective"] = (f"the README says the model is trained on next-token prediction ('{said}', {where}), and "
                             "names no supervised task, dialogue or alignment stage: language-model training on plain "
                             "text")
    return "pretrain", None


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


# LoRA matrices: a few % of a model at most; a 128k vocabulary's embeddings and head are 13% of 8B
_LORA_ALONE_SHARE = 0.1


def _stages_named(text: str) -> int:
    """How many objectives the words of `text` say (`_NAME_OBJECTIVES`)."""
    return len({objective for word, (objective, _) in _NAME_OBJECTIVES if word_in([(text, "")], word)})


_SCRIPT_KEY = "launch.script"


_LM_TASKS = ("CAUSAL_LM", "SEQ_2_SEQ_LM")


def classification_head(config: RunConfig) -> bool:
    """The model's config names a classification head (`...ForSequenceClassification`, an adapter's SEQ_CLS)."""
    return _named_head(config, CLASSIFIER_HEADS) is not None


def _named_head(config: RunConfig, heads: tuple[str, ...]) -> str | None:
    """The head of `heads` the model's config (or the code that loads it) or its adapter's task names, with where it
    is said, in words; else None."""
    architectures = config.get("model.architectures")
    names = architectures if isinstance(architectures, list) else [architectures]
    head = next((n for n in names if isinstance(n, str) and n.endswith(heads)), None)
    if head is not None:
        return f"{head}, {config.source_of('model.architectures')}"
    task = config.get("adapter.task_type")
    return f"an adapter of task {task}, {config.source_of('adapter.task_type')}" if task in CLASSIFIER_TASKS else None


# The text heads that pick one of a set of labels (for a sequence, for each token, an answer span's start and end, one
# of the choices), which the classification rows of the learning-rate table (BERT's, RoBERTa's) are for. Not a
# regression head (`...ForRegression`: a number, no class), nor an image or audio classifier (ViT's recipes are not
# BERT's): those keep an unknown objective
_LABEL_HEADS = ("ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering", "ForMultipleChoice")


def from_classification_head(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                             metrics: set) -> tuple[str, str | None] | None:
    """The model the run trains has a classification head (its config's architectures, the class the run's script or
    notebook loads, a SEQ_CLS / TOKEN_CLS adapter): a classifier, whatever the run's names say ("finetune") - read
    after the trainers, stages and metrics that name an objective outright. A one-label head scores or regresses (a
    reward model, told by the steps before), it picks no class."""
    head = _named_head(config, _LABEL_HEADS)
    if head is None or config.get("model.num_labels") == 1:
        return None
    evidence["objective"] = f"the model trained has a classification head ({head}): classification fine-tuning"
    return "classification", None


def _supervised_lm(config: RunConfig, timeline: Timeline) -> bool:
    """Whether words or data in the run can say supervised fine-tuning: not for a classification head, nor a loss that
    starts at about ln 2 (a pairwise objective at chance, a reward model on preference pairs)."""
    if classification_head(config):
        return False
    loss = training_losses(timeline)
    return not (len(loss) and abs(float(loss[0]) - math.log(2)) <= NEAR_LN2)
