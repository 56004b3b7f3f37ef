"""What analyzers emit and reports consume: findings and skipped files.

A `Finding` is one event in a run (a NaN, a spike, a collapse). Its `to_dict()` is the
`--json` contract: fields may be added, never renamed or dropped.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import PurePath
from typing import Any

SEVERITIES = ("info", "warning", "error")

# The kinds named by the --json contract; analyzers may add more, never rename these.
KINDS = (
    "nonfinite_metric",
    "masked_nan_loss",
    "loss_collapse",
    "grad_norm_spike",
    "loss_spike",
    "divergence",
    "loss_scale_overflow",
    "skipped_steps",
    "nonfinite_weights",
    "no_learning_signal",
    "memorization",
    "weights_over_bound",
    "weights_near_fp16_limit",
    "empty_checkpoint",
    "zero_loss_unexplained",
    "impossible_loss",
    "lr_anomaly",
    "never_learned",
    "no_learning_evidence",
    "overfitting",
    "source_disagreement",
    "nonfinite_optimizer_state",
    "update_precursor",
    "reward_decline",
    "reward_saturated",
    "policy_collapse",
    "train_eval_mismatch",
    "start_above_uniform_guess",
    "grad_norm_huge",
    "loss_accuracy_mismatch",
    "run_crashed",
    "run_cut_short",
    "nonfinite_unlogged",
    "accuracy_at_zero",
    "labels_include_padding",
)


# Said after a finding of an attempt the history does not keep: a resume logged over its steps, or a new launch (a
# cross-validation fold, a sweep) numbered from step 1 again - the log alone cannot always tell which
THROWN_AWAY = ", in an earlier attempt that a later one threw away (a resume, or a new launch)."


@dataclass(frozen=True)
class Finding:
    """One thing that happened in a run.

    Fields:
        kind: what happened (one of KINDS or a newer kind).
        severity: "info", "warning" or "error".
        step: the first step where it shows.
        message: one plain sentence for a person.
        end_step: the last step it covers, or None for a point event.
        metric: the timeline metric it was seen in, if any.
        evidence: the numbers behind it (JSON-safe values).
        abandoned: True when it happened only in an attempt that a later one replaced (a resume, a new launch).
        caused_by: index-free link to an earlier finding: "<kind>@<step>", or None.
    """

    kind: str
    severity: str
    step: int
    message: str
    end_step: int | None = None
    metric: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    abandoned: bool = False
    caused_by: str | None = None

    def __post_init__(self):
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, not {self.severity!r}")

    @property
    def key(self) -> str:
        """A short handle other findings use in `caused_by`."""
        return f"{self.kind}@{self.step}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: plain types only, NaN/Inf written as strings so the JSON stays valid."""
        d = asdict(self)
        d["step"] = int(self.step)
        d["end_step"] = None if self.end_step is None else int(self.end_step)
        d["evidence"] = json_safe(self.evidence)
        return d


@dataclass(frozen=True)
class Skipped:
    """A file that could not be read, and why; the rest of the analysis went on without it. `note`: the file was read
    whole, and this says how its records were taken (a log two processes wrote, de-duplicated; a running mean read
    as the per-step values it implies), not what was left out."""

    path: str
    reason: str
    note: bool = False

    def to_dict(self) -> dict:
        return {"path": self.path, "reason": self.reason, "note": self.note}

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def number_or_null(value: Any) -> Any:
    """A measurement for JSON: numpy scalars as Python numbers, NaN/Inf as null (no value), the rest as is."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def json_safe(value: Any) -> Any:
    """Turn numpy scalars, tuples and non-finite floats into values `json.dumps` writes as valid JSON."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (ValueError, TypeError):
            return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def text_columns(frame) -> list[str]:
    """The columns of a DataFrame that hold text or objects, not numbers, booleans or times."""
    return [c for c in frame.columns if frame[c].dtype.kind not in "biufcmM"]


def json_records(frame) -> list[dict]:
    """The rows of a DataFrame as JSON-ready dicts. A missing value in a text column (pandas 3 keeps
    it as NaN in its string dtype) becomes null, never the text "nan"; numbers go through json_safe."""
    text = text_columns(frame)
    plain = frame.astype({c: object for c in text})
    for c in text:
        plain[c] = plain[c].where(frame[c].notna(), None)
    return json_safe(plain.to_dict(orient="records"))


# Findings about where the run started (the model as loaded, before any update), not about an event of training
STARTING_POINT_KINDS = frozenset({"start_above_uniform_guess"})


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Findings by step; at the same step, errors before warnings before info, and where the run started (the model
    as loaded) before what its first update did (an fp16 scaler's first skipped step logged at that same step)."""
    rank = {s: i for i, s in enumerate(reversed(SEVERITIES))}
    return sorted(findings, key=lambda f: (f.step, rank[f.severity], f.kind not in STARTING_POINT_KINDS, f.kind))


CONFIDENCES = ("likely", "possible")


@dataclass(frozen=True)
class Cause:
    """A likely cause of what went wrong, with the evidence it rests on and the change to try.

    Fields:
        cause: short id (`lr_too_high`, `fp16_overflow`, `qlora_double_quant`, ...).
        confidence: "likely" or "possible".
        evidence: plain sentences, each naming a value, step or file.
        suggestion: what to change.
        title: a short human title.
    """

    cause: str
    confidence: str
    evidence: list[str]
    suggestion: str
    title: str = ""

    def __post_init__(self):
        if self.confidence not in CONFIDENCES:
            raise ValueError(f"Cause confidence must be one of {CONFIDENCES}, not {self.confidence!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"cause": self.cause, "confidence": self.confidence, "evidence": list(self.evidence),
                "suggestion": self.suggestion, "title": self.title}


def plural(n: int, word: str, many: str | None = None) -> str:
    """`n` and the word in the right number: "1 tensor", "12 tensors" (never "tensor(s)").

    >>> plural(1, "tensor"), plural(12, "tensor"), plural(2, "entry", "entries")
    ('1 tensor', '12 tensors', '2 entries')
    """
    return f"{n} {word if n == 1 else (many or word + 's')}"


def source_name(source: str) -> str:
    """A log file as a message names it: its folder and its name (a run folder's whole path would be too long).

    >>> source_name("/runs/a/checkpoint-10/trainer_state.json"), source_name("/runs/a/wandb/run-1/files#abc")
    ('checkpoint-10/trainer_state.json', 'run-1/files')
    """
    return "/".join(PurePath(source.split("#")[0]).parts[-2:])
