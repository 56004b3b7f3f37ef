"""A log with no training loss curve: the eval loss alone, a closing summary that says memorization, or no loss at
all.

Without a training loss the eval loss is the only evidence of learning, and a couple of points are too few
(`eval_only`); a summary over many epochs whose mean training loss sits far above a tiny eval loss is a run that
learned its data by heart (`eval_only_memorized`); a log that holds no loss at all says nothing of learning.
"""
from __future__ import annotations

import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .fall_measure import fell_clearly
from .held_out_fall import lower_at_every_evaluation
from .metrics import EVAL_ACCURACY_KEYS, Metrics, finite, format_number, is_preference_log, logs_preference_metrics
from .overfitting import EVAL_LOSS

_EMPTY = pd.Series(dtype="float64")
# how to log more often, said for any loop: logging_steps is the Hugging Face Trainer's alone (a hand-written loop
# told to set it has nothing to set: FluffyAIcode_AgentMemorySystem, AugustinCombes_icu_MLM)
LOG_MORE_OFTEN = "every 10 steps or so; logging_steps in the Hugging Face Trainer, a print in a loop of one's own"


_SUMMARY_KEYS = ("train_runtime", "train_loss")  # what the HF Trainer's closing summary logs, at the global step


def summary_at_step_zero(metrics: Metrics) -> bool:
    """Whether a log with no training loss holds the Trainer's closing summary (train_runtime, train_loss) at step 0:
    the summary is written at the global step the run ended on, so no optimizer step ran (fewer micro-batches than
    one accumulation, say). Its train_loss is then no mean: the Trainer divides the summed loss by
    max(global_step, 0.001), so it reads a thousand times the loss it summed."""
    steps = [int(s) for key in _SUMMARY_KEYS if key in metrics for s in finite(metrics[key]).index]
    return "loss" not in metrics and bool(steps) and max(steps) == 0


def _no_step_ran(metrics: Metrics, evals) -> list[Finding]:
    """The warning for a run whose closing summary sits at step 0 (`summary_at_step_zero`): no update happened."""
    mean = finite(metrics["train_loss"]) if "train_loss" in metrics else _EMPTY
    summed = (f"; its train_loss, {format_number(float(mean.iloc[-1]))}, is the loss summed over the micro-batches "
              "that ran divided by the Trainer's floor of 0.001 for a step count of 0, not a loss" if len(mean) else "")
    seen = (f" The eval loss, {format_number(float(evals.iloc[-1]))}, is the model as it was loaded."
            if evals is not None and len(evals) else "")
    message = (f"no optimizer step ran: the Trainer's closing summary was written at global step 0{summed}. The saved "
               f"model is the one the run started from, so nothing was learned.{seen} Check that an epoch holds at "
               "least one gradient-accumulation cycle of batches (gradient_accumulation_steps x batch size x devices "
               "<= examples), or train longer.")
    return [Finding("no_learning_evidence", "warning", 0, message, end_step=0, metric="train_loss",
                    evidence={"optimizer_steps": 0, "training_loss_logged": False})]


def eval_only(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """A log with eval losses but no training loss (logging_steps longer than the run): the eval loss
    is the only evidence, and a couple of points are too few. A closing summary at step 0 says no update ran at
    all (`summary_at_step_zero`)."""
    evals = finite(metrics.get(EVAL_LOSS)) if EVAL_LOSS in metrics else None
    if summary_at_step_zero(metrics):
        return _no_step_ran(metrics, evals)
    if evals is None or len(evals) == 0:
        # a pairwise or RL log's own metrics are judged where they are; a run known to be RL only from its
        # configuration that logged none of them (its settings printed as a dict, then stopped) showed nothing
        return [] if logs_preference_metrics(metrics) else (_summary_mean_only(metrics) or _no_loss_at_all(metrics))
    if len(evals) >= thresholds.learning_min_points and fell_clearly(evals, thresholds)[0] \
            or lower_at_every_evaluation(evals):
        return []
    memorized = eval_only_memorized(metrics, evals, thresholds)
    if memorized:
        return memorized
    seen = ", ".join(format_number(v) for v in evals.iloc[:4])
    mean = closing_mean(metrics)
    closing = "" if mean is None else (f" beside the closing summary's train_loss, {format_number(float(mean))}, the "
                                       "mean over the whole run,")
    message = (f"no training loss was logged (logging_steps longer than the run?) and the eval loss alone "
               f"({len(evals)} {'point' if len(evals) == 1 else 'points'}: {seen}){closing} is too little to tell "
               "whether the run learned: log the training loss (a smaller logging_steps).")
    return [Finding("no_learning_evidence", "warning", int(evals.index[0]), message, end_step=int(evals.index[-1]),
                    metric=EVAL_LOSS, evidence={"n_points": int(len(evals)), "training_loss_logged": False})]


_MEAN_ABOVE = 2.0  # the run's mean training loss this many times over its last eval loss: the loss fell over the run


def eval_only_memorized(metrics: Metrics, evals: pd.Series, thresholds: Thresholds) -> list[Finding]:
    """A log with no training loss curve (none, or a point or two) whose end summary says the run went
    `memorization_epochs` epochs or more over its data, its last eval loss under `memorization_level_many_epochs` and
    the run's mean training loss (the Trainer's `train_loss`) `_MEAN_ABOVE` x or more over it: the loss fell over the
    run (it learned), down to where the model reproduces the texts it is evaluated on nearly token for token after
    seeing its data that many times (run_clm on three blocks for 100 epochs: train_loss 0.78, eval loss 0.083, eval
    accuracy 0.986). A `memorization` warning at the evaluation, not a lack of evidence: a summary says what the curve
    would have."""
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else _EMPTY
    mean = finite(metrics["train_loss"]) if "train_loss" in metrics else _EMPTY
    logged = finite(metrics["loss"]) if "loss" in metrics else _EMPTY
    if not len(mean) and 0 < len(logged) <= 2:  # (an older Trainer's summary has no train_loss: a point or two
        mean = logged                           # logged every logging_steps are means over their windows)
    if is_preference_log(metrics) or not len(epochs) or float(epochs.max()) < thresholds.memorization_epochs \
            or not len(mean):
        return []
    last, run_mean = float(evals.iloc[-1]), float(mean.iloc[-1])
    if not 0 < last <= thresholds.memorization_level_many_epochs or run_mean < _MEAN_ABOVE * last:
        return []
    name = next((key for key in EVAL_ACCURACY_KEYS if key in metrics and len(finite(metrics[key]))), None)
    accuracy = f", {name} {format_number(float(finite(metrics[name]).iloc[-1]))}" if name else ""
    step = int(evals.index[-1])
    said = ("the run's mean training loss was" if mean is not logged else
            f"the training loss logged at step {int(mean.index[-1])} (a mean over its logging window) was")
    message = (f"no training loss curve was logged, but {said} {format_number(run_mean)} and "
               f"its eval loss at step {step} is {format_number(last)}{accuracy}, after "
               f"{format_number(float(epochs.max()))} epochs: the model learned, down to reproducing the texts it is "
               "evaluated on nearly token for token after seeing its data that many times. The training data is most "
               "likely learned by heart (memorization), or the evaluation repeats it. Evaluate on texts it never saw; "
               "fewer epochs or more data.")
    return [Finding("memorization", "warning", step, message, end_step=step, metric=EVAL_LOSS, evidence={
        "value": last, "train_loss_mean": run_mean, "epoch": float(epochs.max()), "eval_loss_logged": True,
        "to_end": True, "training_loss_logged": False})]


def closing_mean(metrics: Metrics) -> float | None:
    """The closing summary's train_loss (the mean over the run) of a log with no training loss, or None
    (Bensonluo_4bit-QLoRA-post-training: 1.773 beside one eval point)."""
    closing = all(key in metrics for key in _SUMMARY_KEYS) and "loss" not in metrics
    mean = finite(metrics["train_loss"]) if closing else _EMPTY
    return float(mean.iloc[-1]) if len(mean) and int(mean.index[-1]) > 0 else None


def _summary_mean_only(metrics: Metrics) -> list[Finding]:
    """A log whose one loss is the closing summary's train_loss, written after real steps (`summary_at_step_zero` is
    not so): the mean over the run, a single number that cannot say whether the loss fell (a 2-step demo with
    logging_steps 5: yangoos57_Bert_For_Domain_Adaptation)."""
    closing = all(key in metrics for key in _SUMMARY_KEYS) and "loss" not in metrics  # the Trainer's summary's
    mean = finite(metrics["train_loss"]) if closing else _EMPTY
    if not len(mean) or int(mean.index[-1]) <= 0:
        return []
    step = int(mean.index[-1])
    message = (f"no training loss was logged over the run's {step} {'step' if step == 1 else 'steps'} "
               f"(logging_steps longer than the run?) and no eval loss: the only loss is the closing summary's "
               f"train_loss, {format_number(float(mean.iloc[-1]))}, the mean over the whole run, which cannot show "
               "whether the loss fell. Log the training loss (a smaller logging_steps) and, where there is held-out "
               "data, an eval loss.")
    return [Finding("no_learning_evidence", "warning", step, message, end_step=step, metric="train_loss",
                    evidence={"n_points": 0, "training_loss_logged": False, "train_loss_mean": float(mean.iloc[-1])})]


def _no_loss_at_all(metrics: Metrics) -> list[Finding]:
    """A log that holds no loss, training or eval (steps and times only, or a learning rate alone):
    nothing says whether the run learned, which is a warning, never healthy."""
    logged = sorted(name for name, series in metrics.items() if len(series))
    steps = [int(series.index[0]) for series in metrics.values() if len(series)]
    seen = f"only {', '.join(logged[:5])}{' ...' if len(logged) > 5 else ''}" if logged else "no metric at all"
    rl = is_preference_log(metrics)  # an RL run's reward would tell
    message = (f"the logs hold no loss, training or eval{', and no reward' if rl else ''} ({seen}): nothing tells "
               f"whether the run learned. Log the {'reward and the ' if rl else ''}loss ({LOG_MORE_OFTEN}) and, where "
               "there is held-out data, an eval loss.")
    return [Finding("no_learning_evidence", "warning", min(steps, default=0), message,
                    evidence={"n_points": 0, "training_loss_logged": False, "metrics_logged": logged})]
