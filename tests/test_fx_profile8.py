"""Run-profile readings of branch fx-profile8: the marks Unsloth leaves on what it writes (its `unsloth` tag on the
model card, `auto_mapping.unsloth_fixed` or `revision: unsloth` in adapter_config.json) name the framework of a run
whose files otherwise show only a Trainer, or only TRL's arguments class. Every synthetic run is written under a
folder named `run`: the test's own folder name would be read as the run's name."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import forensics
from forensics.config import RunConfig
from forensics.profile import run_profile
from forensics.timeline import LogRecords, build_timeline
from support.trainer_console import trainer_console as _console, trainer_notebook

CORPUS = Path(__file__).parent / "realworld"

_ADAPTER = {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": 16, "lora_alpha": 16,
            "base_model_name_or_path": "unsloth/llama-3-8b-bnb-4bit", "target_modules": ["q_proj", "v_proj"]}
# unsloth_zoo.hf_utils.fix_lora_auto_mapping, run by Unsloth's get_peft_model
_UNSLOTH_AUTO_MAPPING = {"base_model_class": "LlamaForCausalLM",
                         "parent_library": "transformers.models.llama.modeling_llama", "unsloth_fixed": True}
_PLAIN_AUTO_MAPPING = {"base_model_class": "LlamaForCausalLM",
                       "parent_library": "transformers.models.llama.modeling_llama"}


def _trainer_run(tmp_path: Path, **adapter) -> Path:
    """A Trainer's trainer_state.json (the loss falling over 20 logs) beside a LoRA adapter_config.json."""
    folder = tmp_path / "run"
    folder.mkdir()
    history = [{"step": 10 * i, "epoch": i / 20, "loss": round(2.0 - i / 25, 4), "grad_norm": 1.0 + 0.01 * i,
                "learning_rate": 2e-4 * (1 - i / 20)} for i in range(1, 21)]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 200, "log_history": history}))
    (folder / "adapter_config.json").write_text(json.dumps({**_ADAPTER, **adapter}))
    return folder


@pytest.mark.parametrize("adapter", [{"auto_mapping": _UNSLOTH_AUTO_MAPPING}, {"revision": "unsloth"}])
def test_an_adapter_config_unsloth_wrote_names_unsloth_over_the_trainer_state_default(tmp_path, adapter):
    profile = forensics.analyze(_trainer_run(tmp_path, **adapter)).run_profile
    assert profile.framework == "unsloth" and "adapter_config.json" in profile.evidence["framework"]


@pytest.mark.parametrize("adapter", [{}, {"auto_mapping": _PLAIN_AUTO_MAPPING}, {"revision": None},
                                     {"revision": "main"}])
def test_an_adapter_config_without_unsloth_s_marks_stays_a_trainer_run(tmp_path, adapter):
    """An unsloth/ base model alone is no mark: the corpus holds plain Trainer and TRL runs on Unsloth's uploads."""
    assert forensics.analyze(_trainer_run(tmp_path, **adapter)).run_profile.framework == "hf_trainer"


def test_trl_s_metric_names_outrank_the_adapter_mark(tmp_path):
    """Unsloth drives TRL's trainers: where the log shows TRL's SFTTrainer the corpus names TRL
    (teohyc_finetune_med_llm, klix18_llama31_8b_finance_sft-alignment carry the same mark)."""
    folder = _trainer_run(tmp_path, auto_mapping=_UNSLOTH_AUTO_MAPPING)
    state = json.loads((folder / "trainer_state.json").read_text())
    for entry in state["log_history"]:
        entry["mean_token_accuracy"] = 0.5
    (folder / "trainer_state.json").write_text(json.dumps(state))
    assert forensics.analyze(folder).run_profile.framework == "trl"


def _profile_with(**values):
    timeline = build_timeline([LogRecords(source="trainer_state.json", format="trainer_state", frame=pd.DataFrame(
        {"step": list(range(1, 11)), "metric": "loss", "value": [2.0 - s / 100 for s in range(1, 11)],
         "wall_time": float("nan")}))])
    config = RunConfig()
    for key, (value, source) in values.items():
        config.add(key, value, source)
    return run_profile(None, config, timeline, [])


def test_trl_s_arguments_class_on_a_card_unsloth_tagged_is_an_unsloth_run():
    """Unsloth trains through TRL's own SFTConfig and tags the card it writes `unsloth` beside TRL's tags."""
    p = _profile_with(training_args_class=("trl.trainer.sft_config.SFTConfig", "training_args.bin"),
                      **{"card.tagged_by": ("unsloth", "README.md")})
    assert p.framework == "unsloth" and "SFTConfig" in p.evidence["framework"]
    assert "README.md" in p.evidence["framework"]


@pytest.mark.parametrize("tag", [None, "trl", "llamafactory"])
def test_trl_s_arguments_class_without_unsloth_s_tag_stays_trl(tag):
    values = {"training_args_class": ("trl.trainer.sft_config.SFTConfig", "training_args.bin")}
    if tag:
        values["card.tagged_by"] = (tag, "README.md")
    assert _profile_with(**values).framework == "trl"


@pytest.mark.parametrize("case", ["ItsCuz_banking-agentic", "charlene-chenn_vla-peft"])
def test_corpus_runs_unsloth_marked_are_unsloth_runs(case):
    assert forensics.analyze(CORPUS / case).run_profile.framework == "unsloth"


@pytest.mark.parametrize("case, framework", [("teohyc_finetune_med_llm", "trl"),  # SFTConfig, unsloth_fixed, no card
                                             ("EthanFeng-coder_saveing", "hf_trainer")])  # an unsloth/ base, no mark
def test_corpus_runs_without_unsloth_s_own_marks_keep_their_framework(case, framework):
    assert forensics.analyze(CORPUS / case).run_profile.framework == framework


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


@pytest.mark.parametrize("line", [
    # JunyiJ_PostTraining-LLM-Small_dpo's own loop
    "Saved checkpoint to /Users/junyi/Projects/PostTraining-LLM-Small/gemma-2-2b-checkpoints/dpo_lora_epoch1_step10.pt",
    "saving weights to out/LoRA-step500.safetensors",
])
def test_a_console_that_saves_a_file_named_for_lora_trained_a_lora(tmp_path, line):
    profile = forensics.analyze(_console(tmp_path, line)).run_profile
    assert profile.method == "lora" and "lora" in profile.evidence["method"].lower()


@pytest.mark.parametrize("line", [
    "Saved checkpoint to /x/checkpoints/dpo_epoch1_step10.pt",  # no LoRA named
    "Loading /x/checkpoints/dpo_lora_epoch1_step10.pt",  # loaded, not saved
    "Saved checkpoint to /x/checkpoints/explora_epoch1.pt",  # a word that only holds the letters
])
def test_a_console_that_saves_no_lora_file_says_no_method(tmp_path, line):
    assert forensics.analyze(_console(tmp_path, line)).run_profile.method == "unknown"


@pytest.mark.parametrize("case", ["JunyiJ_PostTraining-LLM-Small_dpo", "JunyiJ_PostTraining-LLM-Small_dpo_flat"])
def test_the_corpus_dpo_loop_that_saves_lora_files_trained_a_lora(case):
    assert forensics.analyze(CORPUS / case).run_profile.method == "lora"


# transformers 3.0's TrainingArguments (qwu01_transformers_LM's output/training_args.bin): 31 fields, no bf16
_RELEASE_3_FIELDS = ("output_dir", "overwrite_output_dir", "do_train", "do_eval", "do_predict",
                     "evaluate_during_training", "per_device_train_batch_size", "per_device_eval_batch_size",
                     "per_gpu_train_batch_size", "per_gpu_eval_batch_size", "gradient_accumulation_steps",
                     "learning_rate", "weight_decay", "adam_epsilon", "max_grad_norm", "num_train_epochs", "max_steps",
                     "warmup_steps", "logging_dir", "logging_first_step", "logging_steps", "save_steps",
                     "save_total_limit", "no_cuda", "seed", "fp16_opt_level", "local_rank", "tpu_num_cores",
                     "tpu_metrics_debug", "dataloader_drop_last")


@pytest.mark.parametrize("source, precision", [("output/training_args.bin", "fp32"),
                                               ("train_config.yaml", "unknown")])  # a user's file holds some fields
def test_an_old_release_s_whole_training_args_bin_without_bf16_is_fp32(source, precision):
    """The Trainer's training_args.bin holds every field of its release's TrainingArguments, however few: one with
    fp16 off and no bf16 field (added in 4.13) ran fp32."""
    values = {key: (1 if key.endswith(("size", "steps")) else "x", source) for key in _RELEASE_3_FIELDS}
    values["fp16"] = (False, source)
    if source.endswith(".bin"):
        values["training_args_class"] = ("transformers.training_args.TrainingArguments", source)
    assert _profile_with(**values).precision == precision


def test_the_corpus_run_of_transformers_3_with_fp16_off_is_fp32():
    assert forensics.analyze(CORPUS / "qwu01_transformers_LM").run_profile.precision == "fp32"
