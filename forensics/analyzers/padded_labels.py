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

from dataclasses import replace

from ..findings import Finding
from .metrics import LOSS, Metrics, format_number, real_loss

KIND = "labels_include_padding"


def detect_labels_include_padding(metrics: Metrics, code_said: str | None, encoder_decoder: bool = False
                                  ) -> list[Finding]:
    """A `labels_include_padding` warning over the training loss's whole span where the code says the labels count
    padding (`code_said`: the cells and lines that show it); [] where it does not, or no loss was logged.
    `encoder_decoder`: the model is one (T5, BART ...), whose labels are its targets, not a copy of its inputs."""
    loss = real_loss(metrics) if LOSS in metrics else None
    if not code_said or loss is None or loss.empty:
        return []
    first, last = float(loss.iloc[0]), float(loss.iloc[-1])
    message = (f"the labels count the padding: {code_said}. The loss ({format_number(first)} -> "
               f"{format_number(last)}) is a mean over the text's tokens and the pad positions together, and each pad "
               "after the first is predicted almost for free, so its level and much of its fall say how much of each "
               "row is padding more than what the model learned of the task. This does not say the run failed: it "
               f"says the loss cannot show it learned. {masking_advice(encoder_decoder)}; an eval loss on labels "
               "masked that way, or a decoded batch's labels, would tell.")
    return [Finding(kind=KIND, severity="warning", step=int(loss.index[0]), end_step=int(loss.index[-1]), metric=LOSS,
                    message=message, evidence={"code": code_said, "first_loss": first, "last_loss": last,
                                               "encoder_decoder": encoder_decoder})]


def masking_advice(encoder_decoder: bool) -> str:
    """How to mask the pads, for the model's kind: DataCollatorForLanguageModeling(mlm=False) builds the labels as a
    copy of the input_ids, right for a decoder-only model and wrong for an encoder-decoder (its labels are the
    targets: a summariser would be taught to write out its article)."""
    if encoder_decoder:
        return ("Mask the pad ids in the labels to -100 (labels[labels == tokenizer.pad_token_id] = -100), or "
                "tokenize the targets without padding and let DataCollatorForSeq2Seq pad them with -100")
    return ("Mask the pad ids in the labels to -100 (labels[labels == tokenizer.pad_token_id] = -100; with pad = eos, "
            "keep the real end-of-text label), or let DataCollatorForLanguageModeling(mlm=False) build the labels")


# Said after a memorization read from a loss that counts padding: padding lowers the loss (a rule that reads it as too
# high still holds), but a level read as too low for a model that did not learn its data by heart may be mostly pads
_PADDING_NOTE = (" The labels count the padding here (labels_include_padding): part of this loss is pad positions "
                 "predicted almost for free, so its level overstates how well the text itself is fit; the loss on "
                 "labels with the pads masked to -100 would tell whether it is learned by heart.")


def with_padding_caveat(findings: list[Finding]) -> list[Finding]:
    """The findings, each memorization's message with `_PADDING_NOTE` where a labels_include_padding finding stands."""
    if not any(f.kind == KIND for f in findings):
        return findings
    return [replace(f, message=f.message + _PADDING_NOTE) if f.kind == "memorization" else f for f in findings]
