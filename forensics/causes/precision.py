"""Cause rules about numeric precision: FP16 overflow, DeepSpeed precision settings, QLoRA double quantization.

Each rule is `rule(facts) -> Cause | None`; thresholds come from `Thresholds`.
"""
from __future__ import annotations

import numpy as np

from ..findings import Cause, plural, source_name
from ..ingest.stdout import ENGINE_SKIPS
from .evidence import Facts, evidence_value, grad_norm_climb_before, nonfinite_steps, precision_sources, said
from .optimization import rate_for_the_run

_FP32_NAMES = ("fp32", "float32", "torch.float32", "float", "fp32_comm")


def fp16_overflow(facts: Facts) -> Cause | None:
    """fp16 on, with loss-scale collapse, skipped steps, near-limit weights or non-finite values. Not for a reward that
    fell back alone: fp16 on is no evidence that anything overflowed.

    Nor for a finite spike or a learning-rate jump alone: an overflow leaves an inf or NaN, a skipped step or a fallen
    loss scale behind, and a run that shows none of them is not put down to one."""
    on = precision_sources(facts.config, "fp16") or _fp16_in_the_profile(facts)
    if not on or not facts.unstable:
        return None
    strong = _loss_scale_evidence(facts) + _near_limit_weights(facts)
    nonfinite = _nonfinite_sentences(facts)
    if not strong and not nonfinite:
        return None
    disputed = _nonfinite_in_one_log_only(facts)
    grew = _gradient_grew_first(facts)
    evidence = [f"fp16 mixed precision was on: {', '.join(on)}"] + strong + (disputed or nonfinite) + \
        ([grew] if grew else [])
    likely = facts.broken and bool(strong or (nonfinite and not disputed)) and not grew
    return Cause(
        cause="fp16_overflow", confidence="likely" if likely else "possible", evidence=evidence,
        suggestion=_scaler_did_its_job(facts) if _only_skips_recovered(facts) else _leave_fp16(facts),
        title="FP16 overflow (range max 65504)",
    )


# grad_norm this many times its earlier level just before the first overflow: the gradient was growing already
_GREW_FIRST = 10.0


def _gradient_grew_first(facts: Facts) -> str | None:
    """A sentence saying grad_norm grew many-fold (`_GREW_FIRST`) over the logged points before the first sign of an
    overflow (a skipped step, a loss-scale overflow, a non-finite loss or grad_norm): the overflow is then what a
    growing gradient ended in, not the first cause; None where it did not, or no such sign has a step."""
    signs = [f.step for f in facts.of_kind("skipped_steps", "loss_scale_overflow")]
    signs += [s for metric in ("loss", "grad_norm") for s in facts.nonfinite_steps(metric)[:1]]
    if not signs:
        return None
    first = min(signs)
    climb = grad_norm_climb_before(facts, first, _GREW_FIRST)
    if climb is None:
        return None
    return (f"grad_norm grew from about {evidence_value(climb[0])} to {evidence_value(climb[1])} over the logged "
            f"points before the first overflow at step {first}: the overflow is what a growing gradient ended in, so "
            "what made the gradient grow comes first")


def _fp16_in_the_profile(facts: Facts) -> list[str]:
    """Where the run profile read fp16 from when no flag says it (the loss scaler itself: skipped steps, a loss scale
    logged or lowered; a console's banner; weights loaded in float16), as one sentence; [] where it did not."""
    profile = facts.profile
    if profile is None or profile.precision != "fp16":
        return []
    return [profile.evidence.get("precision") or "the run profile reads fp16"]


def _leave_fp16(facts: Facts) -> str:
    framework = facts.profile.framework if facts.profile is not None else "unknown"
    clip = "max_grad_norm=1.0" if _BF16_SWITCH.get(framework) in (_HF_BF16, _BF16_SWITCH["unsloth"]) else \
        "gradient clipping at norm 1.0"
    return (f"Train in bf16 ({_bf16_switch(facts)}) where the hardware has it (Ampere or newer); otherwise fp32, or "
            f"keep fp16 with SDPA/flash attention and {clip}. {_sentence(rate_for_the_run(facts))}")


def _sentence(clause: str) -> str:
    return clause[0].upper() + clause[1:] + "."


# how the advice for a scaler that only skipped a few updates opens
SCALER_AT_WORK = "Nothing to change for these alone"


def _scaler_did_its_job(facts: Facts) -> str:
    return (f"{SCALER_AT_WORK}: the fp16 loss scaler skips an update that overflows, lowers its scale "
            "and goes on, as it did here. If skips come often or in runs, or the loss goes NaN, train in bf16 "
            f"({_bf16_switch(facts)}) where the hardware has it.")


# How each framework is switched from fp16 to bf16, in its own terms
_HF_BF16 = "bf16=True in the TrainingArguments, fp16=False"
_BF16_SWITCH = {
    "hf_trainer": _HF_BF16, "trl": _HF_BF16, "unsloth": "bf16=is_bfloat16_supported() in the TrainingArguments",
    "llamafactory": "bf16: true in the training YAML, in place of fp16: true",
    "webui": "bf16 in the web UI's compute type",
    "axolotl": "bf16: true in the config YAML, in place of fp16: true",
    "swift": "--torch_dtype bfloat16, from which ms-swift sets bf16",
    "megatron": "--bf16 in place of --fp16 in the launch arguments",
    "lightning": "precision=\"bf16-mixed\" in the Lightning Trainer",
    "xtuner": "the optimizer wrapper's dtype='bfloat16' (AmpOptimWrapper) in the config",
}
_DEEPSPEED_BF16 = "\"bf16\": {\"enabled\": true} in place of the DeepSpeed config's \"fp16\" section"
_IN_WORDS = "autocast to bfloat16 instead of float16, which needs no loss scaler"


def _bf16_switch(facts: Facts) -> str:
    """The switch to bf16 in the run's framework's own terms: the TrainingArguments flag for the HF Trainer family
    (with the DeepSpeed config's section too where that sets fp16 itself), Megatron's launch flag, a DeepSpeed
    config's section for a loop that runs DeepSpeed by hand; in words where the framework is not known."""
    framework = facts.profile.framework if facts.profile is not None else "unknown"
    deepspeed = facts.config.get("ds.fp16.enabled") is True or framework == "deepspeed"
    switch = _BF16_SWITCH.get(framework)
    if switch is None:
        return _DEEPSPEED_BF16 if deepspeed else _IN_WORDS
    if deepspeed and switch == _HF_BF16:
        return f"{switch}, and {_DEEPSPEED_BF16} (or \"auto\")"
    return switch


def _only_skips_recovered(facts: Facts) -> bool:
    """The run's only trouble an optimizer setting could explain is a few updates the scaler skipped, and nothing is
    broken: the scaler at work (VERDICTS.md), which a lower learning rate or another precision is no answer to. Skips
    at more than `_FEW_SKIPS` of the logged steps are a scaler overflowing for good, not calibrating."""
    grad = facts.metrics.get("grad_norm")
    skipped = len(nonfinite_steps(grad)) if grad is not None else 0
    few = grad is None or skipped <= max(_FEW_SKIPS_AT_LEAST, _FEW_SKIPS * len(grad)) or _calibrating_only(facts)
    return few and not facts.broken and not facts.unstable_beyond_skips


def _calibrating_only(facts: Facts) -> bool:
    """Every skip the log shows is a fresh scaler halving its way down after a (re)start (the skipped_steps finding's
    `at_restart`: NaN at steps 1-6, finite from 7 on), however many of the logged steps that is on a short log."""
    skips = facts.of_kind("skipped_steps")
    return bool(skips) and all(f.evidence.get("at_restart") for f in skips)


def _skipped_said(skipped, facts: Facts) -> str:
    """The skipped-steps evidence line: one skip (the finding's count or overflow count) said as one, at its step;
    with DeepSpeed's own count of each engine where several print theirs (whose: `_engines_said`)."""
    first = skipped[0]
    count = first.evidence.get("count", first.evidence.get("n_overflows"))
    if len(skipped) == 1 and count == 1:
        return f"an optimizer step skipped at step {first.step}"
    return f"optimizer steps skipped from step {first.step}{_engines_said(facts)}"


_PPO_ENGINES = ("actor", "critic")  # DeepSpeed-Chat's step 3 steps the actor's engine, then the critic's


def _engines_said(facts: Facts) -> str:
    """' (DeepSpeed's own counts by step 100: actor 6, critic 7)' where a console's engines each printed their
    `skipped=` count at the last progress step; the engines named where DeepSpeed-Chat's PPO lines say which they are,
    else numbered."""
    said = next((m[ENGINE_SKIPS] for m in facts.timeline.meta.values() if m.get(ENGINE_SKIPS)), None)
    if not said:
        return ""
    counts = said["counts"]
    ppo = "dschat_ppo" in facts.timeline.console_kinds and len(counts) == len(_PPO_ENGINES)
    names = _PPO_ENGINES if ppo else [f"engine {i}" for i in range(1, len(counts) + 1)]
    return (f" (DeepSpeed's own counts by step {said['step']}: "
            + ", ".join(f"{n} {c}" for n, c in zip(names, counts)) + ")")


_FEW_SKIPS = 0.02  # of the logged steps
_FEW_SKIPS_AT_LEAST = 2  # ... or this many, on a short log


def _loss_scale_evidence(facts: Facts) -> list[str]:
    t, out = facts.thresholds, []
    overflows = facts.of_kind("loss_scale_overflow")
    if overflows:
        out.append(f"loss-scale overflows from step {overflows[0].step} ({plural(len(overflows), 'finding')})")
    skipped = facts.of_kind("skipped_steps")
    if skipped:
        out.append(_skipped_said(skipped, facts))
    scale = facts.series("loss_scale")
    if len(scale.dropna()) and float(scale.min()) <= t.loss_scale_floor:
        out.append(f"logged loss_scale fell to {evidence_value(scale.min())} (step {int(scale.idxmin())})")
    state_scale = facts.config.get("state.loss_scale")
    if isinstance(state_scale, (int, float)) and state_scale <= t.loss_scale_floor:
        out.append(f"saved loss scale {said(facts.config, 'state.loss_scale')} is at the floor (it starts at 65536)")
    skipped_steps = facts.config.get("state.skipped_steps")
    if isinstance(skipped_steps, int) and skipped_steps > 0:
        out.append(f"DeepSpeed skipped {skipped_steps} steps on overflow "
                   f"({facts.config.source_of('state.skipped_steps')})")
    for info in facts.checkpoints:
        count = info.deepspeed.skipped_steps if info.deepspeed is not None else None
        if isinstance(count, int) and count > 0 and not isinstance(skipped_steps, int):
            out.append(f"{info.name}: DeepSpeed skipped_steps={count}")
            break
    return out


def _near_limit_weights(facts: Facts) -> list[str]:
    t = facts.thresholds
    limit = t.fp16_headroom_warn * t.fp16_max
    for info in sorted(facts.checkpoints, key=lambda c: c.step if c.step is not None else -1):
        stats = info.stats
        if stats is None or "absmax" not in stats:
            continue
        near = stats[stats["absmax"].astype("float64") >= limit].sort_values("absmax", ascending=False)
        if len(near):
            names = ", ".join(f"{r['name']} ({evidence_value(r['absmax'])})" for _, r in near.head(3).iterrows())
            return [f"{info.name}: {plural(len(near), 'tensor')} with |w| at or above {evidence_value(limit)} "
                    f"({t.fp16_headroom_warn:.0%} of the fp16 limit {evidence_value(t.fp16_max)}): {names}"]
    return []


def _nonfinite_sentences(facts: Facts) -> list[str]:
    out = []
    for metric in ("loss", "grad_norm"):
        bad = facts.nonfinite_steps(metric)
        if bad:
            out.append(f"{metric} non-finite at {plural(len(bad), 'logged step')} from step {bad[0]}")
    other = sorted(facts.of_kind("nonfinite_metric"), key=lambda f: f.step)
    if other and not out:  # what else went NaN (a DPO's log-probs and rewards, an eval loss)
        out.append(f"{other[0].metric or 'a metric'} non-finite from step {other[0].step}")
    masked = facts.masked_nan_steps
    if masked:
        out.append(_masked_beside(facts, masked))
    if facts.of_kind("nonfinite_weights") or any(c.is_nonfinite for c in facts.checkpoints):
        out.append("checkpoint weights went non-finite")
    return out


def _masked_beside(facts: Facts, masked: list[int]) -> str:
    """The masked NaN loss, said with the grad_norm logged beside it as it was logged: NaN/Inf, a number (DeepSpeed
    logs 0.0 for a step its fp16 scaler skipped), or none; where it is not NaN, what told the NaN is the finding's."""
    grad = facts.metrics.get("grad_norm")
    at = grad[grad.index.isin(masked)].to_numpy(dtype="float64") if grad is not None else np.array([])
    if len(at) and not np.isfinite(at).all():
        return f"loss logged as 0.0 next to a non-finite grad_norm from step {masked[0]} (a masked NaN loss)"
    if len(at):
        return (f"loss logged as 0.0 from step {masked[0]} with grad_norm logged as {evidence_value(float(at[0]))} "
                "there, not NaN (a masked NaN loss)")
    # told by what came with it (an exploded loss before it, a NaN eval beside it, a frozen rate)
    return f"loss logged as 0.0 from step {masked[0]} (a masked NaN loss; grad_norm was not logged)"


def _nonfinite_in_one_log_only(facts: Facts) -> list[str]:
    """What went non-finite, said per metric, where every non-finite loss and grad_norm the history shows is one log's
    alone, another log of the run holding finite values at those very steps (and no weight went non-finite): an
    overflow is then not what the run's data points to, only possible; [] otherwise."""
    if facts.masked_nan_steps or facts.of_kind("nonfinite_weights") or any(c.is_nonfinite for c in facts.checkpoints):
        return []
    said = []
    for metric in ("loss", "grad_norm"):
        bad = facts.nonfinite_steps(metric)
        finite = facts.finite_elsewhere(metric, bad)
        if bad and not finite:
            return []
        if bad:
            said.append(f"{metric} non-finite at {plural(len(bad), 'logged step')} from step {bad[0]} in one log only: "
                        f"{source_name(finite[0])} holds finite values at those steps, so the NaN/Inf may be that "
                        "log's, not the training's")
    return said


def _nonfinite_from(facts: Facts, bad: list[int], flagged) -> str:
    """Where the training went non-finite, naming only what was logged: grad_norm where it was NaN, else the
    finding's metric (a loss of 0.0 hiding a NaN where grad_norm was not logged)."""
    if bad:
        return f"grad_norm non-finite from step {bad[0]} ({len(bad)} logged steps)"
    f = flagged[0]
    what = "loss logged as 0.0 hiding a NaN" if f.kind == "masked_nan_loss" else f"{f.metric or 'loss'} non-finite"
    logged = "" if "grad_norm" in facts.metrics else "; grad_norm was not logged"
    return f"{what} from step {f.step}{logged}"


def _scaler_at_work(facts: Facts) -> str | None:
    """What in the log shows the fp16 loss scaler skipping updates (a rate frozen by skipped steps, loss-scale
    overflows, skipped steps), in words; None where nothing does."""
    frozen = next((f.evidence["lr_frozen_since"] for f in facts.of_kind("masked_nan_loss")
                   if f.evidence.get("lr_frozen_since") is not None), None)
    if frozen is not None:
        return (f"the decaying learning rate stopped moving from step {frozen}: the fp16 loss scaler was skipping "
                "updates, an overflow")
    scale = _loss_scale_evidence(facts)
    return f"the log shows the fp16 loss scaler at work ({scale[0]})" if scale else None


def deepspeed_precision_conflict(facts: Facts) -> Cause | None:
    """communication_data_type fp32 next to fp16/bf16 training, or fp16/bf16 settings that disagree."""
    c = facts.config
    if not any(k.startswith("ds.") for k in c.values):
        return None
    evidence = _comm_dtype_evidence(facts) + _mixed_flag_evidence(facts)
    if not evidence:
        return None
    evidence += _early_trouble(facts)
    return Cause(
        cause="deepspeed_precision_conflict", confidence="likely" if facts.broken else "possible",
        evidence=evidence,
        suggestion=("Remove communication_data_type from the DeepSpeed config (let DeepSpeed pick it) and make "
                    "fp16.enabled / bf16.enabled agree with the training arguments (\"auto\" does that)."),
        title="DeepSpeed precision settings conflict",
    )


def _comm_dtype_evidence(facts: Facts) -> list[str]:
    comm = facts.config.get("ds.communication_data_type")
    if not isinstance(comm, str) or comm.lower() not in _FP32_NAMES:
        return []
    half = precision_sources(facts.config, "fp16") + precision_sources(facts.config, "bf16")
    if not half:
        return []
    return [f"{said(facts.config, 'ds.communication_data_type')} while training in half precision: {', '.join(half)}"]


def _mixed_flag_evidence(facts: Facts) -> list[str]:
    c, out = facts.config, []
    for kind in ("fp16", "bf16"):
        args, ds = c.get(kind), c.get(f"ds.{kind}.enabled")
        if isinstance(args, bool) and isinstance(ds, bool) and args != ds:
            out.append(f"{said(c, kind)} but {said(c, f'ds.{kind}.enabled')}")
    if c.get("ds.fp16.enabled") is True and c.get("ds.bf16.enabled") is True:
        out.append("the DeepSpeed config enables both fp16 and bf16")
    wants = [k for k in ("fp16", "bf16") if c.get(k) is True]
    if wants and c.get("ds.fp16.enabled") in (None, False) and c.get("ds.bf16.enabled") in (None, False) \
            and not out and _deepspeed_config_read(c):
        out.append(f"{said(c, wants[0])} but the DeepSpeed config enables neither fp16 nor bf16")
    return out


def _deepspeed_config_read(c) -> bool:
    """A DeepSpeed config itself was read, so a missing fp16 / bf16 section means it trains in fp32; not only a
    launcher's copy of its ZeRO stage (Megatron-DeepSpeed prints `zero_stage` among every run's arguments)."""
    return any(k.startswith("ds.") and k != "ds.zero_optimization.stage" for k in c.values)


def _early_trouble(facts: Facts) -> list[str]:
    out = []
    spikes = facts.of_kind("grad_norm_spike")
    if spikes:
        peak = spikes[0].evidence.get("value")
        out.append(f"grad_norm spiked at step {spikes[0].step}"
                   + (f" to {evidence_value(peak)}" if peak is not None else ""))
    collapses = facts.of_kind("loss_collapse", "no_learning_signal")
    if collapses:
        out.append(f"then the loss collapsed to 0 from step {collapses[0].step}")
    return out


def qlora_double_quant(facts: Facts) -> Cause | None:
    """bitsandbytes 4-bit double quantization on, next to a non-finite grad_norm."""
    c = facts.config
    if c.get("quant.bnb_4bit_use_double_quant") is not True:
        return None
    bad = facts.nonfinite_steps("grad_norm")
    flagged = [f for f in facts.of_kind("nonfinite_metric", "masked_nan_loss")
               if f.metric in (None, "grad_norm", "loss")]
    if not bad and not flagged:
        return None
    evidence = [f"{said(c, 'quant.bnb_4bit_use_double_quant')}", _nonfinite_from(facts, bad, flagged)]
    evidence += [said(c, k) for k in ("quant.bnb_4bit_compute_dtype", "learning_rate", "max_grad_norm")
                 if c.get(k) is not None]
    fp16 = precision_sources(c, "fp16")
    if fp16:  # the overflow explains the same NaN; double quantization on (QLoRA's default) is no evidence over it
        scaler = _scaler_at_work(facts)
        evidence.append(f"fp16 mixed precision was on too ({', '.join(fp16)}): an fp16 overflow explains the same "
                        "NaN" + (f", and {scaler}" if scaler else ", and nothing in the log tells the two apart"))
    return Cause(
        cause="qlora_double_quant", confidence="likely" if facts.broken and not fp16 else "possible", evidence=evidence,
        suggestion=("Turn double quantization off (bnb_4bit_use_double_quant=False; LLaMA-Factory double_quantization: "
                    "false), keep gradient clipping on, or fine-tune a pre-quantized AWQ/GPTQ base instead. "
                    + _sentence(rate_for_the_run(facts))),
        title="QLoRA double quantization with non-finite gradients",
    )
