"""A fine-tune whose first loss is above the uniform guess: the data is not what the model expects.

A LoRA (B zero-initialised; QLoRA too) starts as the identity, so its first logged loss is the pre-trained base
model's own loss on the training data, a little lowered by the first logging interval's updates. A
trained language model scores its own kind of text far better than a uniform guess over its
vocabulary (ln V: 11.76 nats for Llama 3's 128256 tokens; a fine-tune starts near 1 to 3). A first loss
above ln V means the base predicts these targets worse than chance: the labels or inputs are not what
it was trained on (another model's tokenizer or chat template, labels shifted or unmasked, the base
weights not loaded). What the loss curve then shows is the adapter learning to undo that, not the task:
a warning, unless the start was a blip (the next logged loss already under half the guess after a first step
logged alone, or under a quarter of it after a first window of many steps) and the rest of the run shows the task
learned after all (the loss down to a tenth of that start, or the token accuracy up by 0.2). Where the vocabulary
size is not known, only a first loss above ln(440k) = 13, the uniform guess of any tokenizer, is read this way.
An adapter of no named kind ("peft": prefix or prompt tuning, or a repository's own modules feeding the frozen base
fresh vectors from the first step, Johnny221B_latent-MAS's 13.45 at step 1) is not known to start as the identity and
is judged as a run of another method below.
A run not known to train an adapter, its vocabulary not known, is held to three times that guess, and only where
its loss later comes down under it (a per-token mean, no sum): a fresh head or a poor initialisation starts a little
above ln V, nothing several times above it (with the vocabulary known, `impossible_loss` reads such a start).
A fine-tune of a trained base that starts under ln V but near it, and still ends over half of it, is told apart too
(`detect_start_near_the_guess`): the base was not shown text it can read, and the run shows no fine-tune that worked.
"""
from __future__ import annotations

import math

from ..config import Thresholds
from ..findings import Finding
from .metrics import LOSS, LR, Metrics, finite, format_number, head_and_tail, is_preference_log, real_loss
from .closing_mean_start import closing_mean_above_its_guess
from .impossible_loss import ANY_VOCABULARY_GUESS, per_token_later
from .never_learned import FRESH_HEAD_RANGE
from .overfitting import EVAL_LOSS
from .train_eval_gap import detect_train_eval_mismatch

ADAPTER_METHODS = {"lora": "LoRA", "qlora": "QLoRA", "peft": "adapter"}
# the adapters that start as the identity (module docstring): a first loss above the guess is the trained base's own
_IDENTITY_AT_START = ("lora", "qlora")


def detect_start_above_uniform_guess(metrics: Metrics, thresholds: Thresholds, method: str, vocab_size: int | None,
                                     task_type: str | None = None, from_scratch: bool = False,
                                     pretrained_base: str | None = None, fine_tune: bool = False) -> list[Finding]:
    """One `start_above_uniform_guess` warning at the first training loss of an adapter fine-tune of a language
    model (PEFT task_type CAUSAL_LM, SEQ_2_SEQ_LM or not said: a loss over tokens, whose uniform guess is ln V; a
    classifier's is over its labels), or of a run of another method above its known guess (well above,
    unless `pretrained_base` names the trained model it was loaded from), or []. Its vocabulary not known, a run of
    another method is held to the guess of the largest vocabulary where it fine-tunes a trained model (`fine_tune`:
    an SFT stage or a named trained base, its loss a per-token mean), to three times it otherwise, and any run so
    where the eval loss of the same weights at its first step lies under that guess
    (`_above_any_guess_beside_its_eval`). A training loss that is not the eval loss's quantity at every evaluation (a
    train_eval_mismatch: summed over micro-batches, say) says nothing about the model's start. A fine-tune of a trained
    model that logged no training loss is read from its first eval loss (`_first_eval_above_its_guess`), or, with no
    eval either, from the closing summary's mean over the run (`closing_mean_above_its_guess`)."""
    loss = real_loss(metrics)
    if is_preference_log(metrics) or task_type not in _TOKEN_TASKS:
        return []
    if loss.empty and not from_scratch and (method in ADAPTER_METHODS or fine_tune):
        words = f"{ADAPTER_METHODS[method]} fine-tune" if method in ADAPTER_METHODS else "fine-tune of a trained model"
        return _first_eval_above_its_guess(metrics, vocab_size) or closing_mean_above_its_guess(metrics, vocab_size,
                                                                                                words)
    known = isinstance(vocab_size, int) and vocab_size > 1
    if len(loss) == 1 and (known or method in _IDENTITY_AT_START or _a_whole_models_only_loss(metrics, method)):
        return _one_point_above_its_guess(loss, method, vocab_size if known else None)
    if len(loss) < 2 or detect_train_eval_mismatch(metrics, thresholds):
        return []
    level = math.log(vocab_size) if known else FRESH_HEAD_RANGE[1]
    first, step = float(loss.iloc[0]), int(loss.index[0])
    tail = _last_tenth(loss)
    if method not in _IDENTITY_AT_START:  # (with the vocabulary known, impossible_loss reads a start far beyond it)
        beside_its_eval = _above_any_guess_beside_its_eval(metrics, loss)
        if beside_its_eval:
            return beside_its_eval
        if not known:
            return _far_above_any_guess(metrics, loss, level, fine_tune)
        if from_scratch or vocab_size < _TOKEN_VOCABULARY:
            return []
        return _well_above_its_guess(metrics, loss, level, vocab_size, pretrained_base)
    if first <= level or (_a_first_step_blip(loss, level) and _then_learned_the_task(metrics, tail, first)):
        return []
    guess = (f"a uniform guess over its {vocab_size} tokens (ln {vocab_size} = {format_number(level)})" if known
             else f"a uniform guess over any tokenizer's vocabulary (at most about {format_number(level)})")
    message = (f"the first training loss {format_number(first)} of this {ADAPTER_METHODS[method]} fine-tune is above "
               f"{guess}, {_what_followed(metrics, loss, tail, first)}: an "
               "adapter starts as the identity, so the pre-trained base predicted these targets worse than chance. "
               "The labels or inputs are not what the model expects (another model's tokenizer or chat template, "
               "labels shifted or not masked, base weights not loaded); the loss that follows is the adapter "
               "undoing that, not the task being learned. Check a decoded batch against the model's template.")
    return [start_at_the_guess(step, message, first, level, vocab_size if known else None, method,
                               last_tenth_loss=tail)]


def start_at_the_guess(step: int, message: str, first: float, level: float, vocab_size: int | None, method: str,
                       **more) -> Finding:
    """The `start_above_uniform_guess` warning at a first training loss `first` against the uniform guess `level`
    (over `vocab_size` tokens where known), with what else its rule measured (`more`)."""
    return Finding("start_above_uniform_guess", "warning", step, message, metric="loss",
                   evidence={"first_loss": first, "uniform_guess_loss": level, "vocab_size": vocab_size,
                             "method": method, **more})


def _one_point_above_its_guess(loss, method: str, vocab_size: int | None) -> list[Finding]:
    """The one training loss a run logged, above the uniform guess: ln V of its known vocabulary, else (for an adapter)
    ln 440k, about 13, the guess of any tokenizer; an adapter fine-tune's above it, any other run's `_FAR_BEYOND` times
    above it (the bar `impossible_loss` holds a longer log to).
    A LoRA (QLoRA) starts as the identity, so a loss logged within its first window is the trained base's own on these
    targets, and a start-up blip would need a later point to show it so (a run of a step or two logs one point, at its
    end); a fresh head starts a little above ln V, nothing starts several times above it. One number cannot show
    whether it is a sum (`impossible_loss` needs later points for that): it is read as the model's start
    (MUmarAmanat_peft-example's flan-t5-base LoRA, one step at 51.25 with its label padding unmasked, 4.9x ln 32128);
    else []. (Another run's lone point, its vocabulary not known, is read so only where the run trains its whole model
    and the point is the only loss its log holds, `_FAR_BEYOND` x ln 440k = 39 its bar: 2b3o4o_transformer-
    implementation's one SGD step at 961.1; a log of masked NaN windows keeps one real loss among its zeros, of a run
    whose method is not known, lf-sft-graduate-agent's 122, and is left alone.) The caller
    divides a loss its transformers release may have summed over accumulation steps, so this is per step."""
    adapter = method in _IDENTITY_AT_START
    level = math.log(vocab_size) if vocab_size else FRESH_HEAD_RANGE[1]
    first, step = float(loss.iloc[0]), int(loss.index[0])
    if first <= (1.0 if adapter else _FAR_BEYOND) * level:
        return []
    guess = (f"a uniform guess over its {vocab_size} tokens (ln {vocab_size} = {format_number(level)})" if vocab_size
             else f"a uniform guess over any tokenizer's vocabulary (at most about {format_number(level)})")
    if adapter:
        start = (f"the only training loss this {ADAPTER_METHODS[method]} fine-tune logged, {format_number(first)} at "
                 f"step {step}, is above {guess}: an adapter starts as the identity, so the pre-trained base predicted "
                 "these targets worse than chance")
    else:
        start = (f"the only training loss this run logged, {format_number(first)} at step {step}, is "
                 f"{format_number(first / level)}x {guess}: no model, pre-trained or freshly initialised, starts so "
                 "far above chance")
    message = (f"{start}. The labels or inputs are not what the model expects (another model's tokenizer or chat "
               "template, labels shifted or padding not masked, base weights not loaded or broken in half precision), "
               "or the logged loss is a sum, and one point cannot show the run learned. Check a decoded batch against "
               "the model's template, and log more often.")
    return [Finding("start_above_uniform_guess", "warning", step, message, metric="loss",
                    evidence={"first_loss": first, "uniform_guess_loss": level, "vocab_size": vocab_size,
                              "method": method, "n_points": 1})]


def _a_whole_models_only_loss(metrics: Metrics, method: str) -> bool:
    """Whether a run known to train its whole model (method full) logged one loss point in all: no NaN window, no
    masked zero beside the one real loss."""
    return method == "full" and len(metrics[LOSS]) == 1


def _first_eval_above_its_guess(metrics: Metrics, vocab_size: int | None) -> list[Finding]:
    """A fine-tune of a trained model that logged no training loss (a logging interval longer than the run): its
    first eval loss is the model as it then stands scoring held-out targets of the same kind, so one above ln V of
    its known vocabulary says what a first training loss there would (t5-small's first eval 10.9 after an epoch,
    ln 32128 = 10.38), where the eval loss later comes down under that guess (a per-token mean); else []."""
    evals = finite(metrics[EVAL_LOSS]) if EVAL_LOSS in metrics else None
    if evals is None or len(evals) < 2 or not (isinstance(vocab_size, int) and vocab_size >= _TOKEN_VOCABULARY):
        return []
    level, first, step = math.log(vocab_size), float(evals.iloc[0]), int(evals.index[0])
    if first <= level or not per_token_later(evals, level):
        return []
    tail = _last_tenth(evals)
    message = (f"no training loss was logged, and the first eval loss {format_number(first)} (step {step}) of this "
               f"fine-tune of a trained model is above a uniform guess over its {vocab_size} tokens (ln {vocab_size} = "
               f"{format_number(level)}); the eval loss then came down to about {format_number(tail)}. A trained model "
               "scores its own kind of text far under that guess, so after these updates it still predicted the "
               "targets worse than chance: the labels or inputs are not what it expects (labels padded and not masked "
               "to -100, another model's tokenizer or template), and the fall that follows may be it learning that "
               "rather than the task. Check a decoded batch, and log the training loss (logging_steps under the run's "
               "length).")
    return [Finding("start_above_uniform_guess", "warning", step, message, metric=EVAL_LOSS,
                    evidence={"first_eval_loss": first, "uniform_guess_loss": level, "vocab_size": vocab_size,
                              "last_tenth_eval_loss": tail})]


def detect_start_near_the_guess(metrics: Metrics, method: str, vocab_size: int | None, task_type: str | None = None,
                                pretrained_base: str | None = None) -> list[Finding]:
    """One `no_learning_evidence` warning for a run loaded from trained weights (an adapter, or a config naming its
    base) whose first loss is `_NEAR_CHANCE` x ln V or more of its known vocabulary and whose loss still ends over
    `_STILL_HIGH` x ln V; or []. A trained language model reads its own kind of text far under the uniform guess (a
    pretrained GPT-2 on English: 3-4 nats, ln 50257 = 10.82): a base that scores these targets near chance is not
    being shown text it can read (labels full of padding, another model's tokenizer), and an end still over half the
    guess, above what token frequencies alone give, is no fine-tune that worked, however steadily it fell (a GPT-2
    LoRA's 9.46 -> 7.22 over three epochs). A start near chance that the run then leaves far behind (8.6 -> 0.4) is a
    first window's template or new tokens being put right, and is left alone."""
    loss = real_loss(metrics)
    trained = method in ADAPTER_METHODS or bool(pretrained_base)
    known = isinstance(vocab_size, int) and vocab_size >= _TOKEN_VOCABULARY
    if not trained or not (known or method in ADAPTER_METHODS) or len(loss) < 2 or is_preference_log(metrics) \
            or task_type not in _TOKEN_TASKS:
        return []
    # an unknown vocabulary: the guess over the smallest one a language model's tokenizer has (ln 8k = 9.0), which
    # a first loss must reach itself (not 0.8 of it) to say the same of any vocabulary in use
    level = math.log(vocab_size) if known else FRESH_HEAD_RANGE[0]
    first, tail = float(loss.iloc[0]), _last_tenth(loss)
    if not (_NEAR_CHANCE * level if known else level) <= first <= (level if known else FRESH_HEAD_RANGE[1]) \
            or tail < _STILL_HIGH * level:
        return []
    start = (f"this {ADAPTER_METHODS[method]} fine-tune of a trained base" if method in ADAPTER_METHODS
             else f"this run, loaded from the trained {pretrained_base},")
    guess = (f"{100 * first / level:.0f}% of ln {vocab_size} = {format_number(level)}, the uniform guess over its "
             "vocabulary" if known else f"at or above {format_number(level)}, about the uniform guess over the "
             "smallest vocabulary a language model's tokenizer has (ln 8000 = 8.99; this run's is not known)")
    message = (f"the first training loss {format_number(first)} of {start} is {guess}, and the run ended at "
               f"about {format_number(tail)} ({100 * tail / level:.0f}% of it; {len(loss)} points, steps "
               f"{int(loss.index[0])} to {int(loss.index[-1])}): a trained model reads its own kind of text far under "
               "that guess, so the base was not shown text it can read, and an end this high is no fine-tune that "
               "worked, however steadily it fell. Check a decoded batch: labels over padding (pad = eos not masked), "
               "another model's tokenizer or template." + ("" if known else " (Where the run used transformers "
               "4.46-4.47 with gradient accumulation, the logged loss is a sum over the accumulation steps: divide "
               "it by them before reading it so.)"))
    return [Finding("no_learning_evidence", "warning", int(loss.index[0]), message, end_step=int(loss.index[-1]),
                    metric="loss", evidence={"first_loss": first, "last_tenth_loss": tail, "uniform_guess_loss": level,
                                             "vocab_size": vocab_size, "method": method, "n_points": int(len(loss))})]


_TOKEN_TASKS = (None, "CAUSAL_LM", "SEQ_2_SEQ_LM")  # a loss over tokens (a translator's too), not over classes
_NEAR_CHANCE = 0.8  # x ln V: a first loss this near the guess is a base that cannot read its targets (a working
# fine-tune's first window starts at 0.1-0.4 of it; of the real runs, adapters that started from 0.8 up and ended
# fine fell under a tenth of the guess)
_STILL_HIGH = 0.55  # x ln V at the end (last tenth): over half the guess, about what token frequencies alone give


def _far_above_any_guess(metrics: Metrics, loss, level: float, trained: bool = False) -> list[Finding]:
    """A run not known to train an adapter (a full fine-tune, pre-training from scratch), its vocabulary not known:
    a fresh head or a poor initialisation starts a little above ln V, nothing starts `_FAR_BEYOND` times the largest
    guess in use (ln 440k); where the same logged loss later comes down under that guess, it is a per-token mean
    (`per_token_later`: no sum), so the start was the model's, far worse than chance on these targets (a model
    converted to 8-bit layers, say). A run that fine-tunes a `trained` model has no fresh head's large initial logits
    to explain any start above that largest guess: it is held to the guess itself (an SFT stage's first loss 15.4,
    over ln 440k = 13 and so over any vocabulary's guess, then 2.1 a hundred steps on). A start-up blip, the next
    point already at a fine-tune's level and the task then learned, is left alone."""
    guess = f"{format_number(level)}, the uniform guess over the largest vocabulary in use (ln 440k)"
    who = "no model fine-tuned from trained weights" if trained else "no model, pre-trained or freshly initialised,"
    return _start_beyond(metrics, loss, level, 1.0 if trained else _FAR_BEYOND, guess, None,
                         f"which {who} does. Its weights were not loaded or "
                         "converted as meant (a quantized or resized model, a broken initialisation), or the labels "
                         "or inputs are not what it expects (another tokenizer or template)")


def _above_any_guess_beside_its_eval(metrics: Metrics, loss) -> list[Finding]:
    """A run not known to train an adapter whose first training loss is above the guess of the largest vocabulary
    (ln 440k) and `_WELL_ABOVE` x the eval loss logged at the same step, that eval under the guess: the same weights
    score held-out text as a model may (a fresh one at about ln V), so no initial logits explain the training number,
    a per-token mean of these weights it is not (a helper that sums more batches than it divides by: 19.6 against an
    eval of 10.9 at step 0 of a fresh GPT-2-sized model, ln 50257 = 10.82). Not a start-up blip whose task was then
    learned."""
    evals = finite(metrics[EVAL_LOSS]) if EVAL_LOSS in metrics else None
    first, step, tail = float(loss.iloc[0]), int(loss.index[0]), _last_tenth(loss)
    if evals is None or step not in evals.index or first <= ANY_VOCABULARY_GUESS or (
            _a_first_step_blip(loss, ANY_VOCABULARY_GUESS) and _then_learned_the_task(metrics, tail, first)):
        return []
    held_out = float(evals[step])
    if not 0 < held_out <= ANY_VOCABULARY_GUESS or first < _WELL_ABOVE * held_out:
        return []
    message = (f"the first training loss {format_number(first)} (step {step}) is above "
               f"{format_number(ANY_VOCABULARY_GUESS)}, the uniform guess over the largest vocabulary in use "
               "(ln 440k), "
               f"while the eval loss of the same weights at that step is {format_number(held_out)} "
               f"({format_number(first / held_out)}x under it): a model that scores held-out text so cannot score its "
               "training batches worse than any uniform guess, so the logged training loss is not a per-token mean of "
               "these weights (a helper that sums more batches than it divides by, another loss term). Read the eval "
               "loss to judge the run, and check how the training loss is computed.")
    return [Finding("start_above_uniform_guess", "warning", step, message, metric="loss",
                    evidence={"first_loss": first, "uniform_guess_loss": ANY_VOCABULARY_GUESS, "eval_loss": held_out,
                              "vocab_size": None, "method": None, "last_tenth_loss": tail})]


_WELL_ABOVE = 1.5  # a fresh model's first loss sits at about ln V (its logits near 0); this far above it, no init
# ... of a trained model's start: a model built from scratch may start above ln V with large initial logits (T5 v1.1's
# untied head), and a character vocabulary's CTC loss is summed over frames per character: neither is judged so
_TOKEN_VOCABULARY = 1000


def _well_above_its_guess(metrics: Metrics, loss, level: float, vocab_size: int,
                          pretrained_base: str | None = None) -> list[Finding]:
    """A run not known to train an adapter, its vocabulary known: a first loss `_WELL_ABOVE` x ln V or more (under
    impossible_loss's bar for a sum) that the same logged loss later comes down under ln V from (a per-token mean),
    not a start-up blip. A freshly initialised model starts at about ln V and a trained one below it: this one scored
    its targets far worse than chance (Donut fine-tuned on a JSON of new field tokens: 25.7 at its first window, ln
    57525 = 10.96, then 15.5, 8.7). Where the run names the trained model it was loaded from, no fresh head's large
    initial logits explain a start above ln V: any first loss over it is read so where the loss is still over it once
    the learning rate reached its peak (a pretrained translation T5 at 12.9, 11.7, 10.7 over its first 1500 steps at
    full rate, ln 30101 = 10.31); one under it by the end of the warm-up is left to the bar above (t5-small at 13.6
    over a warm-up's first 50 steps, 8.8 at 100)."""
    guess = f"ln {vocab_size} = {format_number(level)}, the uniform guess over the model's vocabulary"
    trained = (f"a trained one (this run loads {pretrained_base}) below it" if pretrained_base
               else "a trained one below it")
    factor = 1.0 if pretrained_base and _above_past_the_warmup(metrics, loss, level) else _WELL_ABOVE
    return _start_beyond(metrics, loss, level, factor, guess, vocab_size,
                         f"where a freshly initialised model starts at about that guess and {trained}. "
                         "Tokens added to the vocabulary with untrained embeddings, weights not loaded as meant, or "
                         "labels and inputs that are not what it expects (another tokenizer or template) do this")


def _above_past_the_warmup(metrics: Metrics, loss, level: float) -> bool:
    """A logged loss above `level` at or after the learning rate's peak (the first logged step where no rate was
    logged): not only the warm-up's first, smallest updates."""
    rate = finite(metrics[LR]) if LR in metrics else None
    peak = int(rate.idxmax()) if rate is not None and len(rate) else int(loss.index[0])
    return bool((loss[loss.index >= peak] > level).any())


def _start_beyond(metrics: Metrics, loss, level: float, factor: float, guess: str, vocab_size: int | None,
                  why: str) -> list[Finding]:
    """The warning of a first loss over `factor` x the guess `level`, the same logged loss coming down under it
    later, and no start-up blip; else []."""
    first, step, tail = float(loss.iloc[0]), int(loss.index[0]), _last_tenth(loss)
    if first <= factor * level or not per_token_later(loss, level) or _eval_never_under(metrics, loss, level) or (
            _a_first_step_blip(loss, level) and _then_learned_the_task(metrics, tail, first)):
        return []
    message = (f"the first training loss {format_number(first)} is {format_number(first / level)}x {guess}, and the "
               f"same logged loss comes down to about {format_number(tail)} later, as a per-token mean does: at its "
               f"start the model predicted these targets {'far ' if first > _WELL_ABOVE * level else ''}worse than "
               f"chance, {why}; what the loss first shows is "
               "that being undone, not the task. Check the model's loss on a known text, and a decoded batch, before "
               "training.")
    return [Finding("start_above_uniform_guess", "warning", step, message, metric="loss",
                    evidence={"first_loss": first, "uniform_guess_loss": level, "vocab_size": vocab_size,
                              "method": None, "last_tenth_loss": tail})]


def _eval_never_under(metrics: Metrics, loss, level: float) -> bool:
    """The eval loss logged beside the training loss never comes under the guess `level`, though it was logged once the
    training loss had come under it: no per-token mean of a model that reads the training targets under chance stays
    so far above it on held-out ones, so both are sums (raquel-github_ivd's question generator sums its NLLLoss over a
    game's words: training 148 -> 2.67 once memorized, validation never under 59.9, 4.6x ln 440k, in 100 epochs)."""
    evals = finite(metrics[EVAL_LOSS]) if EVAL_LOSS in metrics else None
    under = loss[loss <= level]
    return evals is not None and len(under) > 0 and bool((evals.index >= under.index[0]).any()) \
        and float(evals.min()) > level


_FAR_BEYOND = 3.0  # (impossible_loss's bar for a sum: the same start, told apart by where the loss goes later)
# A start that was a blip: the loss then fell to this fraction of it, or the token accuracy rose this much
_LEARNED_FALL = 0.1
_LEARNED_ACCURACY_RISE = 0.2
# ... but only where the start was a blip: the second logged loss under this fraction of the uniform guess after a
# first step logged alone, or under the second fraction (a fine-tune's level) after a first window of many steps
_BLIP_LEVEL = 0.5
_GLITCH_LEVEL = 1.5  # a first step this far over the guess is no model's level (ms-swift's 20.5, 1.7x ln 151936)
_FINE_TUNE_LEVEL = 0.25
ACCURACY_KEYS = ("mean_token_accuracy", "token_acc", "acc")


def _a_first_step_blip(loss, level: float) -> bool:
    """The start above the guess was a start-up blip: logged at the first step alone with the next logged loss under
    half the uniform guess (ms-swift's 20.5 at step 1, 3.95 at step 10), or, over a first window of many steps,
    with the next window already at a fine-tune's level, under a quarter of the guess (tasfiahmrinmoyee's Gemma 3
    LoRA: 14.75 over steps 1-50, then 1.22). A base still several nats up at its second window (Amankumar10's
    TinyLlama LoRA: 12.36 over steps 1-10, then 4.88, ln 32000 = 10.37; mycguo's GPT-2 LoRA: 11.0, then 10.4,
    ln 50257 = 10.8) really scored these targets about at chance: whatever it learned next (padding, a template)
    is not evidence against that. (The two fractions part the real runs seen so far, few of them.) A first step is a
    blip only where it stands `_GLITCH_LEVEL` x the guess or more, beyond what any weights score: a lone first loss at
    about the guess is the trained base scoring its targets at chance, the very thing to report (bmcmahan2016's
    t5-base loop: 10.47 at batch 0, ln 32128 = 10.38, decoder inputs without the start token; 2.70 500 batches
    later)."""
    second, first = float(loss.iloc[1]), float(loss.iloc[0])
    return second < _FINE_TUNE_LEVEL * level or (int(loss.index[0]) <= 1 and second < _BLIP_LEVEL * level
                                                 and first >= _GLITCH_LEVEL * level)


def _then_learned_the_task(metrics: Metrics, tail: float, first: float) -> bool:
    """The rest of the run shows the task learned after all: the loss's last tenth fell to a tenth of its start
    (ms-swift's first step at 20.5, then 0.24 by step 20), or the logged token accuracy rose by 0.2 or more."""
    if tail <= _LEARNED_FALL * first:
        return True
    _, accuracy = token_accuracy(metrics)
    return accuracy is not None and _last_tenth(accuracy) - float(accuracy.iloc[0]) >= _LEARNED_ACCURACY_RISE


def _last_tenth(series) -> float:
    return head_and_tail(series, parts=10)[1]


def token_accuracy(metrics: Metrics):
    """(name, finite points) of the token accuracy the log holds (TRL's mean_token_accuracy, ms-swift's
    token_acc), or (None, None)."""
    name = next((k for k in ACCURACY_KEYS if k in metrics), None)
    found = finite(metrics[name]) if name else None
    return (name, found) if found is not None and len(found) >= 2 else (None, None)


def _what_followed(metrics: Metrics, loss, tail: float, first: float) -> str:
    """What the loss did after its start: stayed high, or fell fast from a base that was still at chance at its
    second logged point (learning something easier than the task: padding, a fixed template)."""
    if not _then_learned_the_task(metrics, tail, first):
        return f"and the run only came down to about {format_number(tail)}{_accuracy_note(metrics, 'stayed at')}"
    return (f"still {format_number(float(loss.iloc[1]))} at step {int(loss.index[1])}, then down to about "
            f"{format_number(tail)}{_accuracy_note(metrics, 'went')} (what an adapter learns on a base at chance may "
            "be padding or a fixed template rather than the task)")


def _accuracy_note(metrics: Metrics, verb: str) -> str:
    name, accuracy = token_accuracy(metrics)
    if accuracy is None:
        return ""
    return (f" while its {name} {verb} {format_number(float(accuracy.iloc[0]))} -> "
            f"{format_number(float(accuracy.iloc[-1]))}")
