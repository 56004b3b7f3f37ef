"""Session 25, fx-profile9: the Trainer's warning names the class of the model it trains (`No label_names provided for
model class `PeftModelForCausalLM``); PEFT makes that class for an adapter of task_type CAUSAL_LM, so the console says
what an adapter_config.json's task_type would: a causal-LM adapter on its language-model loss, with no preference, RL
or reward metric, is supervised fine-tuning (the rule read from adapter.task_type). Every synthetic run is written under
a folder named `run`: the test's own folder name would be read as the run's name."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from support.trainer_console import trainer_console as _console

CORPUS = Path(__file__).parent / "realworld"
_WARNING = ("No label_names provided for model class `{}`. Since `PeftModel` hides base models input arguments, if "
            "label_names is not given, label_names can't be set automatically within `Trainer`.")


def test_the_trainers_peft_causal_lm_class_says_a_causal_lm_adapter_so_sft(tmp_path: Path):
    profile = forensics.analyze(_console(tmp_path, _WARNING.format("PeftModelForCausalLM"))).run_profile
    assert (profile.method, profile.objective) == ("peft", "sft")
    assert "PeftModelForCausalLM" in profile.evidence["objective"]


@pytest.mark.parametrize("line", [
    _WARNING.format("PeftModelForSequenceClassification"),  # a classifier's adapter: no language-model task
    "Pushing adapter to s1nn3rx69/recall-policy-l2...",  # an adapter whose task nothing names
    "<class 'peft.peft_model.PeftModelForCausalLM'>",  # a class printed, not the model a Trainer was built around
])
def test_no_causal_lm_adapter_named_by_the_trainer_leaves_the_objective_unknown(tmp_path: Path, line: str):
    assert forensics.analyze(_console(tmp_path, line)).run_profile.objective == "unknown"


def test_rajiv143_objective_is_sft():
    """The corpus case: output.log's Trainer warning names PeftModelForCausalLM (its method peft agrees since
    fx-profile7)."""
    profile = forensics.analyze(CORPUS / "rajiv143_NL-OpenScenario").run_profile
    assert (profile.method, profile.objective) == ("peft", "sft")
