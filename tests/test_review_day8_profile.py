"""Review day 8: run-profile fields and messages that were wrong on real cases (batch AO). Each test builds a
realistic run shaped like the real one, asserts what its name says, and fails on the code before its change; each
change also has a test where its rule must not fire.

Folder names here avoid the words the profile reads in a run's names (lora, sft, full, ...)."""
from __future__ import annotations

import json

import forensics
from forensics.ingest import stdout
from support.review_runs import falling


def _console(folder, head_lines):
    """`folder/train.log`: the given lines, a PEFT banner, then thirty HF Trainer dict lines of a falling loss."""
    folder.mkdir(parents=True)
    dicts = "".join(f"{{'loss': '{v:.4f}', 'grad_norm': '1.2', 'learning_rate': '0.0001', 'epoch': '{s / 10:.2f}'}}\n"
                    for s, v in enumerate(falling(30), 1))
    banner = "trainable params: 18,464,768 || all params: 1,562,179,072 || trainable%: 1.1820\n"
    (folder / "train.log").write_text("\n".join(head_lines) + "\n" + banner + dicts)
    return folder


# ---- change 1: stdout._said_4bit, a line that loads a model and names 4 bits beside it, in any language ----------


def test_a_console_line_loading_a_4bit_base_in_chinese_makes_an_adapter_qlora(tmp_path):
    run = _console(tmp_path / "run", ["加载 4bit 基座: Qwen/Qwen2.5-1.5B-Instruct"])
    assert forensics.analyze(run).run_profile.method == "qlora"
    assert stdout.console_facts("Loading the base model in nf4: meta-llama/Llama-3.1-8B\n").get("console_4bit")


def test_a_4bit_word_with_no_model_load_beside_it_leaves_the_adapter_lora(tmp_path):
    lines = ["Unsloth: Merging 4bit and LoRA weights to 16bit...",
             "加载基座: Qwen/Qwen2.5-1.5B-Instruct (bf16)",
             "Loading model Qwen/Qwen2.5-1.5B-Instruct, load_in_4bit=False"]
    run = _console(tmp_path / "run", lines)
    assert forensics.analyze(run).run_profile.method == "lora"
