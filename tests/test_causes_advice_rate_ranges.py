"""Tests of the causes' advice (causes/): the rate judged and the ranges given for the run's method.

Review of the causes' advice on the real corpus, day 11 (group C): the learning rate judged is the one the run as
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
from tests.test_causes import by_id, config, timeline


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


# ---- precision advice gives the learning-rate range for the run's method, "lower" only above it ----------------------


QLORA_FP16 = RunProfile(method="qlora", objective="sft", model_params=7_000_000_000, precision="fp16")


def _qlora_fp16_run(rate: float):
    """A QLoRA fp16 run with double quantization on, logged every step at a steady `rate`: loss falls from 2.0, then
    HF's NaN filter logs loss 0.0 with grad_norm NaN from step 32."""
    steps = range(1, 41)
    tl = timeline(learning_rate={s: rate for s in steps}, loss={s: 2.0 - 0.02 * s if s < 32 else 0.0 for s in steps},
                  grad_norm={s: 0.5 if s < 32 else NAN for s in steps})
    cfg = config(fp16=True, learning_rate=rate, quant__bnb_4bit_use_double_quant=True)
    return by_id(infer_causes(cfg, tl, [_nan_at(32)], [], Thresholds(), QLORA_FP16))


def test_fp16_advice_gives_the_qlora_range_and_asks_no_lower_rate_of_a_run_under_it():
    """chenkx612_local-roleplay-llm: QLoRA at 5e-5, under the 1e-4 to 2e-4 QLoRA recipes use; fp16_overflow said
    "keep fp16 with SDPA/flash attention, a lower learning rate and ...", with no number."""
    advice = _qlora_fp16_run(5e-5)["fp16_overflow"].suggestion
    assert "0.0001 to 0.0002 for QLoRA" in advice and "is below the usual" in advice, advice
    assert "lower the learning rate" not in advice.lower() and "a lower learning rate" not in advice, advice


def test_double_quant_advice_gives_the_qlora_range_and_asks_no_lower_rate_of_a_run_within_it():
    """Hannibal0420_Classical-Vernacular-Chinese-Translation_first: QLoRA at 2e-4, the top of the range; qlora_double_quant
    said "lower the learning rate" with no number."""
    advice = _qlora_fp16_run(2e-4)["qlora_double_quant"].suggestion
    assert "0.0001 to 0.0002 for QLoRA" in advice and "is within the usual" in advice, advice
    assert "lower the learning rate" not in advice.lower() and "a lower learning rate" not in advice, advice


def test_a_qlora_run_above_the_range_is_still_told_to_lower_its_rate_to_it():
    """The same run at 1e-3, five times the top of the QLoRA range: lr_too_high asks for the range, and both precision
    causes point at it rather than saying it again (fx-advice2: ccccai239 was told to lower its rate twice)."""
    found = _qlora_fp16_run(1e-3)
    assert "Lower the learning rate (0.0001 to 0.0002 for QLoRA" in found["lr_too_high"].suggestion
    for cause in ("fp16_overflow", "qlora_double_quant"):
        assert f'too high (see the cause "{found["lr_too_high"].title}")' in found[cause].suggestion, found[cause]



def test_fp16_advice_for_a_run_of_unknown_method_and_objective_names_the_ranges_only_as_a_condition():
    """NVIDIA_DeepLearningExamples_issue252: BERT-large pre-training (LAMB at 6e-3) whose fp16 scaler overflowed for
    good; neither its method nor its objective is in the files. Fine-tuning's 1e-5 to 2e-5 is no target for it: the
    advice names the ranges only as what to compare with."""
    steps = range(1, 41)
    tl = timeline(learning_rate={s: 6e-3 for s in steps}, loss={s: 7.0 if s < 32 else NAN for s in steps},
                  grad_norm={s: 2.0 if s < 32 else NAN for s in steps})
    profile = RunProfile(precision="fp16")
    advice = by_id(infer_causes(config(fp16=True), tl, [_nan_at(32)], [], Thresholds(), profile))["fp16_overflow"]
    # (fxadv4) at a rate above every fine-tuning recipe yet not beyond pre-training's, no range of the table fits
    assert "lower the learning rate" not in advice.suggestion.lower(), advice.suggestion
    assert "No range in the table fits a rate of 0.006 where the method is unknown and so is the objective: it is " \
           "above every fine-tuning recipe (1e-05 to 2e-05 for full fine-tuning, 0.0001 to 0.0002 for LoRA/QLoRA " \
           "adapters)" in advice.suggestion, advice.suggestion

# ---- a log too short to show a precursor says so ---------------------------------------------------------------------


FULL_SFT = RunProfile(method="full", objective="sft", model_params=7_000_000_000)


def _divergence_at(step: int) -> Finding:
    return Finding(kind="divergence", severity="error", step=step, message="the loss blew up", metric="train_loss")


def test_a_log_of_one_summary_point_says_no_precursor_can_be_read():
    """mellymeter_ES3890AI: logging_steps 500 over a 69-step run left only the closing summary (train_loss 1.77e11 at
    step 69); lr_too_high said "no precursor in the logs (no LR jump, no rising loss or grad_norm before the break)",
    as if the log had shown a calm run up to the break."""
    tl = timeline(train_loss={69: 1.77e11}, epoch={69: 2.98})
    found = by_id(infer_causes(config(learning_rate=5e-5), tl, [_divergence_at(69)], [], Thresholds(), FULL_SFT))
    evidence = found["lr_too_high"].evidence
    assert "one logged point up to the break at step 69: no precursor can be read" in evidence, evidence
    assert not any("no precursor in the logs" in e for e in evidence), evidence


def test_a_log_of_many_calm_points_before_a_sudden_break_still_says_it_shows_no_precursor():
    """A full fine-tune at 5e-5 logged every step, loss and grad_norm steady, NaN at step 20: the log shows no
    precursor, and says so."""
    steps = range(1, 21)
    tl = timeline(learning_rate={s: 5e-5 for s in steps}, loss={s: 1.5 for s in steps},
                  grad_norm={s: NAN if s == 20 else 1.0 for s in steps})
    found = by_id(infer_causes(config(learning_rate=5e-5), tl, [_nan_at(20)], [], Thresholds(), FULL_SFT))
    assert "no precursor in the logs (no LR jump, no rising loss or grad_norm before the break)" in \
        found["lr_too_high"].evidence, found["lr_too_high"].evidence
