"""The method and objective that the model card transformers wrote says (`ingest.trainer_card`), where nothing else
in the run said them.

Method full: the card names no adapter anywhere and could not have been an adapter's card without saying so -
* a Keras callback's card (`generated_from_keras_callback`): a TensorFlow model trained by `model.fit`; PEFT and
  adapter-transformers are PyTorch libraries, so every weight was trained (a layer frozen by hand is not shown);
* a Trainer's card of a Transformers 4.x release before 4.26: PEFT's first release (0.1.0, February 2023) came after
  it. Later cards are no evidence: from 4.27 to 4.35 the Trainer wrote its card over the one PEFT's save_pretrained
  had marked (`library_name: peft`, `- PEFT x.y`), so a LoRA run's card lost those marks (transformers PR #27754, in
  4.36; heyblackC_BetterMixture and worm128_AI-YinMei, LLaMA-Factory LoRA cards of 4.34.1, carry no PEFT line), and
  from 4.36 the marks come back only where PEFT's card was in output_dir when the Trainer wrote its own. A 1.x-3.x
  `Transformers` line is not read: the Trainer wrote no such card before 4.x, and AdapterHub's adapter-transformers
  fork numbered its own releases so.

Objective, for a card of a model fine-tuned from a named checkpoint: sft where the model is an encoder-decoder
trained on its targets (a model-index task or tag of summarization / translation / text2text-generation, or an
encoder-decoder family in the checkpoint's name: there is no other way to train one on its loss here, as
`objective_names._from_seq2seq` says); pretrain where a causal LM is trained on a raw-text corpus (WikiText,
Shakespeare, CodeParrot's code, ...) that the card names: next-token training on plain text, no prompt and response.
"""
from __future__ import annotations

import re

from ..timeline import Timeline

_CARD_WRITERS = ("hf_trainer", "keras")
_FIRST_PEFT_ERA_MINOR = 26  # transformers 4.26.0 (January 2023) / 4.26.1 (8 February); PEFT 0.1.0: 10 February 2023
_SEQ2SEQ_TASKS = ("summarization", "translation", "text2text-generation")
_SEQ2SEQ_TAGS = _SEQ2SEQ_TASKS + ("summarisation",)
# Encoder-decoder checkpoints by name: T5 (`t5-small`, `google/mt5-base`, `flan-t5`), BART (`facebook/bart-large`,
# `sshleifer/distilbart-xsum-1-1`, `mbart-large-50`), Pegasus, Marian (`Helsinki-NLP/opus-mt-de-en`), M2M100, NLLB,
# ProphetNet, and the EncoderDecoderModel composites named `bert2bert` / `roberta2roberta`
_ENCODER_DECODER_NAME = re.compile(r"(?<![a-z0-9])(?:(?:flan-|m|um|by|long)?t5|mt0|(?:distil|m)?bart|pegasus|opus-mt|"
                                   r"marian\w*|m2m100|nllb|prophetnet|(?:bert|roberta)[\w-]*2(?:bert|roberta|gpt2))"
                                   r"(?![a-z0-9])", re.IGNORECASE)
# Causal LMs by name, and the raw-text corpora they are trained on by next-token prediction
_CAUSAL_LM_NAME = re.compile(r"(?<![a-z0-9])(?:distil)?gpt(?:2|-2|-neo\w*|-j)|(?<![a-z0-9])opt-\d|pythia|codegen",
                             re.IGNORECASE)
# ... and a name saying the encoder-decoder was trained to restore masked text (`bart-mlm-pubmed`): BART's own
# denoising pre-training objective continued, not a task's targets - the base's name alone says neither
DENOISING_NAME = re.compile(r"(?<![a-z])(?:mlm|masked|denois\w*)(?![a-z])", re.IGNORECASE)
_RAW_TEXT_CORPUS = re.compile(r"wikitext|shakespeare|codeparrot|openwebtext|bookcorpus|tinystories", re.IGNORECASE)


def card_method(timeline: Timeline, evidence: dict) -> str | None:
    """"full" where a Keras callback's card, or a Trainer's card of a release before PEFT existed, names no adapter;
    else None."""
    card = _the_card(timeline)
    if card is None or card[1].get("card_adapter_named"):
        return None
    source, meta = card
    if meta["model_card"] == "keras":
        evidence["method"] = (f"the Keras callback's model card ({source}): a TensorFlow model trained by model.fit, "
                              "where PEFT and adapter-transformers are PyTorch libraries, and the card names no "
                              "adapter: every weight trained")
        return "full"
    version = meta.get("card_transformers")
    if _before_peft(version):
        evidence["method"] = (f"the Trainer's model card ({source}) of Transformers {version}, a release before PEFT's "
                              "first (February 2023), names no adapter: every weight trained")
        return "full"
    return None


def card_objective(timeline: Timeline, evidence: dict) -> tuple[str, None] | None:
    """("sft", None) for a card of an encoder-decoder fine-tuned on its targets, ("pretrain", None) for a causal LM
    trained on a raw-text corpus the card names; None where the card says neither (or another task)."""
    card = _the_card(timeline)
    if card is None or not card[1].get("card_base"):
        return None
    source, meta = card
    tasks = meta.get("card_task_types") or ()
    if any(task not in _SEQ2SEQ_TASKS + ("text-generation",) for task in tasks):
        return None  # a classifier's, a tagger's, a question answerer's card: none of the objectives below
    base = meta["card_base"]
    seq2seq = next((f"its model-index task {t}" for t in tasks if t in _SEQ2SEQ_TASKS), None) \
        or next((f"its tag {t}" for t in meta.get("card_tags", ()) if t in _SEQ2SEQ_TAGS), None) \
        or (f"the encoder-decoder it was fine-tuned from, {base}" if _ENCODER_DECODER_NAME.search(base) else None)
    if seq2seq is not None and not (seq2seq.startswith("the encoder-decoder") and DENOISING_NAME.search(
            meta.get("card_model_name") or "")):
        evidence["objective"] = (f"the model card ({source}): a fine-tune of {base}, {seq2seq}; an encoder-decoder "
                                 "trained on its targets: supervised (sequence-to-sequence) fine-tuning")
        return "sft", None
    corpus = _raw_text_named(meta)
    if corpus is not None and _CAUSAL_LM_NAME.search(base):
        evidence["objective"] = (f"the model card ({source}): the causal LM {base} trained on {corpus}, a raw-text "
                                 "corpus: next-token training on plain text")
        return "pretrain", None
    return None


def _the_card(timeline: Timeline) -> tuple[str, dict] | None:
    """(source, facts) of the first model card transformers' modelcard.py wrote among the run's files, or None."""
    return next(((str(src), m) for src, m in timeline.meta.items() if m.get("model_card") in _CARD_WRITERS), None)


def _before_peft(version) -> bool:
    """Whether `version` ("4.12.5", "4.25.0.dev0") is a Transformers 4.x release before PEFT's first."""
    m = re.match(r"(\d+)\.(\d+)", version) if isinstance(version, str) else None
    return m is not None and int(m.group(1)) == 4 and int(m.group(2)) < _FIRST_PEFT_ERA_MINOR


def _raw_text_named(meta: dict) -> str | None:
    """The raw-text corpus the card's model-index name or datasets name (`gpt2-wikitext2`), or None."""
    for where in (meta.get("card_model_name"), *meta.get("card_datasets", ())):
        m = _RAW_TEXT_CORPUS.search(where) if isinstance(where, str) else None
        if m:
            return f"'{where}'"
    return None
