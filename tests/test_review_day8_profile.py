"""Review day 8: run-profile fields and messages that were wrong on real cases (batch AO). Each test builds a
realistic run shaped like the real one, asserts what its name says, and fails on the code before its change; each
change also has a test where its rule must not fire.

Folder names here avoid the words the profile reads in a run's names (lora, sft, full, ...)."""
from __future__ import annotations

import json

import forensics
from forensics.ingest import stdout
from support.review_runs import falling, ran_notebook, training_notebook


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


# ---- change 3: notebook_code, Unsloth's printed fallback from bfloat16 to float16 beats the code's dtype ----------

_UNSLOTH_BANNER = """==((====))==  Unsloth 2026.3.4: Fast Llama patching. Transformers: 4.56.2.
   \\\\   /|    Tesla T4. Num GPUs = 1. Max memory: 14.563 GB. Platform: Linux.
O^O/ \\_/ \\    Torch: 2.9.0+cu126. CUDA: 7.5. CUDA Toolkit: 12.6. Triton: 3.5.0
\\        /    Bfloat16 = BF16. FA [Xformers = 0.0.33.post1. FA2 = False]
 "-____-"     Free license: http://github.com/unslothai/unsloth
"""


def _unsloth_notebook(folder, bf16_supported: bool):
    load = '''import torch
from unsloth import FastLanguageModel
from trl import SFTTrainer, SFTConfig
model, tokenizer = FastLanguageModel.from_pretrained("unsloth/Meta-Llama-3.1-8B-Instruct", max_seq_length=2048,
                                                     dtype=torch.bfloat16, load_in_4bit=True)
model = FastLanguageModel.get_peft_model(model, r=16, lora_alpha=16, lora_dropout=0, bias="none")
'''
    printed = _UNSLOTH_BANNER.replace("BF16", "TRUE" if bf16_supported else "FALSE")
    if not bf16_supported:
        printed += "WARNING:unsloth_zoo.log:Device does not support bfloat16. Will change to float16.\n"
    train = '''trainer = SFTTrainer(model=model, tokenizer=tokenizer, train_dataset=ds,
                     args=SFTConfig(per_device_train_batch_size=2, learning_rate=2e-4, logging_steps=10, max_steps=300))
trainer.train()
'''
    dicts = "".join(f"{{'loss': {v:.4f}, 'grad_norm': 1.2, 'learning_rate': 2e-04, 'epoch': {s / 30:.2f}}}\n"
                    for s, v in enumerate(falling(30), 1))
    return ran_notebook(folder, "train.ipynb", [(load, printed), (train, dicts)])


def test_unsloths_printed_change_to_float16_beats_the_codes_bfloat16_dtype(tmp_path):
    assert forensics.analyze(_unsloth_notebook(tmp_path / "run", bf16_supported=False)).run_profile.precision == "fp16"


def test_the_codes_bfloat16_dtype_stands_where_the_run_printed_no_change(tmp_path):
    assert forensics.analyze(_unsloth_notebook(tmp_path / "run", bf16_supported=True)).run_profile.precision == "bf16"


# ---- change 4: notebook_code, a Trainer whose TrainingArguments leave fp16 and bf16 off trains in fp32 ----------

_QLORA_TRAINER = '''import torch, transformers
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig, TrainingArguments
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
compute_dtype = getattr(torch, "float16")
bnb_config = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=compute_dtype)
model = AutoModelForCausalLM.from_pretrained("microsoft/phi-2", quantization_config=bnb_config, device_map={"": 0})
model = get_peft_model(prepare_model_for_kbit_training(model), LoraConfig(r=32, lora_alpha=32, task_type="CAUSAL_LM"))
args = ARGS
trainer = transformers.Trainer(model=model, train_dataset=ds, args=args,
                               data_collator=transformers.DataCollatorForLanguageModeling(tokenizer, mlm=False))
TRAIN
'''
_ARGS = ('TrainingArguments(output_dir="out", warmup_steps=1, per_device_train_batch_size=1, max_steps=1000, '
         'learning_rate=2e-4, optim="paged_adamw_8bit", logging_steps=25, FLAGS)')


def _trainer_notebook(folder, args=_ARGS, flags="gradient_checkpointing=True", train="trainer.train()"):
    return training_notebook(folder, [_QLORA_TRAINER.replace("ARGS", args.replace("FLAGS", flags))
                                      .replace("TRAIN", train)])


def test_trainingarguments_with_neither_fp16_nor_bf16_train_in_fp32(tmp_path):
    assert forensics.analyze(_trainer_notebook(tmp_path / "a")).run_profile.precision == "fp32"
    flags_off = _trainer_notebook(tmp_path / "b", flags="fp16=False, bf16=False")
    assert forensics.analyze(flags_off).run_profile.precision == "fp32"


def test_no_fp32_where_autocast_a_flag_from_a_variable_or_a_trl_config_may_turn_mixed_precision_on(tmp_path):
    autocast = _trainer_notebook(tmp_path / "a", train='with torch.autocast("cuda", dtype=torch.float16):\n'
                                                       '    trainer.train()')
    from_variable = _trainer_notebook(tmp_path / "b", flags="fp16=use_fp16")
    trl_config = _trainer_notebook(tmp_path / "c", args=_ARGS.replace("TrainingArguments(", "SFTConfig("))
    for run in (autocast, from_variable, trl_config):
        assert forensics.analyze(run).run_profile.precision == "unknown", run.name


# ---- change 7: notebook_code.parse_quietly, a user's code parsed without the compiler's warnings -----------------

_ESCAPE_CELL = '''import re
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, TrainingArguments, Trainer
pattern = re.compile("<answer>\\s*(\\d+)\\s*</answer>")
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen3-4B")
model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, task_type="CAUSAL_LM"))
trainer = Trainer(model=model, args=TrainingArguments(output_dir="out", learning_rate=5e-6, bf16=True), train_dataset=ds)
trainer.train()
'''


def test_analysing_a_notebook_whose_code_has_an_invalid_escape_emits_no_warning(tmp_path):
    import warnings
    assert "\\s" in _ESCAPE_CELL  # the cell's own source holds `"\s*"`: an invalid escape in a plain string
    run = training_notebook(tmp_path / "run", [_ESCAPE_CELL])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        forensics.analyze(run)
    assert [str(w.message) for w in caught] == []


def test_a_cell_with_an_invalid_escape_is_still_read_where_warnings_are_errors(tmp_path):
    import warnings
    run = training_notebook(tmp_path / "run", [_ESCAPE_CELL])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        profile = forensics.analyze(run).run_profile
    assert (profile.method, profile.precision) == ("lora", "bf16")


# ---- change 6: learning_evidence, the no-reward-rise message compares the first and last quarters' means ---------

def _grpo_state(folder, reward):
    import numpy as np
    rng = np.random.default_rng(3)
    rows = [{"step": s, "epoch": s / 1000, "loss": round(float(0.005 + rng.normal(0, 0.001)), 5),
             "reward": float(r), "reward_std": 2.0, "kl": round(float(0.1 + rng.normal(0, 0.02)), 4),
             "completion_length": 1700.0, "learning_rate": 5e-6} for s, r in enumerate(reward, 1)]
    folder.mkdir(parents=True)
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": len(rows), "log_history": rows}))
    return folder


def _noisy_reward(seed, drift):
    """A GRPO reward of four completions a prompt: mostly the floor -7.5 or partial credit, now and then a solved
    prompt (+13), the share of floors growing by `drift` over the run; the first step at the floor."""
    import numpy as np
    rng = np.random.default_rng(seed)
    out = []
    for i in range(100):
        p_floor = 0.3 + drift * i / 100
        out.append(-7.5 if i == 0 or rng.random() < p_floor else float(rng.choice([-3.5, -0.375, 2.75, 8.875, 13.0])))
    return out


def test_the_no_reward_rise_message_compares_the_first_quarters_mean_with_the_last_quarters(tmp_path):
    import re
    import numpy as np
    reward = _noisy_reward(5, 0.15)
    finding = next(f for f in forensics.analyze(_grpo_state(tmp_path / "run", reward)).findings
                   if f.kind == "no_learning_evidence")
    first, last = float(np.mean(reward[:25])), float(np.mean(reward[-25:]))
    said = [float(x) for x in re.findall(r"averaged (-?[\d.]+) over the first 25 logged points and (-?[\d.]+) over "
                                          r"the last 25", finding.message)[0]]
    assert np.allclose(said, [first, last], atol=0.01)
    assert (said[1] < said[0]) == (last < first)


def test_a_reward_that_clearly_rises_gets_no_such_message(tmp_path):
    reward = [-7.5 + 15 * i / 99 for i in range(100)]
    findings = forensics.analyze(_grpo_state(tmp_path / "run", reward)).findings
    assert not any(f.kind == "no_learning_evidence" for f in findings)


# ---- change 5: config_files, ChatGLM's pre_seq_len is P-Tuning v2; run_config, ChatGLM-6B's two-matrix MLP --------

_CHATGLM_6B = {"architectures": ["ChatGLMForConditionalGeneration"], "hidden_size": 4096, "inner_hidden_size": 16384,
               "layernorm_epsilon": 1e-05, "max_sequence_length": 2048, "model_type": "chatglm",
               "num_attention_heads": 32, "num_layers": 28, "position_encoding_2d": True, "pre_seq_len": None,
               "prefix_projection": False, "quantization_bit": 4, "torch_dtype": "float16", "vocab_size": 130528}
_CHATGLM3_6B = {"architectures": ["ChatGLMModel"], "model_type": "chatglm", "add_qkv_bias": True, "ffn_hidden_size": 13696,
                "hidden_size": 4096, "kv_channels": 128, "multi_query_attention": True, "multi_query_group_num": 2,
                "num_attention_heads": 32, "num_layers": 28, "padded_vocab_size": 65024, "pre_seq_len": None,
                "seq_length": 8192, "torch_dtype": "float16"}


def _saved_run(folder, model_config):
    folder.mkdir(parents=True)
    rows = [{"step": 10 * k, "epoch": k / 100, "loss": round(v, 4), "learning_rate": 2e-2}
            for k, v in enumerate(falling(30, 5.0, 3.6), 1)]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 300, "log_history": rows}))
    (folder / "config.json").write_text(json.dumps(model_config))
    return folder


def test_a_chatglm_config_with_pre_seq_len_is_a_prefix_tuned_peft_run(tmp_path):
    run = _saved_run(tmp_path / "run", {**_CHATGLM_6B, "pre_seq_len": 128})
    assert forensics.analyze(run).run_profile.method == "peft"


def test_a_chatglm_config_with_no_prefix_stays_a_whole_model_save(tmp_path):
    assert forensics.analyze(_saved_run(tmp_path / "run", _CHATGLM_6B)).run_profile.method == "full"


def test_chatglm_6b_is_estimated_with_its_two_matrix_mlp_at_about_6_2b(tmp_path):
    n = forensics.analyze(_saved_run(tmp_path / "run", _CHATGLM_6B)).run_profile.model_params
    assert abs(n - 6.2e9) < 0.1e9, n


def test_chatglm3_6b_keeps_its_gated_mlp_and_multi_query_attention_at_about_6_24b(tmp_path):
    n = forensics.analyze(_saved_run(tmp_path / "run", _CHATGLM3_6B)).run_profile.model_params
    assert abs(n - 6.24e9) < 0.1e9, n
    from forensics.ingest.tracker_config import tracker_config_values
    said = tracker_config_values({**_CHATGLM3_6B, "learning_rate": 5e-5})  # W&B's copy of the same config
    assert (said["model.intermediate_size"], said["model.num_key_value_heads"]) == (13696, 2)
