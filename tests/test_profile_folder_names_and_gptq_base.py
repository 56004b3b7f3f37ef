"""Tests of the run profile: words in folders above the run, a checkpoint folder's name, a GPTQ
base.

From the rules the lead mended from the day-6 corpus batches, each with the real case it came from
(tests/realworld)."""
from __future__ import annotations

import json

import forensics


def _state_only(folder, losses):
    folder.mkdir(parents=True)
    history = [{"step": i + 1, "loss": v, "learning_rate": 1e-4} for i, v in enumerate(losses)]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": len(losses), "log_history": history}))
    return folder


def test_words_in_the_folders_above_the_run_say_nothing_of_it(tmp_path):
    """A copy of a run under a checkout or share named for something else (`.../llm-sft-dpo-lora/runs/exp1`): the
    run's method and objective come from its files and its own folder's name, not from the folders above it (a
    helper's worktree `/work/wt/fix-al-sft` made every case without better evidence an SFT)."""
    run = _state_only(tmp_path / "llm-sft-dpo-lora" / "runs" / "exp1", [2.5 - 0.02 * i for i in range(40)])
    profile = forensics.analyze(run).run_profile
    assert (profile.method, profile.objective) == ("unknown", "unknown"), profile.evidence


def test_a_checkpoint_folder_is_named_by_the_run_folder_that_holds_it(tmp_path):
    run = _state_only(tmp_path / "qwen-7b-lora-sft" / "checkpoint-40", [2.5 - 0.02 * i for i in range(40)])
    profile = forensics.analyze(run).run_profile
    assert (profile.method, profile.objective) == ("lora", "sft"), profile.evidence


def test_a_lora_on_a_gptq_int4_base_is_a_quantized_base_lora(tmp_path):
    run = _state_only(tmp_path / "run", [2.5 - 0.02 * i for i in range(40)])
    (run / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 8, "task_type": "CAUSAL_LM",
                                                         "base_model_name_or_path": "Qwen/Qwen2-7B-Instruct-GPTQ-Int4"}))
    assert forensics.analyze(run).run_profile.method == "qlora"
