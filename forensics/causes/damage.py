"""Cause rules read from where the damage is: which blocks went non-finite, and what a 0.0 loss means.

Each rule is `rule(facts) -> Cause | None`; thresholds come from `Thresholds`.
"""
from __future__ import annotations

import math

import numpy as np

from ..analyzers.dead_reward import ADVANTAGES_MAX, REWARD_STD, STEP_REWARD_STD, ZERO_STD
from ..findings import Cause, plural
from ..checkpoints.blocks import block_index, block_ranges
from ..analyzers.weights import first_harm
from .evidence import (INSTABILITY_KINDS, Facts, evidence_value, first_bad_checkpoint, is_embedding,
                       last_good_before, not_the_optimizer, number_of_blocks, precision_sources, resume_advice,
                       said, zero_loss_zero_grad_steps)
from .optimization import rate_for_the_run, trained_precision
from .setting_names import clip_setting, rollouts_setting


def _damage(facts: Facts):
    """(first bad checkpoint, damaged block indices, damaged non-block tensor names, n_blocks, why n) or None."""
    bad = first_bad_checkpoint(facts)
    if bad is None:
        return None
    names = list(bad.nonfinite_blocks) + list(bad.nonfinite_tensors)
    indices = sorted({i for i in map(block_index, names) if i is not None})
    others = sorted({n for n in bad.nonfinite_tensors if block_index(n) is None})
    n_blocks, why = number_of_blocks(facts)
    return bad, indices, others, n_blocks, why


def _where(facts: Facts, bad) -> list[str]:
    good = last_good_before(facts, bad)
    sentence = f"first bad checkpoint {bad.name}" + (f" (step {bad.step})" if bad.step is not None else "")
    return [sentence + (f"; last good {good.name} (step {good.step})" if good else "")]


def late_blocks(facts: Facts) -> Cause | None:
    """Non-finite weights only in the last `late_blocks_fraction` of the blocks (nothing before, no embeddings)."""
    found = _damage(facts)
    if found is None:
        return None
    bad, indices, others, n_blocks, why = found
    # "The last quarter" of a model with a handful of blocks says nothing about where damage starts.
    too_few = not n_blocks or n_blocks < facts.thresholds.late_blocks_min_blocks
    if not indices or others or too_few or len(indices) >= n_blocks:
        return None
    first_late = n_blocks - max(1, math.ceil(n_blocks * facts.thresholds.late_blocks_fraction))
    if indices[0] < first_late:
        return None
    blocks = [b for b in bad.nonfinite_blocks if block_index(b) is not None] or [str(i) for i in indices]
    evidence = _where(facts, bad) + [
        f"non-finite values only in {block_ranges(blocks)}: the last {len(indices)} of {n_blocks} blocks ({why})",
        f"{plural(len(bad.nonfinite_tensors), 'non-finite tensor')}, e.g. {', '.join(bad.nonfinite_tensors[:3])}",
    ]
    return Cause(
        cause="late_blocks", confidence="likely" if facts.broken else "possible", evidence=evidence,
        suggestion=(f"The blocks next to the output took the largest updates: {rate_for_the_run(facts)}, "
                    f"clip with {clip_setting(facts, '1.0')}, add a warm-up, and check labels and masks"
                    + (f"; {resume}." if (resume := resume_advice(facts)) else ".")),
        title=f"Damage confined to the last blocks ({block_ranges(blocks)})",
    )


def _first_layer_numerics(facts: Facts) -> str:
    """fp16 overflow only for a run that trained in fp16; a bf16 or fp32 run is told to look at the numerics."""
    precision = trained_precision(facts)
    if precision == "fp16":
        return "fp16 overflow in the first layer (the run trained in fp16)"
    if precision in ("bf16", "fp32"):
        return (f"the first layer's numerics (the run trained in {precision}: not an fp16 overflow; look for a log or "
                "division of 0, or an input scaled far out of range)")
    return "the first layer's numerics (an overflow there, if it trained in fp16)"


def early_blocks(facts: Facts) -> Cause | None:
    """Non-finite weights only in the embeddings and/or the first `early_blocks_fraction` of the blocks."""
    found = _damage(facts)
    if found is None:
        return None
    bad, indices, others, n_blocks, why = found
    embeddings = [n for n in others if is_embedding(n)]
    if others != embeddings or not (indices or embeddings):
        return None
    if indices:
        if not n_blocks or len(indices) >= n_blocks:
            return None
        last_early = max(1, math.ceil(n_blocks * facts.thresholds.early_blocks_fraction)) - 1
        if indices[-1] > last_early:
            return None
    parts = ([f"embeddings ({', '.join(embeddings[:3])})"] if embeddings else []) + \
            ([f"{'block' if len(indices) == 1 else 'blocks'} {', '.join(map(str, indices))} of {n_blocks} ({why})"]
             if indices else [])
    return Cause(
        cause="early_blocks", confidence="possible",
        evidence=_where(facts, bad) + [f"non-finite values only in the {' and the first '.join(parts)}"],
        suggestion=("Damage at the input side: check the tokenizer and input ids (tokens added without initialising "
                    f"their embeddings, ids past the vocabulary), the embedding learning rate, and "
                    f"{_first_layer_numerics(facts)}."),
        title="Damage in the embeddings / first blocks",
    )


def masked_nan_loss(facts: Facts) -> Cause | None:
    """loss logged as exactly 0.0 where the training went NaN: HF's logging_nan_inf_filter hid a NaN loss."""
    steps = facts.masked_nan_steps
    flagged = facts.of_kind("masked_nan_loss")
    if not steps and not flagged:
        return None
    first = steps[0] if steps else flagged[0].step
    evidence = [_masked_sentence(facts, steps, first, flagged)]
    nan_filter = facts.config.get("logging_nan_inf_filter")
    if nan_filter is not None:
        evidence.append(said(facts.config, "logging_nan_inf_filter"))
    evidence.append("with the filter on, a NaN step loss adds the running average (0 after each log) instead of "
                    "itself, so a window of NaN losses logs 0.0: the loss was NaN, the model did not fit the data")
    return Cause(
        cause="masked_nan_loss", confidence="likely", evidence=evidence,
        # what to do first (a brief report shows this row's opening lines), then how to read the log
        suggestion=(f"{_after_masked(facts, first)} Read loss 0.0 from step {first} on as NaN: the training went NaN "
                    "there."),
        title="loss 0.0 is a hidden NaN (logging_nan_inf_filter)",
    )


def _masked_sentence(facts: Facts, steps: list[int], first: int, flagged) -> str:
    """Where the hidden NaN shows, naming only what was logged: a NaN grad_norm beside the 0.0 where there is one;
    else what the finding read it from (an exploded loss, a frozen rate, a NaN eval; grad_norm absent or 0.0)."""
    count = f" ({len(steps)} logged steps)" if steps else ""
    grad = facts.metrics.get("grad_norm")
    at = grad[grad.index.isin(steps or [first])] if grad is not None else None
    if at is not None and len(at) and not np.isfinite(at.to_numpy(dtype="float64")).all():
        return f"loss is logged as exactly 0.0 where grad_norm is NaN/Inf, from step {first}{count}"
    beside = ("grad_norm was not logged" if at is None or not len(at)
              else f"grad_norm is logged as {evidence_value(float(at.iloc[0]))} there, not NaN")
    told = f"; {flagged[0].message}" if flagged else ""
    return f"loss is logged as exactly 0.0 from step {first}{count} and {beside}{told}"


def _after_masked(facts: Facts, first: int) -> str:
    """What to do about the weights: resume from before the first incident that harmed them (`resume_point`), unless
    nothing came before it (a NaN from the first step, or no update made before the harm), where no checkpoint holds
    trained weights to go back to, or the log shows nothing sound before it (`_nothing_sound_before`)."""
    harm, what = resume_point(facts, first)
    frozen = _no_update_before(facts, harm)
    if harm <= 1 and facts.start_unshown and not (facts.before_any_update or frozen):  # a paste from mid-run
        return (f"The log is NaN from its first line, which is not the run's start ({facts.start_unshown}): find what "
                "made it NaN (the other causes), fix it, then resume from a checkpoint saved before the NaN if one "
                "was kept, else start again; logging_nan_inf_filter=False makes the NaN visible.")
    if facts.before_any_update or harm <= 1 or frozen:
        start = (f"No update was made before step {harm}: {frozen}. So" if frozen and harm > 1
                 else "It was NaN from the start, so")
        return (f"{start} no checkpoint before it holds trained weights: find what made it NaN (the other "
                "causes), fix it and start again; logging_nan_inf_filter=False makes the NaN visible.")
    visible = "logging_nan_inf_filter=False shows the NaN in the log."
    if not facts.broken:
        return f"The run got past it, so there is nothing to resume; {visible}"
    good = facts.safe_checkpoint
    resume = resume_advice(facts) if good is not None and (good.step is None or good.step < harm) else None
    before = "before it" if harm == first else f"before step {harm} ({what})"
    unsound = None if resume or facts.checkpoints else _nothing_sound_before(facts, harm)
    if unsound:
        return (f"The filter only hid it: {unsound}, so there is no checkpoint to go back to: find what made it NaN "
                f"(the other causes), fix it and start again; {visible}")
    then = (f"then {resume}" if resume else f"then start again: no checkpoint saved {before} was found"
            if facts.checkpoints else f"then resume from a checkpoint saved {before}, if one was kept")
    return (f"The filter only hid it: fix what made it NaN first (resuming without a fix replays the same batches "
            f"into it), {then}; {visible}")


def _nothing_sound_before(facts: Facts, step: int) -> str | None:
    """Why no checkpoint saved before `step` is known to hold sound weights, where the log shows nothing of the run
    before it (no real loss, no finite grad_norm: a NaN from the log's first point); None where it does. yoshi182023,
    Anujaykalbhor, A-Mayank and hiyouga 2810 went NaN at their first logged point and were told to resume from a
    checkpoint saved before it, "if one was kept": nothing logged says the weights were ever sound then."""
    loss, grad = facts.metrics.get("loss"), facts.metrics.get("grad_norm")
    for series, sound in ((loss, lambda v: np.isfinite(v) & (v != 0.0)), (grad, np.isfinite)):
        if series is not None:
            earlier = series[series.index < step].to_numpy(dtype="float64")
            if sound(earlier).any():
                return None
    return f"no real loss or finite grad_norm was logged before step {step} to show weights still sound before it"


def resume_point(facts: Facts, first: int) -> tuple[int, str]:
    """The step of the first incident that harmed the weights, at or before a hidden NaN at `first`, and what it was:
    the weight-harming incidents `harm_step` reads (divergence onset, collapse, non-finite training metrics), a
    non-finite metric of any kind that broke the run (an eval loss or a DPO's log-probs computed on NaN weights), or
    a loss spike that never came back: a checkpoint saved after any of them holds what it did to the weights."""
    harming = [f for f in facts.live_findings if f.severity == "error" and f.kind in INSTABILITY_KINDS
               and not not_the_optimizer(f)]
    harming += [f for f in facts.of_kind("loss_spike") if f.evidence.get("recovered") is False]
    harm = first_harm(facts.live_findings)
    if harm is not None:
        harming.append(harm)
    earlier = min((f for f in harming if f.step < first), key=lambda f: f.step, default=None)
    if earlier is None:
        return first, "the hidden NaN"
    if earlier.kind == "nonfinite_metric":
        return earlier.step, f"{earlier.metric or 'a metric'} non-finite from there"
    return earlier.step, f"where the {earlier.kind.replace('_', ' ')} began"


def _no_update_before(facts: Facts, step: int) -> str | None:
    """Why no update had been made before `step`, where the learning rate was logged as 0.0 at every logged step before
    it (a scheduler that steps only with the optimizer holds the rate at 0 while every step is skipped, as an fp16
    loss scaler skips each step that overflows); None where a rate above 0 was logged before it or none was."""
    lr = facts.metrics.get("learning_rate")
    if lr is None:
        return None
    before = lr[lr.index < step].to_numpy(dtype="float64")
    before = before[np.isfinite(before)]
    if not len(before) or (before != 0.0).any():
        return None
    return (f"the learning rate was logged as 0.0 at all {len(before)} logged steps before it, a scheduler that did "
            "not step, as when every optimizer step is skipped (an fp16 loss scaler skips each step that overflows)")


# The GRPO detector's no_learning_signal (analyzers.dead_reward): rewards without spread, not masked labels.
# the metrics that tell a GRPO step's groups had no reward spread (analyzers.dead_reward.no_spread_points)
_REWARD_SPREAD_METRICS = (ZERO_STD, REWARD_STD, ADVANTAGES_MAX, STEP_REWARD_STD)


def _rl_gradient_gone(finding) -> bool:
    """analyzers.frozen.detect_rl_gradient_gone's finding: an RL log's grad_norm exactly 0 from some step on."""
    return finding.metric == "grad_norm" and "zero_points" in finding.evidence


def _zero_at_few_points(finding) -> bool:
    """analyzers.frozen's warning for a log of a few grad_norms, every one exactly 0, beside a finite non-zero loss at
    each (`frozen` False: too few points to call the weights frozen). The loss is not 0 there, so it is no masked
    label's (Schwaldlander's LoRA: grad_norm 0.0 beside a loss of 1.558 at its one logged step)."""
    return finding.metric == "grad_norm" and bool(finding.evidence.get("grad_norm_zero")) \
        and finding.evidence.get("frozen") is False


def _evaluated_without_spread(finding) -> bool:
    """A GRPO loss exactly 0 at every step beside an evaluation whose groups had no reward spread
    (`detect_zero_loss_no_spread`)."""
    return "eval_no_spread" in finding.evidence


def no_reward_spread(facts: Facts) -> Cause | None:
    """GRPO groups whose completions all got the same reward: zero advantages, zero gradient (told by the groups'
    own spread, or by an RL log's grad_norm exactly 0 from some step on with the reward flat)."""
    flagged = [f for f in facts.of_kind("no_learning_signal") if f.metric in _REWARD_SPREAD_METRICS
               or _rl_gradient_gone(f) or _evaluated_without_spread(f)]
    if not flagged:
        return None
    f = flagged[0]
    seen = (f"grad_norm exactly 0 at {f.evidence['zero_points']} of {f.evidence.get('points')} logged steps from "
            f"step {f.step}, the reward not rising there" if _rl_gradient_gone(f) else
            f"the loss exactly 0 at all {f.evidence.get('points')} logged steps from step {f.step}, and "
            f"{f.evidence['eval_metric']} {f.evidence['eval_no_spread']:g} at the evaluation"
            if _evaluated_without_spread(f) else
            f"{f.metric} shows no reward spread within the groups at {f.evidence.get('dead_steps')} of "
            f"{f.evidence.get('logged_steps')} logged steps, from step {f.step}")
    return Cause(
        cause="no_reward_spread", confidence="likely",
        evidence=[seen],
        suggestion=("Make the reward tell completions apart (partial credit instead of all-or-nothing), sample more "
                    f"or more varied completions per prompt ({rollouts_setting(facts)}, temperature), or train on "
                    "prompts the "
                    "model sometimes solves; a learning-rate change cannot help while every advantage is 0."),
        title="GRPO rewards without spread: no advantage, no gradient",
    )


def zero_loss_zero_grad(facts: Facts) -> Cause | None:
    """loss 0.0 with a finite grad_norm of 0.0: no learning signal (labels all masked?), not a NaN."""
    # steps the analyzers read as a hidden NaN (a run whose every fp16 step overflowed logs loss and grad_norm 0.0)
    # are not a lack of signal: the labels are not what to check there
    steps = [s for s in zero_loss_zero_grad_steps(facts) if s not in set(facts.masked_nan_steps)]
    flagged = [f for f in facts.of_kind("no_learning_signal")
               if f.metric not in _REWARD_SPREAD_METRICS and not f.evidence.get("frozen") and not _rl_gradient_gone(f)
               and not _evaluated_without_spread(f) and not _zero_at_few_points(f)]
    if facts.profile is not None and facts.profile.objective == "rl":
        steps = []  # a policy-gradient loss is 0 by construction (GRPO's group-normalised advantages): no labels
    if not steps and not flagged:
        return None
    first = steps[0] if steps else flagged[0].step
    batches = next((f for f in flagged if f.evidence.get("no_gradient_batches")), None)
    if not steps and batches is not None:  # analyzers.skipped_steps: isolated batches without gradient, loss ordinary
        count = plural(batches.evidence["count"], "isolated logged step")
        evidence = [f"grad_norm exactly 0 or vanishingly small at {count} from step {batches.step}, the loss ordinary "
                    f"there, and {_no_scaler(facts)}"]
    else:
        evidence = [f"loss and grad_norm both exactly 0.0 from step {first}"
                    + (f" ({len(steps)} logged steps)" if steps else "")]
    fp16_ds = precision_sources(facts.config, "fp16") and any(k.startswith("ds.") for k in facts.config.values)
    if fp16_ds:
        evidence.append("under DeepSpeed fp16, grad_norm is also logged as 0.0 when every step overflowed (the norm "
                        "is never computed), so this may be the overflow rather than the data")
    return Cause(
        cause="zero_loss_zero_grad", confidence="possible" if fp16_ds else "likely", evidence=evidence,
        suggestion=("Check labels and masks: every label -100 (a chat template or completion-only collator that "
                    "matched nothing, truncation cutting off all answers) gives no loss and no gradient."),
        title=("No learning signal: batches without gradient" if not steps and batches is not None
               else "No learning signal: loss and grad_norm 0.0"),
    )


def _no_scaler(facts: Facts) -> str:
    """Whether a loss scaler could have skipped those steps, as far as the run says: none in a bf16 or fp32 run; where
    the precision is not known only the log's silence (DeepSpeed's fp16 scaler logs a skipped step's norm as 0)."""
    precision = trained_precision(facts)
    if precision in ("bf16", "fp32"):
        return f"no loss scaler in the run to skip them (it trained in {precision})"
    if precision == "fp16":
        return "the log shows no loss scaler at work, though the run trained in fp16, whose scaler may skip them"
    return ("no loss scaler shown in the log to skip them (the precision is not known, and DeepSpeed's fp16 scaler "
            "logs a skipped step's grad_norm as 0)")


def frozen_weights(facts: Facts) -> Cause | None:
    """grad_norm exactly 0 at every step of a run whose loss is not 0 and that learned nothing, or a second epoch that
    repeats the first's losses batch for batch: no gradient reached the trainable weights."""
    found = [f for f in facts.of_kind("no_learning_signal") if f.evidence.get("frozen") or _zero_at_few_points(f)]
    if not found:
        return None
    ds = any(k.startswith("ds.") for k in facts.config.values)
    first = found[0].evidence
    if "repeated_from" in first:  # the loss says it, not grad_norm
        evidence = [f"the epoch from step {first['repeated_from']} repeats the losses of the epoch before, batch for "
                    "batch: the same batches gave the same loss, so the weights had not changed"]
    elif "frozen_loss" in first:  # the loss and the eval loss say it, no grad_norm needed
        evidence = [f"the training loss is {first['frozen_loss']:g} at all {first.get('points')} logged points from "
                    f"step {found[0].step} and the eval loss moved by {first.get('eval_spread', 0):.1g} of itself: the "
                    "updates did not change what the model outputs"]
    elif _zero_at_few_points(found[0]):
        points = int(first.get("points", 1))
        where = f"at the one logged step ({found[0].step})" if points == 1 else \
            f"at all {points} logged steps from step {found[0].step}"
        evidence = [f"grad_norm exactly 0 {where}, beside a loss that is not 0: no gradient reached the trainable "
                    "weights at any step the log shows (too few points to rule out a release that logs the norm as 0)"]
    else:
        evidence = [f"grad_norm exactly 0 at all {first.get('points')} logged steps from step {found[0].step}, "
                    "with a loss that is not 0 and nothing learned"]
    if ds:
        evidence.append("a DeepSpeed config is set: some DeepSpeed releases log the norm as 0 (ms-swift#5890); the "
                        "flat loss or reward says the weights did not move either way")
    spread = _reward_spread_seen(facts)
    if spread:
        evidence.append(spread)
    return Cause(
        cause="frozen_weights", confidence="possible" if _zero_at_few_points(found[0]) else "likely", evidence=evidence,
        suggestion=_frozen_advice(facts, spread),
        title="No gradient reached the weights",
    )


def _frozen_advice(facts: Facts, spread: str | None) -> str:
    """Where to look for the missing gradient, for the run's method and objective: the PEFT remedies only where an
    adapter may train, GRPO's zero advantages only for an RL run (or one of unknown objective) whose own reward spread
    does not already rule them out."""
    method = facts.profile.method if facts.profile is not None else "unknown"
    objective = facts.profile.objective if facts.profile is not None else "unknown"
    adapter = method != "full"
    advice = ("Check that the trainable parameters require gradients"
              + (" (a PEFT model with gradient checkpointing needs model.enable_input_require_grads())"
                 if adapter else "")
              + ", that the loss is computed from the model's outputs (not detached), and that the optimizer holds "
              + ("the adapter's parameters" if adapter else "the model's parameters"))
    if objective in ("rl", "unknown") and not spread:
        advice += "; in GRPO, that the advantages are not all 0"
    elif spread:
        advice += ("; the groups' rewards did differ, so the advantages were not all 0: the gradient was lost between "
                   "them and the weights")
    return advice + "."


def _reward_spread_seen(facts: Facts) -> str | None:
    """A sentence saying an RL run's groups had reward spread (a median reward_std above 0, or a median
    frac_reward_zero_std below 1), so zero advantages are not why no gradient came; None where not logged or not so."""
    if facts.profile is not None and facts.profile.objective not in ("rl", "unknown"):
        return None
    std, zero = facts.metrics.get("reward_std"), facts.metrics.get("frac_reward_zero_std")
    if std is not None and len(std.dropna()) and float(std.median()) > 0:
        return f"reward_std had a median of {evidence_value(float(std.median()))}: the groups' rewards differed"
    if zero is not None and len(zero.dropna()) and float(zero.median()) < 1:
        return (f"frac_reward_zero_std had a median of {evidence_value(float(zero.median()))}: most groups' rewards "
                "differed")
    return None
