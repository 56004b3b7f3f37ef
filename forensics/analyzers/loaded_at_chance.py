"""A whole model loaded from trained weights whose first logged loss sits at the uniform guess while the learning
rate was still too small to have moved it: the weights as loaded predicted these targets no better than chance.

A trained language model reads text of its kind at 1-3 nats, far under ln V (ln 32000 = 10.37 for LLaMA). Where
the console says the run loaded trained weights at its start (Megatron's `successfully loaded checkpoint from DIR at
iteration 0`: profile.model_start.megatron_trained_start) and its first logged loss, a mean over the first logging
window, is at `_NEAR_CHANCE` x ln V or more (ln 8000 = 9.0, the smallest language-model vocabulary's guess, where
the vocabulary is not known) while the learning rate at that point is still under `_BARELY_MOVED` of the highest the
log reaches (a warm-up's first steps), the window's mean is the loaded model's own loss: the checkpoint did not load
as the trained model (a conversion fault, weights not matched to their names, another tokenizer), and what the run
does next is repair, not fine-tuning. inkcherry_Megatron-DeepSpeed: a LLaMA-7B converted from HF weights, 10.12 over
iterations 1-50 at lr <= 5e-7 of a 2e-5 peak, judged warning (`start_above_uniform_guess`, the corpus's kind for a
fine-tune of trained weights that starts at chance). An adapter's start is `fine_tune_start`'s; a run from random
weights (no such load line, or Megatron's `will start from random`) starts at ln V by nature and is left alone, and
so is a first window logged at the full learning rate, whose mean may hold the run's own early steps.
"""
from __future__ import annotations

import math

from ..findings import Finding
from .fine_tune_start import ADAPTER_METHODS, start_at_the_guess
from .metrics import LR, Metrics, finite, format_number, format_rate, real_loss
from .never_learned import FRESH_HEAD_RANGE

_NEAR_CHANCE = 0.8  # x ln V (fine_tune_start's bar for a base that cannot read its targets)
_BARELY_MOVED = 0.05  # x the log's highest learning rate: a first window this far down the warm-up is the start
_TOKEN_VOCABULARY = 1000


def detect_loaded_weights_at_chance(metrics: Metrics, loaded: tuple[str, str] | None, method: str,
                                    vocab_size: int | None) -> list[Finding]:
    """One `start_above_uniform_guess` warning at the first training loss (module docstring), or []."""
    loss = real_loss(metrics)
    if loaded is None or method in ADAPTER_METHODS or len(loss) < 2 or LR not in metrics:
        return []
    rates = finite(metrics[LR])
    step, first = int(loss.index[0]), float(loss.iloc[0])
    if rates.empty or step not in rates.index or not float(rates.max()) > 0:
        return []
    rate = float(rates.loc[step])
    known = isinstance(vocab_size, int) and vocab_size >= _TOKEN_VOCABULARY
    level = math.log(vocab_size) if known else FRESH_HEAD_RANGE[0]
    if first < (_NEAR_CHANCE * level if known else level) or rate > _BARELY_MOVED * float(rates.max()):
        return []
    guess = (f"{100 * first / level:.0f}% of ln {vocab_size} = {format_number(level)}, the uniform guess over its "
             "vocabulary" if known else f"at or above {format_number(level)}, about the uniform guess over the "
             "smallest vocabulary a language model's tokenizer has (ln 8000 = 8.99; this run's is not known)")
    peak = float(rates.max())
    message = (f"the first training loss {format_number(first)} (step {step}) of this model, loaded from trained "
               f"weights ({loaded[1][:120]}), is {guess}, logged while the learning rate was still "
               f"{format_rate(rate)} ({100 * rate / peak:.1f}% of the {format_rate(peak)} it reached): the "
               "updates so far were too small to move it, so the weights as loaded predicted these targets no better "
               "than chance, where a trained model reads its kind of text at 1-3. Most likely the checkpoint "
               "did not load as the trained model (a conversion fault, weights not matched to their layers, another "
               "tokenizer) - or its vocabulary was extended with untrained rows the data uses; what the loss does next "
               "is then repair, not the fine-tune. Check the converted checkpoint's loss on a few batches before "
               "training (it should be far under the guess).")
    return [start_at_the_guess(step, message, first, level, vocab_size if known else None, method,
                               learning_rate_at_first_loss=rate, loaded_from=loaded[1][:200])]
