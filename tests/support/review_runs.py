"""Inputs the reviews of the reading rules build (their tests are named by subject, e.g.
tests/test_nemo2_console_evals.py): a noisy falling loss, NeMo 2.0's progress printer as its code prints, and a
notebook whose cells ran the given code and trained."""
from __future__ import annotations

import json

import numpy as np


def falling(n, start=2.5, end=1.0, seed=0):
    rng = np.random.default_rng(seed)
    return [float(start + (end - start) * i / (n - 1) + rng.normal(0, 0.02)) for i in range(n)]


def nemo2_console(vals, steps=400, log_interval=1):
    """nemo/lightning/pytorch/callbacks/progress_printer.py (ProgressPrinter.on_train_batch_end): every printed line
    holds the trainer's progress-bar metrics, averaged over the log interval. MegatronStrategy.validation_step logs
    `val_loss` with prog_bar=True, so once a validation ran, `val_loss` stays on every later training line (and on the
    first line after a validation it is averaged with zeros over the part of the interval before it). `vals`: the
    val_loss of the validation run after each of these iterations."""
    tr = falling(steps, 2.5, 1.6)
    out = ["[NeMo I 2024-06-01 10:00:00 nemo_logging:393] Experiments will be logged at /results/default"]
    acc, cur = {}, None
    for it in range(steps):
        acc["lr"] = acc.get("lr", 0.0) + 2e-5
        acc["reduced_train_loss"] = acc.get("reduced_train_loss", 0.0) + tr[it]
        if cur is not None:
            acc["val_loss"] = acc.get("val_loss", 0.0) + cur
        if (it + 1) % log_interval == 0:
            line = f"Training epoch 0, iteration {it + 1}/{steps} | global_step: {it}"
            for key, value in acc.items():
                line += f" | {key}: {value / log_interval:.4}"
            out.append(line)
            acc = {}
        if it in vals:
            out += [f"Validation: iteration {j}/5" for j in range(1, 6)]
            cur = vals[it]
    return "\n".join(out) + "\n"


def training_notebook(folder, cells):
    """`folder/train.ipynb`: one code cell a source, each run in turn, the last printing thirty HF dict lines of a
    falling loss; returns the folder."""
    dicts = "".join(f"{{'loss': {v:.4f}, 'grad_norm': 1.2, 'learning_rate': 2e-05, 'epoch': {s / 10:.2f}}}\n"
                    for s, v in enumerate(falling(30), 1))
    out = [{"cell_type": "code", "execution_count": i + 1, "metadata": {}, "source": src, "outputs": []}
           for i, src in enumerate(cells)]
    out[-1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": dicts}]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.ipynb").write_text(json.dumps({"cells": out, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return folder


def ran_notebook(folder, name, cells):
    """`folder/name`: a notebook whose code cells (source, printed text) all ran, in order; returns the folder."""
    folder.mkdir()
    nb = {"cells": [{"cell_type": "code", "execution_count": i, "metadata": {}, "source": source,
                     "outputs": [{"output_type": "stream", "name": "stdout", "text": text}] if text else []}
                    for i, (source, text) in enumerate(cells, 1)],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (folder / name).write_text(json.dumps(nb))
    return folder

