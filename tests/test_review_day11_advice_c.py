"""Review of the causes' advice on the real corpus, day 11 (group C): the learning rate judged is the one the run as
it ended trained at, advice about precision gives the range for the run's method, and a log of one point says it
cannot show a precursor. Each test names the real run it stands for, what the tool said and what is right."""
from __future__ import annotations

import math

import pandas as pd

from forensics.causes import infer_causes
from forensics.config import RunConfig, Thresholds
from forensics.findings import Finding
from forensics.timeline import LogRecords, build_timeline
from forensics.profile import RunProfile
from tests.test_causes import by_id

NAN = math.nan
LORA_GRPO = RunProfile(method="lora", objective="rl", model_params=500_000_000)


def _console(*attempts: dict[int, dict[str, float]]):
    """One console capture holding `attempts` one after the other, each {step: {metric: value}} as its dicts print."""
    rows = [(step, metric, value) for attempt in attempts for step, point in attempt.items()
            for metric, value in point.items()]
    frame = pd.DataFrame({"step": pd.Series([r[0] for r in rows], dtype="int64"), "metric": [r[1] for r in rows],
                          "value": pd.Series([r[2] for r in rows], dtype="float64"), "wall_time": NAN})
    return build_timeline([LogRecords(source="train.log", format="stdout", frame=frame)])


def _sft_stage():
    """An SFT stage logged at step 1 (logging_first_step) and every 5 to 200, its rate decaying from 1.6e-4."""
    steps = [1] + list(range(5, 201, 5))
    return {s: {"loss": 2.0 - s / 200, "grad_norm": 1.0, "learning_rate": 1.6e-4 * (1 - s / 201)} for s in steps}


def _grpo_from(first: int, rate: float, last: int = 345):
    """A GRPO stage (or a resumed attempt) logged every 5 from `first` at a steady `rate`; grad_norm NaN at `last`."""
    return {s: {"loss": 0.01, "grad_norm": NAN if s == last else 0.2, "learning_rate": rate}
            for s in range(first, last + 1, 5)}


def _lr_cause(tl):
    found = infer_causes(RunConfig(), tl, [_nan_at(345)], [], Thresholds(), LORA_GRPO)
    return by_id(found).get("lr_too_high")


def _nan_at(step: int) -> Finding:
    return Finding(kind="nonfinite_metric", severity="error", step=step, message="grad_norm NaN", metric="grad_norm")


def test_the_rate_judged_is_the_final_stage_s_not_an_earlier_stage_s_in_the_same_console():
    """Radar-Lei_SCU_TSC: SFT at 1.6e-4, then GRPO at 1e-5 in the same console, its steps numbered from 0 again; the
    SFT's first dict (step 3) stayed in the history. The tool said "logged learning_rate peaked at 0.00016 ... Lower
    the learning rate (2e-06 to 2e-05 for LoRA)" where the GRPO stage, the run judged, ran inside that range."""
    cause = _lr_cause(_console(_sft_stage(), _grpo_from(5, 1e-5)))
    assert cause is None, cause.evidence


def test_a_resumed_attempt_still_stands_on_the_rate_before_its_resume():
    """A run resumed at step 150 of 345: the steps before the resume are the same run, so the peak 1.6e-4 logged
    there is still the rate judged against the LoRA GRPO range."""
    cause = _lr_cause(_console(_sft_stage(), _grpo_from(150, 3e-5)))
    assert cause is not None and "peaked at 0.0001592 (step 1)" in cause.evidence[0], cause

