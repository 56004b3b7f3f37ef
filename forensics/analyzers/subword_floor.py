"""Memorization of a language model trained from random weights on subword pieces whose length in characters the run
itself tells, judged a character.

`memorization.PRETRAINING_FLOOR` (0.5 nats a token) holds for any subword token; where the run's outputs print both
the text's characters and its tokens (a BPE or SentencePiece model trained or applied in the notebook), a token is
known to hold `chars_per_token` characters on average, and a loss a token is that many characters' loss. Under
`char_floor.CHAR_FLOOR` a character, that is past what a model trained on one text reaches on held-out text; a small
model that gets there after many passes over its one text, with nothing held out, is reciting it (the character
rule, `char_floor`, with the floor scaled to the token). The facts come from the run's code and outputs
(ingest.notebook_code.subword_corpus) as a `SubwordCorpus`.
Not for a simplified synthetic text: TinyStories, written with a 3-4 year old's vocabulary, is held out at ~0.76 nats a
Llama-2 token (llama2.c's 110M model), well under 0.75 nats a character; a notebook of it rarely makes 20 passes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ..findings import Finding
from .char_floor import CHAR_FLOOR, floor_told, under_floor_after_many_passes
from .metrics import LOSS, Metrics, format_number


@dataclass(frozen=True)
class SubwordCorpus:
    """What the run's code and outputs say of its text cut into subword pieces: the tokenizer named, the text's length
    in characters and in tokens (each with the output line that prints it), the tokens a training batch takes in, and
    the batches an epoch (a Keras fit's bar; None where the log's steps are batches)."""

    tokenizer: str
    text_chars: int
    text_chars_line: str
    text_tokens: int
    text_tokens_line: str
    tokens_a_batch: int
    batches_an_epoch: int | None = None

    @property
    def chars_per_token(self) -> float:
        return self.text_chars / self.text_tokens if self.text_tokens > 0 else 0.0


def memorized_per_subword(metrics: Metrics, corpus: SubwordCorpus | None, steps_are_epochs: bool) -> list[Finding]:
    """A `memorization` warning where the loss a token settled under `CHAR_FLOOR` x the characters a token (the
    corpus's counts) to the end, after `char_floor.MANY_PASSES_OVER_TEXT` passes or more over the text's tokens, with
    no eval loss logged; dated at the first point where both hold. `steps_are_epochs`: the log's steps count epochs
    (a Keras fit), whose batches the corpus must give. [] where any of it is not known, or where a token would hold
    less than a character (the two counts are not of one text)."""
    if corpus is None or corpus.chars_per_token < 1:
        return []
    found = under_floor_after_many_passes(metrics, CHAR_FLOOR * corpus.chars_per_token, corpus.tokens_a_batch,
                                          corpus.batches_an_epoch, steps_are_epochs, corpus.text_tokens)
    return [_finding(*found, corpus, steps_are_epochs)] if found else []


def _finding(loss: pd.Series, settled_and_at: tuple[int, int], passes_then_and_at_end: tuple[float, float],
             corpus: SubwordCorpus, steps_are_epochs: bool) -> Finding:
    """The warning at position `at` (the first under the floor to the end, from position `settled`, with the passes
    made), its message saying the figure a token and a character, the floor, the passes and where the counts came
    from."""
    (settled, at), (passes, passes_at_end) = settled_and_at, passes_then_and_at_end
    step, value = int(loss.index[at]), float(loss.iloc[at])
    per_char, floor = value / corpus.chars_per_token, CHAR_FLOOR * corpus.chars_per_token
    batch = (f"{corpus.batches_an_epoch} batches an epoch x {corpus.tokens_a_batch} tokens a batch"
             if steps_are_epochs else f"{corpus.tokens_a_batch} tokens a step")
    message = (f"the loss is {format_number(value)} nats a token at {'epoch' if steps_are_epochs else 'step'} {step} "
               f"and stays under {format_number(floor)} to the end: a {corpus.tokenizer} token holds "
               f"{format_number(corpus.chars_per_token)} characters here ('{corpus.text_chars_line}' against "
               f"'{corpus.text_tokens_line}'), so that is {format_number(per_char)} nats a character "
               f"({format_number(per_char / math.log(2))} bits), under {format_number(CHAR_FLOOR)}, after training "
               f"on {format_number(passes)} times the text's tokens ({batch}; {format_number(passes_at_end)} times by "
               f"the end), and no eval loss was logged: {floor_told(corpus.text_chars)}, so the text is most likely "
               "learned by heart (memorization). A held-out split's loss, or the generations compared with the "
               "training text, would tell; fewer passes or more text if it is.")
    return Finding("memorization", "warning", step, message, end_step=int(loss.index[-1]), metric=LOSS, evidence={
        "value": value, "level": floor, "per_character": False, "value_per_character": per_char,
        "chars_per_token": corpus.chars_per_token, "chars_per_token_from": corpus.tokenizer, "passes": passes,
        "passes_at_end": passes_at_end, "eval_loss_logged": False, "to_end": True,
        "settled_step": int(loss.index[settled])})
