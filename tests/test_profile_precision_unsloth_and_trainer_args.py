"""Tests of the run profile's precision (profile/): Unsloth's printed change, TrainingArguments.

From review day 8 (batch AO): each test fails on the code before its change; each change also has a test where
its rule must not fire. Folder names here avoid the words the profile reads in a run's names."""
from __future__ import annotations

import forensics
from support.review_runs import falling, ran_notebook, training_notebook


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
