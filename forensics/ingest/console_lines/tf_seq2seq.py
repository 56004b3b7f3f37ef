"""The TensorFlow 1.x sequence-to-sequence tutorial's checkpoint prints (tensorflow/models tutorials/rnn/translate
translate.py, and its many forks: chatbots, NMT, annotators), one block every `steps_per_checkpoint` steps:

    global step 200 learning rate 0.5000 step-time 0.49 perplexity 343.51
      eval: bucket 0 perplexity 152.94
      eval: empty bucket 1
      eval: bucket 2 perplexity 201.10

and a fork's layout that prints the cost too (1-sun_H-s2s's annotate.py):

    global step 100 learning rate 0.1000 step-time 12.05
      train perplexity 99.71
      train cost 4.6022906947
      eval perplexity 44.60

Each block becomes a `StepLine` at its global step: `learning_rate`, `step_time_s` (the mean seconds a step took since
the last checkpoint), `perplexity` as printed and the training `loss`: the printed cost where there is one (the mean
per-token cross-entropy over the checkpoint's steps; kind "tf_seq2seq_cost"), else ln of the printed perplexity
(translate.py prints `math.exp(loss)` of that same mean, so its log gives the loss back to the print's decimals; kind
"tf_seq2seq_ppl" says the loss was derived so). The held-out `eval_loss` is ln of the eval perplexity; where the
original prints one per bucket (one random dev batch of each bucket's lengths), the mean of the buckets' ln
perplexities, `eval_ppl` exp of it: one held-out series for the judges, each bucket weighted alike at every checkpoint
(per-bucket series would be one noisy batch each, at levels that differ by sentence length). A perplexity printed
`inf` (translate.py's for a loss over 300) reads as an infinite loss.

The tutorial's training loop has no planned end: `while True`, a checkpoint saved at every block, until someone or
something stops it. A console of these blocks says so in its meta (`OPEN_ENDED_KEY`), so that a kill after the last
block is read as the way such a run ends, not as a crash of one that meant to go on (analyzers.crash).

A console still being written may end in a line cut mid-number (no newline after it): as every console reader does
(`fields._fields`), its last number is left out and the block marked cut, unless the line is printed in the very
shape of one before it (`fields.printed_shape`: only its newline is missing). A cut bucket line leaves the block's
held-out mean out: over fewer buckets than the other blocks' it would move with their lengths, not with the model.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from .fields import FLOAT, StepLine, number, perplexity_loss, printed_shape

OPEN_ENDED_KEY = "open_ended_loop"
OPEN_ENDED = ("the TensorFlow seq2seq tutorial's loop (translate.py's `while True`), which trains until it is stopped "
              "and saves a checkpoint at every `global step N` block")
KINDS = ("tf_seq2seq_cost", "tf_seq2seq_ppl")
# In a text that holds neither, no block is the tutorial's.
MARKERS = ("global step ", " step-time ")
_HEADER = re.compile(r"(?<![\w-])global step (\d{1,18}) learning rate (" + FLOAT + r") step-time (" + FLOAT
                     + r")(?: perplexity (" + FLOAT + r"))?\s*$", re.IGNORECASE)
_TRAIN_LINE = re.compile(r"^\s+train (perplexity|cost) (" + FLOAT + r")\s*$", re.IGNORECASE)
_EVAL_LINE = re.compile(r"^\s+eval(?:: bucket (\d{1,4}))? perplexity (" + FLOAT + r")\s*$", re.IGNORECASE)
_EMPTY_BUCKET = re.compile(r"^\s+eval: empty bucket \d{1,4}\s*$")


def seq2seq_reader(text: str) -> Seq2seqBlocks | None:
    """A reader of the tutorial's blocks where the text holds its header's words; else None."""
    return Seq2seqBlocks() if all(marker in text for marker in MARKERS) else None


@dataclass
class Seq2seqBlocks:
    """`owns(line)`: a block's header, or a line of the block under one; `feed(line)` returns the block a new header
    ends, `close()` the one left open at the end of the file."""

    step: int | None = None
    header: dict = field(default_factory=dict)
    train: dict = field(default_factory=dict)  # "perplexity" / "cost" under the header
    eval_ppl: list = field(default_factory=list)  # the one eval perplexity, or a bucket's each
    cut: bool = False  # the block's last line was cut mid-write: a field left out
    shapes: set = field(default_factory=set)  # the printed shapes of the lines read

    def owns(self, line: str) -> bool:
        if "step-time" in line and _HEADER.search(line):
            return True
        return self.step is not None and line[:1].isspace() and _block_line(line) is not None

    def feed(self, line: str, last_line: bool = False) -> StepLine | None:
        """The block a new header ends; `last_line`: the file's last line, its last number maybe cut (module
        docstring)."""
        shape = printed_shape(line)
        cut = last_line and shape not in self.shapes
        self.shapes.add(shape)
        header = _HEADER.search(line) if "step-time" in line else None
        if header is not None:
            done = self.close()
            step, lr, seconds, ppl = header.groups()
            self.step, self.cut = int(step), cut
            self.header = {"learning_rate": number(lr), "step_time_s": None if cut and ppl is None else number(seconds)}
            if ppl is not None and not cut:
                self.train["perplexity"] = number(ppl)
            return done
        name, value = _block_line(line)
        self.cut = self.cut or (cut and name is not None)
        if name == "eval":
            self.eval_ppl = [] if cut else self.eval_ppl + [value]  # (cut: no mean of the block's buckets)
        elif name is not None and not cut:
            self.train[name] = value
        return None

    def close(self) -> StepLine | None:
        done = _block_record(self.step, self.header, self.train, self.eval_ppl, self.cut) \
            if self.step is not None else None
        self.step, self.header, self.train, self.eval_ppl, self.cut = None, {}, {}, [], False
        return done


def _block_line(line: str) -> tuple[str | None, float | None] | None:
    """("perplexity" / "cost", value) of a train line, ("eval", perplexity) of an eval line, (None, None) of an empty
    bucket's; None for any other line."""
    m = _TRAIN_LINE.match(line)
    if m is not None:
        return m.group(1).lower(), number(m.group(2))
    m = _EVAL_LINE.match(line)
    if m is not None:
        return "eval", number(m.group(2))
    return (None, None) if _EMPTY_BUCKET.match(line) else None


def _block_record(step: int, header: dict, train: dict, eval_ppl: list, cut: bool) -> StepLine:
    """One block's `StepLine` (module docstring): the header's rate and step time, the cost or ln perplexity as the
    loss, the mean ln perplexity of the eval lines as the eval loss."""
    metrics = [(name, value) for name, value in header.items() if value is not None]
    cost, ppl = train.get("cost"), train.get("perplexity")
    if cost is not None:
        metrics.append(("loss", cost))
    elif ppl is not None:
        metrics.append(("loss", perplexity_loss(ppl)))
    if ppl is not None:
        metrics.append(("perplexity", ppl))
    losses = [perplexity_loss(p) for p in eval_ppl if p is not None]
    if losses:
        mean = sum(losses) / len(losses)
        metrics += [("eval_loss", mean), ("eval_ppl", math.exp(mean) if not mean > 700 else math.inf)]
    kind = KINDS[0] if cost is not None else KINDS[1]
    return StepLine(kind, step, None, tuple(metrics), cut)
