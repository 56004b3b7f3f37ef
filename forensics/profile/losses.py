"""The run's training loss read for the profile: where it starts (about ln(vocabulary), a model on random weights;
about ln 2, a pairwise loss at chance)."""
from __future__ import annotations

import math

import numpy as np

from ..analyzers.metrics import PERPLEXITY_NAMES
from ..analyzers.never_learned import FRESH_HEAD_RANGE
from ..analyzers.stuck_at_guess import SMALLEST_VOCABULARY
from ..config import RunConfig
from ..timeline import Timeline


def pairwise_loss_at_chance(config: RunConfig, timeline: Timeline) -> float | None:
    """The first training loss of a model with a one-score head (num_labels 1: a reward model's, or a
    regressor's) when it is about ln 2, where a pairwise loss -log sigmoid(r_chosen - r_rejected) starts
    with untrained scores; else None."""
    if config.get("model.num_labels") != 1:
        return None
    loss = training_losses(timeline)
    return float(loss[0]) if len(loss) >= 3 and abs(loss[0] - math.log(2)) <= NEAR_LN2 else None


NEAR_LN2 = 0.05  # the first logged loss is an average over the first logging interval: a little under ln 2


def first_loss_outside(timeline: Timeline, low: float, high: float) -> bool:
    """Whether the first training loss lies under `low` or above `high` (False where none is logged)."""
    loss = training_losses(timeline)
    return bool(len(loss)) and not low <= float(loss[0]) <= high


def training_losses(timeline: Timeline) -> np.ndarray:
    frame = timeline.final()
    loss = frame.loc[frame["metric"] == "loss", "value"].to_numpy(dtype="float64")
    return loss[np.isfinite(loss)]


def _launches_losses(timeline: Timeline) -> np.ndarray:
    """The training loss of every launch of the file that holds the final one, in the file's order, where it holds
    several: the run started over from its first step (25125334-bjtu_transformer-iwslt17 appends six launches to one
    CSV; its first starts at 8.47, about ln V, the last at 5.34 after an epoch): the run's model began on random
    weights where its first launch did. Empty where the file holds one launch."""
    final = timeline.final()
    first = final.loc[final["metric"] == "loss", "source"]
    if first.empty:
        return np.empty(0)
    rows = timeline.frame[(timeline.frame["source"] == first.iloc[0]) & (timeline.frame["metric"] == "loss")]
    if rows["segment"].nunique() < 2:
        return np.empty(0)
    loss = rows.sort_values(["segment", "step"], kind="stable")["value"].to_numpy(dtype="float64")
    return loss[np.isfinite(loss)]


def starts_at_random_guess(timeline: Timeline, vocab_size: int | None = None) -> float | None:
    """The first logged training loss when it sits where a randomly initialised model's does, about
    ln(vocabulary) (9 to 13.9 for 8k to 1.1M tokens, or from `_NEAR_THE_GUESS` x ln V up where the model's config gives
    its vocabulary `vocab_size`; a fine-tune of a trained model starts near 1 to 3), and
    the loss clearly falls from there: its last tenth `_CLEAR_FALL` under it, or a slow fall at nearly every
    point (a warm-up's first steps); a run stuck there is judged by never_learned, not profiled by it, and a
    wobble is no descent. A first point logged after some steps has already left ln(vocabulary): from
    `_SCRATCH_LOW` nats up it counts too when the loss then falls by 40% or more (30% from step 0), gradually: above
    half its start over the first `_SLOW_SHARE` of the logged points (a fine-tune of a trained model never starts there
    unless something is broken at its start, and then it falls within a few steps: 8.3 -> 1.3 in ten). Else None."""
    at_the_guess = _short_log_at_a_known_guess(timeline, vocab_size)
    if at_the_guess is not None:
        return at_the_guess
    lo, hi = random_guess_range(vocab_size)
    fell = _FELL_FROM_STEP_ZERO if _logged_from_step_zero(timeline) else _FELL
    for loss in (training_losses(timeline), _per_token_losses_from_perplexity(timeline), _launches_losses(timeline)):
        if len(loss) < 3 or not min(_SCRATCH_LOW, lo) <= loss[0] <= hi:
            continue
        tail = float(np.median(loss[-max(1, len(loss) // 10):]))
        steady = loss[-1] < loss[0] and float(np.mean(np.diff(loss) < 0)) >= _STEADY
        # random weights learn slowly: the loss stays above half its start over the log's first stretch, where a
        # fine-tune's bad start (a template, new tokens) is put right in a few steps however often it is logged
        gradual = bool(np.all(loss[:max(2, int(len(loss) * _SLOW_SHARE))] >= _HALVED * loss[0]))
        if loss[0] >= lo and (tail <= _CLEAR_FALL * loss[0] or steady) or gradual and tail <= fell * loss[0]:
            return float(loss[0])
    return None


def _logged_from_step_zero(timeline: Timeline) -> bool:
    loss = timeline.series("loss").dropna()
    return len(loss) > 0 and loss.index[0] == 0


def _short_log_at_a_known_guess(timeline: Timeline, vocab_size: int | None) -> float | None:
    """The first loss of a log too short to show a fall (under 3 points) when it is within `_AT_THE_GUESS` of ln V
    for the config's vocabulary or, with none, a common one (`_COMMON_VOCABULARIES`): only random weights score a
    text at the uniform guess (amjadmajid_llm_toaster's 2-step smoke test: 10.818 = ln 50257 at step 1). Else None."""
    loss = training_losses(timeline)
    if not 1 <= len(loss) < 3:
        return None
    sizes = (vocab_size,) if isinstance(vocab_size, int) and vocab_size >= SMALLEST_VOCABULARY else _COMMON_VOCABULARIES
    first = float(loss[0])
    return first if any(abs(first - math.log(v)) <= _AT_THE_GUESS * math.log(v) for v in sizes) else None


# GPT-2's (and nanoGPT's padded), LLaMA's, cl100k's, Llama 3's and Qwen2's vocabularies
_COMMON_VOCABULARIES = (50257, 50304, 32000, 100277, 128256, 151936)
_AT_THE_GUESS = 0.01  # a share of ln V: a fresh model's first step or two leave it a few hundredths under the guess


def random_guess_range(vocab_size: int | None) -> tuple[float, float]:
    """(low, high) of the first losses read as a model's on random weights: any vocabulary's uniform guess
    (FRESH_HEAD_RANGE's ln 8k up to `_LARGEST_GUESS`, ln 1.1M), reaching down to `_NEAR_THE_GUESS` x ln V where the
    config gives a smaller vocabulary V (a character or custom-token model built from scratch: 151 tokens guess at ln
    151 = 5.02, under ln 8k)."""
    lo = FRESH_HEAD_RANGE[0]
    if isinstance(vocab_size, int) and vocab_size >= SMALLEST_VOCABULARY:
        lo = min(lo, _NEAR_THE_GUESS * math.log(vocab_size))
    return lo, _LARGEST_GUESS


# The top of that range: a word-level softmax outgrows any tokenizer (FRESH_HEAD_RANGE's ln 440k): the One Billion
# Word benchmark's 793,470 words guess at ln 793,470 = 13.58 (eric-haibin-lin_lm's first loss 13.5814), so up to
# ln 1.1M; no fine-tune of a trained model starts that high
_LARGEST_GUESS = math.log(1_100_000)  # 13.9


_NEAR_THE_GUESS = 0.9  # the first logging interval's updates take a fresh model a little under ln V

_SCRATCH_LOW = 5.5  # nats (ln 245): a first loss this high that then falls gradually is a model learning from random
                    # weights (msh2481's 500-token vocabulary starts at ln 500 = 6.21; DanielPuentee's 1000-token one
                    # is at 6.27 by its first line, step 100; CollinPhipps' 5000-token one at 5.95 by step 200)
_HALVED = 0.5  # a fine-tune's broken start falls under half its first loss in one logging interval
_FELL = 0.6  # ... a model from random weights falls gradually, by 40% or more over the log
# ... or by 30% where the log starts at step 0, the untrained model's own loss, not a first interval's mean that
# the updates already moved (msh2481_DenseGPT: ln 500 = 6.22 at step 0 -> 4.13 in 14 points; TimNiklasWitte_Building-
# GPT-from-scratch: 7.14 at step 0 -> 4.65); a log whose first point is step 10 or 40 keeps the 40%
_FELL_FROM_STEP_ZERO = 0.7
_SLOW_SHARE = 0.15  # ... staying above half its start over this share of the logged points


def _per_token_losses_from_perplexity(timeline: Timeline) -> np.ndarray:
    """ln of the training perplexity a log holds beside its loss (a trainer whose `loss` is a sum logs the
    per-token value this way), or an empty array."""
    frame = timeline.final()
    ppl = frame.loc[frame["metric"].str.lower().isin(PERPLEXITY_NAMES), "value"].to_numpy(dtype="float64")
    ppl = ppl[np.isfinite(ppl) & (ppl > 0)]
    return np.log(ppl)


_CLEAR_FALL = 0.9  # a tenth under the first loss: a descent, not a fresh head's wobble
_STEADY = 0.8  # or down from one point to the next at this share of them


def character_model_at_step_zero(timeline: Timeline) -> float | None:
    """The held-out loss measured before the model learned anything (`_before_any_update`) when it is the uniform
    guess over a character-sized vocabulary (ln 32 .. `_SCRATCH_LOW`, a byte or character alphabet) and then falls to
    under half of it: a model on random weights (MatthewZhang473_GPT_from_scratch: val 4.2820 at step 0, ln 65 = 4.17
    for tiny Shakespeare's characters, 1.47 at the end). A pretrained model's held-out loss on its fine-tuning text
    starts near where it ends (nanoGPT's finetune_shakespeare from GPT-2: about 3.5, then near 3). Else None."""
    held_out = timeline.series("eval_loss").dropna()
    if len(held_out) < 3 or not _before_any_update(timeline, held_out):
        return None
    first = float(held_out.iloc[0])
    if not math.log(SMALLEST_VOCABULARY) <= first <= _SCRATCH_LOW:
        return None
    return first if float(held_out.iloc[-1]) <= _HALVED * first else None


def _before_any_update(timeline: Timeline, held_out) -> bool:
    """Whether the first held-out loss was measured before any update: at step 0 of a nanoGPT-style console, or
    level with the training loss measured at the same point (within `_SAME_GUESS`), a model that predicts its own
    training text no better than unseen text, as a uniform guess does (danis-b_YodaGPT's table, whose row 0 is read as
    the end of epoch 1: train 4.3513, val 4.3519, ln 64 = 4.16 for its 64 characters)."""
    if _ESTIMATE_KINDS & set(timeline.console_kinds) and held_out.index[0] == 0:
        return True
    train = timeline.series("loss").dropna()
    return len(train) > 0 and train.index[0] == held_out.index[0] \
        and abs(float(train.iloc[0]) - float(held_out.iloc[0])) <= _SAME_GUESS * float(held_out.iloc[0])


# the consoles of an estimate_loss loop (nanoGPT's `step N: train loss X, val loss Y`, its pipe form `step N | train X
# | val Y`, LispLLM_lispllm): the estimate at step 0 runs before the loop's first update
_ESTIMATE_KINDS = {"nanogpt", "split_pipe"}
_SAME_GUESS = 0.01  # train and held-out losses of a model on random weights: the same guess on both, to a few 0.1%
