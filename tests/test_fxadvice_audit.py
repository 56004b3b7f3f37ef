"""The advice audit of fx-advice: each cause's advice fits what the run's own files say (its loss, its precision and
quantization, its objective, whether it starts from a trained model). Each test names the real run that showed the
wrong advice and builds the smallest input that shows it; a second test keeps the right advice where it was right."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import forensics
from forensics.causes import infer_causes
from forensics.config import Thresholds
from forensics.findings import Finding
from forensics.profile import RunProfile
from tests.test_causes import NAN_GRAD, by_id, config, error, timeline

NAN = math.nan
CORPUS = Path(__file__).parent / "realworld"


def _trainer_state(folder: Path, rows: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": rows, "global_step": rows[-1]["step"]}))
    return folder


def _causes(cfg, tl, findings, **profile):
    return by_id(infer_causes(cfg, tl, list(findings), [], Thresholds(), RunProfile(**profile)))


# ---- a zero gradient beside a real loss is not a masked label ------------------------------------------------------


def test_a_zero_grad_norm_at_a_few_points_beside_a_real_loss_is_not_read_as_masked_labels(tmp_path):
    """Schwaldlander's LoRA (one logged step: grad_norm 0.0, loss 1.558): the finding said the loss is finite and
    non-zero, yet the cause said "loss and grad_norm both exactly 0.0" and sent the owner to masked labels, which give
    a loss of 0, not 1.558. The gradient that never reached the weights is what the run shows."""
    rows = [{"step": s, "loss": 1.56 - 0.01 * s, "grad_norm": 0.0, "learning_rate": 1.8e-4, "epoch": s / 20}
            for s in (6, 12)]
    found = by_id(forensics.analyze(_trainer_state(tmp_path / "run", rows), check_checkpoints=False).causes)
    assert "zero_loss_zero_grad" not in found, list(found)
    frozen = found["frozen_weights"]
    assert frozen.confidence == "possible"  # two points cannot rule out a release that logs the norm as 0
    assert "not 0" in frozen.evidence[0] and "require gradients" in frozen.suggestion


@pytest.mark.skipif(not (CORPUS / "Schwaldlander_DomainNameSuggest").exists(), reason="corpus case not present")
def test_schwaldlanders_zero_gradient_is_told_as_no_gradient_not_as_masked_labels():
    found = by_id(forensics.analyze(CORPUS / "Schwaldlander_DomainNameSuggest").causes)
    assert "zero_loss_zero_grad" not in found and "frozen_weights" in found, list(found)


def test_loss_and_grad_norm_both_zero_still_point_at_the_labels(tmp_path):
    """The labels advice stays where the loss is 0 too (every label -100 gives no loss and no gradient)."""
    rows = [{"step": s, "loss": 2.1 if s < 4 else 0.0, "grad_norm": 1.2 if s < 4 else 0.0, "learning_rate": 2e-4,
             "epoch": s / 40} for s in range(1, 41)]
    found = by_id(forensics.analyze(_trainer_state(tmp_path / "run", rows), check_checkpoints=False).causes)
    assert "labels" in found["zero_loss_zero_grad"].suggestion, list(found)
    assert "frozen_weights" not in found


# ---- where to look for a NaN that clipping could not stop fits the run's precision and quantization ---------------


def test_clipping_advice_sends_an_fp32_lora_to_neither_precision_nor_quantization():
    """yoshi182023's LoRA (fp16 and bf16 off, no quantized base, grad_norm NaN from its first logged step) led with
    "Look for the source of the NaN (precision, quantization, data)": neither of the first two is in its files."""
    found = _causes(config(max_grad_norm=1.0, fp16=False, bf16=False), NAN_GRAD, [error()],
                    method="lora", objective="sft", precision="fp32")
    advice = found["clipping_cannot_help"].suggestion
    assert "quantiz" not in advice and "not an fp16 overflow" in advice, advice
    assert "step 10" in advice  # the batches to look at


def test_clipping_advice_names_the_quantized_base_and_fp16_where_the_run_had_them():
    found = _causes(config(max_grad_norm=1.0, fp16=True, quant__load_in_4bit=True), NAN_GRAD, [error()],
                    method="qlora", objective="sft", precision="fp16")
    advice = found["clipping_cannot_help"].suggestion
    assert "quant.load_in_4bit=True" in advice and "fp16" in advice and "bf16" in advice, advice


def test_clipping_advice_leaves_quantization_open_where_the_method_is_unknown():
    advice = _causes(config(max_grad_norm=1.0), NAN_GRAD, [error()])["clipping_cannot_help"].suggestion
    assert "if the base was loaded in 4 or 8 bits" in advice, advice


# ---- a preference or RL range says it is one ----------------------------------------------------------------------


CLIMB_THEN_NAN = timeline(learning_rate={s: 2e-4 for s in range(1, 21)}, loss={s: 0.6 for s in range(1, 21)},
                          grad_norm={s: 1.0 if s < 7 else 3.0 ** (s - 6) if s < 10 else NAN for s in range(1, 21)})


def test_a_dpo_learning_rate_range_is_not_given_as_the_methods_range():
    """prchigoyal01's LoRA DPO at 2e-4 was told "Lower the learning rate (5e-06 to 5e-05 for LoRA)", and
    srinath-manda's full GRPO "1e-06 to 5e-06 for full fine-tuning": read alone, those are not LoRA's or full
    fine-tuning's ranges (SFT runs at 1e-4 to 2e-4 and 1e-5 to 2e-5) but the preference and RL ones."""
    dpo = _causes(config(learning_rate=2e-4), CLIMB_THEN_NAN, [error()], method="lora", objective="preference")
    assert "5e-06 to 5e-05 for LoRA (preference)" in dpo["lr_too_high"].suggestion, dpo["lr_too_high"].suggestion
    unknown = _causes(config(learning_rate=2e-4), CLIMB_THEN_NAN, [error()], objective="rl")
    advice = unknown["lr_too_high"].suggestion
    assert "for full fine-tuning (rl)" in advice and "for LoRA/QLoRA adapters (rl)" in advice, advice


def test_an_sft_learning_rate_range_reads_as_before():
    sft = _causes(config(learning_rate=2e-3), CLIMB_THEN_NAN, [error()], method="lora", objective="sft",
                  model_params=7_000_000_000)
    assert "(0.0001 to 0.0002 for LoRA)" in sft["lr_too_high"].suggestion, sft["lr_too_high"].suggestion


def test_a_dpo_rate_too_low_is_raised_to_the_preference_range():
    stalled = Finding("never_learned", "error", 10, "stays at ln 2", metric="loss")
    tl = timeline(learning_rate={s: 5e-7 for s in range(10, 190, 10)}, loss={s: 0.6931 for s in range(10, 190, 10)})
    found = _causes(config(learning_rate=5e-7), tl, [stalled], method="lora", objective="preference")
    assert "5e-06 to 5e-05 for LoRA (preference)" in found["lr_too_low"].suggestion, found["lr_too_low"].suggestion


# ---- continued pre-training of a trained model is not judged at from-scratch rates -------------------------------


def _stalled_pretraining(first_loss: float):
    steps = range(0, 1000, 10)
    return timeline(learning_rate={s: 3e-6 for s in steps},
                    loss={s: first_loss + 0.01 * ((s // 10) % 3) for s in steps})


def test_continued_pre_training_of_a_trained_model_is_told_fine_tuning_rates():
    """yangjunx21's continued pre-training of chatglm3-6b-base at 3e-6 (first loss 2.1; ln(vocabulary) 11.1) was told
    "Raise the learning rate to 0.00012 to 0.0003 for pre-training": rates for random weights, which wreck a trained
    6B model. A pre-training objective on a named trained base is judged by fine-tuning rates."""
    stalled = Finding("no_learning_evidence", "warning", 0, "the loss did not fall", metric="loss")
    cfg = config(learning_rate=3e-6, model___name_or_path="/models/chatglm3-6b-base", model__vocab_size=65024)
    found = _causes(cfg, _stalled_pretraining(2.1), [stalled], method="full", objective="pretrain",
                    model_params=6_243_221_504)
    low = found["lr_too_low"]
    assert "1e-05 to 2e-05" in low.suggestion and "0.00012" not in low.suggestion, low.suggestion
    assert any("continued pre-training" in e for e in low.evidence), low.evidence


def test_pre_training_from_random_weights_keeps_pre_training_rates():
    stalled = Finding("no_learning_evidence", "warning", 0, "the loss did not fall", metric="loss")
    cfg = config(learning_rate=3e-6, model__vocab_size=65024)  # no trained model named: random weights
    found = _causes(cfg, _stalled_pretraining(11.0), [stalled], method="full", objective="pretrain",
                    model_params=6_243_221_504)
    assert "for pre-training" in found["lr_too_low"].suggestion, found["lr_too_low"].suggestion
