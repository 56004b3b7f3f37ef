"""`Epoch E: train=X, val=Y, ppl=P`: a loop's once-an-epoch print of its two split losses by split name alone, read
as losses only where the perplexity beside them is exp of one of them (`perplexity_of`, also used by `epoch_tensors`).
"""
from __future__ import annotations

import math
import re

from .fields import StepLine, FLOAT, _record

# A loop's once-an-epoch print of its training and validation losses, by split name alone, and the perplexity of one of
# them (`Epoch 007: train=1.9021, val=1.9530, ppl=7.05 [BEST]`, a Python logger's message)
EPOCH_SPLIT_LOSSES = re.compile(r"(?<![\w/])Epoch[ \t]*(\d{1,6})(?:[ \t]*/[ \t]*(\d{1,6}))?[ \t]*:[ \t]*"
                                r"train(?:ing)?[ \t]*=[ \t]*(" + FLOAT + r")[ \t]*[,|][ \t]*"
                                r"val(?:id|idation)?[ \t]*=[ \t]*(" + FLOAT + r")[ \t]*[,|][ \t]*"
                                r"(?:val[_ ]?)?ppl[ \t]*=[ \t]*(" + FLOAT + r")", re.IGNORECASE)


def epoch_split_losses(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """`Epoch E: train=X, val=Y, ppl=P` (kind "generic_epoch", epoch E its step): bare `train=` / `val=` may as well
    be accuracies, and the perplexity beside them is what says they are losses in nats. Where P is exp(Y) as printed
    (the held-out perplexity, the usual print), Y is the eval loss and X, printed beside it the same way, the training
    loss; where P is exp(X) alone, X is the training loss and Y, which P says nothing of, is not read."""
    train, val, ppl = (float(g) for g in m.group(3, 4, 5))
    of_val, of_train = (perplexity_of(m.group(5), m.group(i)) for i in (4, 3))
    if not (of_val or of_train):
        return None  # (a last line cut inside its ppl is none either: its number is no exp of a loss)
    held_out = [("eval_loss", val), ("eval_ppl", ppl)] if of_val else [("ppl", ppl)]
    metrics = [("loss", train), *held_out, ("epoch", float(m.group(1)))]
    return _record("generic_epoch", int(m.group(1)), m.group(2), metrics, False)


def perplexity_of(ppl: str, loss: str) -> bool:
    """Whether a printed perplexity is exp of a printed loss, to the decimals each was printed with (a loss off by
    half its last digit's unit moves its exp by that share; the perplexity's own rounding adds half its unit)."""
    value, printed = float(loss), float(ppl)
    # (the two add up: Birkbeck's eval_epoch_loss 0.9438 beside eval_ppl 2.5699, exp(0.9438) = 2.56973)
    return value < 700 and abs(printed - math.exp(value)) <= (_printed_step(loss) / 2 + 1e-9) * printed \
        + _printed_step(ppl) / 2 + 1e-9


def _printed_step(number: str) -> float:
    """The unit of a printed number's last digit: 0.01 for `10.73`, 1 for `11` (an exponent's number: its own)."""
    mantissa, _, exponent = number.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)
