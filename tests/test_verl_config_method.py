"""Tests of ingest/console_recipes.py: the method a printed verl config states.

From review rev19 of the day's readers and rules, each finding mended."""
from __future__ import annotations

from forensics.ingest.console_recipes import recipe_facts


_CONFIG_HEAD = "{'actor_rollout_ref': {'actor': {'fsdp_config': {'param_offload': False},\n"


def test_a_verl_config_cut_before_its_model_section_says_nothing_of_the_method():
    facts = recipe_facts(_CONFIG_HEAD + "                                 'ppo_micro_batch_size': 4,\n")
    assert facts.get("console_framework") == "verl" and "console_method" not in facts


def test_a_whole_verl_config_without_a_lora_key_is_a_full_run():
    facts = recipe_facts(_CONFIG_HEAD + "  'model': {'path': 'Qwen/Qwen2.5-7B'}}}, 'trainer': {'total_epochs': 1}}\n")
    assert facts.get("console_method") == "full"
