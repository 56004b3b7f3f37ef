"""Memorization of a character-level language model trained from random weights, told by its loss a character.

`memorization.PRETRAINING_FLOOR` (0.5 nats a token) is written for subword tokens of several characters; where the
run's own code makes a token one character (its vocabulary is the set of the text's characters), the loss is per
character, and a training loss under `CHAR_FLOOR` a character is under what a model trained from random weights on
one text reaches on held-out English text (`floor_told`: large models trained on far more go lower). A small model
that gets there after many passes over its one text, with nothing held out, is reciting it.
The facts come from the run's code and outputs (ingest.notebook_code.char_corpus) as a `CharCorpus`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ..findings import Finding
from .memorization_onset import running_median, settled_from
from .metrics import LOSS, Metrics, format_number, is_preference_log, real_loss
from .overfitting import eval_loss_names

# nats a character: 1.08 bits, Transformer-XL's held-out figure on text8 (277M parameters, 90M characters; GPT-2's
# 1.5B parameters reached 0.98 bits there, so this bounds a model trained on one text, not every model). Small
# character models generalise to ~1.3-1.5 nats on held-out Shakespeare.
CHAR_FLOOR = 0.75
# passes over the text (characters trained on / the text's characters): twice `memorization.MANY_PASSES`, counted in
# characters, since a window slid one character at a time shows each character to the model once a window's length
# an epoch. HannaKi_Deep_Learning_in_LangTech_course's char GRU, 0.95 nats after ten passes, is still generalising.
MANY_PASSES_OVER_TEXT = 20.0


@dataclass(frozen=True)
class CharCorpus:
    """What the run's code and outputs say of its character-level text: the assignment that makes a token one
    character, the text's length in characters (and the line printing it), the characters a training batch takes in,
    and the batches an epoch (a Keras fit's bar; None where the log's steps are batches)."""

    vocabulary: str
    text_chars: int
    text_chars_line: str
    chars_a_batch: int
    batches_an_epoch: int | None = None


def memorized_per_character(metrics: Metrics, corpus: CharCorpus | None, steps_are_epochs: bool) -> list[Finding]:
    """A `memorization` warning where the loss (a character's, `corpus` says) settled under `CHAR_FLOOR` to the end,
    after `MANY_PASSES_OVER_TEXT` passes or more over the text, with no eval loss logged; dated at the first point
    where both hold. `steps_are_epochs`: the log's steps count epochs (a Keras fit), whose batches the corpus must give.
    [] where any of it is not known."""
    if corpus is None:
        return []
    found = under_floor_after_many_passes(metrics, CHAR_FLOOR, corpus.chars_a_batch, corpus.batches_an_epoch,
                                          steps_are_epochs, corpus.text_chars)
    return [_finding(*found, corpus, steps_are_epochs)] if found else []


def under_floor_after_many_passes(metrics: Metrics, floor: float, units_a_batch: int, batches_an_epoch: int | None,
                                  steps_are_epochs: bool, text_units: float
                                  ) -> tuple[pd.Series, tuple[int, int], tuple[float, float]] | None:
    """(the loss, (the position from which its running median settled under `floor` to the end, the first position
    there after `MANY_PASSES_OVER_TEXT` passes or more), (the passes made there, the passes by the end)) where the log
    has a training loss and no eval loss, and a batch takes in `units_a_batch` of the text's `text_units`
    (characters or tokens, the floor's unit; a step is a batch, or an epoch of `batches_an_epoch` where
    `steps_are_epochs`); None where any of it is missing or does not hold."""
    if LOSS not in metrics or eval_loss_names(metrics) or is_preference_log(metrics):
        return None
    units_a_step = ((batches_an_epoch if steps_are_epochs else 1) or 0) * units_a_batch
    if units_a_step <= 0 or text_units <= 0:
        return None
    loss = real_loss(metrics)
    settled = settled_from(running_median(loss), floor)
    if settled is None or settled == 0:
        return None  # never under the floor, or under it from the first point: no descent to judge
    passes = pd.Series(loss.index.to_numpy(dtype="float64") * units_a_step / text_units, index=loss.index)
    late = [i for i in range(settled, len(loss)) if passes.iloc[i] >= MANY_PASSES_OVER_TEXT]
    if not late:
        return None
    return loss, (settled, late[0]), (float(passes.iloc[late[0]]), float(passes.iloc[-1]))


def floor_told(text_chars: int) -> str:
    """Where `CHAR_FLOOR` comes from, said for a model trained on one text: a bound on what such a model reaches on
    text it has not seen, not on every model (GPT-2's 1.5B parameters reached 0.98 bits a character on text8)."""
    return (f"{format_number(CHAR_FLOOR)} nats a character (1.08 bits) is Transformer-XL's held-out figure on text8, "
            f"a 277M-parameter model trained on 90M characters; a model trained from random weights on one text of "
            f"{text_chars:,} characters does not get there on text it has not seen")


def _finding(loss: pd.Series, settled_and_at: tuple[int, int], passes_then_and_at_end: tuple[float, float],
             corpus: CharCorpus, steps_are_epochs: bool) -> Finding:
    """The warning at position `at` (the first under the floor to the end, from position `settled`, with the passes
    made), its message saying the figure a character, the passes and where one token = one character came from."""
    (settled, at), (passes, passes_at_end) = settled_and_at, passes_then_and_at_end
    step, value = int(loss.index[at]), float(loss.iloc[at])
    batch = (f"{corpus.batches_an_epoch} batches an epoch x {corpus.chars_a_batch} characters a batch"
             if steps_are_epochs else f"{corpus.chars_a_batch} characters a step")
    message = (f"the loss is {format_number(value)} nats a character ({format_number(value / math.log(2))} bits) at "
               f"{'epoch' if steps_are_epochs else 'step'} {step} and stays under {format_number(CHAR_FLOOR)} to the "
               f"end, after training on {format_number(passes)} times the text's characters ({batch}, against "
               f"'{corpus.text_chars_line}'; {format_number(passes_at_end)} times by the end), a token being one "
               f"character (`{corpus.vocabulary}`), and no eval loss was logged: {floor_told(corpus.text_chars)}, "
               "so the text is most likely learned by heart (memorization). A held-out split's loss, or the "
               "generations compared with the training text, would tell; fewer passes or more text if it is.")
    return Finding("memorization", "warning", step, message, end_step=int(loss.index[-1]), metric=LOSS, evidence={
        "value": value, "level": CHAR_FLOOR, "per_character": True, "chars_per_token": 1,
        "chars_per_token_from": corpus.vocabulary, "passes": passes, "passes_at_end": passes_at_end,
        "eval_loss_logged": False, "to_end": True, "settled_step": int(loss.index[settled])})
