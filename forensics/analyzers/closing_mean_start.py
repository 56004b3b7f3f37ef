"""A fine-tune of a trained model whose only loss is the Trainer's closing train_loss (the mean of every step's loss:
logging_steps longer than the run, no eval), above the uniform guess ln V over its vocabulary. A mean above a level
needs points above it, and the more of the run sat under it the further above the rest must have been: the loss was
above the guess over much of the run, and a trained model (an adapter starts as the identity) scores its own kind of
text far under that guess from its first step. So the labels or inputs are not what the model expects, as for a
first logged loss above ln V (`fine_tune_start`). One number cannot say whether it was so from the start or after a
blow-up; the message says both. REICHIYAN_llm_ft_tinyllama: a TinyLlama QLoRA's three steps, train_loss 13.697
(ln 32000 = 10.37)."""
from __future__ import annotations

import math

from ..findings import Finding
from .metrics import TRAIN_LOSS, Metrics, finite, format_number
from .never_learned import FRESH_HEAD_RANGE
from .no_training_loss import closing_mean


def closing_mean_above_its_guess(metrics: Metrics, vocab_size: int | None, method_words: str) -> list[Finding]:
    """One `start_above_uniform_guess` warning at the closing summary's step where a log with no per-step loss holds a
    closing train_loss above ln V of the known vocabulary, or, V not known, above ln 440k = 13, the guess of any
    tokenizer (`FRESH_HEAD_RANGE`); else []. `method_words` names the fine-tune ("QLoRA fine-tune")."""
    mean = closing_mean(metrics)
    known = isinstance(vocab_size, int) and vocab_size > 1
    level = math.log(vocab_size) if known else FRESH_HEAD_RANGE[1]
    if mean is None or mean <= level:
        return []
    step = int(finite(metrics[TRAIN_LOSS]).index[-1])
    guess = (f"a uniform guess over its {vocab_size} tokens (ln {vocab_size} = {format_number(level)})" if known
             else f"a uniform guess over any tokenizer's vocabulary (at most about {format_number(level)})")
    message = (f"no per-step loss was logged, and the closing train_loss of this {method_words}, "
               f"{format_number(mean)} (the mean of every step's loss over its {step} "
               f"{'step' if step == 1 else 'steps'}), is above {guess}: the loss sat above chance over much of the "
               "run, from its start or after a blow-up the log cannot show, where a trained model scores its own kind "
               "of text far under that guess. The labels or inputs are not what the model expects (labels padded and "
               "not masked to -100, another model's tokenizer or template), or the loss blew up. Check a decoded "
               "batch, and log the training loss (logging_steps under the run's length).")
    return [Finding("start_above_uniform_guess", "warning", step, message, end_step=step, metric=TRAIN_LOSS,
                    evidence={"train_loss_mean": mean, "uniform_guess_loss": level,
                              "vocab_size": vocab_size if known else None, "closing_mean": True})]
