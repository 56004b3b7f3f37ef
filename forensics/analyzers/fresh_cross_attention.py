"""A warm-started encoder-decoder whose loss starts under what its decoder can score before training: the decoder
sees the tokens it must predict, and the falling loss shows no learning of the task.

`EncoderDecoderModel.from_encoder_decoder_pretrained` joins two trained checkpoints (BERT2BERT, Rothe et al. 2020,
"Leveraging Pre-trained Checkpoints for Sequence Generation Tasks") and gives the decoder cross-attention layers
initialised at random: before training, the decoder cannot read the source, and a decoder made from an encoder's
checkpoint (BERT's masked-LM head predicts the token at its own position, not the next one) has never predicted a
next token either. Such a model starts near the uniform guess (zanuura_Bert2Bert_Summarization_Liputan6's bert-tiny
pair: 9.25 nats a token over its first 10 steps, ln V = 10.37). A loss under `_UNDER_ANY_START` at its first step is
under what a summariser trained to the end scores on held-out text (t5-small on SAMSum ends near 1.5-2): the decoder
is handed its targets, most often decoder_input_ids equal to the labels (the BERT2BERT recipe written before
transformers 4.12, which shifted them inside the decoder; since 4.12 the model shifts only labels it builds the
decoder's inputs from, and says so in a FutureWarning).

The step-1 level is bounded from the log alone: the Trainer logs the mean loss of the steps since its last log, so a
first point at step k is the mean of steps 1..k, and the untrained model's loss at step 1 is at most k times it
(no term is negative). No assumption on how fast the model can learn is needed. That holds only where the step is
the run's own update count: not where the reader numbered the points itself (a printed dict without a step, by its
place in the file: `steps_counted` False) nor where the first point sits at a whole epoch or later (steps numbered by
epoch, or a first log after a pass: the mean of an unknown number of updates).

    detect_start_under_a_fresh_decoder(metrics, parts)  # -> [] or one `no_learning_evidence` warning
"""
from __future__ import annotations

import math

from ..findings import Finding
from .metrics import LOSS, Metrics, format_number, is_preference_log, real_loss

# nats a token: under what a trained seq2seq model scores on unseen natural targets (about 1.5-2 for a summariser),
# and far under a fresh cross-attention decoder's start (near ln V: 9.25 of 10.37 for zanuura's BERT2BERT)
_UNDER_ANY_START = 1.0


def detect_start_under_a_fresh_decoder(metrics: Metrics, parts: str | None,
                                       steps_counted: bool = True) -> list[Finding]:
    """One `no_learning_evidence` warning over the loss's whole span where the model is an EncoderDecoderModel
    warm-started from two trained checkpoints (`parts`: "encoder X, decoder Y" from its config, None otherwise) and
    its first logged loss, at step k, bounds the step-1 loss (k x the first value) under `_UNDER_ANY_START`; else [].
    Only where k counts updates (module docstring): `steps_counted` (the log's own steps) and an epoch under 1 there."""
    loss = real_loss(metrics) if LOSS in metrics else None
    if not parts or loss is None or loss.empty or is_preference_log(metrics) or not steps_counted:
        return []
    if _epoch_at(metrics, loss.index[0]) >= 1:
        return []
    first_step, first = int(loss.index[0]), float(loss.iloc[0])
    at_most = max(first_step, 1) * first
    if at_most >= _UNDER_ANY_START:
        return []
    return [Finding("no_learning_evidence", "warning", first_step, _message(loss, parts, at_most),
                    end_step=int(loss.index[-1]), metric=LOSS,
                    evidence={"first_loss": first, "first_step": first_step, "step_one_at_most": at_most,
                              "level_bar": _UNDER_ANY_START, "warm_started_from": parts})]


def _epoch_at(metrics: Metrics, step: int) -> float:
    """The logged epoch at `step` (0 where none is: a log without epochs leaves the step as the update count)."""
    epoch = metrics["epoch"] if "epoch" in metrics else None
    value = float(epoch.get(step, 0.0)) if epoch is not None else 0.0
    return value if math.isfinite(value) else 0.0


def _message(loss, parts: str, at_most: float) -> str:
    first_step, first, last = int(loss.index[0]), float(loss.iloc[0]), float(loss.iloc[-1])
    over = "its first step's" if first_step <= 1 else f"the mean of its first {first_step} steps"
    return (f"the loss is {format_number(first)} at step {first_step}, {over}, so at step 1, before any update, the "
            f"model scored at most {format_number(at_most)} nats a token: an EncoderDecoderModel warm-started from two "
            f"checkpoints ({parts}) has a decoder whose cross-attention is new and cannot yet read the source; such "
            "a model starts near the uniform guess, not under what a trained summariser scores on held-out text "
            f"(1.5-2 nats). The decoder sees the tokens it must predict, and the fall ({format_number(first)} -> "
            f"{format_number(last)}) shows no learning of the task: most often decoder_input_ids passed equal to the "
            "labels (since transformers 4.12 the model no longer shifts them). Pass the labels only (the model "
            "builds the shifted decoder inputs from them, with decoder_start_token_id set), and tell by an eval "
            "loss on held-out pairs or a few generated outputs.")
