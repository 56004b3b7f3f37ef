"""Where the run's model starts: a trained model (an adapter's base, the model its arguments load, a trained
encoder-decoder) or random weights (a console line that says so, a saved config of a language model with a vocabulary
of its own, a first loss at the uniform guess). The objective (`objective`) reads pre-training or fine-tuning from
these."""
from __future__ import annotations

import math
import re

from ..analyzers.never_learned import FRESH_HEAD_RANGE
from ..config import RunConfig
from ..ingest.megatron_start import KEY as MEGATRON_START
from ..timeline import Timeline
from .losses import random_guess_range, training_losses


def pretrained_base(config: RunConfig, first_loss: float | None = None) -> tuple[str, str] | None:
    """(name, where) of the trained model the run starts from: the adapter's base, or the model its arguments load
    (model_name_or_path); else the `_name_or_path` of the saved config.json (or the model card's base, written from
    it), but only where the first training loss
    `first_loss` is not at the uniform guess (`_AT_THE_GUESS` x ln(vocabulary)): from_pretrained writes that name,
    and so does a model built from a named configuration (`AutoConfig.from_pretrained("gpt2")` then
    `GPT2LMHeadModel(config)`, run_clm's --config_name) over random weights, which start at about ln(vocabulary); a
    start well over it is no fresh model's, and one well under it a model that already reads the text. Else None."""
    for key in _TRAINED_START_KEYS:
        name = config.get(key)
        if isinstance(name, str) and name.strip() and not _own_checkpoint(name, config.get("output_dir")):
            return name, f"{key}, {config.source_of(key)}"
    key = next((k for k in _NAMED_CONFIG_KEYS if isinstance(config.get(k), str) and config.get(k).strip()), None)
    name, vocab = config.get(key) if key else None, config.get("model.vocab_size")
    if name and isinstance(vocab, int) and vocab > 1 and first_loss is not None \
            and not _AT_THE_GUESS[0] * math.log(vocab) <= first_loss <= _AT_THE_GUESS[1] * math.log(vocab):
        return name, f"{key}, {config.source_of(key)}"
    return None


_TRAINED_START_KEYS = ("adapter.base_model_name_or_path", "model.name_or_path")


def _own_checkpoint(name: str, output_dir) -> bool:
    """Whether the model a launch loads is a checkpoint the run saved in its own output folder (a relaunch appended to
    the console that goes on from its `output_model/checkpoint-14200`: Tjk20011226-cmd_Llama-chinese): the run's own
    weights, not a trained model it started from. Only the folder itself or a `checkpoint-N` in it: a base model kept
    beside the outputs (`/root/autodl-tmp/Qwen2-7B-Instruct` under an output_dir of `/root/autodl-tmp`) is no save of
    the run's."""
    if not isinstance(output_dir, str) or not output_dir.strip("./\\ "):
        return False
    folder = re.sub(r"^(?:\./)+", "", output_dir.replace("\\", "/")).rstrip("/") + "/"
    path = re.sub(r"^(?:\./)+", "", name.replace("\\", "/")).rstrip("/") + "/"
    return path.startswith(folder) and _OWN_SAVE.fullmatch(path[len(folder):]) is not None


_OWN_SAVE = re.compile(r"(?:checkpoint-\d+/)?")
_CONFIG_NAME_KEY = "model._name_or_path"
# ... and the model card's base, which transformers' modelcard.py writes from that same `config._name_or_path`
# (`finetuned_from`: the "fine-tuned version of [X]" line, the header's `base_model:`): a name, not proof of weights
_NAMED_CONFIG_KEYS = (_CONFIG_NAME_KEY, "card.base_model")
_AT_THE_GUESS = (0.9, 1.1)  # a freshly initialised model's first loss, as a share of ln(vocabulary)


def _console_from_scratch(timeline: Timeline) -> tuple[str, str] | None:
    """(source, line) of a console line saying the model was built from random weights, or None."""
    return next(((src, m["console_from_scratch"]) for src, m in timeline.meta.items() if m.get("console_from_scratch")),
                None)


def console_loaded_weights(timeline: Timeline) -> tuple[str, str] | None:
    """(source, line) of transformers' `loading weights file X` line before training (`console_weights_loaded`): the
    model starts from trained weights; else None."""
    return next(((src, m["console_weights_loaded"]) for src, m in timeline.meta.items()
                 if m.get("console_weights_loaded")), None)


def megatron_trained_start(timeline: Timeline) -> tuple[str, str] | None:
    """(source, line) of a Megatron console's `successfully loaded checkpoint from DIR at iteration 0` (or `loading
    release checkpoint`): the run starts from weights trained elsewhere (ingest.megatron_start); else None. A load at
    iteration N > 0 is the same run taken up again, and says nothing of where it first started."""
    return next(((src, m[MEGATRON_START]["line"]) for src, m in timeline.meta.items()
                 if (m.get(MEGATRON_START) or {}).get("loaded") and m[MEGATRON_START]["iteration"] == 0), None)


def readme_from_scratch(config: RunConfig, timeline: Timeline) -> tuple[str, str] | None:
    """(words, where) of a README of the run that says its model was trained from scratch (`ingest.readme_scratch`),
    unless the run shows a trained start: the model its arguments load, an adapter's base or a saved config's name
    beside a first loss off the random guess (`pretrained_base`), a console's `loading weights file` line, or the
    card's `base_model`. The run's own files outrank its prose."""
    words = config.get("model.readme_from_scratch")
    if not isinstance(words, str) or isinstance(config.get("card.base_model"), str) \
            or pretrained_base(config, _first_loss(timeline)) is not None or console_loaded_weights(timeline):
        return None
    return words, config.source_of("model.readme_from_scratch")


def _first_loss(timeline: Timeline) -> float | None:
    losses = training_losses(timeline)
    return float(losses[0]) if len(losses) else None


def pretrained_seq2seq(config: RunConfig) -> str | None:
    """What says the run fine-tunes a trained encoder-decoder: the model's config (`is_encoder_decoder`, an
    encoder-decoder head: `_SEQ2SEQ_HEADS`; or the head alone, of an encoder-decoder family) with the checkpoint it
    was loaded from (a composite's parts' checkpoints included), or Seq2SeqTrainingArguments with
    predict_with_generate; else None."""
    architectures = config.get("model.architectures")
    head = next((n for n in (architectures if isinstance(architectures, list) else [architectures])
                 if isinstance(n, str) and n.endswith(_SEQ2SEQ_HEADS)), None)
    if config.get("model.is_encoder_decoder") is not True and not _an_encoder_decoder_head(head):
        return None
    start = config.get("model._name_or_path") or config.get("model.name_or_path") or config.get(_PARTS_FROM_KEY)
    if head is None:
        return None
    if isinstance(start, str) and start.strip():
        return f"a trained encoder-decoder ({head} loaded from {start}, {config.source_of('model.architectures')})"
    if "Seq2Seq" in str(config.get("training_args_class") or "") and config.get("predict_with_generate") is True:
        return (f"an encoder-decoder ({head}, {config.source_of('model.architectures')}) trained with "
                f"Seq2SeqTrainingArguments' predict_with_generate ({config.source_of('predict_with_generate')})")
    return None


# The encoder-decoder families whose `...ForConditionalGeneration` head a notebook's code names where no saved config
# says is_encoder_decoder (bmcmahan2016_cs-269-SLG's T5ForConditionalGeneration.from_pretrained("t5-base") in a plain
# loop); other families' heads of that name are decoders (Llava, Qwen2-VL, PaliGemma, Gemma 3)
_ENCODER_DECODERS = ("T5", "MT5", "UMT5", "LongT5", "Bart", "MBart", "PLBart", "Pegasus", "BigBirdPegasus", "Marian",
                     "LED", "M2M100", "NllbMoe", "Blenderbot", "ProphetNet", "FSMT", "Mvp", "SwitchTransformers")


# The heads an encoder-decoder is trained under: `...ForConditionalGeneration` (of the families above), a composite
# `EncoderDecoderModel` (Vision..., SpeechEncoderDecoderModel too), Marian's own `MarianMTModel`
# (kiran280321_multilingual-translation's config.json) and the Auto class that loads none but encoder-decoders,
# `AutoModelForSeq2SeqLM` (ANURAGMN_benchmarkingRougeBLEU's notebook loads google-t5/t5-small with it)
_SEQ2SEQ_HEADS = ("ForConditionalGeneration", "EncoderDecoderModel", "MTModel", "ModelForSeq2SeqLM")
# A composite EncoderDecoderModel warm-started from two trained checkpoints keeps their names in its parts' configs
# (ingest.config_files.model_config_values; synkathairo_journal-article-summarizer: bert-base-uncased twice)
_PARTS_FROM_KEY = "model.parts_name_or_path"


def warm_started_composite(config: RunConfig) -> str | None:
    """"encoder X, decoder Y" where the model is a text EncoderDecoderModel joined from two trained checkpoints (its
    decoder's cross-attention new), else None (a VisionEncoderDecoderModel such as Donut is loaded whole, trained)."""
    architectures = config.get("model.architectures")
    heads = architectures if isinstance(architectures, list) else [architectures]
    parts = config.get(_PARTS_FROM_KEY)
    return parts if "EncoderDecoderModel" in heads and isinstance(parts, str) and parts.strip() else None


def encoder_decoder_model(config: RunConfig) -> bool:
    """Whether the run's model is an encoder-decoder: its config says so, or the head it is loaded as is one."""
    architectures = config.get("model.architectures")
    heads = architectures if isinstance(architectures, list) else [architectures]
    return config.get("model.is_encoder_decoder") is True or any(_an_encoder_decoder_head(h) for h in heads)


def _an_encoder_decoder_head(head: str | None) -> bool:
    return isinstance(head, str) and (head.endswith(("EncoderDecoderModel", "ModelForSeq2SeqLM"))
                                      or head.removesuffix("ForConditionalGeneration").removesuffix("MTModel")
                                      in _ENCODER_DECODERS)


def _console_seq2seq_trainer(timeline: Timeline) -> str | None:
    """The console line naming transformers' Seq2SeqTrainer as the run builds it (an encoder-decoder trained on
    its targets: a model from random weights is told by its first loss, before this is asked), else None."""
    said = next(((src, m["console_seq2seq_trainer"]) for src, m in timeline.meta.items()
                 if m.get("console_seq2seq_trainer")), None)
    return None if said is None else f"transformers' Seq2SeqTrainer built in the console ({said[0]}: {said[1][:120]})"


# Text language-model families whose released checkpoints tokenize into subwords, tens of thousands of them (GPT-2
# 50,257; BERT 21,128 to 119,547; LLaMA 32,000 up). Protein and DNA families (ESM's 33 tokens) are not named; a
# fine-tune of ProtBert (30 amino acids under model_type bert) names it in its config's `_name_or_path`, which the rule
# declines.
_SUBWORD_FAMILIES = ("gpt2", "gpt_neo", "gpt_neox", "gptj", "openai-gpt", "llama", "mistral", "qwen2", "qwen3", "opt",
                     "bloom", "bert", "roberta", "distilbert", "electra", "albert", "deberta", "deberta-v2")
_LM_HEADS = ("LMHeadModel", "ForCausalLM", "ForMaskedLM")
# No released checkpoint of those families has a vocabulary this small: a few hundred tokens (music notes, event
# codes, characters) are the run's own tokenizer, whose embeddings exist nowhere but in this run
_SMALLEST_RELEASED_SUBWORDS = 1000


def fresh_model_config(config: RunConfig) -> str | None:
    """What says the saved model config is a language model built here from random weights: a causal or masked LM
    head of a subword family (`_SUBWORD_FAMILIES`) with a vocabulary no released checkpoint of it has (under
    `_SMALLEST_RELEASED_SUBWORDS` tokens) and no trained model named anywhere (no `_name_or_path`, no base in the
    arguments or an adapter). Else None. (from_pretrained of a released model brings that model's vocabulary;
    resizing it for added tokens only grows it.)"""
    vocab, family = config.get("model.vocab_size"), config.get("model.model_type")
    architectures = config.get("model.architectures")
    heads = [a for a in (architectures if isinstance(architectures, list) else [architectures])
             if isinstance(a, str) and a.endswith(_LM_HEADS)]
    named = config.get(_CONFIG_NAME_KEY)
    if not heads or family not in _SUBWORD_FAMILIES or pretrained_base(config) is not None \
            or (isinstance(named, str) and named.strip()):
        return None
    # (no floor: `SMALLEST_VOCABULARY` is for comparing a first loss with ln V, where a few classes' ln V is a
    # classifier's level; an LM head over an alphabet of its own is trained from scratch whatever its size, as
    # EnthusiasticTeslim_CSC7343-FinalProject's BertForMaskedLM over 25 symbols)
    if not isinstance(vocab, int) or not 1 < vocab < _SMALLEST_RELEASED_SUBWORDS:
        return None
    return (f"a {heads[0]} with its own {vocab}-token vocabulary, which no released {family} checkpoint has, and no "
            f"trained model named ({config.source_of('model.vocab_size')})")


def where_the_loss_starts(fresh: float, vocab, config: RunConfig) -> str:
    """What a first loss read as a model's on random weights is: the uniform guess over the small vocabulary the
    config gives, about ln(any vocabulary), or a level no fine-tune starts at."""
    if fresh < FRESH_HEAD_RANGE[0] and fresh >= random_guess_range(vocab)[0]:
        return (f"about ln {vocab} = {math.log(vocab):.4g}, the uniform guess over the model's vocabulary "
                f"({config.source_of('model.vocab_size')})")
    if fresh >= FRESH_HEAD_RANGE[0]:
        return "about ln(vocabulary size)"
    return "far above where a fine-tune of a trained model starts (1 to 4), falling by half or more"
