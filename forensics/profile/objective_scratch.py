"""The profile's objective from what says the model starts from random weights: pre-training (a trainer's flag, a
script that builds its model from sizes, a pre-training console, a first loss at the random guess, a config with its
own vocabulary, a nanoGPT-family HellaSwag eval)."""
from __future__ import annotations

from ..analyzers.never_learned import FRESH_HEAD_RANGE
from ..config import RunConfig
from ..ingest.pretrain_lines import PRETRAINING_KINDS
from ..timeline import Timeline
from .losses import character_model_at_step_zero, starts_at_random_guess, training_losses
from .model_start import (_console_from_scratch, console_loaded_weights, fresh_model_config,
                          megatron_trained_start, pretrained_base, where_the_loss_starts)
from .trainer_card import card_objective

# Console line kinds of nanoGPT-family pre-training loops that print a HellaSwag eval (build-nanogpt's `N hella X`,
# llm.c's `s:N eval:X`): with that eval beside the loss, the run is pre-training
_HELLASWAG_KINDS = {"step_name_value": "build-nanogpt", "llmc": "llm.c"}
FROM_SCRATCH = ": a model that starts from random weights, training from scratch"


def from_scratch_signs(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                        metrics: set) -> tuple[str, str | None] | None:
    """What says the model starts from random weights: pre-training."""
    if config.get("init_from") == "scratch":  # nanoGPT's train.py
        evidence["objective"] = f"init_from scratch ({config.source_of('init_from')}){FROM_SCRATCH}"
        return "pretrain", None
    sizes = config.get("model.built_from_sizes")
    if isinstance(sizes, str):  # a hand-written script that builds its model from the sizes it was given
        evidence["objective"] = (f"the script's arguments give the model's sizes ({sizes}) and name no weights to "
                                 f"start from ({config.source_of('model.built_from_sizes')}){FROM_SCRATCH}")
        return "pretrain", None
    built = config.get("model.built_here")
    if isinstance(built, str):  # a notebook that defines its network (or configures a library's) and loads no weights
        evidence["objective"] = (f"the notebook builds its model ({built}) and loads no trained weights anywhere in "
                                 f"its code ({config.source_of('model.built_here')}){FROM_SCRATCH}")
        return "pretrain", None
    pretraining = [kind for kind in timeline.console_kinds if kind in PRETRAINING_KINDS]
    loaded = megatron_trained_start(timeline) if pretraining else None
    if loaded is not None:  # a pre-training script fed trained weights: continued pre-training, or a fine-tune
        return _from_trained_weights(timeline, pretraining[0], loaded, evidence)
    if pretraining:
        # a pre-training loop may start from trained weights (continued pre-training); a first loss at the
        # random guess says this one did not, which tells the method too (`run_profile`)
        fresh = None if adapter else starts_at_random_guess(timeline)
        scratch = ("" if fresh is None
                   else f", the first loss {fresh:.4g} (per token) at the random guess{FROM_SCRATCH}")
        evidence["objective"] = f"{pretraining[0]} pre-training console log{scratch}"
        return "pretrain", None
    scratch = _console_from_scratch(timeline)
    if scratch is not None:
        evidence["objective"] = f"the console says so ({scratch[0]}: {scratch[1]}){FROM_SCRATCH}"
        return "pretrain", None
    tokenizer = next(((src, m["console_trains_tokenizer"]) for src, m in timeline.meta.items()
                      if m.get("console_trains_tokenizer")), None)
    if tokenizer is not None:
        evidence["objective"] = f"it trains its own tokenizer ({tokenizer[0]}: {tokenizer[1]}){FROM_SCRATCH}"
        return "pretrain", None
    trained = None if adapter else config.get("model.tokenizer_trained")
    if isinstance(trained, str):
        evidence["objective"] = (f"the notebook trains its own tokenizer ({trained}) and loads no trained weights "
                                 f"anywhere in its code ({config.source_of('model.tokenizer_trained')}){FROM_SCRATCH}")
        return "pretrain", None
    # an adapter is never trained from scratch, nor a model loaded from trained weights however high its loss starts
    vocab = config.get("model.vocab_size")
    first = training_losses(timeline)
    base = pretrained_base(config, float(first[0]) if len(first) else None) or console_loaded_weights(timeline)
    fresh = None if adapter or base else starts_at_random_guess(timeline, vocab)
    if fresh is not None and fresh < FRESH_HEAD_RANGE[0] and card_objective(timeline, {}) == ("sft", None):
        # a first loss under any ln(vocabulary) that falls by half is read as random weights' only where nothing names
        # the start: a card's trained encoder-decoder (AnnaR's distilbart-xsum-1-1, one layer each side, first epoch
        # 5.67) starts high on a new task and is a fine-tune; a model built over random weights from the same named
        # config would start at ln(vocabulary), which the rule above still reads
        fresh = None
    if fresh is not None:
        where = where_the_loss_starts(fresh, vocab, config)
        evidence["objective"] = f"the first loss {fresh:.4g} (per token) is {where}{FROM_SCRATCH}"
        return "pretrain", None
    fresh = None if adapter or base else character_model_at_step_zero(timeline)
    if fresh is not None:
        evidence["objective"] = (f"the first held-out loss, measured before any update (at step 0, or level with "
                                 f"the training loss), is {fresh:.4g}, about ln(a character vocabulary), and falls to "
                                 f"under half of it{FROM_SCRATCH}")
        return "pretrain", None
    # (a first loss logged after many steps is far under ln(vocabulary): the config still says where it began)
    own_vocabulary = None if adapter else fresh_model_config(config)
    if own_vocabulary is not None:
        evidence["objective"] = f"{own_vocabulary}{FROM_SCRATCH}"
        return "pretrain", None
    hella = [_HELLASWAG_KINDS[kind] for kind in timeline.console_kinds if kind in _HELLASWAG_KINDS]
    if hella and "eval_hellaswag" in metrics and "loss" in metrics:
        # build-nanogpt / llm.c print a HellaSwag accuracy beside the token-stream train/val loss: the base-model
        # benchmark of their pre-training loops (a continued or resumed run starts below ln(vocab), but it is the same)
        evidence["objective"] = (f"a {hella[0]}-style console with a HellaSwag eval beside its train/val loss: the "
                                 "nanoGPT-family pre-training loop's own benchmark")
        return "pretrain", None
    return None


def _from_trained_weights(timeline: Timeline, kind: str, loaded: tuple[str, str],
                          evidence: dict) -> tuple[str, str | None] | None:
    """A pre-training console whose run loads trained weights at iteration 0 (`megatron_trained_start`): not from
    scratch however high its first loss (a converted checkpoint that loaded wrong starts at chance, and that is the
    thing to tell: analyzers.loaded_at_chance). Instruction data in the console makes it a fine-tune (None: the SFT
    signs read it); else it is continued pre-training."""
    if any(m.get("console_instruction_data") for m in timeline.meta.values()):
        return None
    evidence["objective"] = (f"{kind} pre-training console log that loads trained weights at iteration 0 ({loaded[0]}: "
                             f"{loaded[1][:120]}): continued pre-training")
    return "pretrain", None
