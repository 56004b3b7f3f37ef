"""Tests of the run profile's framework: model card tags, TRL's SFTTrainer warnings.

From the SFT / fine-tune misreadings found on real runs (branch fix-al-sft): every test FAILS on main at a6d3009,
except those whose docstring says 'its bound' (a control that holds before and after)."""
from __future__ import annotations

import json

from support.trainer_state_files import _analyze


# ---- change 5: TRL named by the card it tags and by the warnings its trainers raise ------------------------------------


_TRL_CARD = """---
library_name: peft
license: apache-2.0
tags:
{tags}
base_model: mistralai/Mistral-7B-Instruct-v0.2
model-index:
- name: out
  results: []
---

<!-- This model card has been generated automatically according to the information the Trainer had access to. You
should probably proofread and complete it, then remove this comment. -->

# out

## Training procedure

### Training results

| Training Loss | Epoch | Step | Validation Loss |
|:-------------:|:-----:|:----:|:---------------:|
| 1.5           | 0.5   | 50   | 1.47            |
"""


def _tensorboard_sft(folder, card_tags):
    """A TRL SFTTrainer output folder before TRL 0.12: runs/<date>/ TensorBoard events (train/loss, train/grad_norm,
    train/learning_rate every 10 steps, eval/loss at 25 and 50) written by torch's SummaryWriter, an adapter_config,
    and the README.md card the Trainer writes, its header tagged as TRL's trainer tags it."""
    from torch.utils.tensorboard import SummaryWriter

    folder.mkdir(parents=True)
    w = SummaryWriter(log_dir=str(folder / "runs" / "Mar05_14-37-58_host"))
    for step, loss in zip(range(10, 60, 10), (2.114, 1.730, 1.585, 1.543, 1.508)):
        w.add_scalar("train/loss", loss, step)
        w.add_scalar("train/grad_norm", 1.2, step)
        w.add_scalar("train/learning_rate", 2e-4, step)
    w.add_scalar("eval/loss", 1.549, 25)
    w.add_scalar("eval/loss", 1.470, 50)
    w.close()
    (folder / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 16, "task_type": "CAUSAL_LM",
                                                             "base_model_name_or_path": "mistralai/Mistral-7B"}))
    (folder / "README.md").write_text(_TRL_CARD.format(tags="\n".join(f"- {t}" for t in card_tags)))
    return folder


def test_a_model_card_tagged_trl_names_trl(tmp_path):
    """Change 5 (model_card `_card_tagger`). rohith4444's and ajvanderwal's TRL SFTTrainer folders: a README.md card
    whose header is tagged `trl`, `sft`, `generated_from_trainer` (TRL's trainers add their `_tag_names`), with the
    Trainer's '### Training results' table. The tool said hf_trainer: it read the Trainer's table and not the tags.
    Right: trl (a TRL trainer is a Trainer, and its card the Trainer's, tagged by TRL)."""
    a = _analyze(_tensorboard_sft(tmp_path / "run", ["trl", "sft", "generated_from_trainer"]))
    assert a.run_profile.framework == "trl", a.run_profile.to_dict()


def test_a_card_tagged_by_llama_factory_and_trl_is_llama_factory_s(tmp_path):
    """Change 5, its bound: LLaMA-Factory's DPO stage is TRL's DPOTrainer underneath, and its card carries TRL's tags
    after (or before) its own: the card is LLaMA-Factory's, whatever the order of the tags."""
    a = _analyze(_tensorboard_sft(tmp_path / "run", ["trl", "dpo", "llama-factory", "lora", "generated_from_trainer"]))
    assert a.run_profile.framework == "llamafactory", a.run_profile.to_dict()


def test_warnings_from_trl_s_sft_trainer_module_name_trl_and_sft(tmp_path):
    """Change 5 (stdout `console_trl_trainer`). TerryTong-Git's W&B console of an alignment-handbook run_sft.py: HF
    Trainer dict lines, and warnings raised from TRL's own module ('.../site-packages/trl/trainer/sft_trainer.py:158:
    UserWarning: You passed `model_init_kwargs` to the SFTTrainer ...'). The tool said framework hf_trainer (the
    Trainer's dict lines) and objective unknown. The warning is raised by SFTTrainer's own code: TRL's SFTTrainer ran.
    Right: framework trl, objective sft."""
    run = tmp_path / "run" / "files"
    run.mkdir(parents=True)
    warn = ("/opt/conda/envs/train/lib/python3.10/site-packages/trl/trainer/sft_trainer.py:{}: UserWarning: You passed "
            "a `{}` argument to the SFTTrainer, the value you passed will override the one in the `SFTConfig`.\n"
            "  warnings.warn(\n")
    lines = [warn.format(195, "packing"), warn.format(283, "max_seq_length")]
    lines += [f"{{'loss': {1.15 - 0.15 * i / 40:.4f}, 'grad_norm': 0.6, 'learning_rate': 1e-05, 'epoch': {i / 40:.2f}}}\n"
              for i in range(1, 41)]
    (run / "output.log").write_text("".join(lines))
    profile = _analyze(tmp_path / "run").run_profile
    assert (profile.framework, profile.objective) == ("trl", "sft"), profile.to_dict()
