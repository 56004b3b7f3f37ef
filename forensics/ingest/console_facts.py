"""Setup facts a console log states, for the run configuration and the run profile (`console_facts`).

Precision (DeepSpeed's config print, OLMo's, nanochat's, torchtune's, Unsloth's), the model's parameter count (the
lines of OLMo, nanochat, Megatron, DeepSpeed's pipeline, a script's own), a base loaded in 4 bits, a value head,
instruction-tuning data, a model card's owner; a crash that ended the run, TRL's trainer and transformers'
Seq2SeqTrainer by the warnings about them come from `console_warnings`, the recipe's own words from `console_recipes`,
the parameter counts from `console_param_counts`, the precision from `console_precision`, the 4-bit base from
`console_4bit`.
"""
from __future__ import annotations

import re

from .console_4bit import FOUR_BIT_LAYER, said_4bit
from .console_exit import exit_line, planned_iters
from .console_param_counts import parameter_count_said, said_param_count
from .console_precision import precision_said
from .console_recipes import recipe_facts
from .console_text import line_at, line_end
from .accumulation_said import accumulation_said
from .console_warnings import console_warnings, peft_in_training_step
from .trainer_card import trainer_card_facts
from ..discover.run_signs import final_exception, is_training_console, run_signs


# What a console log prints about the run's setup, for the run configuration (see `console_facts`).
# The DeepSpeed engine's own start-up lines (its config print's precision: `console_precision`): the run went through
# a DeepSpeed engine
_DS_ENGINE = re.compile(r"^.*?\bDeepSpeedEngine configuration:\s*$", re.MULTILINE)
# ... or the engine's progress report through its own logger (deepspeed/runtime/engine.py `_report_progress`: `[Rank 0]
# step=10, skipped=0, lr=[1e-06, 1e-06], mom=[(0.9, 0.99), ...]`), where a hand-written loop drives the engine itself
# (Ourboros-Alignment-Team_RWKV-RM-Copilot) and no configuration print was kept
_DS_PROGRESS_LINE = re.compile(r"^.*?\bstep=\d+, skipped=\d+, lr=\[[^\n]*$", re.MULTILINE)
# DeepSpeed-Chat's launch line (`cmd = deepspeed main.py --data_path ... --lora_dim 128 ...`); a copy of its step-3
# script may be renamed (gouqi666_deep-speed-chat: train_llama.py), so another script counts where it takes step 3's own
# --actor_model_name_or_path (the method reads it only where the console's step lines are DeepSpeed-Chat's too)
# (the step-3 argument is looked ahead for once, not after each `.py` of the line: that is quadratic on a long line)
_DSCHAT_CMD = re.compile(r"^.*\bcmd = \S*(?:deepspeed|python3?)\S* (?:[^\n]*\bmain\.py\b|"
                         r"(?=[^\n]*--actor_model_name_or_path\b)[^\n]*\.py\b)[^\n]*$", re.MULTILINE)
# step 1/2's --lora_dim; step 3's --actor_lora_dim (0 by default: the policy trained whole). --critic_lora_dim is
# the value model's alone: a full actor beside a LoRA critic is a full fine-tune of the model the run is for
_LORA_DIM = re.compile(r"--(?:actor_)?lora_dim[ =](\d+)")
# LLaMA-Factory loading or saving a value head (its reward-model and PPO stages;
# trl's AutoModelForCausalLMWithValueHead)
_VALUE_HEAD = re.compile(
    r"llamafactory\.model\.model_utils\.valuehead|Value head model saved|does not contain value head weights")
# The model card a trainer writes beside its model (README.md): whose it is, and the card's own precision line (the
# Trainer writes `- mixed_precision_training: Native AMP` only for fp16: transformers/modelcard.py)
_CARD_OWNERS = (("axolotl", re.compile(r"Built with Axolotl|^axolotl version:", re.MULTILINE)),
                ("trl", re.compile(r"^This model was trained with \[?(?:SFT|DPO|ORPO|KTO|GRPO|PPO|Reward)|^- TRL: ",
                                   re.MULTILINE)),
                # (Keras' PushToHubCallback writes the Trainer's `### Training results` heading too, under its own tag)
                ("keras", re.compile(r"^- generated_from_keras_callback\s*$", re.MULTILINE)),
                ("hf_trainer", re.compile(r"^### Training results\s*$", re.MULTILINE)))
_CARD_FP16 = re.compile(r"^- mixed_precision_training: Native AMP\s*$", re.MULTILINE)
# Keras' card states the policy it trained under (transformers/keras_callbacks.py: `- training_precision: float32`)
_CARD_KERAS_PRECISION = re.compile(r"^- training_precision: (float32|mixed_float16|mixed_bfloat16)\s*$", re.MULTILINE)
_KERAS_POLICIES = {"float32": "fp32", "mixed_float16": "fp16", "mixed_bfloat16": "bf16"}
# The vocabulary a console prints: a model's args dataclass (torchtitan's `TransformerModelArgs(..., vocab_size=32000,
# ...)`), a tokenizer's load line (torchtitan's `[SPTokenizer] Loaded model: ..., vocab size: 32000`), a script's
# model summary in any case (santhoshv6/era_v4_s13_assignment's `  Vocab Size: 65`), the length of the TF PTB
# tutorial's word-to-id map as its copies print it (graceGuor/emojiPrediction's `word_to_id.len:9277`), its thousands
# separated or not (nanochat's tokenizer report, jonhenshaw_nanochat: `vocab_size: 65,536`, not 65)
_VOCAB_SIZE = re.compile(r"\b(?:vocab(?:_| )size(?:=|: )|word_to_id\.len:)(\d{1,3}(?:,\d{3})+|\d{2,7})\b",
                         re.IGNORECASE)
# A run that trains its own tokenizer first (B4rtekk1/CGPT: `Training BPE tokenizer on 1024 MiB ...`): a model whose
# vocabulary is new has no trained weights to start from.
_TRAINS_TOKENIZER = re.compile(
    r"^[ \t]*Training (?:a |the |new )?(?:BPE |WordPiece |Unigram |SentencePiece |byte-level )?"
    r"tokenizer\b.*$", re.MULTILINE | re.IGNORECASE)
# A script that says it builds its model from random weights (nanoGPT's train.py: `Initializing a new model from
# scratch`, printed where init_from is 'scratch'; the same words in other loops).
_FROM_SCRATCH_LINE = re.compile(
    r"^[ \t]*(?:Initializ(?:ing|e) (?:a )?new model from scratch|(?:Training|Building|Creating) "
    r"(?:a )?new model from scratch)\b.*$", re.MULTILINE | re.IGNORECASE)
# Instruction-tuning data a console shows: Alpaca's prompt template (`Below is an instruction that describes a task`),
# its `### Instruction:` heading, a dataset's columns printed as `['instruction', 'input', 'output']`, or an Alpaca
# dataset's path on a data line, its name a word of the file's own (`alpaca_data.json`, `train_alpaca.json`:
# kylefoxaustin_personal-ai-framework), not AlpacaFarm's preference pairs. Supervised fine-tuning trains on such pairs
# (a pairwise or RL run's own metrics are read before this is asked).
_INSTRUCTION_DATA = re.compile(r"Below is an instruction that describes a task|^[ \t'\"]*### Instruction:"
                               r"|\[\s*'instruction',\s*(?:'input',\s*)?'(?:output|response)'"
                               # stanford_alpaca's SupervisedDataset (train.py, copied widely) logs these two lines
                               # as it builds its prompt / response pairs (inkcherry_Megatron-DeepSpeed)
                               r"|^(?:WARNING:root:)?Formatting inputs\.\.\.[ \t]*\r?\n(?:.*\n){0,8}?"
                               r"(?:WARNING:root:)?Tokenizing inputs\.\.\. This may take some time\.\.\."
                               r"|^(?!.*(?:preference|pairwise|chosen|rejected|reward|comparison|dpo))"
                               r".*\bdata(?:set)?\w*\b.*(?<![^\W_])alpaca[\w.-]*\.json.*$"
                               # torchtune's instruction and chat dataset builders, as its resolved config names them
                               r"|_component_: torchtune\.datasets\.(?:alpaca\w*|instruct|chat|slimorca|samsum|grammar)"
                               r"_dataset\b"
                               # a card's or README's own words: `**Falcon-7b** fine-tuned on the **CodeAlpaca 20k
                               # instructions dataset**` (a dataset it calls one of instructions, not a name alone)
                               r"|^[^\n]*?\bfine-?tuned\b[^\n]*?\bon\b[^\n]*?\binstructions?[ -](?:following )?"
                               r"data(?:[ -]?set)?\b",
                               re.MULTILINE | re.IGNORECASE)
# A card's prompt template section showing chat turns (`# Prompt Template Structure` then a block with `USER: ...` and
# `ASSISTANT:` lines): the model was tuned to answer in that chat format
_PROMPT_TEMPLATE = re.compile(r"^#+[ \t]*Prompt[ \t]+(?:Template|Format)\b[^\n]*\n(?:[^#\n][^\n]*\n|\n){0,12}?"
                              r"(?:USER|User|Human|### (?:User|Human|Instruction)):[^\n]*\n(?:[^#\n][^\n]*\n|\n){0,6}?"
                              r"(?:ASSISTANT|Assistant|### (?:Assistant|Response)):", re.MULTILINE)


def console_facts(text: str) -> dict:
    """Setup facts a console log states, with the line that states them: DeepSpeed's config print
    (`bfloat16_enabled ..... True`, later `float16_config ..... enabled=True`; its `DeepSpeedEngine configuration:`
    head, or the engine's `step=N, skipped=K, lr=[...]` progress line, as `console_deepspeed`), OLMo's TrainConfig
    (`precision='amp_bf16'`), LLaMA-Factory's `compute dtype: torch.bfloat16`, nanochat's `COMPUTE_DTYPE:
    torch.float32`, torchtune's `Model is initialized with precision torch.bfloat16.`, Unsloth's `Switching to float32
    training`, and the parameter count of OLMo (`Total number of parameters: 1,279,787,008`) and of nanochat /
    autoresearch (`Parameter counts:` ... `total : 6,389,802`, or the older `Number of parameters: N`; a bare
    `Parameters N`), a parameter summary's `Total params: N`, a script's `Model params : N`, parameter-golf's
    `model_params:N` or DeepSpeed's pipeline `UNIQUE_PARAMS=N`; apart from those, the largest `958,950,144 params` a
    script's line says (`console_params_said`, which ranks under a PEFT banner's count and a config's), the line saying
    the base was loaded in 4 bits (`console_4bit`; `console_4bit_layers` where bitsandbytes' 4-bit layers were seen), a
    value head loaded or saved (`console_value_head`), instruction-tuning data shown
    (`console_instruction_data`: Alpaca's template, its `### Instruction:` heading, an instruction dataset's columns),
    how often tensorboardX warned that a value handed to its writer was NaN or Inf (`console_nonfinite_written`), which
    of TRL's trainers raised a warning from its own module (`console_trl_trainer`: "SFTTrainer"), and whose model card a
    README is (`model_card`: "axolotl", "trl" or "hf_trainer"; its `mixed_precision_training: Native AMP` line is
    fp16), the shutdown warning its process's exit left as its last line (`console_exit_line`) and the iterations
    mlx_lm's banner plans (`console_planned_steps`). Keys:
    `console_precision` ("bf16" | "fp16" | "fp32"), `console_n_params`, `console_vocab_size`, each with `<key>_line`."""
    out = {**precision_said(text), **parameter_count_said(text), **_vocabulary_said(text)}
    for key, value in recipe_facts(text).items():
        out.setdefault(key, value)  # a precision said above (DeepSpeed's, ...) stands
    out.update(_start_up_lines(text))
    out.update(_model_card(text, precision_said="console_precision" in out))
    out.update(_model_lines(text))
    out.update(console_warnings(text))
    out.update(accumulation_said(text))
    ended = exit_line(text)
    if ended:
        out["console_exit_line"] = ended  # the console ends with its process's exit (`console_exit`)
    plan = planned_iters(text)
    if plan:
        out["console_planned_steps"] = plan  # mlx_lm's banner: the iterations this console's run was to take
    return out


def run_sign_facts(text: str) -> dict:
    """For a console that logged no metric, where it is a training run's (`run_signs.is_training_console`): its kinds
    of sign (`console_run_signs`), and the exception its last traceback ends with (`console_final_exception`)."""
    signs = run_signs(text.encode("utf-8", errors="replace"))
    if not is_training_console(signs):
        return {}
    out: dict = {"console_run_signs": sorted(signs)}
    ended = final_exception(text)  # (a tqdm bar's carriage returns can put the traceback's header mid-line)
    if ended:
        out["console_final_exception"] = ended
    return out


def _vocabulary_said(text: str) -> dict:
    """`console_vocab_size` (with its `_line`): the first vocabulary size the console prints (`_VOCAB_SIZE`)."""
    m = _VOCAB_SIZE.search(text) if "ocab" in text or "OCAB" in text or "word_to_id" in text else None
    if not m:
        return {}
    return {"console_vocab_size": int(m.group(1).replace(",", "")),
            "console_vocab_size_line": line_end(line_at(text, m.start(1)))}


# transformers' save_pretrained of a model over its shard size (5 GB by default): `The model is bigger than the maximum
# size per checkpoint (5GB) and is going to be split in 3 checkpoint shards. You can find where each parameters has
# been saved in the index located at <dir>/model.safetensors.index.json.` A PEFT save writes the adapter alone (never
# gigabytes, never sharded), so where the console names no adapter anywhere the run saved the weights it trained whole
_SHARDED_SAVE = re.compile(r"split in \d+ checkpoint shards\. You can find where each parameters has been saved in the "
                           r"index located at (\S+?)\.?[ \t]*\r?$", re.MULTILINE)
_ADAPTER_WORDS = re.compile(r"(?i)lora|adapter|\bpeft\b")


def _start_up_lines(text: str) -> dict:
    """Instruction-tuning data shown, a card's chat prompt template (`card_chat_template`), a DeepSpeed engine started,
    a tokenizer trained first, a model built from scratch: each the line (or its end) that says it."""
    out: dict = {}
    m = (_INSTRUCTION_DATA.search(text) if "nstruction" in text or "lpaca" in text or "torchtune.datasets." in text
         or "Formatting inputs..." in text else None)
    if m:
        out["console_instruction_data"] = text[m.start():].split("\n", 1)[0].strip()[:160]  # from the match on
    m = _PROMPT_TEMPLATE.search(text) if "Prompt " in text else None
    if m:
        out["card_chat_template"] = " / ".join(line.strip() for line in m.group(0).splitlines() if line.strip())[:160]
    m = (_DS_ENGINE.search(text) if "DeepSpeedEngine configuration" in text else None) \
        or (_DS_PROGRESS_LINE.search(text) if "skipped=" in text else None)
    if m:
        out["console_deepspeed"] = line_end(m.group(0))
    m = _TRAINS_TOKENIZER.search(text) if "okenizer" in text else None
    if m:
        out["console_trains_tokenizer"] = line_end(m.group(0))
    m = _FROM_SCRATCH_LINE.search(text) if "from scratch" in text.lower() else None
    if m:
        out["console_from_scratch"] = line_end(m.group(0))
    m = _SHARDED_SAVE.search(text) if "checkpoint shards" in text else None
    if m and not _ADAPTER_WORDS.search(text):
        out["console_sharded_save"] = m.group(1)
    m = _ONMT_BUILDS.search(text) if "Building model..." in text and "] NMTModel(" in text else None
    if m and not _ONMT_LOADS.search(text):
        out["console_onmt_fresh"] = line_end(m.group(0))
    m = _TF_FRESH_PARAMETERS.search(text) if "fresh parameters" in text else None
    if m:
        out["console_tf_fresh"] = line_end(m.group(0))
    m = _WEIGHTS_FILE_LOADED.search(text) if "loading weights file" in text else None
    if m and m.start() < _training_start(text):
        out["console_weights_loaded"] = line_end(m.group(0))
    return out


# transformers' from_pretrained logs `loading weights file <path>` (modeling_utils, INFO) where it reads a trained
# model's weights: the model the run trains starts from them, however high its first loss (David-Li0406_multigen's
# summed loss). Taken before the Trainer's `***** Running training *****` only: a reload after training (to evaluate,
# to merge) is no start.
_WEIGHTS_FILE_LOADED = re.compile(r"^.*?\bloading weights file \S+.*$", re.MULTILINE)
_TRAINER_START = "***** Running training *****"


_FIRST_LOSS = re.compile(r"\bloss\b[^\n\d]{0,4}[-+]?\d", re.IGNORECASE)  # a hand loop's first printed loss


def _training_start(text: str) -> int:
    """Where training begins in a console: the Trainer's banner or the first printed loss, whichever comes first (a
    hand loop has no banner, and its reload after training is no start); its end where neither is in it."""
    first_loss = _FIRST_LOSS.search(text)
    starts = [at for at in (text.find(_TRAINER_START), first_loss.start() if first_loss else -1) if at >= 0]
    return min(starts, default=len(text))


# OpenNMT-py's train_single logs `Loading checkpoint from X` where -train_from names one, then builds the model
# (`[... INFO] Building model...`, the NMTModel printed after it) on those weights or, with none, on random ones: every
# weight trained (kmilink_OpenNMT-Indonesia-Bima). Read for the method alone: an NMT model from scratch learns a
# translation, no pre-training
_ONMT_BUILDS = re.compile(r"^\[[^\]\n]*\bINFO\] Building model\.\.\.[ \t]*\r?$", re.MULTILINE)
_ONMT_LOADS = re.compile(r"\bLoading checkpoint from\b|\btrain_from\b")
# The TensorFlow seq2seq tutorial's create_model (translate.py, and the chatbots and NMT forks of it) prints `Created
# model with fresh parameters.` where no checkpoint was found to restore (`Reading model parameters from X` where one
# was): random weights, every one trained. Read for the method alone, as OpenNMT-py's: the model learns its task
# (a translation, a reply, an annotation) from scratch, no pre-training.
_TF_FRESH_PARAMETERS = re.compile(r"^[ \t]*Creat(?:ed|ing) model with fresh parameters\.?[ \t]*\r?$", re.MULTILINE)


def _model_card(text: str, precision_said: bool) -> dict:
    """Whose model card a README is (`model_card`), its fp16 line where no precision was said before, and what a card
    transformers wrote says of its model (`ingest.trainer_card`: its base, adapter, task, Transformers release)."""
    out: dict = {}
    if "Training results" in text or "Axolotl" in text or "xolotl version" in text or "trained with" in text:
        owner = next((name for name, pattern in _CARD_OWNERS if pattern.search(text)), None)
        if owner:
            out["model_card"] = owner
        if owner in ("hf_trainer", "keras"):  # the cards transformers' modelcard.py writes: what they say of the model
            out.update(trainer_card_facts(text))
        m = _CARD_FP16.search(text)
        policy = _CARD_KERAS_PRECISION.search(text) if owner == "keras" else None
        if (m or policy) and not precision_said:
            precision = _KERAS_POLICIES[policy.group(1)] if policy else "fp16"
            out["console_precision"], out["console_precision_line"] = precision, (policy or m).group(0).strip()
    return out


def _model_lines(text: str) -> dict:
    """DeepSpeed-Chat's `--lora_dim` (0: every weight trained), a value head loaded or saved, the base loaded in 4
    bits, the largest `N params` a script's line says, and the first line naming LoRA (`console_lora_named`)."""
    out: dict = {}
    m = _DSCHAT_CMD.search(text) if "cmd = " in text else None
    if m:  # DeepSpeed-Chat trains every weight unless a --lora_dim (step 3: the actor's) says otherwise
        dims = [int(d) for d in _LORA_DIM.findall(m.group(0))]
        out["console_lora_dim"], out["console_lora_dim_line"] = max(dims, default=0), m.group(0).strip()[:200]
    m = _VALUE_HEAD.search(text) if "alue head" in text or "valuehead" in text else None
    if m:
        out["console_value_head"] = line_end(line_at(text, m.start()))
    said = said_4bit(text) if "4" in text or "LORA" in text.upper() else None
    if said:
        out["console_4bit"] = said
        out["console_4bit_layers"] = bool(FOUR_BIT_LAYER.search(said))
    said = said_param_count(text) if "aram" in text or "ARAM" in text else None
    if said is not None:
        out["console_params_said"], out["console_params_said_line"] = said
    named = lora_named(text)
    if named:
        out["console_lora_named"] = named
    saved = _ADAPTER_SAVED.search(text) if "dapter" in text or "PeftModel" in text else None
    saved = saved or (_LORA_FILE_SAVED.search(text) if "lora" in text.lower() else None)
    if saved:
        out["console_adapter_saved"] = line_at(text, saved.start()).strip()[:160]  # (the PeftModel warning is long)
    stepped = peft_in_training_step(text) if not saved and "peft_model.py" in text else None
    if stepped:
        out["console_adapter_saved"] = stepped
    task = _TRAINED_PEFT_CLASS.search(text) if "PeftModelFor" in text else None
    if task:
        out["console_peft_task"] = _PEFT_CLASS_TASKS[task.group(1)]
    return out


# The Trainer's warning names the class of the model it is built around (`No label_names provided for model class
# `PeftModelForCausalLM``): PEFT makes that class for an adapter of task_type CAUSAL_LM (its
# MODEL_TYPE_TO_PEFT_MODEL_MAPPING), as adapter_config.json's task_type would say (rajiv143_NL-OpenScenario)
_TRAINED_PEFT_CLASS = re.compile(r"\bmodel class `PeftModelFor(CausalLM|Seq2SeqLM)`")
_PEFT_CLASS_TASKS = {"CausalLM": "CAUSAL_LM", "Seq2SeqLM": "SEQ_2_SEQ_LM"}


# An adapter saved, pushed or uploaded (`Pushing adapter to s1nn3rx69/recall-policy-l2...`: aryan-gupta7_round2_sclr_l2;
# `LoRA adapter saved to: ./outputs/...`, mlx's `Saved adapter weights to ...npz`, the Hub's `adapter_model.safetensors:
# 2%|...` upload bar), or the Trainer's warning naming the model it trains a PeftModel (`No label_names provided for
# model class `PeftModelForCausalLM``: rajiv143_NL-OpenScenario): the run trained an adapter, not the whole model. Not
# LLaVA's projector (`mm_mlp_adapter`), which is no PEFT adapter, nor a line that loads one.
_ADAPTER_SAVED = re.compile(r"^(?![^\n]*(?:projector|mm_mlp))[^\n]*?(?:\b(?:sav|push|upload)\w*[ \t]+(?:\w+[ \t]+){0,2}"
                            r"adapters?\b|\badapters?[ \t]+(?:\w+[ \t]+)?(?:saved|pushed|uploaded)\b"
                            r"|\bmodel class `PeftModel\w*`|^[ \t]*adapter_model\.(?:safetensors|bin):)",
                            re.MULTILINE | re.IGNORECASE)


# A file named for LoRA saved by the run's own loop (JunyiJ_PostTraining-LLM-Small's `Saved checkpoint to
# .../dpo_lora_epoch1_step10.pt`): the weights it saves are a LoRA's. `lora` a word of the file's name (`explora`
# is not).
_LORA_FILE_SAVED = re.compile(r"^[^\n]*?\bsav(?:e|ed|ing)\b[^\n]*?(?<![\w.-])[\w.-]*(?<![a-z])lora(?![a-z])[\w.-]*"
                              r"\.(?:pt|pth|bin|safetensors|ckpt)\b", re.MULTILINE | re.IGNORECASE)


def lora_named(text: str) -> str | None:
    """The first line of `text` naming LoRA (`_LORA_NAMED`), or None."""
    m = _LORA_NAMED.search(text)
    return line_end(line_at(text, m.start()).strip()) if m else None


# LoRA named anywhere in a console (`Configuration LoRA pour le modèle policy...`, `LoRA rank=16, alpha=32`, a
# traceback's `lora_B(lora_A(dropout(x)))`, LLaMA-Factory's `Fine-tuning method: LoRA`, a LoraConfig print): PEFT's
# count banner shows an adapter, and this says which (2025DL-TEAM3_skeleton_hw's console names none)
_LORA_NAMED = re.compile(r"(?<![A-Za-z])[Qq]?[Ll][Oo][Rr][Aa](?:[Cc]onfig)?(?![A-Za-z])")
