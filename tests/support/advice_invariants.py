"""Machine-checkable rules the advice of a real run must keep (issue 11), shared by `scripts/audit_advice.py` (prints
every violation over the corpus) and `tests/test_realworld_advice.py` (asserts the ones that hold on every case).

Each rule is `rule(analysis, text) -> list[str]`: the violations, each a sentence quoting the text at fault; `text`
is the rendered text report with its verbose story (`forensics.report.text.analysis_text(verbose=True)`). The advice
read is every cause's title, evidence and suggestion plus the report's own rows; what a rule checks is in its
docstring.
"""
from __future__ import annotations

import math
import re

from forensics.causes.lr_ranges import TABLE
from forensics.report.text import analysis_text

ADAPTERS = ("lora", "qlora", "peft")
# the decoder rows' ranges as the advice quotes them, full fine-tuning's that no adapter row shares
_FULL = {r.describe() for r in TABLE if r.method == "full" and r.family == "decoder" and r.objective != "pretrain"}
_ADAPTER = {r.describe() for r in TABLE if r.method == "adapter"}
FULL_ONLY = _FULL - _ADAPTER
_RANGE = re.compile(r"\b(\d(?:\.\d+)?e-\d\d|0\.\d+) to (\d(?:\.\d+)?e-\d\d|0\.\d+)\b")
# what a precursor sentence of `precursors.lr_precursor` says (a jump of the rate, a loss rise, a climbing grad_norm)
_PRECURSOR_WORDS = ("learning rate jumped", "the loss rose from step", "then the loss rose", "grad_norm climbed",
                    "grad_norm spiked at step")
_RESUME_WORDS = re.compile(r"\b(resume|restart|start again|start over)\b", re.IGNORECASE)
_SFT_WORDS = re.compile(r"\b(SFT|supervised fine-tuning)\b")
_ADAPTER_WORDS = re.compile(r"\b(LoRA|QLoRA|PEFT|lora_r|lora_alpha|adapters?)\b")
_OBJECTIVE_WORDS = {"preference": re.compile(r"\b(preference|DPO|ORPO|KTO|SimPO)\b"),
                    "rl": re.compile(r"\b(RL|rl|GRPO|PPO|RLHF)\b")}


def cause_texts(analysis) -> list[tuple[str, str]]:
    """(cause id, its title + evidence + suggestion) for every cause."""
    return [(c.cause, " ".join([c.title, *c.evidence, c.suggestion])) for c in analysis.causes]


def quoted_ranges(text: str) -> set[str]:
    """The learning-rate ranges a text quotes, as `LrRange.describe` writes them ('1e-05 to 2e-05')."""
    return {f"{_g(a)} to {_g(b)}" for a, b in _RANGE.findall(" ".join(text.split()))}  # a report wraps its lines


def _g(number: str) -> str:
    return f"{float(number):g}"


def adapter_told_full_range(analysis, text: str) -> list[str]:
    """A LoRA / QLoRA / PEFT run is never told a full-fine-tuning range alone (one no adapter row shares)."""
    if analysis.run_profile.method not in ADAPTERS:
        return []
    out = []
    for cause, said in cause_texts(analysis) + [("report", text)]:
        full = quoted_ranges(said) & FULL_ONLY
        if full and not quoted_ranges(said) & _ADAPTER:
            out.append(f"{cause}: {analysis.run_profile.method} run told the full fine-tuning range "
                       f"{sorted(full)} alone")
    return out


def unknown_method_one_range(analysis, text: str) -> list[str]:
    """Where the method is unknown, a cause quoting a decoder range gives both (full and adapter) or says 'unknown'."""
    if analysis.run_profile.method != "unknown":
        return []
    out = []
    for cause, said in cause_texts(analysis):
        ranges = quoted_ranges(said)
        if not ranges & (_FULL | _ADAPTER) or "unknown" in said.lower():
            continue
        if not (ranges & _FULL and ranges & _ADAPTER):
            out.append(f"{cause}: method unknown, one range {sorted(ranges)} and no word that it is unknown")
    return out


def likely_lr_without_precursor(analysis, text: str) -> list[str]:
    """A "likely" learning-rate cause names a precursor from the run's own metrics in its evidence."""
    return [f"{c.cause}: likely with no precursor in its evidence: {c.evidence}" for c in analysis.causes
            if c.cause == "lr_too_high" and c.confidence == "likely"
            and not any(w in e for e in c.evidence for w in _PRECURSOR_WORDS)]


def sudden_and_likely_lr(analysis, text: str) -> list[str]:
    """A sudden break (nothing built up) and a "likely" learning rate (a precursor) contradict each other."""
    ids = {(c.cause, c.confidence) for c in analysis.causes}
    if ("lr_too_high", "likely") in ids and any(c == "sudden_break" for c, _ in ids):
        return ["sudden_break beside a likely lr_too_high"]
    return []


# Trouble a run can go on from by itself; any other error (a loss HF's filter logs as 0.0 to the end, a model that
# never learned after its NaN, a divergence) is no recovery however finite the last logged loss
TRANSIENT = ("loss_spike", "nonfinite_metric", "grad_norm_spike", "skipped_steps", "loss_scale_overflow")


def recovered(analysis) -> bool:
    """The run's loss is finite at its last logged step after a spike or a non-finite value, and nothing but such
    passing trouble reached error level: it went on by itself."""
    loss = analysis.timeline.series("loss")
    if loss.empty or not math.isfinite(float(loss.iloc[-1])):
        return False
    live = [f for f in analysis.findings if not f.abandoned and f.severity in ("warning", "error")]
    if any(f.kind == "masked_nan_loss" for f in live):  # a loss of 0.0 HF's filter wrote in place of NaN
        return False
    return any(f.kind in TRANSIENT for f in live) and \
        all(f.kind in TRANSIENT for f in live if f.severity == "error")


def resume_to_a_recovered_run(analysis, text: str) -> list[str]:
    """No resume / restart advice for a run that got past its trouble by itself (finite loss to the end), unless a
    checkpoint it saved holds non-finite weights (the damage stayed in the weights)."""
    if not recovered(analysis) or analysis.first_bad_checkpoint is not None:
        return []
    next_step = " ".join(line for line in text.splitlines() if line.startswith("Next: "))
    said = [(c.cause, c.suggestion) for c in analysis.causes] + [("report", _advice_rows(text)),
                                                                  ("story", next_step)]
    return [f"{cause}: resume advice to a run whose loss is finite at its end: {m.group(0)!r} in {s!r}"
            for cause, s in said if (m := _RESUME_WORDS.search(s))]


def _advice_rows(text: str) -> str:
    """The report's "What to do" row (and its continuation lines)."""
    lines, out, inside = text.splitlines(), [], False
    for line in lines:
        if line.startswith("What to do"):
            inside = True
        elif line[:1].strip():
            inside = False
        if inside:
            out.append(line[16:].strip())
    return " ".join(out)


def objective_words(analysis, text: str) -> list[str]:
    """No SFT wording to a preference or RL run; no LoRA wording to a full fine-tune, from-scratch or recurrent run."""
    p, out = analysis.run_profile, []
    for cause, said in [(c.cause, c.suggestion) for c in analysis.causes]:
        if p.objective in ("preference", "rl") and (m := _SFT_WORDS.search(said)):
            out.append(f"{cause}: {m.group(0)!r} in the advice to a {p.objective} run: {said!r}")
        if (p.method == "full" or p.objective == "pretrain") and (m := _ADAPTER_WORDS.search(said)):
            out.append(f"{cause}: {m.group(0)!r} in the advice to a {p.method} {p.objective} run: {said!r}")
    return out


_PRECISION_ADVICE = re.compile(r"(?<!if it trained in fp16, an overflow past 65504: )\buse bf16\b")


def setting_not_there(analysis, text: str) -> list[str]:
    """No advice naming a setting the run did not have: "use bf16" to a run that trained in bf16 or fp32 (no fp16
    overflow), double quantization to a run with no 4-bit base."""
    p, out = analysis.run_profile, []
    for c in analysis.causes:
        if p.precision in ("bf16", "fp32") and _PRECISION_ADVICE.search(c.suggestion):
            out.append(f"{c.cause}: 'use bf16' to a {p.precision} run: {c.suggestion!r}")
        if "double_quant" in c.suggestion and analysis.config.get("quant.bnb_4bit_use_double_quant") is None:
            out.append(f"{c.cause}: double quantization named, the config has none: {c.suggestion!r}")
    return out


def last_good_checkpoint(analysis, text: str) -> list[str]:
    """The last good checkpoint is finite and saved before the first incident that harms the weights; a finite one
    saved at or after it is listed as "finite, but after the incident at step N"."""
    good, incident, out = analysis.last_good_checkpoint, analysis.incident_step, []
    if good is not None and (good.is_nonfinite or incident is not None and good.step is not None
                             and good.step >= incident):
        out.append(f"last good {good.name} (step {good.step}) is not finite or not before the incident at {incident}")
    if good is not None and good.name not in text:
        out.append(f"last good {good.name} not named in the report")
    later = [c.name for c in analysis.checkpoints if c.status == "ok" and incident is not None
             and c.step is not None and c.step >= incident]
    flat = " ".join(text.split())
    if later and f"finite, but after the incident at step {incident}" not in flat:
        out.append(f"finite checkpoints after the incident at {incident} not listed as such: {later}")
    return out


def hider_leads(analysis, text: str) -> list[str]:
    """The chain runs from the first cause to what hid it: HF's NaN-loss filter never leads where a cause with a fix
    fired, and the report names it on a "Hidden by" row after the cause."""
    ids = [c.cause for c in analysis.causes]
    if "masked_nan_loss" not in ids or len(ids) < 2 or analysis.status == "healthy":
        return []
    lead = analysis.leading_cause
    if lead is not None and lead.cause == "masked_nan_loss":
        return [f"masked_nan_loss leads over {ids}"]
    return []


def range_without_objective(analysis, text: str) -> list[str]:
    """A preference or RL run's range (a tenth to a hundredth of an SFT one) is quoted with its objective in the same
    sentence, outside the source's own words: "recipes for LoRA use 5e-06 to 5e-05" reads as LoRA's range."""
    objective = analysis.run_profile.objective
    if objective not in _OBJECTIVE_WORDS:
        return []
    rows = [r for r in TABLE if r.objective == objective]
    own = {r.describe() for r in rows}
    out = []
    for c in analysis.causes:
        for sentence in [c.title, *c.evidence, c.suggestion]:
            bare = sentence
            for r in rows:
                bare = bare.replace(r.source, "")
            if quoted_ranges(bare) & own and not _OBJECTIVE_WORDS[objective].search(bare):
                out.append(f"{c.cause}: a {objective} range with no word of the objective: {sentence!r}")
    return out


RULES = (adapter_told_full_range, range_without_objective, unknown_method_one_range, likely_lr_without_precursor,
         sudden_and_likely_lr, resume_to_a_recovered_run, objective_words, setting_not_there, last_good_checkpoint,
         hider_leads)


def violations(analysis) -> list[tuple[str, str]]:
    """(rule name, violation) for every rule the analysis' advice breaks, read over its causes and its text report
    with the verbose story (`analysis_text(verbose=True)`: the one screen, then the four answers and the next step)."""
    text = analysis_text(analysis, verbose=True)
    return [(rule.__name__, v) for rule in RULES for v in rule(analysis, text)]
