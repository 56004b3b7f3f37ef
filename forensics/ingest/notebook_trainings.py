"""The trainings a notebook holds, for ingest/notebook: which cells log one training's steps, where a new training
starts (a trial, then the run; an SFT, then a DPO; a cell run again), and which to judge where the last one logs a
single point. Read from each cell's outputs as (console text, kind) (`notebook_outputs`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import notebook_fits, stdout


def with_a_course(runs: list[list[int]], shown: list, path: Path) -> list[list[int]]:
    """The trainings to judge from: all of them, less a last training that logs one training step and no evaluation
    (`one_point_only`) where an earlier one logs a course. One training loss says nothing of how a training went, and
    a notebook that ends on one is most often an optional extra fit after the owner's run
    (DevanshiVyas_DeepLearningExperiments: 18 reports of a character RNN trained from scratch, then one Keras epoch of
    the course's pre-trained Shakespeare model, one line `loss: 2.5631`); the one-point training is still counted among
    those left out. A last training that logs an evaluation beside its one training point is judged: its evaluation
    can tell (ameerfayiz_ML-notebooks' toy LSTM, one report at update 1828, valid loss 0 and accuracy 1 on its six
    training dialogues: memorization)."""
    if len(runs) < 2 or not one_point_only(runs[-1], shown, path) \
            or not any(len(_logged_steps(run, shown, path)) >= 2 for run in runs[:-1]):
        return runs
    return runs[:-1]


def one_point_only(run: list[int], shown: list, path: Path) -> bool:
    """Whether a training's cells log one training step and no evaluation (`with_a_course`)."""
    cells = [_training_steps(shown[i], path) for i in run]
    return len({step for cell in cells for step in cell.steps}) == 1 and not any(cell.evaluated for cell in cells)


def _logged_steps(run: list[int], shown: list, path: Path) -> set[int]:
    return {step for i in run for step in _training_steps(shown[i], path).steps}


# A training's closing summary (the Trainer's last dict, `TrainOutput(...)`): no training steps of its own
_SUMMARY = {"train_loss", "train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos", "epoch"}


def trainings(shown: list[list[tuple[str, str]]], path: Path, closing: list[list | None], cells: list[dict]
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
