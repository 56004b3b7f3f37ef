"""Console lines that print no step of their own, dated by the lines around them (`stepless_dating`):

* A held-out bits-per-character print alone on its line, `bpc = 2.005124` (ThAIKeras/char-rnn-text-generation's
  keras_model.py: `logger.info("bpc = %f" % bpc)`, bits by `math.log(p, 2)` over the test text every 10 epochs, after
  that epoch's `epoch: E, duration: Ns, loss: L.` line; kind "held_out_print"): an eval loss in nats per character,
  bpc x ln 2 (the loss beside it is Keras' cross-entropy, in nats). Its best so far (`best bpc = X`) is no evaluation.
* The TensorFlow PTB word-LM tutorial (tensorflow/models tutorials/rnn/ptb/ptb_word_lm.py, copied into many old
  repositories): `0.083 perplexity: 14566.362 speed: 525 wps` ten times an epoch, the fraction of the epoch done, then
  exp of the mean loss since the epoch began (kind "ptb_progress": loss = ln perplexity, the epoch fraction as
  `epoch`); some copies print `epoch_size: N` before it (graceGuor/emojiPrediction), the steps an epoch makes, its
  total. `Epoch: E Train Perplexity: P` and `Epoch: E Valid Perplexity: P` close each epoch (kind "ptb_epoch":
  the mean loss ln P, a held-out one for Valid; on a file's last line that ends at P, P may be cut mid-write: the
  line is none); `Test Perplexity: P` at the end is left unread (no epoch). Its
  PyTorch ports (iceljc_language-model; the same print in other GitHub copies) print the fraction
  unrounded and the perplexity padded (`{} perplexity: {:8.2f} speed: {} wps`) and close each epoch with `Train
  perplexity at epoch E: P` / `Validation perplexity at epoch E: P` (E from 0), the line ending at the number (prose
  that goes on is no such line; on a file's last line that number may be cut mid-write, so the line is none).
* A hand-written loop's `progress: 0.94  loss: 1.0465 (0.7071)` (ShangQingTu_buaa_ML_teamwork's ckpt/log.txt, a
  line every 1/100 epoch): the epochs done as a fraction, then a SmoothedValue's `median (global average)` of the
  batch losses (the window's median, then the mean since training began, as the MetricLogger prints its meters). The
  median is the loss, as the MetricLogger reader takes it (the global mean hides a late rise under all the batches
  before it); the fraction, rounded to two decimals, is the epoch and no counter: kind "uncounted", numbered by its
  place among such lines (`step_numbering.uncounted_lines_numbered`). The line ends at the mean's `)`.
* A held-out line with no counter after a training line (jananjahedd_Group-12-LLM's `Epoch 1/1 - Loss: 0.0203,
  Accuracy: 0.6141`, then `Validation Loss: 0.0191, Validation Accuracy: 0.6615`): a short line whose every loss is a
  held-out split's, opening with the validation loss's name, is that line's evaluation (kind "held_out_print", placed
  at the step line before it; read only after a step line, so an evaluation-only report stays unread, and never a
  test split's closing report nor W&B's run summary: `held_out_line`).
* An epoch section header, a line that is only the epoch (`=== Epoch 3/20 ===`, YYYYXL1004/NLP2's Chinese-to-English
  Transformer), and the short loss lines with no counter under it (`Loss: 5.3513, BLEU: 0.51, 累计时间: 69.7s`): the
  header gives their epoch (`epoch_header`, `headed_line`; read only in a file holding such a header, of lines no
  other reader took).
"""
from __future__ import annotations

import math
import re

from .fields import StepLine, FLOAT, perplexity_loss
from .hand_written import stepless_pairs

# `bpc = X` as the whole message (a logger's `... - INFO - ` before it at most); a split name before it may say which
BPC_PRINT = re.compile(r"(?:^|\s-\s)[ \t]*(?:(?:test|valid(?:ation)?|val|eval|dev)[ _])?bpc[ \t]*[=:][ \t]*(" + FLOAT
                        + r")[ \t]*$", re.IGNORECASE)
PTB_PROGRESS = re.compile(r"(?:^|[\s:])(\d{1,3}\.\d{1,20}) perplexity:[ \t]+(" + FLOAT
                           + r")[ \t]+speed: \d+(?:\.\d*)? wps")
PROGRESS_LOSS = re.compile(r"(?<![\w])progress:[ \t]*(\d{1,4}\.\d{1,6})[ \t]+loss:[ \t]*(" + FLOAT + r")[ \t]+\("
                           + FLOAT + r"\)[ \t]*$")
PROGRESS_NEEDLE = "progress: "
_EPOCH_SIZE = re.compile(r"\bepoch_size:?[ \t]*(\d{1,12})\b")
PTB_EPOCH = re.compile(r"(?<![\w])(?:Epoch: (\d{1,6}) )?(Train|Valid|Test) Perplexity: (" + FLOAT + r")")
# the PyTorch ports' `Train perplexity at epoch E: P` / `Validation perplexity at epoch E: P`, nothing after the number
PTB_PORT_EPOCH = re.compile(r"(?<![\w])(Train|Validation) perplexity at epoch (\d{1,6}):[ \t]+(" + FLOAT
                            + r")[ \t]*$")
PTB_PORT_NEEDLE = " perplexity at epoch "
# What a Python logger writes before its message: a date and time, then its level (and name) at most, as cs230's
# set_logger writes `2018-09-04 17:46:35,724:INFO: ` (junkwhinger_babynames_generator), `... - INFO - `,
# `[2024-06-01 10:00:00,500 INFO] `; or logging.basicConfig's `INFO:root:`
_LOGGER_PREFIX = (r"(?:\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[,.]\d{1,6})?"
                  r"(?:[ \t]*[:|-]?[ \t]*(?:[\w.]{1,40}[ \t]*[:|-][ \t]*)?(?:INFO|DEBUG|WARNING)\b)?[ \t]*[]:|-]?[ \t]*"
                  r"|(?:INFO|DEBUG|WARNING):[\w.]{0,40}:)?")
_LOGGED = re.compile(r"^" + _LOGGER_PREFIX)
# a line that is only an epoch and its decoration: `=== Epoch 3/20 ===`, `----- epoch 3 -----`, `[Epoch 3]`, a
# logger's prefix before it at most
_EPOCH_HEADER = re.compile(r"^" + _LOGGER_PREFIX + r"[^\w\n]*epoch[^\w\n]{0,3}(\d{1,6})(?:[ \t]*/[ \t]*(\d{1,6}))?"
                           r"[^\w\n]*$", re.IGNORECASE)
# a line whose message names a held-out split before its pairs: cs230's `- Eval metrics: loss: 1.539, acc: 0.520`
# under `- Train metrics: loss: 1.632, ...` (junkwhinger_babynames_generator): its loss is that epoch's held-out loss
_HELD_OUT_RECORD = re.compile(r"^[^\w\n]*(?:val(?:id|idation)?|eval(?:uation)?|dev)\b[\w ]{0,20}:", re.IGNORECASE)
_HELD_OUT_NAMES = {"loss": "eval_loss", "accuracy": "eval_accuracy", "perplexity": "eval_perplexity"}
EPOCH_HEADER_MARK = re.compile(_EPOCH_HEADER.pattern, re.IGNORECASE | re.MULTILINE)  # one search over a whole text


def logger_message(line: str) -> str:
    """A line without what a Python logger writes before its message (`_LOGGER_PREFIX`)."""
    return line[_LOGGED.match(line).end():]


def bpc_print(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """`bpc = X` (module docstring): kind "held_out_print", its eval loss in nats; none for a best-so-far line."""
    if "best" in line.lower():
        return None
    return StepLine("held_out_print", 0, None, (("eval_loss", float(m.group(1)) * math.log(2)),))


def ptb_progress(m: re.Match) -> StepLine | None:
    """`F perplexity: P speed: W wps` (module docstring): kind "ptb_progress" at step 0 until `stepless_dating`
    numbers it, the epoch size its total where the line prints it."""
    fraction, perplexity = float(m.group(1)), float(m.group(2))
    size = _EPOCH_SIZE.search(m.string, 0, m.start())
    metrics = (("loss", perplexity_loss(perplexity)), ("perplexity", perplexity), ("epoch", fraction))
    return StepLine("ptb_progress", 0, int(size.group(1)) if size else None, metrics)


def progress_loss(m: re.Match) -> StepLine | None:
    """`progress: F  loss: M (G)` (module docstring): kind "uncounted", the window's median M the loss, F the epoch."""
    return StepLine("uncounted", 0, None, (("loss", float(m.group(2))), ("epoch", float(m.group(1)))))


def ptb_epoch(m: re.Match, last_line: bool = False) -> StepLine | None:
    """`Epoch: E Train|Valid Perplexity: P` (module docstring): kind "ptb_epoch" at step E; none for the test's, and
    none on the file's last line where P ends it, maybe cut (as the ports' lines, `ptb_port_epoch`)."""
    epoch, split = m.group(1), m.group(2)
    if epoch is None or split == "Test" or last_line and m.end() == len(m.string):
        return None
    return _ptb_epoch_record(int(epoch), split, float(m.group(3)))


def ptb_port_epoch(m: re.Match, last_line: bool = False) -> StepLine | None:
    """`Train|Validation perplexity at epoch E: P` (module docstring): as the tutorial's `Epoch: E Train|Valid
    Perplexity: P` (kind "ptb_epoch" at step E); none on the file's last line, whose one number may be cut (the
    console reader takes it whole where it is printed as the lines before it)."""
    return None if last_line else _ptb_epoch_record(int(m.group(2)), m.group(1), float(m.group(3)))


def _ptb_epoch_record(epoch: int, split: str, perplexity: float) -> StepLine | None:
    """An epoch's mean perplexity on a split (kind "ptb_epoch" at step E): its loss ln P, held-out for the validation
    split; a `nan` perplexity (a port's np.exp of a diverged cost) is kept as a NaN loss: NaN is data."""
    prefix = "eval_" if split in ("Valid", "Validation") else ""
    metrics = ((prefix + "loss", perplexity_loss(perplexity)), (prefix + "perplexity", perplexity),
               ("epoch", float(epoch)))
    return StepLine("ptb_epoch", epoch, None, metrics)


def epoch_header(line: str, worded: bool = False) -> tuple | None:
    """('epoch_header', E, total) for a line that is only an epoch (module docstring), or, where `worded` (the file
    repeats such a header: `worded_headers_repeat`), the epoch after one starting word; else None."""
    m = _EPOCH_HEADER.match(line) if "poch" in line or "POCH" in line else None
    m = m or (_WORDED_EPOCH_HEADER.match(line) if worded and ("poch" in line or "POCH" in line) else None)
    return ("epoch_header", int(m.group(1)), int(m.group(2)) if m.group(2) else None) if m else None


# a header of one word that starts the epoch, then the epoch alone: `Training epoch 1` (BlayvasD_GPT-Histories: the
# loop prints it before each epoch's `Validation Loss: X` / `Training Loss: Y`); never a word that ends one
# (`Finished epoch 3` closes the lines above it)
_WORDED_EPOCH_HEADER = re.compile(r"^[ \t]*(?:training|starting|start|beginning|running)[ \t]+epoch[ \t]*(\d{1,6})"
                                  r"(?:[ \t]*/[ \t]*(\d{1,6}))?[ \t.:]*$", re.IGNORECASE)
_WORDED_HEADER_MARK = re.compile(_WORDED_EPOCH_HEADER.pattern, re.IGNORECASE | re.MULTILINE)


def worded_headers_repeat(text: str) -> bool:
    """Whether the text holds a worded epoch header (`Training epoch 1`) for two epochs or more: the section shape
    of a loop that prints it before each epoch's lines, not a sentence that happens to read so."""
    return len({m.group(1) for m in _WORDED_HEADER_MARK.finditer(text)}) >= 2


def headed_line(line: str, last_line: bool) -> StepLine | None:
    """A short line with a loss and no counter (kind "headed", step 0 until its header dates it), else None; a line
    whose message opens with a held-out split's name (`Eval metrics: loss: X`) gives that split's metrics."""
    message = logger_message(line)
    metrics, cut = stepless_pairs(message, last_line)
    if metrics and _HELD_OUT_RECORD.match(message):
        metrics = [(_HELD_OUT_NAMES.get(name, name), value) for name, value in metrics]
    return StepLine("headed", 0, None, tuple(metrics), cut) if metrics else None


# The validation split's loss named first on the line (`Validation Loss: X, ...`, `val_loss=X`, `eval loss X`), as a
# loop's evaluation print opens: a line that names it later is prose about it (`saved the best model at epoch 1 with
# val_loss = 5.959`, in any language); a test split's report is the closing evaluation of a model the run kept (often
# its best, not its last), and a perplexity is no loss the line names
_VALIDATION_LOSS = re.compile(r"[^\w\n]*(?:val(?:id|idation)?|eval(?:uation)?|dev)[ _]loss\b", re.IGNORECASE)
_TEST = re.compile(r"(?<![a-z])test(?![a-z])", re.IGNORECASE)
# W&B's run summary at the end of a console (`wandb:      val_loss 0.04445`, under its `Run history:` sparklines): each
# metric's last value printed again, no evaluation of its own (Msingi-AI_msingi1)
_WANDB_SUMMARY = re.compile(r"^\s*wandb:")


def held_out_line(line: str, last_line: bool) -> StepLine | None:
    """A short line with no counter whose losses are all held-out ones, the validation loss named (`Validation Loss:
    X, Validation Accuracy: Y`: module docstring), kind "held_out_print" (its metrics the held-out ones), else None."""
    message = logger_message(line)
    if not _VALIDATION_LOSS.match(message) or _TEST.search(message) or _WANDB_SUMMARY.match(line):
        return None
    metrics, cut = stepless_pairs(message, last_line)
    if not metrics or "loss" in dict(metrics) or not all(name.startswith("eval_") for name, _ in metrics):
        return None
    return StepLine("held_out_print", 0, None, tuple(metrics), cut)
