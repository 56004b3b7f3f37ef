"""A preference or RL run's learning-rate range is quoted with its objective in every sentence that gives it.

DPO and GRPO rates are a tenth to a hundredth of an SFT one: "recipes for LoRA use 5e-06 to 5e-05" reads as LoRA's
range and contradicts the 1e-4 to 2e-4 an SFT LoRA runs at. The titles and advice already said "LoRA (preference)"
(`lr_words.for_objective`); the evidence sentences of lr_too_high and lr_too_low did not (found by
scripts/audit_advice.py on the corpus: prchigoyal01's LoRA DPO, srinath-manda's full GRPO, AnnieL66's LoRA DPO,
Coicozoi's full DPO, alexchilton's LoRA GRPO; Rusheel86's GRPO and sugarandgugu's DPO of unknown method)."""
from __future__ import annotations

import math

import pytest

from forensics.causes import infer_causes
from forensics.config import RunConfig, Thresholds
from forensics.findings import Finding
from forensics.profile import RunProfile
from tests.test_causes import by_id, config, error, timeline

NAN = math.nan
STEPS = range(1, 21)


def _causes_for(profile: RunProfile, tl, findings, cfg=None):
    return by_id(infer_causes(cfg or RunConfig(), tl, list(findings), [], Thresholds(), profile))


def _evidence_with_range(cause, rng: str) -> list[str]:
    return [e for e in cause.evidence if rng in e]


def _blown_up(lr: float):
    """A rate held at `lr` with grad_norm climbing 1 -> 10 before it went NaN at step 15: a precursor."""
    return timeline(learning_rate={s: lr for s in STEPS}, loss={s: 1.0 + 0.01 * s for s in STEPS},
                    grad_norm={s: (1.0 if s < 10 else 10.0 * (s - 9)) if s < 15 else NAN for s in STEPS})


def _stalled(lr: float):
    tl = timeline(learning_rate={s: lr for s in STEPS}, loss={s: 0.693 for s in STEPS},
                  grad_norm={s: 1.0 for s in STEPS})
    return tl, [Finding("never_learned", "error", 1, "never learned", metric="loss")]


@pytest.mark.parametrize("method, objective, lr, rng", [
    ("lora", "preference", 2e-4, "5e-06 to 5e-05"),   # prchigoyal01_Reasoning-Bias_dpo
    ("full", "rl", 5e-5, "1e-06 to 5e-06"),           # srinath-manda_IITD_Feb26_AAIPL
    ("unknown", "rl", 5e-4, "2e-06 to 2e-05"),        # Rusheel86_Chaos-Economy
])
def test_a_rate_too_high_names_the_objective_beside_its_range(method, objective, lr, rng):
    found = _causes_for(RunProfile(method=method, objective=objective), _blown_up(lr),
                        [error(step=15)], cfg=config(learning_rate=lr))
    quoted = _evidence_with_range(found["lr_too_high"], rng)
    assert quoted and all(f"({objective})" in e for e in quoted), found["lr_too_high"].evidence


@pytest.mark.parametrize("method, objective, lr, rng", [
    ("lora", "preference", 5e-7, "5e-06 to 5e-05"),   # AnnieL66_DPO_lr5e7
    ("full", "preference", 4e-8, "5e-07 to 1e-06"),   # Coicozoi_minimind-from-scratch_dpo
    ("lora", "rl", 3e-7, "2e-06 to 2e-05"),           # alexchilton_CAS_NLP_MODULE4_GRPO-stage2
])
def test_a_rate_too_low_names_the_objective_beside_its_range(method, objective, lr, rng):
    tl, stalled = _stalled(lr)
    found = _causes_for(RunProfile(method=method, objective=objective), tl, stalled, cfg=config(learning_rate=lr))
    quoted = _evidence_with_range(found["lr_too_low"], rng)
    assert quoted and all(f"({objective})" in e for e in quoted), found["lr_too_low"].evidence


def test_an_sft_range_is_quoted_as_before():
    """Guard: supervised fine-tuning's range stays worded by the method alone (an SFT LoRA at 5e-3)."""
    found = _causes_for(RunProfile(method="lora", objective="sft"), _blown_up(5e-3), [error(step=15)],
                        cfg=config(learning_rate=5e-3))
    assert "recipes for it use 0.0001 to 0.0002" in " ".join(found["lr_too_high"].evidence)
    tl, stalled = _stalled(2e-6)
    found = _causes_for(RunProfile(method="lora", objective="sft"), tl, stalled, cfg=config(learning_rate=2e-6))
    assert "recipes for LoRA use 0.0001 to 0.0002" in " ".join(found["lr_too_low"].evidence)


@pytest.mark.parametrize("params, said", [(8_000_000_000, "of an 8B model"), (11_000_000_000, "of an 11B model"),
                                          (7_000_000_000, "of a 7B model"), (1_500_000_000, "of a 1.5B model"),
                                          (26_600, "of a 26.6K model")])
def test_a_model_size_takes_the_article_its_number_is_read_with(params, said):
    """The cause title reads the size aloud: "too high for LoRA of an 8B model" (the shared Unsloth 8B mobility run
    was told "of a 8B model"); 7B and 1.5B keep "a"; a model under a million parameters is counted in thousands, as
    the run line counts it (the sample run's cause said "of a 0.0266M model" beside "~26.6K parameters")."""
    found = _causes_for(RunProfile(method="lora", objective="sft", model_params=params), _blown_up(5e-3),
                        [error(step=15)], cfg=config(learning_rate=5e-3))
    assert said in found["lr_too_high"].title, found["lr_too_high"].title
