"""Values a loss cannot take: a negative cross-entropy, or a first loss far beyond the uniform guess (unless the loss
then settles at that guess: a per-token loss that started confidently wrong, `start_above_uniform_guess`).

A language-model (SFT or pre-training) loss is a cross-entropy, never below 0. A logged loss
below `-impossible_loss_tolerance` therefore says the loss function or its logging is wrong
(a fused or approximate cross-entropy kernel, a custom loss, label smoothing done wrong), and
whatever the log shows near 0 cannot be read as "learned". A warning: the run may still be
fine, but its loss curve cannot be trusted. Preference and RL logs (DPO, GRPO: rewards/*,
logps/*) are skipped: their losses can be negative by design.

Where the vocabulary size is known, a first logged loss more than `_BEYOND` times ln(vocabulary) is
no per-token mean cross-entropy either: a model at its start sits near the uniform guess (ln V) or, once
trained, well below it, and a mean of hundreds of nats a token takes logits no run starts with. The
logged quantity is a sum (over a step's samples or tokens) or another loss; where the log also holds a
perplexity, the ratio loss / ln(perplexity) says by how much. Where every logged loss (five or more) is over
`_BEYOND_ANY_SUM` x ln(vocabulary), no sum over a step's tokens explains it either: the model or its loss is broken
and the run never reached a loss a working model takes, an error (`_never_near_any_loss`).
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .metrics import LOSS, PERPLEXITY_NAMES, Metrics, finite, format_number, is_preference_log, real_loss
from .never_learned import FRESH_HEAD_RANGE
from .overfitting import EVAL_LOSS

ANY_VOCABULARY_GUESS = FRESH_HEAD_RANGE[1]  # ln(440k): the uniform guess of the largest vocabulary in use


def detect_impossible_loss(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `impossible_loss` warning from the first negative loss of an SFT/pre-training log, or []."""
    if LOSS not in metrics or is_preference_log(metrics):
        return []
    loss = real_loss(metrics)
    negative = loss[loss.to_numpy() < -thresholds.impossible_loss_tolerance]
    if negative.empty:
        return []
    first, lowest = int(negative.index[0]), float(negative.min())
    message = (f"loss is negative at {len(negative)} logged {'step' if len(negative) == 1 else 'steps'} from step "
               f"{first} (lowest {format_number(lowest)}): a cross-entropy cannot be below 0, so the loss function or "
               "its logging is off (a fused or approximate kernel, a custom loss) and the curve near 0 cannot be "
               "read as learning.")
    evidence = {"n_points": int(len(negative)), "lowest": lowest, "lowest_step": int(negative.idxmin()),
                "share": float(len(negative) / max(len(loss), 1))}
    return [Finding("impossible_loss", "warning", first, message, end_step=int(negative.index[-1]), metric=LOSS,
                    evidence=evidence)]


def detect_loss_beyond_cross_entropy(metrics: Metrics, vocab_size: int | None,
                                     framework: str | None = None) -> list[Finding]:
    """One `impossible_loss` warning at the first loss when it is over `_BEYOND` x ln(vocabulary), or []. Where the
    vocabulary is not known, for a framework whose trainer logs the per-token mean (`MEAN_LOSS_FRAMEWORKS`: a
    hand-written loop may log a sum by its own choice), when its first `_HELD` losses are over `_BEYOND` x the
    uniform guess of the largest vocabulary in use (ln 440k, about 13 nats) and it never comes under that guess:
    no per-token mean cross-entropy of any model takes such values (a loss that does come down under it later is a
    per-token mean that started badly: `start_above_uniform_guess`; so with the vocabulary known, and a lone point,
    which cannot show either)."""
    if LOSS not in metrics or is_preference_log(metrics):
        return []
    known = isinstance(vocab_size, int) and vocab_size >= 2
    loss = real_loss(metrics)
    level = math.log(vocab_size) if known else ANY_VOCABULARY_GUESS
    # (one point cannot tell a sum from a per-token start confidently wrong, `_settles_at_the_guess`: a lone loss is
    # `start_above_uniform_guess`'s to read, as a model's start: MUmarAmanat_peft-example's one step at 51.25)
    if len(loss) < 2 or float(loss.iloc[0]) <= _BEYOND * level:
        return []
    first, step = float(loss.iloc[0]), int(loss.index[0])
    if not known:
        if framework not in MEAN_LOSS_FRAMEWORKS or len(loss) < _HELD or float(loss.min()) <= level \
                or float(loss.iloc[:_HELD].min()) <= _BEYOND * level:
            return []
        guess = f"{format_number(level)}, the uniform guess over the largest vocabulary in use (ln 440k)"
    elif _never_near_any_loss(loss, level):
        return [_never_near_any_loss_finding(metrics, loss, level, vocab_size)]
    elif _settles_at_the_guess(loss, level):
        return [_far_above_then_at_the_guess(loss, first, step, level, vocab_size)]
    elif per_token_later(loss, level):  # a per-token mean that started badly: `start_above_uniform_guess` reads it
        # (Shyam-Kumar-Khatri's flan-t5-small LoRA: 36.97 at its first window, 3.4 at the end, ln 32128 = 10.38)
        return []
    else:
        guess = f"ln {vocab_size} = {format_number(level)}, the uniform guess over the model's vocabulary"
    never = ("" if known
             else f" and the logged loss never comes down under it (lowest {format_number(float(loss.min()))})")
    message = (f"the first logged loss {format_number(first)} is {format_number(first / level)}x {guess}{never}: a "
               "mean cross-entropy per token does not start there, so the logged loss is a sum (over a step's samples "
               f"or tokens), another quantity, or computed on broken labels{_perplexity_note(metrics, loss)}. Read the "
               "curve's shape, not its values, and log the per-token mean to compare runs.")
    return [Finding("impossible_loss", "warning", step, message, end_step=int(loss.index[-1]), metric=LOSS,
                    evidence={"first_loss": first, "uniform_guess_loss": level,
                              "vocab_size": vocab_size if known else None, "beyond_cross_entropy": True})]


def per_token_later(loss, level: float) -> bool:
    """The same logged loss comes down under the uniform guess `level` (its last tenth's median): a per-token mean,
    as no sum over a step's samples or tokens does (a loss summed over a batch's response tokens stays tens of nats)."""
    return float(loss.iloc[-max(1, len(loss) // 10):].median()) <= level


def link_impossible_start(findings: list[Finding], metrics: Metrics) -> list[Finding]:
    """An impossible loss from the first logged point (`detect_loss_beyond_cross_entropy`) that the loss never came
    down from before the run broke (every real loss up to the first standing error above the uniform guess) is where
    it went wrong: the first error with no cause of its own is put down to it, and it takes the error's severity (the
    first incident is the first thing wrong, not the first error). The findings otherwise unchanged, in order."""
    start = next((f for f in findings if f.kind == "impossible_loss" and f.evidence.get("beyond_cross_entropy")
                  and not f.abandoned), None)
    errors = [i for i, f in enumerate(findings) if f.severity == "error" and not f.abandoned and f.caused_by is None
              and f is not start and start is not None and f.step > start.step]
    if start is None or not errors:
        return findings
    i = min(errors, key=lambda k: findings[k].step)
    loss = real_loss(metrics)
    before = loss[loss.index < findings[i].step]
    if len(before) < _HELD or float(before.min()) <= start.evidence["uniform_guess_loss"]:
        # a per-token loss somewhere before the run broke, or one point right before it (the blow-up's own onset)
        return findings
    out = list(findings)
    out[i] = replace(out[i], caused_by=start.key)
    out[out.index(start)] = replace(start, severity="error")
    return out


_BEYOND = 3.0
_HELD = 3  # logged losses: an impossible start held this long is an incident of its own, not a blow-up's onset
# Frameworks whose trainer logs the mean cross-entropy per token (a hand-written loop, Lightning's or DeepSpeed's
# included, logs whatever its author computed: a sum over a batch's tokens is a choice there, not a fault)
MEAN_LOSS_FRAMEWORKS = frozenset({"hf_trainer", "trl", "unsloth", "llamafactory", "webui", "swift", "axolotl",
                                  "megatron", "xtuner", "olmo", "maxtext", "torchtitan", "mlx", "nanogpt", "nanochat",
                                  "llm.c"})
_SETTLED = 0.15  # the later half's median within this share of ln(vocabulary): the loss sits at the uniform guess


# A sum over a step's tokens stays under (tokens a step) x (a few x ln V), and no batch in use holds 1e7 tokens that a
# hand-written loop sums (a loss summed over a whole epoch's tokens falls under the bar as the model learns): a loss
# over this multiple of ln V at every logged point is no cross-entropy of a working model, per token or summed
_BEYOND_ANY_SUM = 1e7
_NEVER_NEAR_POINTS = 5  # logged losses: enough to say the loss never came down (fewer: the warning above)


def _never_near_any_loss(loss, level: float) -> bool:
    """Whether `_NEVER_NEAR_POINTS` logged losses or more are all over `_BEYOND_ANY_SUM` x ln(vocabulary)."""
    return len(loss) >= _NEVER_NEAR_POINTS and float(loss.min()) > _BEYOND_ANY_SUM * level


def _never_near_any_loss_finding(metrics: Metrics, loss, level: float, vocab_size: int) -> Finding:
    """The `impossible_loss` error of a log whose every loss is beyond any cross-entropy, summed or not
    (`_never_near_any_loss`): the model or its loss is broken and the run never reached a loss a working model
    takes (GW-S_tranform_pytorch's character transformer, ln 29 = 3.37: 2.99e10 at its first epoch, never under
    4.2e8 in 100, every generated word one letter repeated)."""
    first, step, lowest = float(loss.iloc[0]), int(loss.index[0]), float(loss.min())
    evals = finite(metrics[EVAL_LOSS]) if EVAL_LOSS in metrics else loss.iloc[:0]
    held = (f", and the eval loss never under {format_number(float(evals.min()))}" if len(evals) else "")
    message = (f"the loss never came near a cross-entropy: the first logged loss is {format_number(first)} and every "
               f"one of {len(loss)} logged losses is over 10^{math.log10(_BEYOND_ANY_SUM):.0f} x ln {vocab_size} = "
               f"{format_number(level)}, the uniform guess over the model's vocabulary (the lowest "
               f"{format_number(lowest)} at step {int(loss.idxmin())}{held}). No per-token loss takes such values, and "
               "no sum of one over a step's tokens either: the model's outputs (logits of that order) or the loss "
               "computed from them are broken, and the run never reached a loss a working model takes. Check the "
               "output layer and the loss's inputs (log-probabilities where it expects logits, a missing "
               "normalisation) on one batch before training.")
    return Finding("impossible_loss", "error", step, message, end_step=int(loss.index[-1]), metric=LOSS,
                   evidence={"first_loss": first, "lowest_loss": lowest, "uniform_guess_loss": level,
                             "vocab_size": vocab_size, "beyond_cross_entropy": True, "beyond_any_sum": True})


def _far_above_then_at_the_guess(loss, first: float, step: int, level: float, vocab_size: int) -> Finding:
    later = float(np.median(loss.to_numpy(dtype="float64")[len(loss) // 2:]))
    message = (f"the first logged loss {format_number(first)} is {format_number(first / level)}x ln {vocab_size} = "
               f"{format_number(level)}, the uniform guess over the model's vocabulary, and the loss then settles at "
               f"that guess (median {format_number(later)} over the later half of the log): a per-token loss, so the "
               "model started confidently wrong and ended predicting no better than chance. The labels or inputs are "
               "not what the model expects (another tokenizer or template, labels shifted), or its weights did not "
               "load as meant; check a decoded batch against the model's template.")
    return Finding("start_above_uniform_guess", "warning", step, message, end_step=int(loss.index[-1]), metric=LOSS,
                   evidence={"first_loss": first, "uniform_guess_loss": level, "vocab_size": vocab_size,
                             "later_median": later})


def _settles_at_the_guess(loss, level: float) -> bool:
    """Whether the later half of the log sits at the uniform guess (its median within `_SETTLED` of ln V): a loss
    on the per-token scale, whose start far above it was a model confidently wrong (FPT-VVU's frozen PhoGPT with a
    fresh projector: 39.5 at the start, 9.7-10.1 against ln 20486 = 9.93 from its third eighth on), not a sum,
    which would stay a multiple of the per-token level as the run learns."""
    later = loss.to_numpy(dtype="float64")[len(loss) // 2:]
    return len(later) >= 4 and abs(float(np.median(later)) / level - 1) <= _SETTLED


def _perplexity_note(metrics: Metrics, loss) -> str:
    """`; the same lines' perplexity ... is k x ln(perplexity) at every line` where the log holds one whose log
    is a steady fraction of the loss, else ''."""
    name = next((m for m in metrics if m.lower() in PERPLEXITY_NAMES), None)
    if name is None:
        return ""
    ppl = metrics[name]
    shared = loss.index.intersection(ppl.index[np.isfinite(ppl.to_numpy()) & (ppl.to_numpy() > 1)])
    if len(shared) < 2:
        return ""
    per_token = np.log(ppl.loc[shared].to_numpy())
    ratio = loss.loc[shared].to_numpy() / per_token
    if np.ptp(ratio) > 0.02 * float(np.median(ratio)):
        return ""
    return (f"; the same lines' {name} gives a per-token loss of {format_number(per_token[0])} -> "
            f"{format_number(per_token[-1])}, and the logged loss is {format_number(float(np.median(ratio)))}x it "
            "at every line")


__all__ = ["detect_impossible_loss", "detect_loss_beyond_cross_entropy", "link_impossible_start", "per_token_later"]
