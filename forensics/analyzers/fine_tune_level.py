"""A fine-tune of a trained language model whose loss stays far above what any trained model scores on text.

`learning_evidence` reads a fall of a few percent as learning, and for a fine-tune at a trained model's level (2.1 ->
2.0) it is: the base already reads its text, and little is left to fall. The same few percent at 5 nats per token are
not: a trained model scores its own kind of text far lower (GPT-2 small, zero-shot, at its worst in its paper: the One
Billion Word benchmark's perplexity 75 per word, 4.3 nats, fewer per BPE token; a 1B model of today reads code or
SQL near 1 nat), so a loss that sits over `_ABOVE_ANY_TEXT` and barely moves measures something the model cannot
learn (labels over padding, another tokenizer or template), not the task (LonelyGuy-SE1_QLoRA-Test's Qwen2.5-1.5B
QLoRA on SQL: 5.11 over its first tenth, 4.88 over its last, after two epochs).

    detect_fine_tune_far_above_text(metrics, thresholds, trained, task_type)  # -> [] or one `no_learning_evidence`
"""
from __future__ import annotations

from ..config import Thresholds
from ..findings import Finding
from .fall_measure import fell_clearly
from .metrics import LOSS, Metrics, finite, format_number, is_preference_log, real_loss
from .overfitting import EVAL_LOSS

# nats per token. Over GPT-2 small's worst zero-shot level (4.3 nats per word, 1BW) with a margin. Of the corpus's
# fine-tunes of trained models judged healthy, the highest ends are 4.45 (xuyubiao's P-tuning of ChatGLM-6B, down 20%),
# 4.21 (rqchao's bloomz-560m) and 4.20 (rokibol's Qwen2.5-0.5B, 10 steps)
_ABOVE_ANY_TEXT = 4.6
# The last tenth's median within this share of the first tenth's: a few percent, what `fell_clearly` takes from 2% on.
# A start far off that then falls by a fifth or more is the start rules' to read (fine_tune_start): the model was
# learning something. (LonelyGuy: -4.5%; the corpus's healthy fine-tunes ending over 4 nats fell 10% to 27%.)
_FEW_PERCENT = 0.1
_TOKEN_TASKS = (None, "CAUSAL_LM", "SEQ_2_SEQ_LM")  # a loss over tokens, not over a classifier's labels


def detect_fine_tune_far_above_text(metrics: Metrics, thresholds: Thresholds, trained: bool,
                                    task_type: str | None) -> list[Finding]:
    """One `no_learning_evidence` warning for a fine-tune of a `trained` model (an adapter, or a base it names) whose
    per-token loss ends over `_ABOVE_ANY_TEXT` nats having fallen, but less than `_FEW_PERCENT`, from its first
    tenth, over `learning_min_points` points or more, and whose eval loss (if logged) never came under that level; else
    []. A loss that did not fall at all is `learning_evidence`'s to warn of, one that rose the divergence rules'
    (keanuspies' bloom-3b LoRA, 10.3 -> 16.2). The caller passes the loss per step (divided where it may be a sum over
    accumulation steps)."""
    loss = real_loss(metrics) if LOSS in metrics else None
    if not trained or loss is None or len(loss) < thresholds.learning_min_points or is_preference_log(metrics) \
            or task_type not in _TOKEN_TASKS:
        return []
    _, head, tail = fell_clearly(loss, thresholds)
    evals = finite(metrics[EVAL_LOSS]) if EVAL_LOSS in metrics else None
    if tail < _ABOVE_ANY_TEXT or not (1 - _FEW_PERCENT) * head <= tail < head \
            or (evals is not None and len(evals) and float(evals.min()) < _ABOVE_ANY_TEXT):
        return []
    return [_finding(loss, head, tail)]


def _finding(loss, head: float, tail: float) -> Finding:
    first, last = int(loss.index[0]), int(loss.index[-1])
    message = (f"the loss of this fine-tune of a trained model went from about {format_number(head)} over its first "
               f"logged points to {format_number(tail)} over its last ({len(loss)} points, steps {first} to {last}; "
               f"{100 * (head - tail) / head:.1f}% lower): a trained language model scores its own kind of text far "
               f"under {format_number(_ABOVE_ANY_TEXT)} nats per token (1 to 3.5), so a loss that sits this high and "
               "barely falls measures something the model cannot learn, not the task: no evidence the run learned. "
               "Check a decoded batch (labels over padding: a pad token added or pad = eos, not masked to -100; "
               "another tokenizer or chat template), and tell by an eval loss or the model's generations on a few "
               "held-out prompts before and after training.")
    return Finding("no_learning_evidence", "warning", first, message, end_step=last, metric=LOSS,
                   evidence={"first_tenth_loss": head, "last_tenth_loss": tail, "level_bar": _ABOVE_ANY_TEXT,
                             "n_points": int(len(loss))})
