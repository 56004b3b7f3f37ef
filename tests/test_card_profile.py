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
