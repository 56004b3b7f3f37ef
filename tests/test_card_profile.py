"""The run profile from what a model card says of the run: the axolotl config axolotl embeds in the Trainer's card
(`axolotl version:` then a ```yaml block: adapter or none, precision, the datasets' prompt formats or `rl:`), and a DPO
card's results table whose Rewards/* Logps/* columns are TRL DPOTrainer's evaluation metrics. Real cards from the AS84
batch (YinanWusoymilk_hf-readme_*), and hand-made cards of the same shape for the cases the batch lacks."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from forensics.ingest import card_axolotl

CORPUS = Path(__file__).parent / "realworld"

CARD = """---
tags:
- generated_from_trainer
model-index:
- name: out
  results: []
---

[<img src="axolotl-badge-web.png" alt="Built with Axolotl" width="200" height="32"/>](https://github.com/axolotl)
<details><summary>See axolotl config</summary>

axolotl version: `0.4.0`
```yaml
base_model: meta-llama/Meta-Llama-3-8B
model_type: AutoModelForCausalLM
{settings}
datasets:
{datasets}
val_set_size: 0.01
output_dir: ./out

sequence_len: 4096
micro_batch_size: 2
num_epochs: 1
learning_rate: 2e-5
bf16: {bf16}
fp16:
```

</details><br>

# out

## Training procedure

### Training results

| Training Loss | Epoch | Step | Validation Loss |
|:-------------:|:-----:|:----:|:---------------:|
| 1.1894        | 0.0   | 1    | 1.0110          |
| 0.8493        | 0.33  | 73   | 0.7057          |
| 0.8047        | 0.67  | 146  | 0.6835          |
| 0.7644        | 1.0   | 219  | 0.6687          |

### Framework versions

- Transformers 4.40.0.dev0
"""
_SHAREGPT = "  - path: chats.jsonl\n    type: sharegpt\n    conversation: chatml"


def _card(settings="load_in_8bit: false\nload_in_4bit: false", datasets=_SHAREGPT, bf16="auto") -> str:
    return CARD.replace("{settings}", settings).replace("{datasets}", datasets).replace("{bf16}", bf16)


def _profile(tmp_path, text):
    (tmp_path / "card.md").write_text(text)
    return forensics.analyze(tmp_path).run_profile


def test_an_embedded_axolotl_config_without_an_adapter_is_a_full_fine_tune_on_its_chat_data(tmp_path):
    p = _profile(tmp_path, _card())
    assert (p.method, p.objective, p.framework, p.precision) == ("full", "sft", "axolotl", "unknown")
    assert "no 'adapter:' key" in p.evidence["method"] and "axolotl 0.4.0 config" in p.evidence["method"]
    assert "sharegpt" in p.evidence["objective"]


def test_an_embedded_axolotl_config_names_its_adapter_and_precision(tmp_path):
    p = _profile(tmp_path, _card("adapter: qlora\nload_in_4bit: true\nlora_r: 32", bf16="true"))
    assert (p.method, p.objective, p.precision) == ("qlora", "sft", "bf16")
    assert "'adapter: qlora'" in p.evidence["method"] and "'bf16: true'" in p.evidence["precision"]


def test_an_embedded_axolotl_configs_rl_key_is_the_objective(tmp_path):
    p = _profile(tmp_path, _card("rl: dpo", "  - path: prefs.jsonl\n    type: chatml.intel"))
    assert (p.objective, p.algorithm) == ("preference", "dpo") and "'rl: dpo'" in p.evidence["objective"]


@pytest.mark.parametrize("datasets, stage", [
    ("  - path: a.jsonl\n    type: alpaca\n  - path: b.jsonl\n    type: sharegpt:chat", "sft"),
    ("- path: ner.jsonl\n  type:\n    field_instruction: context\n    field_output: target", "sft"),  # user-defined
    ("  - path: books.jsonl\n    type: completion", "pt"),  # raw text: axolotl's pre-training format
    ("  - path: books.jsonl\n    type: completion\n  - path: b.jsonl\n    type: alpaca", None),  # both kinds
    ("  - path: tokenized.jsonl\n    ds_type: json\n    type:", None),  # pre-tokenized: labels of the user's making
    ("  - path: x.jsonl\n    type: my_own_strategy.load", None),  # a type not known here says nothing
])
def test_the_datasets_prompt_formats_say_the_stage_only_where_they_agree(datasets, stage):
    said = card_axolotl.parse(_card(datasets=datasets))
    assert said["values"].get("stage") == stage


def test_bf16_auto_says_no_precision_and_a_card_without_the_yaml_block_says_nothing():
    assert "bf16" not in card_axolotl.parse(_card())["values"]
    assert card_axolotl.parse("axolotl version: `0.4.0`\n\nNo config here.\n") == {}


@pytest.mark.parametrize("case, method, objective, precision", [
    ("YinanWusoymilk_hf-readme", "full", "sft", "unknown"),  # 'bf16: auto'
    ("YinanWusoymilk_hf-readme_dolphin28", "full", "sft", "bf16"),
    ("YinanWusoymilk_hf-readme_dolphin29", "full", "sft", "unknown"),
    ("YinanWusoymilk_hf-readme_senku70b", "qlora", "sft", "unknown"),
    ("wangd12rpi_FinLoRA-ner", "lora", "sft", "unknown"),  # guard: its adapter stays an adapter
])
def test_real_axolotl_cards_profile(case, method, objective, precision):
    p = forensics.analyze(CORPUS / case).run_profile
    assert (p.method, p.objective, p.framework, p.precision) == (method, objective, "axolotl", precision)


def test_a_dpo_cards_rewards_columns_are_trls_dpo_evaluation_metrics():
    """argilla/notux-8x7b-v1: the card's table has Rewards/chosen ... Logits/chosen beside the validation loss, the
    names TRL's DPOTrainer logs its evaluation under (eval_rewards/margins, ...)."""
    p = forensics.analyze(CORPUS / "YinanWusoymilk_hf-readme_notux").run_profile
    assert (p.objective, p.algorithm, p.framework) == ("preference", "dpo", "trl")
    assert "eval_rewards/margins" in p.evidence["objective"]


def test_a_trainer_card_with_no_adapter_line_is_no_evidence_of_a_full_fine_tune(tmp_path):
    """Many cards omit PEFT: without an embedded config saying so, the method stays unknown (notux, a plain card)."""
    assert forensics.analyze(CORPUS / "YinanWusoymilk_hf-readme_notux").run_profile.method == "unknown"
    plain = CARD[CARD.index("# out"):]
    p = _profile(tmp_path, "---\ntags:\n- generated_from_trainer\n---\n\n" + plain)
    assert (p.method, p.objective, p.framework) == ("unknown", "unknown", "hf_trainer")


KERAS_CARD = """---
tags:
- generated_from_keras_callback
---

# tiny

This model is a fine-tuned version of [{text}](https://huggingface.co/{base}) on an unknown dataset.

### Training hyperparameters

- training_precision: float32

### Training results

| Train Loss | Validation Loss | Epoch |
|:----------:|:---------------:|:-----:|
| 3.1982     | 2.6801          | 0     |
| 2.3601     | 2.5493          | 1     |
| 1.9225     | 2.4377          | 2     |

### Framework versions

- Transformers 4.26.1
- TensorFlow 2.11.0
"""


@pytest.mark.parametrize("case", ["YinanWusoymilk_hf-readme_kaludi-bart", "YinanWusoymilk_hf-readme_merve-bart"])
def test_a_keras_cards_bart_is_fine_tuned_whole_on_its_targets(case):
    p = forensics.analyze(CORPUS / case).run_profile
    assert (p.method, p.objective, p.framework) == ("full", "sft", "keras")
    assert "Keras callback" in p.evidence["method"] and "PEFT" in p.evidence["method"]
    assert "bart" in p.evidence["objective"]


def test_a_keras_card_of_a_decoder_says_no_objective_and_a_trainer_card_no_method(tmp_path):
    """The encoder-decoder named in the link says sft (BART-large's link text is not its name); a GPT-2 fine-tuned by
    Keras may be trained on raw text. The Trainer's card (PyTorch, where PEFT exists) says no method by itself when
    it names no release before PEFT's (`profile.trainer_card`), but its BART base says sft as the Keras card's does."""
    (tmp_path / "bart").mkdir(), (tmp_path / "gpt2").mkdir(), (tmp_path / "trainer").mkdir()
    bart = _profile(tmp_path / "bart", KERAS_CARD.format(text="BART-large", base="facebook/bart-large"))
    gpt2 = _profile(tmp_path / "gpt2", KERAS_CARD.format(text="gpt2", base="gpt2"))
    trainer = _profile(tmp_path / "trainer", KERAS_CARD.format(text="bart", base="facebook/bart-large").replace(
        "generated_from_keras_callback", "generated_from_trainer").replace("Train Loss", "Training Loss"))
    assert (bart.method, bart.objective) == ("full", "sft")
    assert (gpt2.method, gpt2.objective) == ("full", "unknown")
    assert (trainer.method, trainer.objective) == ("unknown", "sft")


TRAINER_CARD = ("---\ntags:\n- generated_from_trainer\n---\n\n# model\n\n{prose}\n\n"
                + CARD[CARD.index("### Training results"):])
_CHAT_TEMPLATE = ("# Prompt Template Structure\n```\nThis is a chat between ASSISTANT and USER\nUSER: What is 4x8?\n"
                  "ASSISTANT:\n```")


@pytest.mark.parametrize("case", ["YinanWusoymilk_hf-readme_falcoder", "leliuga_cohere-configurations"])
def test_a_cards_instruction_dataset_or_chat_template_says_sft(case):
    assert forensics.analyze(CORPUS / case).run_profile.objective == "sft"


@pytest.mark.parametrize("prose, objective", [
    ("Falcon-7b fine-tuned on the CodeAlpaca 20k instructions dataset.", "sft"),
    (_CHAT_TEMPLATE, "sft"),
    ("This model is a fine-tuned version of Mistral-7B on the Kimiko dataset.", "unknown"),  # a dataset's name alone
    ("# Prompt Template\n```\n{text}\n```", "unknown"),  # a template with no chat turns
])
def test_a_cards_prose_counts_where_it_names_instructions_or_chat_turns(tmp_path, prose, objective):
    assert _profile(tmp_path, TRAINER_CARD.replace("{prose}", prose)).objective == objective
