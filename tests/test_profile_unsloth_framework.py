"""The run profile's framework (forensics/profile/framework.py) from the marks Unsloth leaves on what it writes (its
`unsloth` tag on the model card, `auto_mapping.unsloth_fixed` or `revision: unsloth` in adapter_config.json): they name
the framework of a run whose files otherwise show only a Trainer, or only TRL's arguments class.

Run-profile readings of branch fx-profile8. Every synthetic run is written under a folder named `run`: the test's own
folder name would be read as the run's name."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import forensics
from support.config_profile import profile_with as _profile_with


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
