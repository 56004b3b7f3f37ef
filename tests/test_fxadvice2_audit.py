"""The second pass of the advice audit (fx-advice2): advice that the run's own log contradicts, repeats or words as an
id. Each test names the real run that showed it and builds the smallest input that shows it; a second test keeps the
advice where it was right."""
from __future__ import annotations

import math

import pytest

import forensics
from forensics.causes.lr_ranges import range_scope
from forensics.findings import Finding
from tests.test_causes import by_id, config, error, timeline
from tests.test_fxadvice_audit import CORPUS, _causes, _trainer_state

NAN = math.nan


def _corpus(case: str):
    if not (CORPUS / case).exists():
        pytest.skip("corpus case not present")
    return by_id(forensics.analyze(CORPUS / case).causes)


# ---- a NaN from the log's first point leaves no checkpoint to resume from -----------------------------------------


def _nan_from(first_nan: int, steps=range(5, 105, 5)) -> list[dict]:
    """A LoRA trainer_state whose grad_norm is NaN from `first_nan` and whose loss HF's filter logs as 0.0 after it."""
    return [{"step": s, "loss": 4.8 - 0.01 * s if s <= first_nan else 0.0,
             "grad_norm": 1.0 if s < first_nan else NAN, "learning_rate": 2e-4, "epoch": s / 100} for s in steps]


def test_a_nan_from_the_first_logged_point_is_told_to_start_again_not_to_resume(tmp_path):
    """yoshi182023's fp32 LoRA: grad_norm NaN at step 5, its first logged point, and loss 0.0 after. The advice said
    "resume from a checkpoint saved before step 5 ..., if one was kept": nothing logged shows weights that were ever
    sound before step 5 (save_steps=25 says none was saved)."""
    run = _trainer_state(tmp_path / "run", _nan_from(5))
    advice = by_id(forensics.analyze(run, check_checkpoints=False).causes)["masked_nan_loss"].suggestion
    assert "start again" in advice and "resume from" not in advice, advice
    assert "before step 5" in advice, advice


def test_a_nan_after_finite_points_still_offers_a_checkpoint_saved_before_it(tmp_path):
    run = _trainer_state(tmp_path / "run", _nan_from(50))
    advice = by_id(forensics.analyze(run, check_checkpoints=False).causes)["masked_nan_loss"].suggestion
    assert "resume from a checkpoint saved before" in advice and "if one was kept" in advice, advice


@pytest.mark.parametrize("case", ["yoshi182023_Deep_modal", "hiyouga_LlamaFactory_issue2810",
                                  "A-Mayank_Medical-LLM-",
                                  "Anujaykalbhor_End-to-End-Text-Summarization-using-NLP-and-AWS-Deployment"])
def test_the_corpus_runs_nan_from_their_first_point_are_told_to_start_again(case):
    advice = _corpus(case)["masked_nan_loss"].suggestion
    assert "start again" in advice and "if one was kept" not in advice, advice


# ---- a loss rise on a falling rate does not lead with "lower the learning rate" -----------------------------------


def _divergence_at(step: int, lr: dict[int, float]):
    loss = {s: 2.0 - 0.001 * s if s < step else 2.0 + 0.05 * (s - step) for s in lr}
    return timeline(learning_rate=lr, loss=loss), [Finding("divergence", "error", step, "loss diverges", metric="loss")]


def test_a_rise_long_after_the_peak_on_a_falling_rate_leads_with_the_steps_not_the_rate():
    """xxw1995's loss rose at step 14950, its rate down to 7e-4 from 1e-3 at step 50: the cause's evidence said that
    "is no sign of a rate too high", yet its title called 1e-3 too high and its advice led with "Lower the learning
    rate"."""
    tl, found = _divergence_at(600, {s: 1e-3 * (1 - s / 1000) for s in range(10, 1000, 10)})
    cause = _causes(config(), tl, found, objective="sft")["lr_too_high"]
    assert any("no sign of a rate too high" in e for e in cause.evidence), cause.evidence
    assert cause.suggestion.startswith("Look first at the batches around step 600"), cause.suggestion
    assert "too high" not in cause.title and "falling rate" in cause.title, cause.title


def test_a_rise_at_the_peak_rate_still_leads_with_lowering_it():
    tl, found = _divergence_at(600, {s: 1e-3 for s in range(10, 1000, 10)})
    cause = _causes(config(), tl, found, objective="sft")["lr_too_high"]
    assert cause.suggestion.startswith("Lower the learning rate"), cause.suggestion
    assert cause.title.startswith("Learning rate 0.001 too high"), cause.title


@pytest.mark.parametrize("case", ["xxw1995_chatglm3-finetune"])
def test_xxw1995s_rate_cause_no_longer_argues_against_itself(case):
    cause = _corpus(case)["lr_too_high"]
    assert not cause.suggestion.startswith("Lower"), cause.suggestion


# ---- the objective in words --------------------------------------------------------------------------------------


def test_the_scope_of_a_range_names_the_objective_in_words():
    """xxw1995's advice said "those ranges are sft recipes", ohalon's "pretrain recipes": ids where words are meant."""
    assert range_scope("sft", None).startswith("supervised fine-tuning recipes for a 7B-class model")
    assert range_scope("pretrain", None).startswith("pre-training recipes for a 7B-class model")


def test_the_scope_of_a_range_for_an_unknown_objective_reads_as_before():
    assert range_scope("unknown", 8_000_000_000, "lora") == \
        "supervised fine-tuning recipes (objective not known: preference and RL recipes run lower)"
    assert range_scope("sft", 7_000_000_000) == ""


# ---- one cause gives the learning-rate advice ------------------------------------------------------------------


def _fp16_nan(rate: float):
    return timeline(learning_rate={s: rate for s in range(1, 21)}, loss={s: 0.6 for s in range(1, 21)},
                    grad_norm={s: 1.0 if s < 7 else 3.0 ** (s - 6) if s < 10 else NAN for s in range(1, 21)})


def test_fp16_advice_points_at_the_learning_rate_cause_rather_than_repeating_it():
    """ccccai239's QLoRA DPO: fp16_overflow's advice ended "Lower the learning rate (5e-06 to 5e-05 for QLoRA
    (preference))" and lr_too_high said the same again."""
    found = _causes(config(fp16=True, learning_rate=2e-3), _fp16_nan(2e-3), [error()], method="lora", objective="sft",
                    precision="fp16")
    fp16, rate = found["fp16_overflow"].suggestion, found["lr_too_high"]
    assert "Lower the learning rate (" in rate.suggestion
    assert "lower the learning rate" not in fp16.lower() and f'see the cause "{rate.title}"' in fp16, fp16


def test_fp16_advice_keeps_its_own_rate_clause_where_the_rate_is_in_range():
    found = _causes(config(fp16=True, learning_rate=2e-4), _fp16_nan(2e-4), [error()], method="lora", objective="sft",
                    precision="fp16")
    assert "lr_too_high" not in found
    assert "is within the usual 0.0001 to 0.0002 for LoRA: keep it there" in found["fp16_overflow"].suggestion


def test_ccccai239_is_told_to_lower_its_rate_once():
    found = _corpus("ccccai239_llama2-7b-miniguanaco-dpo")
    said = [c.cause for c in found.values() if "lower the learning rate" in c.suggestion.lower()]
    assert said == ["lr_too_high"], said


# ---- a warm-up the log shows after the break ------------------------------------------------------------------


def _broken_at_the_first_point(rates: list[float]):
    steps = (58, 116, 174)
    tl = timeline(learning_rate=dict(zip(steps, rates)), loss={58: 2.4e9, 116: 0.0, 174: 0.0},
                  **{"logits/chosen": {58: NAN, 116: NAN, 174: NAN}})
    return _causes(config(), tl, [error(step=58, metric="logits/chosen")], objective="preference")["lr_too_high"]


def test_a_warm_up_still_under_way_at_the_break_is_kept_not_asked_for():
    """sugarandgugu's DPO broke at step 58, its first logged point (rate 2.5e-4); the rate rose to 5e-4 at step 116 and
    held: a warm-up under way, yet it was told to "warm up over the first 3-10% of steps"."""
    advice = _broken_at_the_first_point([2.5e-4, 5e-4, 5e-4]).suggestion
    assert "keep the warm-up" in advice and "warm up over" not in advice, advice


def test_a_rate_at_its_peak_from_the_break_on_is_still_told_to_warm_up():
    advice = _broken_at_the_first_point([5e-4, 5e-4, 5e-4]).suggestion
    assert "warm up over the first 3-10% of steps" in advice and "keep the warm-up" not in advice, advice


def test_sugarandgugu_keeps_its_warm_up():
    advice = _corpus("sugarandgugu_Simple-Trl-Training")["lr_too_high"].suggestion
    assert "keep the warm-up" in advice and "warm up over" not in advice, advice
