"""Setup facts a console log states, for the run configuration and the run profile (`console_facts`).

Precision (DeepSpeed's config print, OLMo's, nanochat's, torchtune's, Unsloth's), the model's parameter count (the
lines of OLMo, nanochat, Megatron, DeepSpeed's pipeline, a script's own), a base loaded in 4 bits, a value head,
instruction-tuning data, a model card's owner; a crash that ended the run, TRL's trainer and transformers'
Seq2SeqTrainer by the warnings about them come from `console_warnings`, the recipe's own words from `console_recipes`,
the parameter counts from `console_param_counts`.
"""
from __future__ import annotations

import re

from .console_exit import exit_line, planned_iters
from .console_param_counts import parameter_count_said, said_param_count
from .console_recipes import PRECISION_NAMES, recipe_facts
from .console_text import line_at, line_end
from .accumulation_said import accumulation_said
from .console_warnings import CAST_BACK, console_warnings, peft_in_training_step
from .trainer_card import trainer_card_facts
from ..discover.run_signs import final_exception, is_training_console, run_signs


# What a console log prints about the run's setup, for the run configuration (see `console_facts`).
# DeepSpeed's config print: `bfloat16_enabled ..... True` (before 0.16), `float16_config ..... enabled=True ...` (later)
_DS_PRECISION = re.compile(r"^.*?\b(?:(bfloat16|fp16)_enabled\s*\.{3,}\s*True|(bfloat16|float16)_config\s*\.{3,}\s*"
                           r"enabled=True\b.*?)\s*$", re.MULTILINE)
# ... and the DeepSpeed engine's own start-up lines: the run went through a DeepSpeed engine
_DS_ENGINE = re.compile(r"^.*?\bDeepSpeedEngine configuration:\s*$", re.MULTILINE)
# ... or the engine's progress report through its own logger (deepspeed/runtime/engine.py `_report_progress`: `[Rank 0]
# step=10, skipped=0, lr=[1e-06, 1e-06], mom=[(0.9, 0.99), ...]`), where a hand-written loop drives the engine itself
# (Ourboros-Alignment-Team_RWKV-RM-Copilot) and no configuration print was kept
_DS_PROGRESS_LINE = re.compile(r"^.*?\bstep=\d+, skipped=\d+, lr=\[[^\n]*$", re.MULTILINE)
# OLMo's printed TrainConfig (`precision='amp_bf16'`), Composer's printed YAML config (`precision: amp_bf16`)
_AMP_PRECISION = re.compile(
    r"\bprecision(?:='amp_(bf16|fp16)'|: amp_(bf16|fp16)\b)|compute dtype: torch\.(bfloat16|float16)\b")
# torchtune's recipes: `Model is initialized with precision torch.bfloat16.` (the dtype it trains in: no autocast)
_TORCHTUNE_PRECISION = re.compile(r"^.*?\bModel is initialized with precision torch\.(bfloat16|float16|float32)\b.*$",
                                  re.MULTILINE)
# torchtitan's mixed-precision flag echoed in its launch command (`--training.mixed_precision_param=bfloat16`: FSDP's
# param dtype, autocast's where FSDP is off); Lightning's / Fabric's start-up line for its AMP plugin (`Using 16-bit
# Automatic Mixed Precision (AMP)`: float16 with a GradScaler; `Using bfloat16 Automatic Mixed Precision (AMP)`)
_TITAN_MIXED_PRECISION = re.compile(r"--training\.mixed_precision_param[= ](bfloat16|float16|float32)\b")
_LIGHTNING_AMP = re.compile(
    r"^.*?\bUsing (16-?bit|bfloat16)(?: native)? Automatic Mixed Precision \(AMP\).*$", re.MULTILINE)
# torch's deprecation warning for `torch.cuda.amp.autocast` quotes the calling line of the run's own script (not a
# library's: site-packages) under it; the warning fires only where autocast is entered, on CUDA, and with no dtype the
# autocast is float16 (PUFAI_GibberishGPT: `with torch.cuda.amp.autocast():` at gpt_train_script.py:518;
# XIAOXIN-Cyh_XiaoXin-LLM: `ctx = nullcontext() if device_type == "cpu" else torch.cuda.amp.autocast()`). Any other
# argument (`enabled=...`, a dtype held in a variable) leaves it unsaid.
_AUTOCAST_ECHO = re.compile(r"^(?P<file>[^\n]*?\.py):\d+: FutureWarning: `torch\.cuda\.amp\.autocast\(args\.\.\.\)` is "
                            r"deprecated\.[^\n]*\n[ \t]+"
                            r"(?P<line>[^\n]*?\btorch\.cuda\.amp\.autocast\((?P<args>[^()\n]*)\)[^\n]*)", re.MULTILINE)
_AUTOCAST_DTYPE = {"": "fp16", "dtype=torch.float16": "fp16", "dtype=torch.bfloat16": "bf16"}
# Unsloth switching a model that cannot train in float16 to float32 (Gemma 3 on a T4): `Unsloth: Switching to float32
# training since model cannot work with float16`, `Unsloth: Using float16 precision for gemma3 won't work! Using
# float32.` (the second names the model type it is about: a notebook may try one model and train another)
_UNSLOTH_FP32 = re.compile(r"Unsloth: Switching to (float32) training\b[^\n]*")
_UNSLOTH_FP32_FOR = re.compile(r"Unsloth: Using float16 precision for (\S+) won't work! Using (float32)\b[^\n]*")
# A console that says its base model was loaded in 4 bits (`Loading model with 4-bit quantization...`, a printed
# `load_in_4bit=True`, a bitsandbytes 4-bit model name, LLaMA-Factory's `Quantizing model to 4 bit with bitsandbytes.`)
# or names QLoRA (`Q-LoRA`; QDoRA, a DoRA adapter on a 4-bit base: `Setting up QDoRa VietAI/vit5-base`): an adapter on
# it is QLoRA. (Only as the word, capital Q: `q_lora` is DeepSeek's query projection rank in MaxText's and Megatron's
# printed configs.)
_LOADED_4BIT = re.compile(
    r"(?i:\b4-bit quantiz|\bload_in_4bit\W{1,3}True\b|\bbnb[-_]4bit\b|\bquantizing (?:the )?model to 4 ?bit\b)"
    r"|(?<![A-Za-z0-9_=])Q-?(?:LoRA|LORA|DoRA|DORA|DoRa)(?![A-Za-z0-9_=])")
# A line that loads a model (a load word in English, Chinese, Japanese, Korean, Spanish, French, German) and names 4
# bits (`4bit`, `4-bit`, `nf4`, `load_in_4bit`) beside it: `加载 4bit 基座: Qwen/Qwen2.5-1.5B-Instruct` (loading
# the 4-bit base), `Loading the base in 4bit (nf4)`. A `4bit` elsewhere (a kernel, a merge, a flag listed) is no load.
# bitsandbytes' 4-bit layer by its class name, in a printed model (`(q_proj): Linear4bit(in_features=4096, ...`, PEFT's
# `lora.Linear4bit(`) or in bitsandbytes' own warning (`Input type into Linear4bit is torch.float16`): the weights
# are 4-bit, whatever the line says beside it (`bias=False` is no negation)
_FOUR_BIT_LAYER = re.compile(r"(?<![A-Za-z0-9_])Linear4bit(?![A-Za-z0-9_])")
_FOUR_BIT_WORD = re.compile(r"(?i)(?<![A-Za-z0-9])(?:4[-_ ]?bits?|nf4|load_in_4bit)(?![A-Za-z0-9])")
_LOAD_WORD = re.compile(
    r"(?i)\b(?:load|loads|loading|loaded|cargando|cargado|chargement|charg[ée]e?|lade|laden|geladen)\b"
    r"|加载|載入|载入|読み込|ロード|로드|불러")
_NEGATED_CJK = re.compile(r"不|未|没有|沒有|無し|しない|않")  # `不加载 4bit` (not loading in 4 bits)
# ... unless the line says it is not so (`Full fine-tuning (no QLoRA)`, `without 4-bit quantization`)
_NEGATED = re.compile(r"\b(?:no|not|without|False|disabled?)\b", re.IGNORECASE)
# Unsloth's warning naming the model it loaded (`unsloth/gemma-2-2b-it-bnb-4bit does not have a padding token! Will use
# pad_token = <pad>.`, from `model.config._name_or_path` in its patch_tokenizer): that `not` is the tokenizer's
_PAD_TOKEN_CLAUSE = re.compile(r" does not have a padding token! Will use pad_token = .*$")
# DeepSpeed-Chat's launch line (`cmd = deepspeed main.py --data_path ... --lora_dim 128 ...`)
_DSCHAT_CMD = re.compile(r"^.*\bcmd = \S*(?:deepspeed|python3?)\S* [^\n]*\bmain\.py\b[^\n]*$", re.MULTILINE)
_LORA_DIM = re.compile(r"--lora_dim[ =](\d+)")
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
# nanochat's `COMPUTE_DTYPE: torch.float32 (...)` (scripts/base_train.py, chat_sft.py): no autocast, this is the dtype.
_COMPUTE_DTYPE = re.compile(r"^COMPUTE_DTYPE: torch\.(bfloat16|float16|float32)\b.*$", re.MULTILINE)
# a bitsandbytes 4-bit config printed as it is loaded (Unsloth's vLLM `Bitsandbytes config using kwargs = {...,
# 'load_in_4bit': True, 'bnb_4bit_compute_dtype': 'bfloat16', ...}`): the 4-bit layers compute, and train, in that dtype
_BNB_COMPUTE = re.compile(r"""['"]load_in_4bit['"]: True\b[^\n]*?['"]bnb_4bit_compute_dtype['"]: ['"]?(?:torch\.)?"""
                          r"""(bfloat16|float16|float32)\b""")
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
    out = {**_precision_said(text), **parameter_count_said(text), **_vocabulary_said(text)}
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


def _precision_said(text: str) -> dict:
    """`console_precision` (with its `_line`, and `_model` where Unsloth names the model it is about) from
    DeepSpeed's config print, OLMo's or Composer's config, nanochat's COMPUTE_DTYPE, a bitsandbytes compute dtype,
    torchtune's or Unsloth's words, torchtitan's echoed flag, Lightning's AMP line."""
    out: dict = {}
    m = (_DS_PRECISION.search(text) or _AMP_PRECISION.search(text) or _COMPUTE_DTYPE.search(text)
         or ("bnb_4bit_compute_dtype" in text and _BNB_COMPUTE.search(text))
         or ("Model is initialized with precision" in text and _TORCHTUNE_PRECISION.search(text))
         or ("Unsloth: " in text and _UNSLOTH_FP32.search(text))
         or ("mixed_precision_param" in text and _TITAN_MIXED_PRECISION.search(text))
         or ("Automatic Mixed Precision" in text and _LIGHTNING_AMP.search(text))
         or ("cast back the input" in text and CAST_BACK.search(text)))
    if m:
        out["console_precision"] = PRECISION_NAMES[next(g for g in m.groups() if g)]
        out["console_precision_line"] = line_end(m.group(0))
    elif "Unsloth: " in text and (m := _UNSLOTH_FP32_FOR.search(text)):
        out["console_precision"], out["console_precision_model"] = "fp32", m.group(1)
        out["console_precision_line"] = line_end(m.group(0))
    elif "torch.cuda.amp.autocast(args...)" in text:
        out.update(_script_autocast(text))
    return out


def _script_autocast(text: str) -> dict:
    """`console_precision` from the run's own autocast line that torch's deprecation warning quotes."""
    for m in _AUTOCAST_ECHO.finditer(text):
        said = _AUTOCAST_DTYPE.get(re.sub(r"\s+", "", m.group("args")))
        if said and not re.search(r"[\\/](?:site|dist)-packages[\\/]", m.group("file")):
            return {"console_precision": said, "console_precision_line": m.group("line").strip()}
    return {}


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
         else None)
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
    m = _DSCHAT_CMD.search(text) if "main.py" in text else None
    if m:  # DeepSpeed-Chat trains every weight unless --lora_dim says otherwise
        lora = _LORA_DIM.search(m.group(0))
        out["console_lora_dim"], out["console_lora_dim_line"] = (int(lora.group(1)) if lora else 0,
                                                                 m.group(0).strip()[:200])
    m = _VALUE_HEAD.search(text) if "alue head" in text or "valuehead" in text else None
    if m:
        out["console_value_head"] = line_end(line_at(text, m.start()))
    said = _said_4bit(text) if "4" in text or "LORA" in text.upper() else None
    if said:
        out["console_4bit"] = said
        out["console_4bit_layers"] = bool(_FOUR_BIT_LAYER.search(said))
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


def _said_4bit(text: str) -> str | None:
    """The first line saying the base was loaded in 4 bits (or naming QLoRA) and not saying it was not, else the first
    line naming bitsandbytes' 4-bit layer (`_FOUR_BIT_LAYER`), else the first short line that loads a model and names
    4 bits beside it (`_FOUR_BIT_WORD` with `_LOAD_WORD`, in any of several languages), or None."""
    for m in _LOADED_4BIT.finditer(text):
        line = line_at(text, m.start()).strip()
        if _in_a_web_address(text, m.start()):
            continue  # (`https://github.com/.../QDoRA`: a link names no base the run loaded)
        if not _NEGATED.search(_PAD_TOKEN_CLAUSE.sub("", line)):
            return line_end(line)
    m = _FOUR_BIT_LAYER.search(text) if "Linear4bit" in text else None
    if m:
        return line_end(line_at(text, m.start()))
    for m in _FOUR_BIT_WORD.finditer(text):
        line = line_at(text, m.start()).strip()
        if len(line) <= 200 and _LOAD_WORD.search(line) and not _NEGATED.search(line) \
                and not _NEGATED_CJK.search(line):
            return line_end(line)
    return None


def _in_a_web_address(text: str, start: int) -> bool:
    """Whether the word at `start` is part of a web address (the text before it, back to a space, holds `://`)."""
    before = re.search(r"\S*\Z", text[max(0, start - 300):start]).group(0)
    return "://" in before or before.lower().startswith("www.")
