"""Tests of the run profile's method (profile/): an adapter on a 4-bit base is qlora.

From review day 8 (batch AO): each test fails on the code before its change; each change also has a test where
its rule must not fire. Folder names here avoid the words the profile reads in a run's names."""
from __future__ import annotations

import forensics
from forensics.ingest import stdout
from support.review_runs import falling, training_notebook


def _console(folder, head_lines):
    """`folder/train.log`: the given lines, a PEFT banner, then thirty HF Trainer dict lines of a falling loss."""
    folder.mkdir(parents=True)
    dicts = "".join(f"{{'loss': '{v:.4f}', 'grad_norm': '1.2', 'learning_rate': '0.0001', 'epoch': '{s / 10:.2f}'}}\n"
                    for s, v in enumerate(falling(30), 1))
    banner = "trainable params: 18,464,768 || all params: 1,562,179,072 || trainable%: 1.1820\n"
    (folder / "train.log").write_text("\n".join(head_lines) + "\n" + banner + dicts)
    return folder


# ---- change 1: console_4bit.said_4bit, a line that loads a model and names 4 bits beside it, in any language ---------


def test_a_console_line_loading_a_4bit_base_in_chinese_makes_an_adapter_qlora(tmp_path):
    run = _console(tmp_path / "run", ["加载 4bit 基座: Qwen/Qwen2.5-1.5B-Instruct"])
    assert forensics.analyze(run).run_profile.method == "qlora"
    assert stdout.console_facts("Loading the base model in nf4: meta-llama/Llama-3.1-8B\n").get("console_4bit")


def test_a_4bit_word_with_no_model_load_beside_it_leaves_the_adapter_lora(tmp_path):
    lines = ["Unsloth: Merging 4bit and LoRA weights to 16bit...",
             "加载基座: Qwen/Qwen2.5-1.5B-Instruct (bf16)",
             "Loading model Qwen/Qwen2.5-1.5B-Instruct, load_in_4bit=False",
             "不使用 4bit 量化, 加载 bf16 基座"]  # (not using 4-bit quantization, loading the bf16 base)
    run = _console(tmp_path / "run", lines)
    assert forensics.analyze(run).run_profile.method == "lora"


# ---- change 2: notebook_code, a GPTQ / AWQ config's bits; run_config, a 4-bit model name the code loads ----------

_GPTQ_CELLS = ['''from transformers import AutoModelForCausalLM, AutoTokenizer, GPTQConfig, TrainingArguments
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from trl import SFTTrainer
model_name = "TheBloke/Mistral-7B-Instruct-v0.1-GPTQ"
tokenizer = AutoTokenizer.from_pretrained(model_name, use_fast=True)
quantization_config_loading = GPTQConfig(bits=BITS, disable_exllama=True, tokenizer=tokenizer)
model = AutoModelForCausalLM.from_pretrained(pretrained_model_name_or_path=model_name,
                                             quantization_config=quantization_config_loading, device_map={"": 0})
model = prepare_model_for_kbit_training(model)
''', '''peft_config = LoraConfig(r=64, lora_alpha=16, lora_dropout=0.1, bias="none", task_type="CAUSAL_LM")
model = get_peft_model(model, peft_config)
args = TrainingArguments(output_dir="out", learning_rate=2e-5, logging_steps=5, max_steps=150)
trainer = SFTTrainer(model=model, train_dataset=ds, peft_config=peft_config, args=args, tokenizer=tokenizer)
trainer.train()
''']


def test_a_lora_on_a_base_loaded_with_a_4bit_gptq_config_is_qlora(tmp_path):
    run = training_notebook(tmp_path / "run", [c.replace("BITS", "4") for c in _GPTQ_CELLS])
    assert forensics.analyze(run).run_profile.method == "qlora"


def test_a_lora_on_an_8bit_gptq_base_stays_lora(tmp_path):
    run = training_notebook(tmp_path / "run", [c.replace("BITS", "8") for c in _GPTQ_CELLS])
    assert forensics.analyze(run).run_profile.method == "lora"


def _named_base_cells(name):
    return [c.replace('"TheBloke/Mistral-7B-Instruct-v0.1-GPTQ"', f'"{name}"').replace(
        "quantization_config=quantization_config_loading, ", "").replace(
        "quantization_config_loading = GPTQConfig(bits=BITS, disable_exllama=True, tokenizer=tokenizer)\n", "")
        for c in _GPTQ_CELLS]


def test_a_lora_on_a_model_the_code_loads_by_a_4bit_name_is_qlora(tmp_path):
    run = training_notebook(tmp_path / "run", _named_base_cells("unsloth/llama-3-8b-Instruct-bnb-4bit"))
    assert forensics.analyze(run).run_profile.method == "qlora"


def test_a_lora_on_a_model_loaded_by_a_plain_name_stays_lora(tmp_path):
    run = training_notebook(tmp_path / "run", _named_base_cells("meta-llama/Meta-Llama-3-8B-Instruct"))
    assert forensics.analyze(run).run_profile.method == "lora"
