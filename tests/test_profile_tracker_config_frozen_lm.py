"""Tests of the run profile's method: a tracker config that freezes the language model.

From the adversarial review of the causes' advice on the real corpus, day 6: each test stands for real runs named in
its docstring."""
from __future__ import annotations


# ---- a frozen language model is not full fine-tuning ----------------------------------------------------------------


def test_a_tracker_config_that_freezes_the_language_model_is_not_read_as_full_fine_tuning():
    """FPT-VVU's ViVidBot stage 1 (W&B config: freeze_backbone True, tune_mm_mlp_adapter True - LLaVA's projector
    stage, the language model frozen - and no peft_config): the profile read "full" ("no peft_config, which HF's
    WandbCallback logs for every PEFT model"), and the cause judged a 5.4e-5 rate against full fine-tuning of the
    whole 3.99B model ("recipes use 1e-05 to 2e-05"). Only the projector trained: not full fine-tuning."""
    from forensics.ingest.tracker_config import derived_method

    hf = {"model/num_parameters": 3993339904, "learning_rate": 0.002}
    assert derived_method(hf)[0] == "full"
    for flag in ({"freeze_backbone": True}, {"tune_mm_mlp_adapter": True}, {"freeze_llm": True}):
        assert derived_method({**hf, **flag}) is None, flag
    assert derived_method({**hf, "freeze_backbone": False, "tune_mm_mlp_adapter": False})[0] == "full"
