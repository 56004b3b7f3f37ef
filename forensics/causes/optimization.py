"""Cause rules about the optimizer settings: learning rate, warm-up and gradient clipping.

Each rule is `rule(facts) -> Cause | None`; thresholds come from `Thresholds`.
"""
from __future__ import annotations

from ..findings import Cause
from .evidence import Facts, first_bad_checkpoint, evidence_value, lr_points, max_finite, peak_lr, said

_ADAPTER_METHODS = ("lora", "qlora")


def lr_too_high(facts: Facts) -> Cause | None:
    """Peak LR above what the fine-tuning method tolerates (full: full_ft_lr_high; LoRA/QLoRA: lora_lr_high)."""
    if not facts.troubled:
        return None
    peak, where = peak_lr(facts)
    if peak is None:
        return None
    method = facts.config.get("method")
    limit = facts.thresholds.lora_lr_high if method in _ADAPTER_METHODS else facts.thresholds.full_ft_lr_high
    if peak <= limit:
        return None
    evidence = list(where)
    if method:
        evidence.append(f"method: {_method_name(method)} ({facts.config.source_of('method')})")
    else:
        evidence.append("fine-tuning method unknown (no adapter or model weight files, no framework config): "
                        "judged against the full fine-tuning limit")
    evidence.append(f"peak LR {evidence_value(peak)} is {peak / limit:.0f}x the {evidence_value(limit)} that "
                    f"{_method_name(method or 'full')} usually tolerates")
    size = _model_size(facts)
    if size:
        evidence.append(size)
    evidence += _trouble_sentences(facts)
    sure = method is not None or peak > facts.thresholds.lora_lr_high
    return Cause(
        cause="lr_too_high", confidence="likely" if facts.broken and sure else "possible",
        evidence=evidence, suggestion=_lr_advice(facts, method),
        title=f"Learning rate {evidence_value(peak)} too high for {_method_name(method or 'full')}",
    )


def _method_name(method: str) -> str:
    return {"full": "full fine-tuning", "lora": "LoRA", "qlora": "QLoRA"}.get(method, str(method))


def _model_size(facts: Facts) -> str | None:
    n = facts.config.get("n_params")
    if not isinstance(n, (int, float)) or n <= 0:
        return None
    size = f"{n / 1e9:.3g}B" if n >= 1e9 else f"{n / 1e6:.3g}M"
    return f"model size about {size} parameters ({facts.config.source_of('n_params')})"


def _lr_advice(facts: Facts, method: str | None) -> str:
    if method in _ADAPTER_METHODS:
        return ("Lower the learning rate to 1e-4 to 2e-4 for LoRA/QLoRA, with warm-up (warmup_ratio 0.03) and "
                "max_grad_norm=0.3 to 1.0; resume from the last good checkpoint.")
    n = facts.config.get("n_params")
    small = isinstance(n, (int, float)) and n < 3e9
    target = "1e-5 to 5e-5" if small else "1e-5 to 1e-6 for a multi-billion-parameter model"
    return (f"Lower the learning rate by one to two orders of magnitude ({target} for full fine-tuning), "
            "add warm-up (warmup_ratio 0.03 to 0.1) and cosine decay, clip with max_grad_norm=1.0, "
            "and resume from the last good checkpoint.")


def _trouble_sentences(facts: Facts) -> list[str]:
    out = []
    bad = facts.nonfinite_steps("grad_norm")
    if bad:
        out.append(f"grad_norm first non-finite at step {bad[0]}")
    spikes = facts.of_kind("grad_norm_spike")
    if spikes:
        out.append(f"grad_norm spiked at step {spikes[0].step}")
    first = first_bad_checkpoint(facts)
    if first is not None:
        out.append(f"first checkpoint with non-finite weights: {first.name}")
    return out


def no_warmup(facts: Facts) -> Cause | None:
    """The learning rate was at its peak from the first logged step (or the config sets no warm-up)."""
    if not facts.troubled or _warmup_configured(facts):
        return None
    lr = lr_points(facts.timeline)
    evidence = []
    if len(lr) >= 2:
        first_step, first = int(lr.index[0]), float(lr.iloc[0])
        if first < facts.thresholds.warmup_peak_fraction * float(lr.max()):
            return None
        evidence.append(f"learning_rate was already {evidence_value(first)} at the first logged step {first_step} "
                        f"(peak {evidence_value(lr.max())}): no warm-up")
    settings = [said(facts.config, k) for k in ("warmup_steps", "warmup_ratio") if facts.config.get(k) is not None]
    if not evidence and not settings:
        return None
    evidence += settings
    return Cause(
        cause="no_warmup", confidence="possible", evidence=evidence,
        suggestion="Warm the learning rate up over the first 3-10% of steps (warmup_ratio=0.03 to 0.1).",
        title="No learning-rate warm-up",
    )


def _warmup_configured(facts: Facts) -> bool:
    c = facts.config
    values = [c.get("warmup_steps"), c.get("warmup_ratio"), c.get("ds.scheduler.params.warmup_num_steps")]
    return any(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in values)


def _clipping(facts: Facts) -> tuple[object, str] | None:
    """The clipping norm in force: DeepSpeed's gradient_clipping when DeepSpeed ran, else max_grad_norm."""
    c = facts.config
    if any(k.startswith("ds.") for k in c.values) and "ds.gradient_clipping" in c.values:
        return c.get("ds.gradient_clipping"), said(c, "ds.gradient_clipping")
    if "max_grad_norm" in c.values:
        return c.get("max_grad_norm"), said(c, "max_grad_norm")
    return None


def no_clipping(facts: Facts) -> Cause | None:
    """Gradient clipping was off (max_grad_norm 0/None) in a run whose gradients grew or went non-finite."""
    clip = _clipping(facts)
    if not facts.troubled or clip is None or (clip[0] not in (None, 0, 0.0)):
        return None
    evidence = [f"{clip[1]}: gradients were never clipped"]
    top = max_finite(facts.series("grad_norm"))
    if top:
        evidence.append(f"largest finite grad_norm {evidence_value(top[0])} at step {top[1]}")
    return Cause(
        cause="no_clipping", confidence="possible", evidence=evidence,
        suggestion="Clip gradients: max_grad_norm=1.0 (DeepSpeed: gradient_clipping 1.0 or \"auto\").",
        title="Gradient clipping off",
    )


def clipping_cannot_help(facts: Facts) -> Cause | None:
    """Clipping was on, yet grad_norm went NaN/Inf: a non-finite gradient cannot be clipped."""
    clip = _clipping(facts)
    bad = facts.nonfinite_steps("grad_norm")
    if clip is None or clip[0] in (None, 0, 0.0) or not bad:
        return None
    return Cause(
        cause="clipping_cannot_help", confidence="possible",
        evidence=[f"{clip[1]} was set", f"grad_norm was non-finite at {len(bad)} logged steps from step {bad[0]}",
                  "clipping scales gradients by max_norm / total_norm, which is NaN when the norm is, so the NaN "
                  "came from the forward or backward pass itself"],
        suggestion="Look for the source of the NaN (precision, quantization, data); clipping alone will not stop it.",
        title="Clipping could not stop non-finite gradients",
    )
