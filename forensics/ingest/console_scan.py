"""One pass over a console's lines: the events of interest, in file order.

`scan(text)` -> a list of events (tuples), each the first item naming its kind:

* ('dict', step|None, pairs): a printed dict (HF Trainer 4.x/5.x, ms-swift, OpenRLHF's `Global step N: {...}`, the
  Trainer's `***** eval metrics *****` block gathered as one), its pairs through float(), the step its prefix names
  (a `TrainOutput(global_step=N, ..., metrics={...})`'s N): `dicts_and_bars`;
* ('bar', n, total): a tqdm progress bar's reading (`dicts_and_bars`);
* ('line', StepLine): a step line of a pre-training stack or a small script (`pretrain_lines`), a results table's row
  (`results_table`), DeepSpeed-Chat's lines (`deepspeed_chat`), a record of bare lines under a counter line
  (`console_lines.bare_epochs`), DSPy's GRPO steps (`console_lines.dspy_grpo`), `Epoch1-train_step1-loss=X` lines and
  their evaluations (`console_lines.glued_fields`), batch losses under an epoch's `Average loss for training
  batches` (`console_lines.batch_averages`), checkpoints' evaluation lines (`console_lines.checkpoint_evals`),
  pretty-printed JSON step objects (`console_lines.json_blocks`), the PyTorch NLP tutorials' `1m 1s (500 3%) 4.2725`
  prints (`console_lines.elapsed_percent`), in a file with epoch section headers
  and no such records a stepless loss line no other reader took (`console_lines.stepless`);
* ('epoch_header', E, total): such a header (`=== Epoch 3/20 ===`), gone once the lines under it are dated;
* ('launch', key, piece, begins): a line printed once per launch of the script (`launch_banners`), where one file
  holds several: the piece it stands at, and the piece its launch's own text begins at (`launch_event`);
* ('overflow', new_scale[, AT_STEP_LINE]): a loss scaler's overflow (DeepSpeed, apex, DLLogger, a hand-written one);
  ('ds_step', step, skipped): DeepSpeed's `step=N, skipped=K` progress; ('at_minimum',): the scale at its minimum.

Then the step lines are settled (`settled_lines.settled`: rank copies dropped, counters numbered on).
"""
from __future__ import annotations

import re

from .console_lines.fields import LINE_BREAK, printed_shape
from .settled_lines import settled
from .launch_banners import banner_key, launch_event, launches_kept
from .card_blocks import card_blocks_blanked
from .deepspeed_chat import MARKERS as CHAT_MARKERS, DeepSpeedChat
from .console_lines.bare_epochs import bare_epoch_reader
from .console_lines.batch_averages import MARKER as BATCH_AVERAGES_MARKER, BatchAverages
from .console_lines.checkpoint_evals import checkpoint_eval_reader
from .console_lines.json_blocks import json_block_reader
from .console_lines.dspy_grpo import MARKER as DSPY_GRPO_MARKER, DspyGrpoSteps
from .console_lines.blocks import (KERAS_LOSS_MARKER, ComposerBlock, DashedSteps, KerasEpochs, MlxTable, NemoRLBlock,
                                   OlmoBlock, YamlSteps)
from .console_lines.glued_fields import glued_field_reader
from .console_lines.hand_written import has_generic_line
from .console_lines.info_logger import MARKER as INFO_LOGGER_MARKER, InfoLoggerRecords
from .console_lines.lightning_results import MARKER as LIGHTNING_MARKER, LightningResults
from .console_lines.parlai import MARKER as PARLAI_MARKER, ParlaiReports
from .console_lines.stepless import EPOCH_HEADER_MARK, epoch_header, headed_line, held_out_line, worded_headers_repeat
from .console_lines import elapsed_percent, tf_estimator, value_first
from .console_lines.mxnet_speedometer import MARKER as MXNET_MARKER, MxnetLines
from .console_lines.one_line import OneLineRecords
from .console_lines.tf_seq2seq import seq2seq_reader
from .console_lines.unsloth import MARKER as UNSLOTH_TRAIN_MARKER, UnslothTrainPrints
from .pretrain_lines import STEP_LINE_MARKERS, TQDM_LOSS_POSTFIX, parse_line
from .results_table import MARKERS as TABLE_MARKERS, ResultsTable
from .dataframe_table import DataFrameTable
from .boxed_table import MARKER as BOX_MARKER, BoxedTable
from .dicts_and_bars import dicts_and_bars


_OVERFLOW = re.compile(
    r"(?:OVERFLOW!|overflow!|Overflow detected)[^\n]*?Attempted loss scale:\s*(?P<old>[\d.]+)"
    r"(?:,\s*reducing to\s*(?P<new>[\d.]+)|,\s*but hysteresis is)")
_RANK = re.compile(r"\bRank (\d+)\b")
# A hand-written scaler's `OVERFLOW! Scale value 4294967296 -> 2147483648` (Barber0/LLM-pretrain loss_scaler.py).
_SCALE_VALUE = re.compile(r"OVERFLOW! Scale value (?P<old>\d+) -> (?P<new>\d+)")
# apex amp's dynamic loss scaler (apex/amp/scaler.py; `loss scaler N` names which of several, since 2019): `Gradient
# overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0`, before it `Gradient overflow.  Skipping step,
# reducing loss scale to 32768.0` (apex/fp16_utils, the FP16_Optimizer of NVIDIA's BERT and Megatron scripts)
_APEX_OVERFLOW = re.compile(r"Gradient overflow\.\s+Skipping step,\s*(?:loss scaler \d+\s*)?reducing loss scale to\s*"
                            r"(?P<new>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)")
# NVIDIA's DeepLearningExamples scripts log the scale through DLLogger when the scaler skipped a step (BERT's
# run_pretraining.py: `dllogger.log(step="PARAMETER", data={"loss_scale": ...})` in its overflow branch): `DLL
# 2020-06-04 01:04:20.355678 - PARAMETER loss_scale : 2.9103830456733704e-11`
_DLL_SCALE = re.compile(
    r"^DLL (?:[\d\-]+[ T][\d:.]+ )?- PARAMETER loss_scale : (?P<new>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)\s*$")
# an overflow printed inside the optimizer step of a script that prints its own step lines: dated by those lines
AT_STEP_LINE = "at_step_line"
_DS_PROGRESS = re.compile(r"\bstep=(?P<step>\d{1,18}),\s*skipped=(?P<skipped>\d{1,18})\b")
_AT_MINIMUM = "Current loss scale already at minimum"
MAX_SHAPES_KEPT = 64  # a print statement's lines share one shape; a log of ever-new shapes compares with its first 64

# The Trainer's `log_metrics("eval", metrics)` (examples' run_clm.py and kin, trainer_pt_utils.py): `***** eval metrics
# *****` then `  eval_loss               =     1.6123` rows; the closing evaluation's only print in a console
_EVAL_METRICS_HEAD = re.compile(r"^\s*\*{5} eval metrics \*{5}\s*$")
_METRICS_ROW = re.compile(r"^\s+(\w+)\s*=\s*(\S+)\s*$")


def _number_or_none(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:  # `0:00:01.20`, `456789GF`
        return None


def scan(text: str, one_cell: bool = False) -> list[tuple]:
    """Everything of interest, in file order (module docstring), the step lines settled; `one_cell`: the text is
    what one notebook cell's code printed (`settled_lines.settled`). A model card's summary and hyper-parameter
    blocks restate the run and are read as blank lines (`card_blocks`)."""
    text = card_blocks_blanked(text)
    pieces = LINE_BREAK.split(text)  # (a CRLF is one break: an empty piece would end an OLMo block)
    scanner = _Scanner(text)
    for index, piece in enumerate(pieces):
        scanner.feed(piece, last_line=index == len(pieces) - 1)
    return settled(launches_kept(scanner.close()), one_cell)


class _Scanner:
    """One pass over a console's lines: the readers of blocks and tables the text's markers call for (most logs have
    none: the work is skipped), the Trainer's `***** eval metrics *****` block being read, and the events found."""

    def __init__(self, text: str):
        self.events: list[tuple] = []
        self.overflow_rank: int | None = None  # the lowest rank an overflow line names (`_lowest_rank`)
        self.olmo = OlmoBlock()
        self.composer = ComposerBlock() if "]:\n\t " in text or "]:\r\n\t " in text else None
        self.nemo_rl = NemoRLBlock() if "= Step " in text and "\u2022" in text else None
        self.keras = keras = KerasEpochs() if "Epoch " in text and KERAS_LOSS_MARKER.search(text) else None
        mlx = MlxTable() if "train_loss" in text and "iter" in text else None
        self.yaml_steps = YamlSteps() if "\nStep " in text and ":\n  " in text else None
        self.dashed = DashedSteps() if " STEP " in text and ":\t" in text else None
        self.parlai = ParlaiReports() if PARLAI_MARKER in text else None
        self.bare_epochs = bare_epoch_reader(text)
        # a table's line is its own: no other reader takes it
        unsloth = UnslothTrainPrints() if UNSLOTH_TRAIN_MARKER in text else None
        self.info_logger = InfoLoggerRecords() if INFO_LOGGER_MARKER in text else None
        self.lightning = LightningResults() if LIGHTNING_MARKER in text else None
        self.dspy_grpo = DspyGrpoSteps() if DSPY_GRPO_MARKER in text else None
        self.seq2seq = seq2seq_reader(text)
        estimator = OneLineRecords(tf_estimator.read_line) if any(m in text for m in tf_estimator.MARKERS) else None
        values_first = OneLineRecords(value_first.read_line) if value_first.MARKER in text else None
        tutorial = OneLineRecords(elapsed_percent.read_line) if elapsed_percent.MARKER in text else None
        mxnet = MxnetLines() if MXNET_MARKER in text else None
        glued = glued_field_reader(text)
        batch_averages = BatchAverages(text) if BATCH_AVERAGES_MARKER in text else None
        history = DataFrameTable() if "loss" in text else None  # a pandas DataFrame of per-epoch results
        boxed = BoxedTable() if BOX_MARKER in text and "oss" in text else None  # a redrawn box table of losses
        # the tables whose readers are told that a line may be cut mid-write (`_table_record`)
        self.cut_aware = tuple(t for t in (estimator, values_first, tutorial, mxnet) if t is not None)
        self.table_line_shapes: set[str] = set()  # their lines' printed shapes (`printed_shape`)
        self.tables = tuple(t for t in (keras, mlx, self.yaml_steps, self.dashed, self.parlai, unsloth,
                                        self.info_logger, self.lightning, estimator, values_first, self.bare_epochs,
                                        self.dspy_grpo, self.seq2seq,
                                        glued, batch_averages, history, boxed, checkpoint_eval_reader(text), tutorial,
                                        json_block_reader(text), mxnet)
                       if t is not None)
        self.step_lines = any(marker in text for marker in STEP_LINE_MARKERS) or bool(
            TQDM_LOSS_POSTFIX.search(text)) or has_generic_line(text)
        self.results = ResultsTable() if any(marker in text for marker in TABLE_MARKERS) else None
        # epoch section headers (`=== Epoch 3/20 ===`) date the stepless loss lines under them (`stepless_dating`),
        # unless bare records own the file's counter lines (one owner per header: `console_lines.bare_epochs`)
        self.worded_headers = ("poch" in text or "POCH" in text) and worded_headers_repeat(text)
        self.headers = self.bare_epochs is None and ("poch" in text or "POCH" in text) \
            and (EPOCH_HEADER_MARK.search(text) is not None or self.worded_headers)
        self.chat = DeepSpeedChat() if any(marker in text for marker in CHAT_MARKERS) else None
        self.block: dict | None = None  # the Trainer's `***** eval metrics *****` block being read
        self.stepped = False  # a step line was read (what comes before it is the script's start-up)
        self.dumped: list[int] = []  # DLLogger loss_scale lines before the first step line
        self.step_line_shapes: set[str] = set()  # the printed shapes (`printed_shape`) of the step lines read
        self.piece = -1  # the piece being read (its index), and the last one that gave a record (where a launch's
        self.last_record = -1  # own text may begin: `launch_banners.launch_event`)
        self._seen = 0  # the events looked at for records

    def feed(self, piece: str, last_line: bool) -> None:
        """Read one piece of text (a line, or a tqdm redraw between carriage returns)."""
        self._note_records()
        banner = banner_key(piece)
        if banner is not None:  # a launch's start (`launch_banners`): the readers number counters from it
            self.events.append(launch_event(banner, self.piece, self.last_record))
        if self._eval_metrics(piece):
            return
        owner = next((table for table in self.tables if table.owns(piece)), None)
        if owner is not None:
            record = self._table_record(owner, piece, last_line)
            if record:
                self.events.append(("line", record))
            return
        self._step_line(piece, last_line)
        if "{" in piece or "/" in piece and "[" in piece:
            self.events.extend(dicts_and_bars(piece))
        self._loss_scale_lines(piece)

    def _table_record(self, owner, piece: str, last_line: bool):
        """A table's record of the piece. The file's last line may be cut mid-write unless it is printed in the shape
        of a line before it (as `_parsed_step_line` takes a step line): the readers that can leave its cut value out
        are told so (the seq2seq blocks keep their own lines' shapes)."""
        if owner is self.seq2seq:
            return owner.feed(piece, last_line)
        if owner not in self.cut_aware:
            return owner.feed(piece)
        if not last_line and len(self.table_line_shapes) >= MAX_SHAPES_KEPT:
            return owner.feed(piece)
        shape = printed_shape(piece)
        maybe_cut = last_line and shape not in self.table_line_shapes
        self.table_line_shapes.add(shape)
        return owner.feed(piece, maybe_cut)

    def _note_records(self) -> None:
        """Counts the piece about to be read; notes the piece before it as the last record's where it gave one."""
        if any(e[0] in ("dict", "line") for e in self.events[self._seen:]):
            self.last_record = self.piece
        self._seen = len(self.events)
        self.piece += 1

    def close(self) -> list[tuple]:
        """The events, with the block being read and each block reader's last record."""
        if self.block and self.block.get("eval_loss") is not None:
            self.events.append(("dict", None, self.block))
        if len(self.dumped) == 1:  # one, before any step: the script's arguments dumped a line each, its set scale
            del self.events[self.dumped[0]]
        for reader in (self.olmo, self.composer, self.nemo_rl, self.yaml_steps, self.dashed, self.parlai,
                       self.info_logger, self.lightning, self.bare_epochs, self.dspy_grpo, self.keras, self.seq2seq):
            last = reader.close() if reader is not None else None
            if last is not None:
                self.events.append(("line", last))
        return self.events

    def _eval_metrics(self, piece: str) -> bool:
        """Whether the piece is the Trainer's `***** eval metrics *****` head or one of its rows (taken); a block
        ends at the first other piece, one ('dict', None, {eval_loss: ...}) event where it holds an eval_loss."""
        if self.block is not None:
            row = _METRICS_ROW.match(piece)
            if row:
                value = _number_or_none(row.group(2))
                if value is not None:
                    self.block[row.group(1)] = value
                return True
            if self.block.get("eval_loss") is not None:
                self.events.append(("dict", None, self.block))
            self.block = None
        if "metrics *****" in piece and _EVAL_METRICS_HEAD.match(piece):
            self.block = {}
            return True
        return False

    def _step_line(self, piece: str, last_line: bool) -> None:
        """A step line (`pretrain_lines`, OLMo's and Composer's and NeMo-RL's blocks), else a results table's row,
        else DeepSpeed-Chat's line; DeepSpeed-Chat told of each step line it did not read."""
        record = self.step_lines and (self.olmo.feed(piece) or (self.composer is not None and self.composer.feed(piece))
                                      or (self.nemo_rl is not None and self.nemo_rl.feed(piece))
                                      or self._parsed_step_line(piece, last_line))
        if self.results is not None and not record:
            record = self.results.feed(piece)
        if self.chat is not None and not record:
            record = self.chat.feed(piece)
        elif self.chat is not None:
            self.chat.saw_step(record.step)
        if self.headers and not record:
            header = epoch_header(piece, self.worded_headers)
            if header:
                self.events.append(header)
                return
            record = headed_line(piece, last_line)
        if self.stepped and not record:  # a held-out line after the training line it evaluates
            record = held_out_line(piece, last_line)
        if record:
            self.events.append(("line", record))
            self.stepped = True

    def _parsed_step_line(self, piece: str, last_line: bool):
        """`parse_line`'s record; the file's last line (no newline after it) is taken whole, not cut mid-write, where
        it is printed in the very shape of a step line before it: only its final newline is missing."""
        record = parse_line(piece, last_line=last_line)
        if last_line and not record and printed_shape(piece) in self.step_line_shapes:
            # its one pair was the one held back as maybe cut (ChattyBuddy_ChatBot's `Iteration: 4000; ...; Average
            # loss: 2.3270`, the run's last line, unterminated): a line printed as the ones before it is whole
            return parse_line(piece, last_line=False)
        if not record or (not record.cut and len(self.step_line_shapes) >= MAX_SHAPES_KEPT):
            return record
        shape = printed_shape(piece)
        if record.cut and shape in self.step_line_shapes:
            record = parse_line(piece, last_line=False)
        if len(self.step_line_shapes) < MAX_SHAPES_KEPT:
            self.step_line_shapes.add(shape)
        return record

    def _lowest_rank(self, piece: str) -> bool:
        """Whether an overflow line is the lowest rank's that the console names (`OVERFLOW! Rank 0 Skipping step`):
        every rank prints the one skip, so the others' lines count no more skips (a PPO's actor and critic each print
        their own Rank 0 line: two skips). A line naming no rank counts."""
        m = _RANK.search(piece)
        if m is None:
            return True
        rank = int(m.group(1))
        self.overflow_rank = rank if self.overflow_rank is None else min(rank, self.overflow_rank)
        return rank == self.overflow_rank

    def _loss_scale_lines(self, piece: str) -> None:
        """A loss scaler's overflow (DeepSpeed's, a hand-written one's, apex's, DLLogger's), DeepSpeed's `step=N,
        skipped=K` progress, and its scale already at the minimum."""
        if "ttempted loss scale" in piece or "Scale value" in piece:
            m = _OVERFLOW.search(piece) or _SCALE_VALUE.search(piece)
            if m and self._lowest_rank(piece):
                self.events.append(("overflow", float(m.group("new") or m.group("old"))))
        elif "Gradient overflow." in piece:
            m = _APEX_OVERFLOW.search(piece)
            if m:
                self.events.append(("overflow", float(m.group("new")), AT_STEP_LINE))
        elif piece.startswith("DLL ") and "PARAMETER" in piece:
            m = _DLL_SCALE.match(piece)
            if m:
                if not self.stepped:
                    self.dumped.append(len(self.events))
                self.events.append(("overflow", float(m.group("new")), AT_STEP_LINE))
        if "skipped=" in piece:
            for m in _DS_PROGRESS.finditer(piece):
                self.events.append(("ds_step", int(m.group("step")), int(m.group("skipped"))))
        if _AT_MINIMUM in piece:
            self.events.append(("at_minimum",))
