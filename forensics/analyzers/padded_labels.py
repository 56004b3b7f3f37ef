"""Labels that count padding: the run's own code copies padded input_ids into the labels with nothing masking the pad
ids to -100 (the fact and its cells come from ingest.notebook_code.pad_labels; this module only judges it).

The loss is then a mean over the text's tokens and the pad positions together. After the first pad, each pad is
predicted almost for free, so the loss falls towards a floor set by the share of padding in each row, not by the
task: a fall from 2 to 0.25 may be mostly the model learning that padding follows padding, and a level near zero is
no sign of memorization either. Nothing here says the run failed; it says its loss cannot show that it learned the
task. A warning with no incident of its own (no step where something went wrong): `first_incident_of` takes it
first only where the log itself shows nothing (`CODE_FACTS`).
"""
from __future__ import annotations

from ..findings import Finding
from .metrics import LOSS, Metrics, format_number, real_loss

KIND = "labels_include_padding"


def detect_labels_include_padding(metrics: Metrics, code_said: str | None) -> list[Finding]:
    """A `labels_include_padding` warning over the training loss's whole span where the code says the labels count
    padding (`code_said`: the cells and lines that show it); [] where it does not, or no loss was logged."""
    loss = real_loss(metrics) if LOSS in metrics else None
    if not code_said or loss is None or loss.empty:
        return []
    first, last = float(loss.iloc[0]), float(loss.iloc[-1])
    message = (f"the labels count the padding: {code_said}. The loss ({format_number(first)} -> "
               f"{format_number(last)}) is a mean over the text's tokens and the pad positions together, and each pad "
               "after the first is predicted almost for free, so its level and much of its fall say how much of each "
               "row is padding more than what the model learned of the task. This does not say the run failed: it "
               "says the loss cannot show it learned. Mask the pad ids in the labels to -100 (or let "
               "DataCollatorForLanguageModeling(mlm=False) build the labels, or pass DataCollatorForSeq2Seq unpadded "
               "targets); an eval loss on labels masked that way, or a decoded batch's labels, would tell.")
    return [Finding(kind=KIND, severity="warning", step=int(loss.index[0]), end_step=int(loss.index[-1]), metric=LOSS,
                    message=message, evidence={"code": code_said, "first_loss": first, "last_loss": last})]
