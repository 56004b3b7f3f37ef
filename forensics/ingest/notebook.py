"""Reader of a Jupyter notebook (.ipynb) whose cell outputs hold a training run: many Colab and Kaggle runs are kept
only this way, the console never saved on its own.

`read(path)` puts together, cell by cell in the notebook's order, what the outputs show as a terminal would have
shown it, and reads that text as a console log (`stdout.read_console`, format "stdout"):

* stream outputs (stdout, stderr): the console itself (HF dict lines, banners, a `!python train.py` cell's output);
* the HF Trainer's notebook progress table, a display_data (or execute_result) whose `text/html` is a
  `<progress>` bar and `<table><thead><tr><th>Step</th><th>Training Loss</th>...` (transformers
  utils/notebook.py: NotebookProgressCallback, text_to_html_table) while its `text/plain` says only
  `<IPython.core.display.HTML object>`: its rows become the tab-separated lines of the table copied as text, which
  `results_table` reads;
* other results' `text/plain` (`TrainOutput(global_step=60, training_loss=..., metrics={...})`), or the
  `text/markdown` of a Markdown display (its text/plain only `<IPython.core.display.Markdown object>`);
* errors: the exception and its traceback (a run that died: `OutOfMemoryError: CUDA out of memory`);
* a cell whose loop prints its loss as a bare number, its output only such numbers (`printed_loss_cells`): those
  numbers as the loss at steps 0, 1, ...;
* livelossplot's closing summary of a series' min, max and last value (`livelossplot_summary`): the course they allow,
  as the loss (and eval_loss) at steps 0, 1, ...

The cells' code is not read as output: code says what was meant to run, the outputs what ran. What the code that
ran passed as arguments (LoRA, 4-bit, bf16, the model) is kept for the run profile (`notebook_code`), with the
arguments of the one training command its shell lines launch (`!python train.py --fp16`: `command_line`). nbformat 4
and the older 3 (`worksheets`, `pyout`, `pyerr`, mime types as bare keys) are both read.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from ..discover import closing_eval_cells
from ..errors import UnreadableFile
from ..discover.livelossplot_summary import as_step_lines
from ..discover.printed_loss_cells import loss_column
from ..discover.run_signs import is_training_console, run_signs
from ..timeline import LogRecords, empty_frame
from ._filetime import file_mtime
from . import command_line, notebook_code, notebook_fits, notebook_sessions, stdout
from .notebook_json import notebook_object
from .console_facts import lora_named
from .console_param_counts import parameter_count_said
from .console_text import as_printed
from .notebook_code.cells import shell_commands
from .notebook_code.loss_prints import loss_prints_labelled
from .notebook_code.summed_loss import divided_lines, summed_loss_cells
from .pretrain_lines import parse_line
from .results_table import trainer_tables
from .step_numbering import HAND_WRITTEN_KINDS

# What a display's text/plain says when the display is HTML only: no console text
_HTML_PLACEHOLDER = "<IPython.core.display.HTML object>"
# ... and when it is Markdown: its text/markdown is the text shown (a printed model, a summary put in a code block)
_MARKDOWN_PLACEHOLDER = "<IPython.core.display.Markdown object>"


def read(path: Path) -> LogRecords:
    """The training records a notebook's cell outputs hold (module docstring)."""
    path = Path(path)
    notebook, warnings, broken = notebook_object(path)
    cells = _cells(notebook)
    if cells is None:
        raise UnreadableFile(path, "no 'cells' list: not a Jupyter notebook")
    cells = [cell for cell in cells if isinstance(cell, dict)]
    shown = _per_batch(cells, [_shown(cell) for cell in cells])
    copies = notebook_fits.copied_outputs(cells, shown)
    shown = [[] if i in copies else outputs for i, outputs in enumerate(shown)]
    closing = _closing_evals(cells)
    runs = _runs(shown, path, closing, cells)
    if not runs:
        return _crashed_before_a_metric(cells, shown, path, warnings, broken)
    judged = notebook_sessions.judged_training(_with_a_course(runs, shown, path), cells)
    trained = {i for run in runs for i in run} | _loop_fragments_before(shown, judged[0], runs)
    began = notebook_sessions.session_start(cells, judged[-1])
    console = "".join(_kept_text(outputs, i in judged, i in trained, i >= began) for i, outputs in enumerate(shown))
    # a training judged in one cell: the hand-written lines read are that cell's (a cell printing any is a training's)
    records = stdout.read_console(console, path, warnings, one_cell=len(judged) == 1)
    records = _with_closing_evals(records, [closing[i] for i in judged])
    records = replace(records, banners=_judged_cells_first(records.banners, [shown[i] for i in judged]))
    _model_size_printed_last(records.meta, shown, judged[-1], began)
    if any(kind == "table" for i in judged for _, kind in shown[i]):
        records.meta["trainer_table"] = "the Hugging Face Trainer's notebook progress table"
    if len(runs) > 1:
        records = replace(records, notes=records.notes + (_other_runs_left_out(runs, judged, shown, path),))
    if any(_summary_read(text, kind)[0] != text
           for i in judged for text, kind in map(_output_text, _outputs(cells[i]))):
        records = replace(records, notes=records.notes + (_SUMMARY_READ,))
    named = lora_named(shell_commands([cells[i] for i in judged]))
    if named:  # the cell's own `!python train.py --output_dir runs/...-lora-v1` (Schwaldlander_DomainNameSuggest)
        records.meta.setdefault("console_lora_named", named)
    session_cells = [cells[i] for i in notebook_sessions.ran_up_to(cells, judged[-1])]
    said = notebook_code.code_values(session_cells, console)
    for key, value in command_line.launch_values(shell_commands(session_cells)).items():
        said.setdefault(key, value)  # a `!python train.py --fp16` cell: the program's own arguments
    if said:
        records.texts[notebook_code.TEXT_KEY] = json.dumps(said)
    return records


def _with_a_course(runs: list[list[int]], shown: list, path: Path) -> list[list[int]]:
    """The trainings to judge from: all of them, less a last training that logs one training step and no evaluation
    (`_one_point_only`) where an earlier one logs a course. One training loss says nothing of how a training went, and
    a notebook that ends on one is most often an optional extra fit after the owner's run
    (DevanshiVyas_DeepLearningExperiments: 18 reports of a character RNN trained from scratch, then one Keras epoch of
    the course's pre-trained Shakespeare model, one line `loss: 2.5631`); the one-point training is still counted among
    those left out. A last training that logs an evaluation beside its one training point is judged: its evaluation
    can tell (ameerfayiz_ML-notebooks' toy LSTM, one report at update 1828, valid loss 0 and accuracy 1 on its six
    training dialogues: memorization)."""
    if len(runs) < 2 or not _one_point_only(runs[-1], shown, path) \
            or not any(len(_logged_steps(run, shown, path)) >= 2 for run in runs[:-1]):
        return runs
    return runs[:-1]


def _one_point_only(run: list[int], shown: list, path: Path) -> bool:
    cells = [_training_steps(shown[i], path) for i in run]
    return len({step for cell in cells for step in cell.steps}) == 1 and not any(cell.evaluated for cell in cells)


def _logged_steps(run: list[int], shown: list, path: Path) -> set[int]:
    return {step for i in run for step in _training_steps(shown[i], path).steps}


def _closing_evals(cells: list[dict]) -> list[list | None]:
    """Each cell's points of a training function that prints only its held-out loss when it returns
    (`closing_eval_cells`), None for a cell that shows none."""
    trained_by = closing_eval_cells.trainers(cells)
    return [closing_eval_cells.closing_evals(cell, trained_by) for cell in cells]


def _with_closing_evals(records: LogRecords, judged: list[list | None]) -> LogRecords:
    """The records, with the closing-print points of the judged training's cells (`closing_eval_cells`), which no
    console reader takes, after what the console read."""
    points = [point for cell in judged if cell for point in cell]
    if not points:
        return records
    rows = pd.DataFrame(points, columns=["step", "metric", "value"]).assign(wall_time=math.nan)
    frame = pd.concat([records.frame, rows], ignore_index=True) if not records.frame.empty else rows
    return replace(records, frame=frame.astype({"step": "int64", "value": "float64"}))


def _judged_cells_first(banners: tuple, judged: list[list[tuple[str, str]]]) -> tuple:
    """The banners, those the judged training's own cells print first: what an earlier cell loaded to look at (a
    model shown before the run, another one's reload) is not the model trained (ParlAI's tutorial shows its 87.5M
    transformer's replies three times before it trains a 16.8M LSTM: ameerfayiz_ML-notebooks)."""
    text = as_printed("".join(text for outputs in judged for text, _ in outputs))
    own = [b for b in banners if all(line.strip() in text for line in b.text.splitlines())]
    return tuple(own) + tuple(b for b in banners if b not in own)


def _model_size_printed_last(meta: dict, shown: list, last: int, began: int) -> None:
    """The whole-model count (`console_n_params`) the cells print last up to the judged training's last cell, in its
    session: the model built last before it ended is the one trained, where the console read whole gives its first
    count, an earlier model's (dangnguyenngochai_Llama_from_scratch: `model params: 33217` of the first toy model,
    `model params: 2370246` printed when the Llama trained last was built, in a cell of an earlier call)."""
    for i in range(last, began - 1, -1):
        said = parameter_count_said(as_printed("".join(text for text, _ in shown[i])))
        if said:
            meta.update(said)
            return


def _crashed_before_a_metric(cells: list[dict], shown: list, path: Path, warnings: list[str],
                             broken: str | None) -> LogRecords:
    """A notebook whose outputs hold no training line: no log (an evaluation, a look at the data), unless its outputs
    together are a training run's console (`run_signs`: a run that crashed or was stopped before its first logged
    step), read whole as one, with the arguments of its code. A notebook broken part-way whose whole cells show no
    training is unreadable: its training may be in what was lost, and the user is told so."""
    console = "".join(text for outputs in shown for text, _ in outputs)
    if not is_training_console(run_signs(console.encode("utf-8", errors="replace"))):
        if broken:
            raise UnreadableFile(path, f"{broken}; none of them shows a training")
        return LogRecords(source=str(path), format=stdout.FORMAT, frame=empty_frame(), mtime=file_mtime(path))
    records = stdout.read_console(console, path, warnings)
    said = notebook_code.code_values(cells, console)
    if said:
        records.texts[notebook_code.TEXT_KEY] = json.dumps(said)
    return records


def _other_runs_left_out(runs: list[list[int]], judged: list[int], shown: list, path: Path) -> str:
    cells = f"cell {judged[0] + 1}" + (f" to {judged[-1] + 1}" if len(judged) > 1 else "")
    if judged is runs[-1]:
        which = "the last"
    elif _one_point_only(runs[-1], shown, path):
        which = ("the last with more than one logged step (the one after it logs a single training loss and no "
                 "evaluation: no course to judge)")
    else:
        which = "the last whose cells ran (a later one is in cells with no execution count)"
    return (f"the notebook holds {len(runs)} trainings (a new one starts where the steps start again): {which}, in "
            f"{cells}, is judged; the {'earlier' if judged is runs[-1] else 'other'} ones are left out")


# A training's closing summary (the Trainer's last dict, `TrainOutput(...)`): no training steps of its own
_SUMMARY = {"train_loss", "train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos", "epoch"}


def _runs(shown: list[list[tuple[str, str]]], path: Path, closing: list[list | None], cells: list[dict]
          ) -> list[list[int]]:
    """The trainings the notebook holds, each the indices of its cells: cells whose outputs log training steps, a
    new training starting where a cell's steps start again at or below where the one before ended (a trial, then the
    run; an SFT, then a DPO; a cell run again). A cell that carries the steps on (a resume) is the same training, and
    so is a cell that shows only a closing summary after a training (`result = trainer.train()`, then `result`), or
    only trainer.evaluate()'s one-row table at the step where the training ended (`_closing_evaluation`). A call of
    a training function that prints only its held-out loss when it returns (`closing`) logs the steps of its points,
    from 0: each call its own training (Vishal-Padia_llama-from-scratch: a dozen calls, the last one judged). A Keras
    fit that carries on the model an earlier cell fitted (`notebook_fits.fit_carried_on`) is the same training."""
    runs: list[list[int]] = []
    last_step, last_sizes = None, set()
    for i, outputs in enumerate(shown):
        cell = (_CellTraining(sorted({p[0] for p in closing[i]}), set()) if closing[i]
                else _training_steps(outputs, path))
        if not cell.steps:
            continue
        steps, sizes = cell.steps, cell.sizes
        new = last_step is None or (not cell.closing_only and not _closing_evaluation(cell, last_step) and (
            steps[0] <= last_step or (sizes and last_sizes and not sizes & last_sizes))
            and not notebook_fits.fit_carried_on(cells, shown, runs[-1][-1], i))
        if new:
            runs.append([])
        runs[-1].append(i)
        last_step = max(steps[-1], last_step) if cell.closing_only and last_step is not None else steps[-1]
        last_sizes = sizes or last_sizes
    return runs


@dataclass(frozen=True)
class _CellTraining:
    """What one cell's outputs say of a training: the steps they log, the model sizes their banners state, and
    whether the steps are only those of a closing summary (no training metric logged)."""
    steps: list[int]
    sizes: set[int]
    closing_only: bool = False
    evaluate_table: bool = False
    evaluated: bool = False  # an evaluation's metric logged too


def _training_steps(outputs: list[tuple[str, str]], path: Path) -> _CellTraining:
    """The steps at which one cell's outputs log a training metric (not an evaluation's, not a closing summary), else
    those of its evaluations where it closes with train()'s summary (a run of fewer steps than its logging_steps logs
    only those: ANURAGMN_benchmarkingRougeBLEU, 248 steps under the default 500), else the summary's own where the
    cell shows train()'s TrainOutput or the Trainer's progress table (`_closes_a_training`), and the model sizes its
    banners state: a cell whose steps carry on from the last training's is a new training all the
    same where it builds a model of another size (ParlAI's tutorial trains a 87.5M transformer to update 1716, then a
    16.8M LSTM of its own from scratch, whose first report is at update 1828: ameerfayiz_ML-notebooks)."""
    text = "".join(text for text, _ in outputs)
    if not text:
        return _CellTraining([], set())
    records = stdout.read_console(text, path, [], one_cell=True)
    frame = records.frame
    sizes = {b.all_params for b in records.banners if b.all_params}
    evaluated = frame["metric"].str.startswith("eval_")
    trained = frame[~evaluated & ~frame["metric"].isin(_SUMMARY)]
    summary = frame[frame["metric"].eq("train_runtime")]
    closing_only = trained.empty and not evaluated.any() and _closes_a_training(outputs)
    if closing_only and not summary.empty:
        return _CellTraining(sorted(set(summary["step"].astype(int))), sizes, closing_only=True)
    if trained.empty and not summary.empty:
        trained = frame[evaluated]  # a run shorter than its logging interval: its evaluations, then its summary
    return _CellTraining(sorted(set(trained["step"].astype(int))), sizes, evaluate_table=_evaluate_table(outputs),
                         evaluated=bool(evaluated.any()))


def _closing_evaluation(cell: _CellTraining, last_step: int) -> bool:
    """Whether a cell is trainer.evaluate() run after the training: its table's one row at the very step where the
    training ended. The Trainer's notebook callback writes evaluate()'s metrics as a new table whose columns come in
    the order it fills them (Training Loss, Validation Loss, then Step), where a training's table opens with its
    Step (or Epoch) column; the row repeats the run's last training loss (DulaniDeSilva_Natural-Language-Processing-
    NLP-: the 7-row table of train() ends at 618, evaluate() shows `3.249048  3.243796  618`)."""
    return cell.evaluate_table and cell.steps == [last_step]


def _evaluate_table(outputs: list[tuple[str, str]]) -> bool:
    """Whether a cell's Trainer tables are all evaluate()'s: a header whose first column is neither Step nor Epoch."""
    headers = [next((line for line in text.splitlines() if "\t" in line), "") for text, kind in outputs
               if kind == "table"]
    return bool(headers) and all(header.split("\t")[0] not in ("Step", "Epoch") for header in headers)


# train()'s return value as a cell shows it: the run's closing summary as its metrics, dated at its global step
_TRAIN_OUTPUT = "TrainOutput(global_step="


def _closes_a_training(outputs: list[tuple[str, str]]) -> bool:
    """Whether a cell's outputs show that a training ran to its end though they log no training metric: train()'s
    `TrainOutput(global_step=N, ...)`, or the Trainer's progress table (a Loss column, no row where the run was
    shorter than its logging_steps). Recent transformers print no `***** Running training *****` banner in a
    notebook, and a 2-step run under logging_steps 10 shows only these (Onemaeus97_yifanbot: `[2/2 00:01, Epoch
    2/2]`, Step / Training Loss headers, then TrainOutput(global_step=2, training_loss=4.645, ...))."""
    return any(kind == "table" or (kind == "result" and _TRAIN_OUTPUT in text) for text, kind in outputs)


def _loop_fragments_before(shown: list, first: int, runs: list[list[int]]) -> set[int]:
    """The cells before the judged training's first that belong to no training yet print a hand-written loop's line
    with its loss: one line is under a cell's floor for a training of its own (`step_numbering`), but kept in the
    judged console it would read as that training's first point (GW-S_tranform_pytorch: an attention model's cell
    stopped by hand after `Epoch:   0 | Train loss: 2.404 | Val loss: 1.932 | Gen: ...` read as step 1 of the
    transformer trained next, whose loss starts at 2.99e10). Another training's piece, left out as its cells are."""
    trained = {i for run in runs for i in run}
    return {i for i in range(first) if i not in trained and any(_loop_line(line) for text, _ in shown[i]
                                                                  if "oss" in text for line in text.splitlines())}


def _loop_line(line: str) -> bool:
    record = parse_line(line) if "oss" in line else None
    return record is not None and record.kind in HAND_WRITTEN_KINDS and bool({"loss", "eval_loss"} & set(record.names))


def _kept_text(outputs: list[tuple[str, str]], judged: bool, trained: bool, in_session: bool) -> str:
    """A cell's part of the console judged: the judged training's cells whole; no other training's cells, nor the
    cells above where the judged training's kernel session began (their banners speak of another process); of the
    rest (banners, the data, an evaluation) all but errors, since an out-of-memory error of an attempt before the
    run, or of an inference after it, is no crash of the run."""
    if judged:
        return "".join(text for text, _ in outputs)
    if trained or not in_session:
        return ""
    return "".join(text for text, kind in outputs if kind != "error")


def _shown(cell: dict) -> list[tuple[str, str]]:
    """A cell's outputs as (console text, kind); a loop's column of bare printed losses (`printed_loss_cells`) as
    the `step N: loss X` lines a console reader reads, its passes numbered from 0."""
    column = loss_column(cell)
    if column is not None:
        return [("".join(f"step {k}: loss {value!r}\n" for k, value in enumerate(column)), "stream")]
    return loss_prints_labelled(cell, [_summary_read(*_output_text(o)) for o in _outputs(cell)])


_SUMMARY_READ = ("livelossplot's closing summary (each series' min, max and last value) read as the course they allow: "
                 "its maximum, then its last value where that is its minimum (a fall), its minimum, then its last "
                 "where that is its maximum (a rise); a series that ended between its extremes is not read (their "
                 "order is not said); the steps are the summary's order, not the run's")


def _summary_read(text: str, kind: str) -> tuple[str, str]:
    """A stream output that is livelossplot's closing summary as the step lines it allows (`livelossplot_summary`)."""
    lines = as_step_lines(text) if kind == "stream" and "cur:" in text else None
    return (lines, kind) if lines else (text, kind)


def _per_batch(cells: list[dict], shown: list[list[tuple[str, str]]]) -> list[list[tuple[str, str]]]:
    """The cells' outputs, the epoch sums a hand-written loop prints undivided (`notebook_code.summed_loss`) divided
    by the batch count the notebook tells, so that every reader and analyzer sees a per-batch loss."""
    for i, summed in summed_loss_cells(cells).items():
        if summed.batches:
            shown[i] = [(divided_lines(text, summed) if kind == "stream" else text, kind) for text, kind in shown[i]]
    return shown


def _cells(notebook: dict) -> list | None:
    if isinstance(notebook.get("cells"), list):
        return notebook["cells"]
    worksheets = notebook.get("worksheets")  # nbformat 3
    if isinstance(worksheets, list):
        return [cell for sheet in worksheets if isinstance(sheet, dict)
                for cell in (sheet.get("cells") if isinstance(sheet.get("cells"), list) else [])]
    return None


def _outputs(cell: dict) -> list[dict]:
    outputs = cell.get("outputs") if cell.get("cell_type") == "code" else None
    return [o for o in outputs if isinstance(o, dict)] if isinstance(outputs, list) else []


def _output_text(output: dict) -> tuple[str, str]:
    """The console text an output shows, and its kind: "stream", "error", "table" (the Trainer's progress table)
    or "result"."""
    kind = output.get("output_type")
    if kind == "stream":
        return _ended(_joined(output.get("text"))), "stream"
    if kind in ("error", "pyerr"):
        traceback = output.get("traceback")
        lines = [line for line in traceback if isinstance(line, str)] if isinstance(traceback, list) else []
        return _ended("\n".join(lines + [f"{output.get('ename', '')}: {output.get('evalue', '')}"])), "error"
    if kind in ("display_data", "execute_result", "pyout"):
        data = output.get("data") if isinstance(output.get("data"), dict) else output  # nbformat 3: bare keys
        html = _joined(data.get("text/html", data.get("html")))
        tables = trainer_tables(html) if "Loss</th>" in html else ""
        if tables:
            return tables, "table"
        plain = _joined(data.get("text/plain", data.get("text")))
        if plain.strip() == _MARKDOWN_PLACEHOLDER:  # `display(Markdown(...))`: what it shows is its markdown text
            plain = _joined(data.get("text/markdown"))
        return ("" if plain.strip() == _HTML_PLACEHOLDER else _ended(plain)), "result"
    return "", "other"


def _joined(value) -> str:
    """A notebook's multi-line string: one string, or a list of lines each keeping its newline."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return ""


def _ended(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"
