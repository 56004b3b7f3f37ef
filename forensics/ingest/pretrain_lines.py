"""Console step lines: Megatron, OLMo, NeMo, torchtitan, nanochat, autoresearch, nanoGPT, `key: value`.

`parse_line(line)` turns one console line (ANSI colour codes already removed) into a
`StepLine` or None; `OlmoBlock` gathers OLMo's multi-line records. The stdout reader calls
both and puts the rows in file order with its other events.

Each family of line is read in its own module of forensics/ingest/console_lines/, whose docstring says which
lines and how: frameworks (Megatron, GPT-NeoX, nanotron, NeMo, NeMo 2.0, MindFormers, torchtitan, verl, RWKV-LM's
train_log.txt), fairseq (its losses in bits), toolkits (fairseq2, the Flax examples, MaxText, clu, InternEvo,
gpt-2-simple, OpenNMT-py, Joey NMT, the MetricLogger, torchtune, DLLogger), epoch_tensors (PEFT's example loops),
epoch_costs (an epoch's `Training cost: X`), marian (Marian NMT), split_values (`[Step N/T] Train X | Val Y`), nanogpt
(nanoGPT, nanochat, autoresearch, modded-nanogpt, llm.c, build-nanogpt), hand_written (the shapes of hand-written
loops), epoch_split (`Epoch E: train=X, val=Y, ppl=P`), epoch_batch_steps (`E2 B56/233 | Loss:X ...`), masked_lm
(a BERT pre-training loop's MLM and NSP losses), stepless
(lines dated by the lines around them: a `bpc = X` print, the TF PTB tutorial's), blocks (the records of several
lines: OLMo, Composer, NeMo-RL, Keras, mlx-lm, EasyR1, a PPO loop's dashed steps).

On the last line of a file (no newline after it) the last field of these shapes may be cut mid-write:
it is left out and the line marked cut.

Names go through `canonical_metric` (lm loss, CE loss, CrossEntropyLoss -> loss; grad norm ->
grad_norm; ...). A `loss scale` that is 1.0 on every line is no dynamic scaler at all (bf16 and
fp32 runs print 1.0), so it is dropped by the reader, not reported as a scale at its floor.
"""
from __future__ import annotations

import re

from .console_lines.fields import StepLine
from .console_lines.frameworks import (RWKV_EPOCH, MEGATRON_ITERATION, MEGATRON_VALIDATION, MINDFORMERS,
                                       NEMO2_PROGRESS, TITAN, TITAN_KEY_VALUE, VERL_STEP, _megatron, _mindformers,
                                       nemo2_progress, nemo_bar, titan, titan_key_values, _verl, rwkv_epoch)
from .console_lines.fairseq import (FAIRSEQ_INNER, FAIRSEQ_LEGACY, FAIRSEQ_LEGACY_EPOCH, FAIRSEQ_TRAIN,
                                    FAIRSEQ_VALID, fairseq_epoch_summary, _fairseq_inner, _fairseq_legacy,
                                    fairseq_train_summary, _fairseq_valid)
from .console_lines.toolkits import (DLLOGGER, CLU_WRITER, FAIRSEQ2, FLAX_STEP, GPT2_SIMPLE, INTERNEVO_STEP,
                                     JOEYNMT_VALID, MAXTEXT_EVAL, METRIC_LOGGER, OPENNMT_EPOCH, OPENNMT_STEP,
                                     OPENNMT_VALID, TORCHTUNE_BAR, clu_scalars, _dllogger, _fairseq2, flax_step,
                                     _internevo, _joeynmt_valid, _maxtext_eval, _metric_logger, _opennmt,
                                     _opennmt_epoch, _opennmt_valid)
from .console_lines.nanogpt import (CHAR_RNN, COLON_STEP, LLMC_STEP, LLMC_VAL, NANOCHAT_STEP, NANOGPT, PIPE_STEP,
                                    STEP_NAME_VALUE, _char_rnn, _colon_pairs, _llmc_console, _llmc_val, nanochat_step,
                                    _nanogpt, pipe_step, _step_name_value, SPLIT_PIPE, split_pipe)
from .console_lines.hand_written import PRINTED_TENSOR, HELD_OUT_ACCURACY, LOSS_PRINT, LOSS_WORD, hand_written_line
from .console_lines.tqdm_loss_bars import TQDM_BAR, TQDM_DESCRIBED, tqdm_description, _tqdm_postfix
from .console_lines.epoch_bracket import EPOCH_BRACKET, _epoch_bracket
from .console_lines.epoch_split import EPOCH_SPLIT_LOSSES, epoch_split_losses
from .console_lines.epoch_tensors import EPOCH_TENSORS, epoch_tensors
from .console_lines.epoch_costs import EPOCH_COST, NEEDLE as _COST_NEEDLE, epoch_cost
from .console_lines.marian import MARIAN_UPDATE, MARIAN_VALID, NEEDLE as _MARIAN_NEEDLE, marian_update, marian_valid
from .console_lines.split_values import NEEDLE as _SPLIT_VALUES_NEEDLE, SPLIT_VALUES, split_values
from .console_lines.key_values import KEY_VALUE_START, bare_pipe_step, _key_values, uncounted_key_values
from .console_lines.stepless import BPC_PRINT, PTB_EPOCH, PTB_PROGRESS, bpc_print, ptb_epoch, ptb_progress
from .console_lines.stepless import PTB_PORT_EPOCH, PTB_PORT_NEEDLE, ptb_port_epoch
from .console_lines.stepless import PROGRESS_LOSS, PROGRESS_NEEDLE, progress_loss
from .console_lines.epoch_batch_steps import EPOCH_BATCH, NEEDLE as _EPOCH_BATCH_NEEDLE, epoch_batch
from .console_lines.masked_lm import (BRACKETED, BRACKETED_NEEDLE, KIND as _MASKED_LM, STEP_COMMA, STEP_COMMA_NEEDLE,
                                      bracketed_fields, step_comma)

# what the console readers and the run profile import from here
__all__ = ["ANSI", "STEP_LINE_MARKERS", "TQDM_LOSS_POSTFIX", "PRETRAINING_KINDS", "KIND_FRAMEWORKS", "parse_line"]

# Every step line holds one of these; a log holding none needs no line-by-line look.
STEP_LINE_MARKERS = ("iteration", "[step=", "[batch=", "[token=", "[sample=", "= Step ", "valid on '",
                     "Metrics (step ", "Completed eval after", "] collection=", "] loss=", "tgs (tokens/gpu/second)=",
                     "step:", "reduced_train_loss=", "loss:", "step=",
                     ": loss ", ": train loss ", "| Validation ", "| CORE metric", "| ChatCORE", " trl:", " train ",
                     "| loss ", "tensor(", "tf.Tensor(", "Step... (", "Running Loss:", "; xent: ", "DLL ", "|Loss: ",
                     "iters:", "train=", ": Train ", "| Train ",
                     "| epoch ", " wps", _COST_NEEDLE, _SPLIT_VALUES_NEEDLE, _MARIAN_NEEDLE, PTB_PORT_NEEDLE,
                     _EPOCH_BATCH_NEEDLE, STEP_COMMA_NEEDLE,
                     "NEW RUN ")  # (RWKV-LM's train_log.txt: its mini-epoch lines hold no word, its launches' heads do)
# A tqdm bar with a loss in its postfix, or in its description (`batch loss 0.702: 100%|`): no fixed substring marks
# it, one search over the text does.
TQDM_LOSS_POSTFIX = re.compile(r"(?:it/s|s/it),[^\]\r\n]*loss|[Ll]oss[^|\r\n]{0,40}:\s*\d{1,3}%\|")
# The kinds of step line that only a pre-training script prints (nanochat's chat_sft / mid_train
# lines, nanoGPT's train.py and plain key: value lines also come from fine-tuning runs). A masked-LM loss is BERT's
# pre-training objective, whether from random weights or further on a trained BERT's (domain-adaptive pre-training).
PRETRAINING_KINDS = ("megatron", "olmo", "nemo", "torchtitan", "nanochat_base", "autoresearch", "nanotron",
                     "llmc_console", "char_rnn", _MASKED_LM)
# The framework a kind of line names, where it names one.
KIND_FRAMEWORKS = {"megatron": "megatron", "nanotron": "nanotron", "composer": "composer", "nemo_rl": "nemo_rl",
                   "olmo": "olmo", "nemo": "nemo", "torchtitan": "torchtitan",
                   "nanochat_base": "nanochat", "nanochat": "nanochat", "autoresearch": "autoresearch",
                   "nanogpt": "nanogpt", "verl": "verl", "llmc": "llm.c", "dschat_sft": "deepspeed",
                   "dschat_rm": "deepspeed",
                   "dschat_ppo": "deepspeed", "dschat_dpo": "deepspeed",
                   "nemo2": "nemo", "mindformers": "mindformers", "opennmt": "opennmt", "torchtune": "torchtune",
                   "joeynmt_valid": "joeynmt", "opennmt_epoch": "opennmt", "fairseq_legacy": "fairseq",
                   "fairseq_epoch": "fairseq", "fairseq_inner": "fairseq", "fairseq_valid": "fairseq", "keras": "keras",
                   "mxnet": "mxnet", "marian": "marian", "marian_valid": "marian"}
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def parse_line(line: str, last_line: bool = False) -> StepLine | None:
    """The record a step line holds (the docstrings of console_lines' modules), or None (OLMo headers: see
    OlmoBlock)."""
    for shapes in (_trainer_console_shapes, _toolkit_and_print_shapes):  # in this order
        found = shapes(line, last_line)
        if found is not _TRY_ON:
            return found
    return _small_console(line, last_line)


_TRY_ON = object()  # what a group of shapes below says of a line none of its shapes reads: the next group tries it


def _trainer_console_shapes(line: str, last_line: bool) -> StepLine | None | object:
    """RWKV-LM's train_log.txt, torchtune's bar, DLLogger, NeMo 2.0, MindFormers, OpenNMT-py, Joey NMT's validation,
    Megatron / nanotron (and Megatron's validation line): the record (None where the shape matched but held none), or
    _TRY_ON."""
    if line[:1].isdigit():
        m = RWKV_EPOCH.match(line)
        if m:
            return rwkv_epoch(m)
    if "|Loss: " in line:
        m = TORCHTUNE_BAR.match(line)
        if m:  # the bar's own n/M after it is one ahead once the step is done: the description's count is the step
            return StepLine("torchtune", int(m.group(1)), None, (("loss", float(m.group(2))),))
    if line.startswith("DLL "):
        m = DLLOGGER.match(line)
        if m:
            return _dllogger(m.group("step"), m.group("fields"))
    if "Training epoch " in line:
        m = NEMO2_PROGRESS.search(line)
        if m:
            return nemo2_progress(m, line, last_line)
    if "{ Epoch:[" in line:
        m = MINDFORMERS.search(line)
        if m:
            return _mindformers(m, line)
    if "; xent: " in line:
        m = OPENNMT_STEP.search(line)
        if m:
            return _opennmt(m)
        m = OPENNMT_EPOCH.search(line)
        if m:  # OpenNMT-py's 2018 `Epoch  1, 50/37527; acc: ...`
            return _opennmt_epoch(m)
    if "] Validation " in line:
        m = OPENNMT_VALID.search(line)
        if m:  # no step: `step_numbering.uncounted_lines_numbered` puts it at the step line before it
            return _opennmt_valid(m)
    if "Validation result (" in line:
        m = JOEYNMT_VALID.search(line)
        if m:  # before the generic reader, which would take its summed dev-set loss for a training loss
            return _joeynmt_valid(m)
    if "iteration" in line:
        m = MEGATRON_ITERATION.search(line)
        nanotron = bool(m and m.group(1))
        if nanotron and not ("lm_loss:" in line and "consumed_tokens:" in line):
            m = None  # `iteration: 1 / 100 | loss: 2.4 |` from a hand-written loop: read below, not as nanotron's
        record = m and _megatron(line[m.end():], int(m.group(2)), int(m.group(3)), "", last_line,
                                 "nanotron" if nanotron else "megatron", bare="|" not in line[:m.start()])
        if record:  # else `iteration 10/100 | loss 2.3`: a hand-written loop's line, read below
            return record
        m = MEGATRON_VALIDATION.search(line)
        if m:
            return _megatron(line[m.end():], int(m.group(1)), None, "eval_", last_line)
    return _TRY_ON


# (substring, shape searched for, reader of its match): the toolkit lines no other shape's substring is in
_SEARCHED_SHAPES = (("num_updates=", FAIRSEQ_INNER, _fairseq_inner),
                    ("| train | epoch ", FAIRSEQ_TRAIN, fairseq_train_summary),
                    ("Metrics (step ", FAIRSEQ2, _fairseq2),
                    ("Completed eval after train step ", MAXTEXT_EVAL, _maxtext_eval),
                    ("] collection=", CLU_WRITER, clu_scalars),
                    (" wps", PTB_PROGRESS, ptb_progress), (" Perplexity: ", PTB_EPOCH, ptb_epoch),
                    (PROGRESS_NEEDLE, PROGRESS_LOSS, progress_loss),
                    (_COST_NEEDLE, EPOCH_COST, epoch_cost), (_SPLIT_VALUES_NEEDLE, SPLIT_VALUES, split_values),
                    (BRACKETED_NEEDLE, BRACKETED, bracketed_fields), (STEP_COMMA_NEEDLE, STEP_COMMA, step_comma),
                    (_MARIAN_NEEDLE, MARIAN_VALID, marian_valid), (_MARIAN_NEEDLE, MARIAN_UPDATE, marian_update),
                    (PTB_PORT_NEEDLE, PTB_PORT_EPOCH, ptb_port_epoch), (_EPOCH_BATCH_NEEDLE, EPOCH_BATCH, epoch_batch))
# the readers among them told whether the line is the file's last (which may be cut mid-write: `fields._fields`)
_TOLD_THE_LAST_LINE = (ptb_epoch, epoch_cost, ptb_port_epoch, epoch_batch)


def _toolkit_and_print_shapes(line: str, last_line: bool) -> StepLine | None | object:
    """NeMo's bar, fairseq, fairseq2, MaxText, InternEvo, gpt-2-simple, clu, torchtitan, the Flax examples, a printed
    tensor or loss, the MetricLogger: the record (None where the shape matched but held none), or _TRY_ON."""
    if "reduced_train_loss=" in line:
        return nemo_bar(line)
    if line.startswith("| epoch "):  # fairseq-py's legacy console
        m = FAIRSEQ_LEGACY.match(line)
        if m:  # (a validation's progress line: None, no record, and no other shape's)
            return _fairseq_legacy(m)
        if FAIRSEQ_LEGACY_EPOCH.match(line) and "valid on '" not in line:
            return fairseq_epoch_summary(line)
    if "valid on '" in line:
        m = FAIRSEQ_VALID.search(line)
        if m:
            return _fairseq_valid(m.group(1), line)
    for needle, shape, read in _SEARCHED_SHAPES:
        m = shape.search(line) if needle in line else None
        if m:
            return read(m, last_line) if read in _TOLD_THE_LAST_LINE else read(m)
    if "tgs (tokens/gpu/second)=" in line:
        m = INTERNEVO_STEP.search(line)
        if m:
            return _internevo(line[m.start():], int(m.group(1)))
    if "] loss=" in line:
        m = GPT2_SIMPLE.match(line)
        if m:  # gpt-2-simple (gpt_2_simple/gpt_2.py): `[250 | 162.50] loss=2.31 avg=2.40`, avg its running mean
            return StepLine("gpt2_simple", int(m.group(1)), None, (("loss", float(m.group(2))),
                                                                     ("loss_avg", float(m.group(3)))))
    if "loss:" in line and "step:" in line:
        m = TITAN.search(line)
        if m:
            return titan(line[m.start():], int(m.group(1)), int(m.group(2)) if m.group(2) else None)
    if line.startswith("Step... ("):  # the Flax examples' own line, or their bar's description: no other shape's
        m = FLAX_STEP.match(line)
        return flax_step(m) if m else None
    if "tensor(" in line or "tf.Tensor(" in line:
        m = PRINTED_TENSOR.match(line)
        if m:
            # a loss where the line says so (its label) or the tensor is in the autograd graph (an accuracy is not);
            # a bare value is kept under its own name: it may be anything the loop printed
            said = m.group(1) or "grad_fn=" in line
            return StepLine("printed_tensor", 0, None, (("loss" if said else "printed_tensor", float(m.group(2))),))
    if " loss: " in line:
        m = LOSS_PRINT.match(line)
        if m:  # no step: 0 until `step_numbering.uncounted_lines_numbered` numbers the prints in file order
            return StepLine("loss_print", 0, None, (("loss" if m.group(1) == "training" else "eval_loss",
                                                     float(m.group(2))),))
    if "  [" in line and "/" in line:
        m = METRIC_LOGGER.search(line)
        if m:
            return _metric_logger(m, line, last_line)
    return _TRY_ON


def _small_console(line: str, last_line: bool) -> StepLine | None:
    """nanochat, autoresearch, nanoGPT and plain `key: value` lines (console_lines.nanogpt, .hand_written): the first
    shape whose start the line holds and whose reader reads it decides (a cheap substring test keeps most lines off
    the regexes); a line none of them reads may still be a step's print with no counter. A shape that starts the line
    but cannot read it passes it on (`epoch: 3442 loss: 0.21` starts like a line of `key: value` pairs, whose reader
    wants them comma-separated with a step counter, and is a hand-written loop's per-epoch print)."""
    for needle, start, read in _SMALL_SHAPES:
        m = start.search(line) if needle in line else None
        found = (read(m, line, last_line) or uncounted_key_values(line, last_line)) if m else None
        if found is not None:
            return found
    # last: a hand-written loop's `step=3 loss=2.1` is read above, as the loop's; this shape takes what none of them can
    m = TITAN_KEY_VALUE.search(line) if "step=" in line and "loss=" in line else None
    return titan_key_values(m, line, last_line) if m else None


# (substring, start of the shape, reader) in the order they are tried.
_BARE_PIPE = re.compile(r"^\s*(\d{1,18})\s+\|\s+(?=loss[ :]\s*[-+.\dnNiI])")
_SMALL_SHAPES = (("epoch=", EPOCH_TENSORS, epoch_tensors), ("| norm ", LLMC_STEP, _llmc_console),
                 ("), train_loss = ", CHAR_RNN, _char_rnn),
                 ("val loss ", LLMC_VAL, _llmc_val),
                 ("| ", PIPE_STEP, pipe_step), ("| ", NANOCHAT_STEP, nanochat_step),
                 ("| loss", _BARE_PIPE, bare_pipe_step),
                 ("| ", SPLIT_PIPE, split_pipe),
                 (":", COLON_STEP, _colon_pairs), (" ", STEP_NAME_VALUE, _step_name_value),
                 ("loss", NANOGPT, _nanogpt), (" - ", VERL_STEP, _verl),
                 ("Epoch", EPOCH_BRACKET, _epoch_bracket), ("oss", KEY_VALUE_START, _key_values),
                 ("%|", TQDM_BAR, _tqdm_postfix), ("%|", TQDM_DESCRIBED, tqdm_description),
                 ("train=", EPOCH_SPLIT_LOSSES, epoch_split_losses),
                 ("oss", LOSS_WORD, hand_written_line),
                 ("acc", HELD_OUT_ACCURACY, hand_written_line), ("bpc", BPC_PRINT, bpc_print))
