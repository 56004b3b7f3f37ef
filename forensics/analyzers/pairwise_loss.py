"""A pairwise preference loss (DPO and kin) at ~0: the pairs saturated, or learned by heart.

A loss -log sigmoid(beta x margin) at ~0 is every pair separated so far that nothing is left to learn from them:
with a vanished grad_norm to the end, saturated pairs (`saturated_pairs`, a `loss_collapse` warning); under 1% of
its gradient over every pass from the second, pairs that come round again already separated (`pairs_memorized`);
many-fold lower at the first step that shows pairs seen before and down from there, pairs remembered
(`pairs_separated_on_return`). Judged on the pair term alone where the loss adds an NLL term (`pair_term_memorized`,
rpo_alpha), and on a loss-only log of a pairwise objective through the run profile (`for_a_pairwise_loss`).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .metrics import GRAD_NORM, LOSS, Metrics, epoch_at, finite, format_number, is_preference_log, real_loss, true_runs
from .overfitting import eval_loss_names


# The pairwise loss -log sigmoid(z) scales its own gradient by sigmoid(-z), about the loss itself: a loss at ~0
# has next to no gradient, and a grad_norm under this (a LoRA DPO's is 1 to 100) says the pairs teach nothing more.
_VANISHED = 1e-2
_PAIRWISE = ("rewards/margins", "logps/rejected")
_SATURATED = 1e-2  # a pairwise loss this low passes 1% of its gradient on: the pairs are separated


def saturated_pairs(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """A pairwise preference loss (DPO and kin) at ~0 (`collapse_abs`) with a vanished grad_norm (`_VANISHED`) at the
    last two logged points or more: every pair's margin is so wide that the sigmoid is flat, and the steps from
    there learn nothing. Dated from where the loss went under `_SATURATED` for good with the grad_norm's median
    vanished from there (luke-griggs's DPO: 0.0039 at step 80, never over 0.006 again, the odd batch still ranked
    wrong lifting a grad_norm or two). A warning, with where the margin came from (a DPO margin grows by pushing the
    rejected answers down as well as by raising the chosen ones). GRPO/PPO logs sit at ~0 by construction and are
    left alone."""
    if not any(k in metrics for k in _PAIRWISE) or GRAD_NORM not in metrics:
        return []
    loss, grad = real_loss(metrics), metrics[GRAD_NORM].reindex(real_loss(metrics).index)
    flat = (loss.to_numpy() <= thresholds.collapse_abs) & (np.abs(grad.to_numpy()) <= _VANISHED)
    runs = true_runs(flat)
    if not runs or runs[-1][1] != len(loss) or runs[-1][1] - runs[-1][0] < 2:
        return []
    start = _saturated_from(loss, grad, runs[-1][0])
    first = int(loss.index[start])
    sides = [f"{k} {format_number(float(finite(metrics[k]).iloc[0]))} -> "
             f"{format_number(float(finite(metrics[k]).iloc[-1]))}"
             for k in ("logps/chosen", "logps/rejected") if k in metrics and len(finite(metrics[k]))]
    where = f" ({', '.join(sides)})" if sides else ""
    message = (f"the preference loss stays under {format_number(_SATURATED)} from step {first} to the end of the log, "
               f"the grad_norm mostly under {format_number(_VANISHED)} from there: every pair is separated so far that "
               f"nothing is left to learn from them{where}. Check that the chosen answers' log-probs did not fall "
               "with the rejected ones; then try a larger beta, fewer epochs or harder pairs.")
    return [Finding("loss_collapse", "warning", first, message, end_step=int(loss.index[-1]), metric=LOSS,
                    evidence={"n_points": len(loss) - start, "to_end": True, "saturated_pairs": True})]


def pairs_memorized(metrics: Metrics) -> list[Finding]:
    """A pairwise preference log over several passes with no held-out pairs whose loss is under `_SATURATED` over
    every pass from the second on (each pass's median): the pairs come round again already separated, and nothing
    shows whether the wider margins carry over to pairs not seen (SteveHong1901's five-epoch DPO: epoch medians
    0.257, 0.0076, 0.0017, 0.00077, 0.00049). A `memorization` warning from the first step of that pass."""
    if not any(k in metrics for k in _PAIRWISE) or "epoch" not in metrics or eval_loss_names(metrics) \
            or any(k.startswith("eval_rewards/") for k in metrics):
        return []
    loss, epochs = real_loss(metrics), finite(metrics["epoch"])
    passes = np.floor(_epochs_at(loss.index, epochs) - 1e-9)  # epoch 1.0: the first pass done
    medians = pd.Series(loss.to_numpy()).groupby(passes).median()
    low = (medians[medians.index >= 1] <= _SATURATED).to_numpy()  # the passes over pairs seen before
    if not len(low) or not low[-1]:
        return []
    high = np.flatnonzero(~low)
    first_pass = float(medians.index[medians.index >= 1][high[-1] + 1 if len(high) else 0])
    first = int(loss.index[int(np.flatnonzero(passes == first_pass)[0])])
    by_pass = ", ".join(format_number(float(v)) for v in medians.to_numpy()[:8])
    margins = finite(metrics["rewards/margins"]) if "rewards/margins" in metrics else None
    grown = (f"; the margins grew {format_number(float(margins.iloc[0]))} -> {format_number(float(margins.iloc[-1]))}"
             if margins is not None and len(margins) >= 2 else "")
    message = (f"the preference loss is under {format_number(_SATURATED)} over every pass from pass "
               f"{int(first_pass) + 1} (step {first}; each pass's median: {by_pass}): the pairs come round again "
               f"already separated{grown}, and with no held-out pairs nothing shows whether that carries over to pairs "
               "the model has not seen. Evaluate on held-out pairs; fewer epochs or a larger beta.")
    return [Finding("memorization", "warning", first, message, end_step=int(loss.index[-1]), metric=LOSS,
                    evidence={"pairwise": True, "pass_medians": [float(v) for v in medians.to_numpy()[:20]],
                              "to_end": True})]


# The pairwise loss at the first step that shows pairs seen before is this many times under the first pass's end level
# or more: one optimizer step cannot make pairs not seen yet that much easier, the pairs seen once are remembered
_RESEEN_FOLD = 5.0
_PASS_POINTS = 3  # points logged in the first pass and after it at the least: the drop sits at the boundary


def pairs_separated_on_return(metrics: Metrics) -> list[Finding]:
    """A pairwise preference log with no held-out pairs whose loss falls `_RESEEN_FOLD`-fold or more in the one logged
    step where the pairs come round again (the first pass's end level, the median of its last two points, over the
    first point past epoch 1) and stays down: every later point under that end level, their median under it by the
    same fold. The first pass scores each pair before the model has learned from it, and at its end the pairs were
    still far from separated; one step later the same pairs come back separated: learned by heart, with nothing
    held out to show the preference carries over (DAViDChen1999_RLHF-Homework-Portfolio's DPO on 50 pairs, 6 steps a
    pass: 0.465, 0.427 at the end of the first pass, 0.043 at step 7, then 0.0016-0.11 to the end). A `memorization`
    warning dated at that first re-seen step; `pairs_memorized` where the later passes are saturated outright."""
    if not any(k in metrics for k in _PAIRWISE) or "epoch" not in metrics or eval_loss_names(metrics) \
            or any(k.startswith("eval_rewards/") for k in metrics) or not len(epochs := finite(metrics["epoch"])):
        return []
    loss = real_loss(metrics)
    seen = np.floor(_epochs_at(loss.index, epochs) - 1e-9) >= 1  # epoch 1.0: the first pass's last step
    first, later = loss.to_numpy()[~seen], loss.to_numpy()[seen]
    if len(first) < _PASS_POINTS or len(later) < _PASS_POINTS or seen[:len(first)].any():
        return []
    end = float(np.median(first[-2:]))
    if not (later[0] * _RESEEN_FOLD <= end and float(later.max()) < end
            and float(np.median(later)) * _RESEEN_FOLD <= end):
        return []
    step = int(loss.index[len(first)])
    message = (f"the preference loss falls from {format_number(end)} at the end of the first pass over the pairs to "
               f"{format_number(float(later[0]))} at step {step}, the first step that shows pairs seen before "
               f"({format_number(end / float(later[0]))}x lower in one step), and stays down (median "
               f"{format_number(float(np.median(later)))}, at most {format_number(float(later.max()))} after): pairs "
               "still far from separated when first seen come back separated, learned by heart, and with no "
               "held-out pairs nothing shows whether the preference carries over to pairs the model has not seen. "
               "Evaluate on held-out pairs; fewer epochs, more pairs or a larger beta.")
    return [Finding("memorization", "warning", step, message, end_step=int(loss.index[-1]), metric=LOSS,
                    evidence={"pairwise": True, "first_pass_end": end, "reseen": float(later[0]), "to_end": True})]


def pair_term_memorized(metrics: Metrics, thresholds: Thresholds, rpo_alpha: float) -> list[Finding]:
    """The pairwise checks above on the pair term of a DPO loss with rpo_alpha set (TRL and ms-swift log
    loss = pair term + rpo_alpha x nll_loss): the NLL term keeps the logged loss well above zero however far the pairs
    are separated (zhl-2022's ms-swift DPO: 0.253 = 0.1 x 2.532 with every pair ranked right from step 3, margins
    26-33, 12 pairs over 10 epochs), so they are judged on loss - rpo_alpha x nll_loss."""
    if LOSS not in metrics or "nll_loss" not in metrics or not rpo_alpha > 0 or not is_preference_log(metrics):
        return []
    pair = (metrics[LOSS] - rpo_alpha * metrics["nll_loss"].reindex(metrics[LOSS].index)).clip(lower=0.0)
    found = saturated_pairs({**metrics, LOSS: pair}, thresholds) or pairs_memorized({**metrics, LOSS: pair})
    return [replace(f, message=f"with rpo_alpha {format_number(rpo_alpha)}, the pair term of the loss (loss - "
                               f"rpo_alpha x nll_loss) tells: {f.message.replace('the preference loss', 'it')}",
                    evidence={**f.evidence, "rpo_alpha": rpo_alpha}) for f in found]


def _epochs_at(steps: pd.Index, epochs: pd.Series) -> np.ndarray:
    """The epoch at each step: the last logged one before it, or, where the log gives the epoch at under half its
    steps (a notebook table without an Epoch column, its closing `TrainOutput` saying 500 epochs), on a straight line
    from step 0 through the points it gives (an epoch a fixed number of steps)."""
    if len(epochs) * 2 >= len(steps):
        return epochs.reindex(steps, method="ffill").to_numpy()
    known_steps = np.concatenate([[0.0], epochs.index.to_numpy(dtype="float64")])
    known_epochs = np.concatenate([[0.0], epochs.to_numpy(dtype="float64")])
    return np.interp(steps.to_numpy(dtype="float64"), known_steps, known_epochs)


def _saturated_from(loss: pd.Series, grad: pd.Series, flat_from: int) -> int:
    """The first position from which the pairwise loss stays under `_SATURATED` to the end with the grad_norm's
    median from there under `_VANISHED`; `flat_from` (where loss and grad_norm are both ~0 to the end) if later."""
    above = np.flatnonzero(~(loss.to_numpy() <= _SATURATED))
    start = int(above[-1]) + 1 if len(above) else 0
    vanished = np.abs(grad.to_numpy()) <= _VANISHED  # (NaN: not vanished)
    # from each position to the end: how many points, how many of them vanished (a median under: half or more)
    after = np.arange(len(vanished), 0, -1)
    vanished_after = np.cumsum(vanished[::-1])[::-1]
    ok = np.flatnonzero(2 * vanished_after[start:flat_from] >= after[start:flat_from])
    return start + int(ok[0]) if len(ok) else flat_from


PAIRWISE_ALGORITHMS = ("dpo", "simpo")  # a loss -log sigmoid(beta x margin) of each pair, with no NLL term in it
_PAIRS_SEEN = 2.0  # epochs: a pairwise loss that reaches 0 this late has seen every pair at least twice


def for_a_pairwise_loss(findings: list[Finding], metrics: Metrics) -> list[Finding]:
    """The findings of a pairwise preference run (DPO, SimPO: the run profile says so) whose log has only its loss
    (no rewards/* nor logps/* columns to judge it as a preference log): a `zero_loss_unexplained` from a gradual
    descent that reached ~0 at epoch `_PAIRS_SEEN` or later is `memorization`. Of the causes an exact 0.0 has in an
    SFT log, labels all masked leave a pairwise loss at ln 2 (both answers' log-probabilities 0, a margin of 0), not
    at 0, and a loss that came down smoothly to 0 over epochs is no NaN: at 0.000000 every pair's margin is so wide
    that the sigmoid is 1, the pairs the run has seen again and again separated completely (a DPO run over a hundred
    pairs for some thirty epochs: ln 2, then 0.1, 0.001, and 0.000000 from its twelfth epoch to the end). Kept
    where the loss got there within the first passes (too few to call it learned by heart), from the first step,
    or in one sudden drop. A `loss_collapse` error (a sudden drop to ~0 that stays) is the sigmoid saturated, a warning
    (`_saturated_not_collapsed`)."""
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
    held_out = (": check the held-out pairs' loss" if eval_loss_names(metrics) else ", and with no held-out pairs "
                "nothing shows whether the preference carries over to pairs the model has not seen: evaluate on some")
    out = []
    for f in findings:
        if f.kind == "loss_collapse" and f.severity == "error":
            out.append(_saturated_not_collapsed(f))
            continue
        near_zero = int(f.evidence.get("near_zero_step", f.step))
        epoch = epoch_at(epochs, near_zero)
        if f.kind != "zero_loss_unexplained" or f.evidence.get("from_the_start") or f.evidence.get("sudden") \
                or f.evidence.get("level_before") is None or epoch is None or epoch < _PAIRS_SEEN:
            out.append(f)
            continue
        last = format_number(float(epochs.max()))
        message = (f"the pairwise preference loss descends gradually to {format_number(f.evidence.get('value', 0.0))} "
                   f"at step {f.step}, at epoch {format_number(epoch)}, and stays near 0 "
                   f"{'to the end of the log' if f.evidence.get('to_end') else f'until step {f.end_step}'} (epoch "
                   f"{last} at the last point): every pair's margin is so wide that the sigmoid is 1. Labels all "
                   "masked would leave this loss at ln 2 (a margin of 0), not at 0: the pairs, seen again and again, "
                   f"are learned by heart (memorization){held_out}. Fewer epochs, more pairs or a larger beta.")
        out.append(replace(f, kind="memorization", message=message,
                           evidence={**f.evidence, "pairwise": True, "epoch": epoch}))
    return out


def _saturated_not_collapsed(found: Finding) -> Finding:
    """A pairwise loss's sudden drop to ~0 that stays there, said as what it is: every pair's margin so wide that the
    sigmoid is flat and the steps from there learn nothing from the pairs; no targets leaked, no numerics broke (labels
    all masked leave the loss at ln 2). A warning, as `saturated_pairs` says it where grad_norm is logged
    (sarahxgh_RL-for-Finetunning-LLms-dpo's loop: 6.24 at step 2, 0.0000 from step 5, the tqdm postfix 3.4e-7)."""
    before = found.evidence.get("level_before")
    came = f"from about {format_number(before)} " if before is not None else ""
    until = "to the end of the log" if found.evidence.get("to_end") else f"until step {found.end_step}"
    message = (f"the pairwise preference loss fell {came}to ~0 at step {found.step} and stays there {until}: every "
               "pair is separated so far that the sigmoid is flat and the steps from there learn nothing from these "
               "pairs. Labels all masked would leave this loss at ln 2, not at 0; where the trainer filters NaN "
               "losses, a logged 0.0 may hide one. Check that the chosen answers' log-probs did not fall with the "
               "rejected ones; then try a smaller learning rate, a larger beta, more and harder pairs.")
    return replace(found, severity="warning", message=message,
                   evidence={**found.evidence, "pairwise": True, "saturated_pairs": True})
