"""A BERT-style pre-training loop's step lines: its masked-LM (MLM) loss and, where it trains next-sentence prediction
too, its NSP loss, printed side by side (kind "masked_lm"):
* `[ 42,174/4,000,000 ][ 0:10:13 ][ NSP loss: 0.4465 ][ NSP acc: 0.766 ][ MLM loss: 0.4008 ][ MLM acc: 0.935 ]`
  (KimRass_BERT's pretrain/main.py, a line every 1,562 steps, each value the mean over them): bracketed fields and
  nothing else, the step of the planned total first (thousands separated), then the time those steps took (not read)
  and `name: value` fields.
* `20 step,  mlm : 6.20, nsp : 0.66 nsp_acc : 0.65625` (joonkeekim_AIGC_SilverIRIS): the counter, then `name : value`
  fields from a bare `mlm` on; a bare `mlm` / `nsp` is that task's loss (its accuracy is named as one beside it).

The run's `loss` is the MLM loss, a printed total where a line prints one; the NSP loss is kept as its own series
(nsp_loss), as a loop's other loss terms are (`aux_loss` beside MiniMind's loss), and so are the accuracies. BERT's
optimizer minimises the sum of the two (Devlin et al. 2019, appendix A.2; transformers' BertForPreTraining: total_loss
= masked_lm_loss + next_sentence_loss; KimRass' main.py `loss = nsp_loss + mlm_loss`), but no line prints that sum,
and the two terms are different measures: the MLM loss is a per-token cross-entropy over the vocabulary, the language
model's own (ln(vocabulary) on random weights, its perplexity what the model learned; the term RoBERTa kept when it
dropped NSP), the NSP loss a binary one per sentence pair, saturating early and, on the small batch a line prints,
noisy (joonkeekim's 0.01 ... 0.44 within twenty lines of its second epoch, one batch of 32 pairs each, while the MLM
loss held 0.07-0.09): summed, the NSP noise would be most of the loss's once the MLM loss is small, and read as spikes
of a loss no line shows. A line with no MLM loss is not this reader's: a bracketed or `N step,` line of other fields
may be anything.
"""
from __future__ import annotations

import re

from .fields import FLOAT, StepLine, field_name

KIND = "masked_lm"
_COUNT = r"(\d{1,3}(?:,\d{3})+|\d{1,12})"  # a step, thousands separated or not
BRACKETED_NEEDLE = "]["
BRACKETED = re.compile(r"^\[\s*" + _COUNT + r"\s*/\s*" + _COUNT + r"\s*\]((?:\s*\[[^\[\]]*\])+)\s*$")
_BRACKET = re.compile(r"\[([^\[\]]*)\]")
_ELAPSED = re.compile(r"^\s*\d{1,6}:\d{2}(?::\d{2})?(?:\.\d+)?\s*$")
_NAMED = re.compile(r"^\s*([A-Za-z][\w ]{0,30}?)\s*:\s*(" + FLOAT + r")\s*$", re.IGNORECASE)

STEP_COMMA_NEEDLE = " step, "
STEP_COMMA = re.compile(r"^\s*(\d{1,12}) step,\s+(mlm\s*:.*)$", re.IGNORECASE)
_PAIR = re.compile(r"\s*([A-Za-z]\w*)\s*:\s*(" + FLOAT + r")\s*(?:,|(?=\s)|$)", re.IGNORECASE)
_BARE_TASKS = {"mlm": "mlm_loss", "nsp": "nsp_loss"}  # a task named alone: its loss


def bracketed_fields(m: re.Match) -> StepLine | None:
    """`[ N/T ][ time ][ name: value ]...` (module docstring): kind "masked_lm" at step N of T, or None where a field
    is neither an elapsed time nor a `name: value`, or no MLM loss is among them."""
    metrics = []
    for field in _BRACKET.findall(m.group(3)):
        if _ELAPSED.match(field):
            continue
        named = _NAMED.match(field)
        if named is None:
            return None
        metrics.append((field_name(named.group(1), named.group(2)), float(named.group(2))))
    return _masked_lm_line(_count(m.group(1)), _count(m.group(2)), metrics)


def step_comma(m: re.Match) -> StepLine | None:
    """`N step,  mlm : X, nsp : Y nsp_acc : Z` (module docstring): kind "masked_lm" at step N, or None where the
    fields after the counter are not all `name : value` pairs."""
    fields, at, metrics = m.group(2), 0, []
    while at < len(fields.rstrip()):
        pair = _PAIR.match(fields, at)
        if pair is None:
            return None
        name = pair.group(1).lower()
        metrics.append((_BARE_TASKS.get(name) or field_name(name, pair.group(2)), float(pair.group(2))))
        at = pair.end()
    return _masked_lm_line(int(m.group(1)), None, metrics)


def _count(text: str) -> int:
    return int(text.replace(",", ""))


def _masked_lm_line(step: int, total: int | None, metrics: list[tuple[str, float]]) -> StepLine | None:
    """The record of a line whose fields hold an MLM loss: the loss first (a printed total, else the MLM loss: module
    docstring), then the fields as printed; None where no MLM loss is printed."""
    found = dict(metrics)
    if "mlm_loss" not in found:
        return None
    return StepLine(KIND, step, total, (("loss", found.get("loss", found["mlm_loss"])),)
                    + tuple((n, v) for n, v in metrics if n != "loss"))
