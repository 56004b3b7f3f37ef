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


def _trainer_output(tmp_path: Path, architectures: list[str]) -> Path:
    """An HF Trainer output folder (trainer_state.json + the model's config.json) under `run`."""
    import json
    run = tmp_path / "run"
    run.mkdir()
    history = [{"step": s, "epoch": s / 100, "loss": 3.0 - s / 200, "learning_rate": 5e-5} for s in range(10, 210, 10)]
    (run / "trainer_state.json").write_text(json.dumps({"global_step": 200, "log_history": history}))
    (run / "config.json").write_text(json.dumps({"architectures": architectures, "model_type": "bert",
                                                 "vocab_size": 30522, "hidden_size": 768}))
    return run


def test_a_model_config_naming_a_masked_lm_head_says_masked_lm_pretraining(tmp_path):
    profile = forensics.analyze(_trainer_output(tmp_path, ["BertForMaskedLM"])).run_profile
    assert profile.objective == "pretrain" and "BertForMaskedLM" in profile.evidence["objective"]


def test_a_classification_head_is_no_masked_lm_pretraining(tmp_path):
    assert forensics.analyze(_trainer_output(tmp_path, ["BertForSequenceClassification"])).run_profile.objective \
        != "pretrain"


def test_the_corpus_mlflow_run_of_a_masked_lm_is_pretraining():
    # chenmargalit_10X-ML-Engineer: the HF MLflow callback logged the model config beside the arguments
    assert forensics.analyze(CORPUS / "chenmargalit_10X-ML-Engineer").run_profile.objective == "pretrain"
