"""The validation results a PyTorch Lightning `LoggingCallback` logs after each validation, as transformers' legacy
Lightning examples (examples/legacy/pytorch-lightning/lightning_base.py) and the notebooks copied from them (Suraj
Patil's T5 fine-tuning notebook: joaorafaelm_notebooks) write them: a head line, then one line a key of the trainer's
`callback_metrics`, sorted, each `key = value` with the value's str(), a tensor's repr most often:

    INFO:__main__:***** Validation results *****
    INFO:__main__:avg_train_loss = tensor(0.5107, device='cuda:0')
    INFO:__main__:avg_val_loss = tensor(0.3268, device='cuda:0')
    INFO:__main__:epoch = 0
    INFO:__main__:loss = tensor(0.5484, device='cuda:0')
    INFO:__main__:train_loss = tensor(0.5484, device='cuda:0')
    INFO:__main__:val_loss = tensor(0.3268, device='cuda:0')

(the logging prefix may be any, or none). `val_loss` is the held-out loss (`avg_val_loss` the same mean again);
`train_loss` (and `loss`) the last training batch's loss, as the progress bar shows it; `avg_train_loss` the mean
over an epoch, printed only once an epoch has closed. The printed `epoch` is not the epochs done (the second
validation of joaorafaelm_notebooks' two-epoch runs says `epoch = 0`): left out.

A validation closes an epoch (the examples validate once an epoch): each block becomes a `StepLine` of kind
"lightning_results", placed as a once-an-epoch line, at validation 1, 2, ... in file order. A `***** Test results
*****` block (the test set, after training) ends the block before it and is not read.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...timeline import canonical_metric
from .fields import FLOAT, StepLine

MARKER = "***** Validation results *****"
_HEAD = re.compile(r"\*{5} (Validation|Test) results \*{5}\s*$")
# `key = value`, after a logging prefix (`INFO:__main__:`, `... - INFO - lightning_base -   `) or none
_ROW = re.compile(r"(?:^|[:\-]\s*)(?P<key>[A-Za-z_]\w{0,60}) = (?:tensor\()?(?P<value>" + FLOAT + r")"
                  r"(?:,\s*(?:device|dtype|grad_fn|requires_grad)=[^()]*?(?:<\w+>)?)*\)?\s*$", re.IGNORECASE)
# the callback's names as the timeline's: the held-out loss, the last batch's training loss
_NAMES = {"val_loss": "eval_loss", "train_loss": "loss", "avg_train_loss": "avg_train_loss"}
_LEFT_OUT = ("epoch", "loss", "avg_val_loss")  # epoch: not the epochs done; loss, avg_val_loss: repeats of the above


@dataclass
class LightningResults:
    """The callback's validation blocks, fed line by line: `owns(line)` says a line is a block's head or one of its
    rows; `feed(line)` returns the record a new head completes, `close()` the last one."""

    validations: int = 0
    reading: bool | None = None  # None: no block yet; True: a validation block's rows; False: a test block's
    metrics: dict = field(default_factory=dict)

    def owns(self, line: str) -> bool:
        if "results *****" in line and _HEAD.search(line):
            return True
        return self.reading is not None and _ROW.search(line) is not None

    def feed(self, line: str) -> StepLine | None:
        head = _HEAD.search(line) if "results *****" in line else None
        if head is None:
            row = _ROW.search(line)
            if self.reading:
                self.metrics[row.group("key").lower()] = float(row.group("value"))
            return None
        done = self.close()
        self.reading = head.group(1) == "Validation"
        return done

    def close(self) -> StepLine | None:
        metrics = [(_NAMES.get(key) or canonical_metric(key), value) for key, value in self.metrics.items()
                   if key not in _LEFT_OUT]
        if "train_loss" not in self.metrics and "loss" in self.metrics:
            metrics.append(("loss", self.metrics["loss"]))
        done = None
        if any(name in ("eval_loss", "loss") for name, _ in metrics):
            self.validations += 1
            done = StepLine("lightning_results", self.validations, None,
                            (("epoch", float(self.validations)), *sorted(metrics)))
        self.metrics = {}
        return done
