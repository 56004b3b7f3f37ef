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

What each cell shows is put together by `notebook_outputs`; which cells make up which training, and which one is
judged, is `notebook_trainings`'s.
"""
from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pandas as pd

from ..discover import closing_eval_cells
from ..errors import UnreadableFile
from ..discover.run_signs import is_training_console, run_signs
from ..timeline import LogRecords, empty_frame
from ._filetime import file_mtime
from . import (command_line, notebook_code, notebook_fits, notebook_outputs, notebook_sessions, notebook_trainings,
               stdout)
from .notebook_json import notebook_object
from .console_facts import lora_named
from .console_param_counts import parameter_count_said
from .console_text import as_printed
from .notebook_code.cells import shell_commands
from .pretrain_lines import parse_line
from .step_numbering import HAND_WRITTEN_KINDS


def read(path: Path) -> LogRecords:
    """The training records a notebook's cell outputs hold (module docstring)."""
    path = Path(path)
    notebook, warnings, broken = notebook_object(path)
    cells = notebook_outputs.notebook_cells(notebook)
    if cells is None:
        raise UnreadableFile(path, "no 'cells' list: not a Jupyter notebook")
    cells = [cell for cell in cells if isinstance(cell, dict)]
    shown = notebook_outputs.per_batch(cells, [notebook_outputs.cell_shown(cell) for cell in cells])
    copies = notebook_fits.copied_outputs(cells, shown)
    shown = [[] if i in copies else outputs for i, outputs in enumerate(shown)]
    closing = _closing_evals(cells)
    runs = notebook_trainings.trainings(shown, path, closing, cells)
    if not runs:
        return _crashed_before_a_metric(cells, shown, path, warnings, broken)
    judged = notebook_sessions.judged_training(notebook_trainings.with_a_course(runs, shown, path), cells)
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
    if any(notebook_outputs.summary_read(text, kind)[0] != text for i in judged
           for text, kind in map(notebook_outputs.output_text, notebook_outputs.cell_outputs(cells[i]))):
        records = replace(records, notes=records.notes + (notebook_outputs.SUMMARY_READ,))
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
    elif notebook_trainings.one_point_only(runs[-1], shown, path):
        which = ("the last with more than one logged step (the one after it logs a single training loss and no "
                 "evaluation: no course to judge)")
    else:
        which = "the last whose cells ran (a later one is in cells with no execution count)"
    return (f"the notebook holds {len(runs)} trainings (a new one starts where the steps start again): {which}, in "
            f"{cells}, is judged; the {'earlier' if judged is runs[-1] else 'other'} ones are left out")


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
