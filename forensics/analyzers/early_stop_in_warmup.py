"""An early stop inside the warm-up: one `run_cut_short` warning at the last logged step where the console says its
early-stopping rule ended the training (ingest `early_stop_end`) while the logged learning rate was still rising, its
warm-up unfinished: the rule judged a model that never trained at its configured rate, most often on the noise of a
small eval set with a short patience. yuki-nyaa_myGPT: a GPT-2 124M from scratch, max_iters 100,000 with a 2,000-
iteration warm-up, patience 1 on a one-batch eval every iteration; 'Training ended with `patience` exceeded max(1).'
at iter 16, the rate at 5.1e-6 of its 6e-4 peak and rising at every point, judged warning.

Silent where the rate stopped rising before the end (the warm-up finished), where no rate is logged (the corpus'
other early-stopped consoles, all judged healthy: styxjedi_ada-self-attn-defseq at epoch 43 after a 10-epoch warm-up,
hasaki1025_MyDL, Bureaux-Tao_unilm-translate-ancient_chinese), or where no line says an early stop fired: of the
corpus' 43 logs whose rate still rises at their last point, 8 are judged healthy (a console copied part-way, a run
stopped by hand, a warm-up set longer than the run) and none of them says an early stop ended it.
"""
from __future__ import annotations

import numpy as np

from ..findings import Finding
from ..ingest.early_stop_end import KEY
from ..timeline import Timeline
from .metrics import LR, Metrics, finite, format_number

_MIN_POINTS = 3  # learning-rate points a rise is read from


def early_stop_said(timeline: Timeline) -> str | None:
    """The line a console of the run says its early-stopping rule ended the training with, or None."""
    return next((meta[KEY] for meta in timeline.meta.values() if meta.get(KEY)), None)


def detect_early_stop_in_warmup(metrics: Metrics, stop_line: str | None) -> list[Finding]:
    """One `run_cut_short` warning where `stop_line` says an early stop ended the run and the logged rate rose to its
    last point without ever falling (module docstring); else []."""
    lr = finite(metrics[LR]) if LR in metrics else None
    if not stop_line or lr is None or len(lr) < _MIN_POINTS:
        return []
    values = lr.to_numpy(dtype="float64")
    if np.any(np.diff(values) < 0) or not values[-1] > values[-2] or not values[-1] > values[0]:
        return []
    last = int(lr.index[-1])
    message = (f"the run's early-stopping rule ended it at step {last} ('{stop_line}') while its learning rate was "
               f"still rising in the warm-up ({format_number(float(values[0]))} -> {format_number(float(values[-1]))}"
               "): the stop fired before the model trained at its configured rate, comparing evaluations of a model "
               "still warming up, where a small eval set's noise can outweigh its progress. Count the patience in "
               "evaluations after the warm-up ends, evaluate on more batches (eval_iters) or less often, or set a "
               "min_delta; then train again.")
    return [Finding("run_cut_short", "warning", last, message, metric=LR,
                    evidence={"last_step": last, "first_lr": float(values[0]), "last_lr": float(values[-1]),
                              "early_stop_line": stop_line})]
