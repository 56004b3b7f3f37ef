"""Learning-rate ranges that published recipes use, by fine-tuning method, objective and model size.

A small table with its sources, so advice can say "for QLoRA on a 70B model, 1e-4" instead of one
range for every run. Each row: (method, objective, largest model size in parameters it applies
to, typical low, typical high, the source). `ceiling` is the rate above which it is too high.

Sources. Checked in stored copies of the public text (search, 2026-11-23):
- Stanford Alpaca README (tatsu-lab/stanford_alpaca, "Fine-tuning"): LLaMA-7B full fine-tune at 2e-5.
- ms-swift docs, GRPO.md (modelscope/ms-swift PR 3050): the GRPO example's rate lowered 2e-5 -> 2e-6.
- NVIDIA NeMo RL GRPO configuration page: lr 5e-6 (Nemotron Nano 9B).
Recalled, not checked here (treat as typical values, not citations):
- Alpaca's 13B rate (1e-5); Llama 2 paper SFT at 2e-5.
- QLoRA paper hyperparameters: 2e-4 for 7B/13B, 1e-4 for 33B/65B, max_grad_norm 0.3; LoRA/PEFT/Unsloth
  examples at 1e-4 to 3e-4.
- DPO paper and TRL's DPOConfig default around 1e-6 for full DPO; LoRA DPO recipes 5e-6 to 5e-5.
- Pre-training from scratch: GPT-3 paper (Brown et al. 2020, Table 2.1: 6e-4 at 125M, 3e-4 at 350M-760M, 2e-4 at
  1.3B, 1.2e-4 at 6.7B, 6e-5 at 175B), Llama 2 paper (Table 1: 3e-4 for 7B/13B, 1.5e-4 for 34B/70B), nanoGPT's
  GPT-2 124M config (6e-4).
Rows for networks that are not decoder-only transformer LMs (`family`; `architecture.architecture_of` says which):
- T5 family (checked: huggingface/transformers PR 13240, the T5 docs' training tips): "Typically, 1e-4 and 3e-4 work
  well for almost all problems (classification, summarization, translation, question answering, question generation)"
  with AdamW, and in the original T5 code the fine-tuning rate is Adafactor's constant 1e-3 (its review comment; the
  Adafactor docs' recommended T5 settings use lr=1e-3). LoRA on T5: PEFT's seq2seq LoRA example at 1e-3 (recalled).
Classification fine-tuning (a sequence / token classification head on a trained encoder; the profile's objective
"classification"), every size of such encoder alike:
- BERT paper (Devlin et al. 2019, appendix A.3; checked in pages quoting it, 2026-11-29): fine-tuning rates (Adam)
  5e-5, 3e-5, 2e-5 (GLUE: the best of 5e-5, 4e-5, 3e-5, 2e-5); its pre-training ran at 1e-4.
- RoBERTa on GLUE: fairseq's README.glue example fine-tunes RTE at 2e-5 (checked); the paper's search over 1e-5,
  2e-5, 3e-5 (Liu et al. 2019, appendix; recalled).
- LoRA paper (Hu et al. 2021, appendix D): LoRA on RoBERTa-base at 4e-4 to 5e-4, RoBERTa-large 2e-4 to 4e-4,
  DeBERTa XXL 6e-5 to 2e-4 on GLUE (recalled).
- Recurrent networks (RNN, LSTM, GRU): no size-by-size recipe; Adam's default step 1e-3 (Kingma & Ba 2015) and
  char-rnn's RMSprop 2e-3 (karpathy/char-rnn's default; recalled). Plain SGD runs far higher (pytorch/examples'
  word_language_model: lr 20), which `optimization` reads as another optimizer's scale.
"""
from __future__ import annotations

from dataclasses import dataclass

_ANY = float("inf")


@dataclass(frozen=True)
class LrRange:
    method: str          # "full" or "adapter" (LoRA, QLoRA and other PEFT)
    objective: str       # "sft" (also continued pre-training of a trained model), "preference", "rl", "pretrain" or
    #                      "classification"
    max_params: float    # applies to models up to this size
    low: float
    high: float
    source: str
    family: str = "decoder"  # "decoder" (decoder-only transformer LMs), "t5" or "recurrent"

    @property
    def ceiling(self) -> float:
        """Above this the rate is too high: the top of the range for full fine-tuning (every weight moves),
        three times it for adapters (LoRA runs at 3e-4 to 5e-4 are common and healthy)."""
        return self.high if self.method == "full" else 3 * self.high

    def describe(self) -> str:
        return f"{self.low:g} to {self.high:g}"


TABLE = (
    LrRange("full", "sft", 3e9, 1e-5, 5e-5, "Alpaca / Llama 2 SFT recipes (small models tolerate the top end)"),
    LrRange("full", "sft", 10e9, 1e-5, 2e-5, "Stanford Alpaca README (LLaMA-7B: 2e-5)"),
    LrRange("full", "sft", _ANY, 5e-6, 1e-5, "Alpaca-style recipes for 13B and up (1e-5; recalled)"),
    LrRange("adapter", "sft", 20e9, 1e-4, 2e-4, "QLoRA paper (7B and 13B: 2e-4; recalled), PEFT/Unsloth examples"),
    LrRange("adapter", "sft", _ANY, 5e-5, 1e-4, "QLoRA paper (33B and 65B: 1e-4; recalled)"),
    LrRange("full", "preference", _ANY, 5e-7, 1e-6, "DPO paper, TRL DPOConfig default (about 1e-6; recalled)"),
    LrRange("adapter", "preference", _ANY, 5e-6, 5e-5, "LoRA DPO recipes (recalled)"),
    LrRange("full", "rl", _ANY, 1e-6, 5e-6, "ms-swift GRPO docs (2e-6), NeMo RL GRPO (5e-6)"),
    LrRange("adapter", "rl", _ANY, 2e-6, 2e-5, "GRPO LoRA recipes (about 5e-6; recalled)"),
    LrRange("full", "pretrain", 1e9, 3e-4, 1e-3, "GPT-3 and nanoGPT pre-training, 125M-760M: 3e-4 to 6e-4 (recalled)"),
    LrRange("full", "pretrain", 20e9, 1.2e-4, 3e-4, "GPT-3 1.3B-13B, Llama 2 7B/13B pre-training (recalled)"),
    LrRange("full", "pretrain", _ANY, 6e-5, 1.5e-4, "GPT-3 175B, Llama 2 34B/70B pre-training (recalled)"),
    LrRange("full", "classification", _ANY, 1e-5, 5e-5, "BERT paper fine-tuning 5e-5, 3e-5, 2e-5 (Devlin et al. 2019, "
            "appendix A.3), RoBERTa on GLUE 1e-5 to 3e-5"),
    LrRange("adapter", "classification", _ANY, 1e-4, 5e-4, "LoRA paper on GLUE: RoBERTa-base 4e-4 to 5e-4, "
            "RoBERTa-large 2e-4 to 4e-4 (Hu et al. 2021, appendix D; recalled)"),
    # an adapter is never pre-trained from scratch: a 'pretrain' stage with an adapter (LLaVA's projector) is judged
    # as fine-tuning
    LrRange("full", "sft", _ANY, 1e-4, 1e-3, "Hugging Face T5 docs (1e-4 and 3e-4 with AdamW), original T5 code "
            "(Adafactor at 1e-3)", "t5"),
    LrRange("adapter", "sft", _ANY, 1e-4, 1e-3, "PEFT's seq2seq LoRA example (1e-3; recalled)", "t5"),
    LrRange("full", "any", _ANY, 1e-3, 2e-3, "recurrent networks: Adam's default 1e-3 (Kingma & Ba 2015), char-rnn's "
            "RMSprop 2e-3 (recalled)", "recurrent"),
)
# The families whose rows hold for every objective the table has rows for, and every size
_ONE_ROW_FAMILIES = ("recurrent",)
_FAMILY_WORDS = {"t5": "T5-family fine-tuning", "recurrent": "recurrent-network"}


# the objectives the table has rows for
OBJECTIVES_WITH_ROWS = ("sft", "preference", "rl", "pretrain", "classification")
# The objectives in words, where the scope names them ("sft recipes" read as an id in xxw1995's advice); an objective
# the table has no row for is judged by the supervised fine-tuning rows
_OBJECTIVE_WORDS = {"sft": "supervised fine-tuning", "pretrain": "pre-training", "preference": "preference",
                    "rl": "RL", "classification": "classification fine-tuning"}
# The objectives with rows of their own at every size and in every family: a preference or RL rate is a fraction of an
# SFT one; a classifier's (a head on a trained encoder) is not a language model's whichever network it is
OWN_OBJECTIVES = ("preference", "rl", "classification")
_TYPICAL_SIZE = 7e9  # an unknown size is judged against the common 7B-class row


def lr_range(method: str, objective: str, n_params: int | None, family: str = "decoder") -> LrRange:
    """The row for a method ("full", "lora", "qlora", "peft"), objective, size (the 7B-class row when unknown) and
    family of network (`LrRange.family`; a family's rows cover fine-tuning only, its other objectives are read from the
    decoder rows).

    >>> [lr_range(m, o, None).describe() for m, o in (("full", "sft"), ("lora", "sft"), ("full", "rl"))]
    ['1e-05 to 2e-05', '0.0001 to 0.0002', '1e-06 to 5e-06']
    >>> lr_range("full", "unknown", 247_577_856, "t5").describe()
    '0.0001 to 0.001'
    >>> lr_range("full", "classification", None).describe(), lr_range("lora", "classification", 7e9).describe()
    ('1e-05 to 5e-05', '0.0001 to 0.0005')
    >>> lr_range("full", "pretrain", None, "recurrent").source
    "recurrent networks: Adam's default 1e-3 (Kingma & Ba 2015), char-rnn's RMSprop 2e-3 (recalled)"
    """
    if family in _ONE_ROW_FAMILIES:
        return next(r for r in TABLE if r.family == family)
    kind = "full" if method == "full" else "adapter"
    goal = objective if objective in OWN_OBJECTIVES or (objective == "pretrain" and kind == "full") else "sft"
    rows = [r for r in TABLE if r.method == kind and r.objective == goal and r.family == family] or \
        [r for r in TABLE if r.method == kind and r.objective == goal and r.family == "decoder"]
    size = _TYPICAL_SIZE if n_params is None else n_params
    return next(r for r in rows if size <= r.max_params)


def range_scope(objective: str, n_params: int | None, method: str = "unknown", family: str = "decoder") -> str:
    """What the ranges `lr_range` gives stand in for where the run does not say (its objective, its size), in words;
    "" where it said both or the rows do not depend on it. Pre-training rates are not fine-tuning rates, so a range
    judged for an unknown objective says what it is for; for an adapter (never pre-trained from scratch) it says
    that preference and RL recipes run lower instead. A family's own rows hold for every size.

    >>> range_scope("unknown", None)
    'supervised fine-tuning recipes for a 7B-class model (objective not known; pre-training from scratch runs higher: \
0.0003 to 0.001 under 1B parameters; model size not known)'
    >>> range_scope("unknown", 8_000_000_000, "lora")
    'supervised fine-tuning recipes (objective not known: preference and RL recipes run lower)'
    >>> range_scope("sft", 7_000_000_000), range_scope("rl", None), range_scope("pretrain", None, "full", "recurrent")
    ('', '', 'recurrent-network recipes, the same for every size and objective')
    >>> range_scope("classification", None, "unknown")
    ''
    >>> range_scope("unknown", None, "full", "t5")
    'T5-family fine-tuning recipes (objective not known)'
    """
    if family in _ONE_ROW_FAMILIES:
        return f"{_FAMILY_WORDS[family]} recipes, the same for every size and objective"
    own_rows = family in _FAMILY_WORDS and objective not in OWN_OBJECTIVES + ("pretrain",)
    unknown = []
    if objective not in OBJECTIVES_WITH_ROWS:
        pretrain = next(r for r in TABLE if r.objective == "pretrain")
        other = "" if own_rows else (
            ": preference and RL recipes run lower" if method in ("lora", "qlora", "peft") else
            f"; pre-training from scratch runs higher: {pretrain.describe()} under 1B parameters")
        unknown.append(("objective not known" if objective == "unknown" else
                        f"the table has no row for {objective!r}") + other)
    sized = objective not in OWN_OBJECTIVES and not own_rows  # the preference, RL, classifier and family rows: any size
    if n_params is None and sized:
        unknown.append("model size not known")
    if not unknown:
        return ""
    what = f"{_FAMILY_WORDS[family] if own_rows else _OBJECTIVE_WORDS.get(objective, 'supervised fine-tuning')} recipes"
    return what + (" for a 7B-class model" if n_params is None and sized else "") + f" ({'; '.join(unknown)})"
