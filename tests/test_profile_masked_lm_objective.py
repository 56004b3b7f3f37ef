"""The run profile of a notebook's masked LM (forensics/profile): trained whole through the notebook's own Trainer
subclass, pretraining under the masking collator.

Run-profile readings of branch fx-profile8. Every synthetic run is written under a folder named `run`: the test's own
folder name would be read as the run's name."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from support.trainer_console import trainer_notebook


CORPUS = Path(__file__).parent / "realworld"


def _mlm_notebook(tmp_path: Path, trainer_line: str, collator: str = "DataCollatorForLanguageModeling("
                  "tokenizer=tokenizer, mlm=True, mlm_probability=0.15)", model: str = "BertForMaskedLM") -> Path:
    """yangoos57_Bert_For_Domain_Adaptation's shape: a BERT loaded whole, a collator, the notebook's own Trainer
    subclass, the Trainer's printed logs."""
    code = (f"from transformers import {model}, BertTokenizer, Trainer, TrainingArguments, "
            "DataCollatorForLanguageModeling\n"
            f"tokenizer = BertTokenizer.from_pretrained('beomi/kcbert-base')\n"
            f"model = {model}.from_pretrained('beomi/kcbert-base')\n"
            f"collator = {collator}\n"
            "class customtrainer(Trainer):\n    def step_check(self):\n        return self.state.global_step\n"
            "args = TrainingArguments(output_dir='test_trainer', logging_steps=5, num_train_epochs=2)\n"
            f"{trainer_line}(model=model, args=args, train_dataset=data, data_collator=collator)\n"
            "trainer.train()\n")
    return trainer_notebook(tmp_path, code)


@pytest.mark.parametrize("trainer_line", ["trainer = customtrainer", "trainer = Trainer"])
def test_a_trainer_subclass_of_the_notebook_s_own_trains_the_model_whole(tmp_path, trainer_line):
    """A Trainer subclass named in lower case (`class customtrainer(Trainer)`) is a Trainer: the model handed to it
    whole is trained whole, in the float32 its arguments leave."""
    profile = forensics.analyze(_mlm_notebook(tmp_path, trainer_line)).run_profile
    assert (profile.method, profile.precision) == ("full", "fp32")


@pytest.mark.parametrize("collator", ["DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm=True)",
                                      "DataCollatorForLanguageModeling(tokenizer)"])  # (mlm is on by default)
def test_a_masked_lm_trained_with_the_masking_collator_is_pretraining(tmp_path, collator):
    profile = forensics.analyze(_mlm_notebook(tmp_path, "trainer = customtrainer", collator)).run_profile
    assert profile.objective == "pretrain" and "DataCollatorForLanguageModeling" in profile.evidence["objective"]


@pytest.mark.parametrize("collator, model", [
    ("DataCollatorWithPadding(tokenizer=tokenizer)", "BertForMaskedLM"),  # no masking collator
    ("DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm=True)", "BertForSequenceClassification"),
])
def test_no_masked_lm_objective_without_both_the_masked_lm_and_its_collator(tmp_path, collator, model):
    profile = forensics.analyze(_mlm_notebook(tmp_path, "trainer = customtrainer", collator, model)).run_profile
    assert profile.objective != "pretrain"


def test_the_corpus_masked_lm_notebook_with_its_own_trainer_subclass():
    profile = forensics.analyze(CORPUS / "yangoos57_Bert_For_Domain_Adaptation").run_profile
    assert (profile.method, profile.objective, profile.precision) == ("full", "pretrain", "fp32")
