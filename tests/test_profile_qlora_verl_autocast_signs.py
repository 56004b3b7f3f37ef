"""Tests of the run profile (profile/): qlora, verl, encoder-decoder, notebook launch and autocast signs.

Review day 10: run-profile fields the tool got wrong on real cases (the corpus's profile_disagrees notes). Each
test builds a run shaped like the real one, asserts what its name says, and fails on the code before its change;
each change also has a test where its rule must not fire.

Folder names here avoid the words the profile reads in a run's names (lora, qlora, sft, full, dpo, ...)."""
from __future__ import annotations

import json

import forensics


_PEFT_BANNER = "trainable params: 21,260,288 || all params: 3,773,331,456 || trainable%: 0.5634"


def _hf_dict_lines(n: int = 20) -> list[str]:
    """The HF Trainer's printed log dicts of a fine-tune that learns (loss 1.8 falling to about 1.0)."""
    return [f"{{'loss': {1.8 - 0.04 * i:.4f}, 'grad_norm': {0.9 - 0.01 * i:.4f}, 'learning_rate': 2e-05, "
            f"'epoch': {0.05 * i:.2f}}}" for i in range(1, n + 1)]


def _printed_model(layer: str) -> list[str]:
    """`print(model)` of a Mistral with a PEFT LoRA on its attention projections; `layer` is the base layer's class."""
    return ["PeftModelForCausalLM(", "  (base_model): LoraModel(", "    (model): MistralForCausalLM(",
            "      (model): MistralModel(", "        (layers): ModuleList(",
            "          (0-31): 32 x MistralDecoderLayer(", "            (self_attn): MistralAttention(",
            f"              (q_proj): lora.{layer}(",
            f"                (base_layer): {layer}(in_features=4096, out_features=4096, bias=False)",
            "                (lora_dropout): ModuleDict((default): Dropout(p=0.05, inplace=False))", "              )",
            f"              (o_proj): {layer}(in_features=4096, out_features=4096, bias=False)", "            )"]


def _console_run(folder, head: list[str]):
    folder.mkdir(parents=True)
    (folder / "train.log").write_text("\n".join(head + _hf_dict_lines()) + "\n")
    return folder


# ---- change 1: bitsandbytes' 4-bit layers in the console (a printed model, its own warning) show a 4-bit base ------


def test_a_printed_model_with_linear4bit_layers_makes_the_adapter_qlora(tmp_path):
    run = _console_run(tmp_path / "run", [_PEFT_BANNER] + _printed_model("Linear4bit"))
    profile = forensics.analyze(run).run_profile
    assert profile.method == "qlora"
    assert "Linear4bit" in profile.evidence["method"]


def test_a_printed_model_with_plain_linear_layers_stays_lora(tmp_path):
    """The same LoRA on a half-precision base: `Linear(..., bias=False)` layers, no 4-bit word anywhere."""
    run = _console_run(tmp_path / "run", [_PEFT_BANNER] + _printed_model("Linear"))
    assert forensics.analyze(run).run_profile.method == "lora"


def _wandb_lora_run(root, console: list[str]):
    """A W&B run folder beside the HF Trainer: config.yaml with a LoRA peft_config and the model config's serialized
    quantization_config (every flag false), and files/output.log holding the console."""
    files = root / "wandb" / "run-20240523_124231-7vsxe5sv" / "files"
    files.mkdir(parents=True)
    text = ("wandb_version: 1\n\n_wandb:\n  desc: null\n  value:\n    python_version: 3.11.9\n    cli_version: 0.17.0\n"
            "    framework: huggingface\n    start_time: 1716468151.0\n"
            "peft_config:\n  desc: null\n  value:\n    default:\n      peft_type: LORA\n"
            "      base_model_name_or_path: google/gemma-1.1-7b-it\n      task_type: CAUSAL_LM\n      r: 64\n"
            "      lora_alpha: 16\n"
            "quantization_config:\n  desc: null\n  value:\n    quant_method: QuantizationMethod.BITS_AND_BYTES\n"
            "    bnb_4bit_quant_type: fp4\n    bnb_4bit_compute_dtype: float32\n    load_in_4bit: false\n"
            "    load_in_8bit: false\n")
    text += "".join(f"{key}:\n  desc: null\n  value: {value}\n" for key, value in
                    {"learning_rate": 0.0002, "per_device_train_batch_size": 4, "output_dir": "outputs",
                     "logging_steps": 10, "fp16": "false", "bf16": "false"}.items())
    (files / "config.yaml").write_text(text)
    (files / "output.log").write_text("\n".join(console + _hf_dict_lines()) + "\n")
    (files / "wandb-summary.json").write_text(json.dumps({"train/loss": 1.0, "train/global_step": 200,
                                                           "_timestamp": 1716470000.0}))
    return root


_BNB_WARNING = ("/home/u/env/lib/python3.11/site-packages/bitsandbytes/nn/modules.py:426: UserWarning: Input type "
                "into Linear4bit is torch.float16, but bnb_4bit_compute_dtype=torch.float32 (default). This will lead "
                "to slow inference or training speed.")


def test_the_linear4bit_warning_outweighs_a_serialized_load_in_4bit_false(tmp_path):
    """bitsandbytes warns from a 4-bit layer's forward: those layers ran, whatever the saved flag says."""
    run = _wandb_lora_run(tmp_path / "run", ["Model prepared for training", _BNB_WARNING])
    assert forensics.analyze(run, check_checkpoints=False).run_profile.method == "qlora"


def test_a_serialized_load_in_4bit_false_without_4bit_layers_stays_lora(tmp_path):
    run = _wandb_lora_run(tmp_path / "run", ["Model prepared for training"])
    assert forensics.analyze(run, check_checkpoints=False).run_profile.method == "lora"


# ---- change 2: verl's printed config says the policy's lora_rank (0: every weight) and the actor's FSDP dtype ------


def _verl_console(folder, lora_rank: int | None, dtype: str | None):
    """verl's RL trainer console: its config printed with pprint by the Ray TaskRunner, then its step lines."""
    p = "(TaskRunner pid=625502) "
    pad = " " * 33
    head = [p + "{'actor_rollout_ref': {'actor': {'_target_': 'verl.workers.config.FSDPActorConfig',",
            p + pad + "'clip_ratio': 0.2,",
            p + pad + "'fsdp_config': {'_target_': 'verl.workers.config.FSDPEngineConfig',"]
    if dtype is not None:
        head.append(p + pad + f"                'dtype': '{dtype}',")
    head += [p + pad + "                'fsdp_size': -1,", p + pad + "                'model_dtype': 'fp32',",
             p + pad + "                'param_offload': False},",
             p + "                       'model': {'_target_': 'verl.workers.config.HFModelConfig',",
             p + pad + "'lora_alpha': 16,"]
    if lora_rank is not None:
        head.append(p + pad + f"'lora_rank': {lora_rank},")
    head.append(p + pad + "'path': 'Qwen/Qwen2.5-1.5B-Instruct'},")
    rows = [p + f"step:{i} - actor/entropy:{0.46 - 0.002 * i:.4f} - actor/pg_loss:{0.01 * (-1) ** i:.4f} - "
            f"actor/grad_norm:{0.01 + 0.001 * i:.4f} - actor/lr:3e-05 - critic/score/mean:{0.2 + 0.02 * i:.3f} - "
            f"training/global_step:{i} - training/epoch:0" for i in range(1, 31)]
    folder.mkdir(parents=True)
    (folder / "train.out").write_text("\n".join(head + rows) + "\n")
    return folder


def test_verl_printed_lora_rank_0_and_fsdp_dtype_give_full_bf16(tmp_path):
    profile = forensics.analyze(_verl_console(tmp_path / "run", 0, "bfloat16")).run_profile
    assert (profile.framework, profile.method, profile.precision) == ("verl", "full", "bf16")
    assert "lora_rank" in profile.evidence["method"]


def test_verl_printed_lora_rank_above_0_gives_lora(tmp_path):
    assert forensics.analyze(_verl_console(tmp_path / "run", 32, "bfloat16")).run_profile.method == "lora"


def test_verl_config_without_those_keys_leaves_method_and_precision_unknown(tmp_path):
    """An older verl print with no lora_rank and no dtype in the actor's fsdp_config: the rollout's dtype or the
    stored weights' model_dtype say nothing of how the actor trained."""
    profile = forensics.analyze(_verl_console(tmp_path / "run", None, None)).run_profile
    assert (profile.method, profile.precision) == ("unknown", "unknown")


# ---- change 3: a trained encoder-decoder whose short run logged only its eval_loss is still sft ---------------------


def _seq2seq_checkpoint(folder, config: dict, logged: list[dict]):
    """A Trainer checkpoint of a run shorter than its logging interval: config.json and the eval records alone."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": logged, "global_step": 10, "max_steps": 10}))
    return folder


_EVALS = [{"eval_loss": 2.9 - 0.3 * e, "eval_runtime": 3.2, "epoch": float(e), "step": 2 * e} for e in range(1, 6)]
_BART = {"_name_or_path": "facebook/bart-large", "is_encoder_decoder": True,
         "architectures": ["BartForConditionalGeneration"], "model_type": "bart"}


def test_a_pretrained_encoder_decoder_with_only_eval_loss_logged_is_sft(tmp_path):
    profile = forensics.analyze(_seq2seq_checkpoint(tmp_path / "run", _BART, _EVALS)).run_profile
    assert profile.objective == "sft" and "eval_loss" in profile.evidence["objective"]


def test_an_encoder_decoder_of_unknown_start_with_only_eval_loss_is_not_called_sft(tmp_path):
    unnamed = {k: v for k, v in _BART.items() if k != "_name_or_path"}
    assert forensics.analyze(_seq2seq_checkpoint(tmp_path / "run", unnamed, _EVALS)).run_profile.objective == "unknown"


# ---- change 4: hiyouga's finetuning_args file names the framework (ChatGLM-Efficient-Tuning / LLaMA-Factory) --------


def _trainer_state_save(folder):
    folder.mkdir(parents=True)
    log = [{"loss": 2.4 - s / 200, "learning_rate": 5e-5, "epoch": s / 200, "step": s} for s in range(10, 210, 10)]
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": log, "global_step": 200, "max_steps": 200}))
    return folder


def test_a_finetuning_args_file_beside_the_state_names_llamafactory(tmp_path):
    run = _trainer_state_save(tmp_path / "run")
    (run / "finetuning_args.json").write_text(json.dumps({"finetuning_type": "lora", "lora_rank": 8,
                                                          "lora_target": ["query_key_value"]}))
    profile = forensics.analyze(run).run_profile
    assert (profile.framework, profile.method) == ("llamafactory", "lora")
    assert "finetuning_args.json" in profile.evidence["framework"]


def test_a_trainer_state_alone_stays_hf_trainer(tmp_path):
    assert forensics.analyze(_trainer_state_save(tmp_path / "run")).run_profile.framework == "hf_trainer"


# ---- change 5: a notebook cell with no count that alone defines what a cell that ran reads has run too --------------


def _notebook(path, cells: list[tuple[int | None, str, list[dict]]]):
    """cells: (execution count or None, source, outputs)."""
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
          "cells": [{"cell_type": "code", "execution_count": count, "metadata": {}, "source": source,
                     "outputs": outputs} for count, source, outputs in cells]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb))
    return path.parent


def _train_output() -> list[dict]:
    return [{"output_type": "stream", "name": "stdout", "text": "\n".join(_hf_dict_lines()) + "\n"}]


_LOAD = 'model = AutoModelForCausalLM.from_pretrained("mistralai/Mistral-7B-v0.1")\n'
_ARGS = 'args = TrainingArguments(output_dir="out", learning_rate=2.5e-5, bf16=True, fp16=False)\n'
_TRAIN = "trainer = Trainer(model=model, args=args, train_dataset=ds)\ntrainer.train()\n"


def test_the_uncounted_cell_that_builds_the_training_arguments_counts_as_run(tmp_path):
    """The arguments cell was edited after it ran (count and output gone); the counted training cell reads its
    `args` and trained: its bf16=True is the run's precision."""
    run = _notebook(tmp_path / "run" / "train.ipynb", [(1, "from transformers import *\n" + _LOAD, []),
                                                       (None, _ARGS, []), (5, _TRAIN, _train_output())])
    assert forensics.analyze(run).run_profile.precision == "bf16"


def test_an_uncounted_cell_whose_names_are_defined_elsewhere_too_is_not_read(tmp_path):
    """A second, never-run arguments cell (bf16) beside the counted one (fp16): the counted one is the run's."""
    fp16 = _ARGS.replace("bf16=True, fp16=False", "bf16=False, fp16=True")
    run = _notebook(tmp_path / "run" / "train.ipynb", [(1, "from transformers import *\n" + _LOAD, []),
                                                       (2, fp16, []), (None, _ARGS, []),
                                                       (5, _TRAIN, _train_output())])
    assert forensics.analyze(run).run_profile.precision == "fp16"


# ---- change 6: a notebook's own training loop under torch's autocast trains in its dtype ---------------------------

_LOOP = '''model = GPT(config).to(DEVICE)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
{scaler}for step, (x, y) in enumerate(loader):
    optimizer.zero_grad(set_to_none=True)
    with {autocast}:
        logits, loss = model(x, y)
    {backward}
    if step % 10 == 0:
        print(f"step {{step}} | loss {{loss.item():.4f}}")
'''
_SCALED = ('scaler = torch.cuda.amp.GradScaler(enabled=(DEVICE == "cuda"))\n',
           "scaler.scale(loss).backward()\n    scaler.step(optimizer)\n    scaler.update()")
_PLAIN = ("", "loss.backward()\n    optimizer.step()")


def _loop_notebook(folder, autocast: str, scaled: bool = True):
    """A hand-written loop (nanoGPT-style) in a notebook whose first cell sets DEVICE = "cuda"; its printed losses fall."""
    scaler, backward = _SCALED if scaled else _PLAIN
    loop = _LOOP.format(autocast=autocast, scaler=scaler, backward=backward)
    rows = "".join(f"step {10 * i} | loss {4.0 - 0.05 * i:.4f}\n" for i in range(30))
    return _notebook(folder / "train.ipynb", [(1, 'DEVICE = "cuda"\n', []),
                                              (2, loop, [{"output_type": "stream", "name": "stdout", "text": rows}])])


def test_cuda_autocast_in_the_training_loop_is_fp16(tmp_path):
    profile = forensics.analyze(_loop_notebook(tmp_path / "run", 'torch.cuda.amp.autocast(enabled=(DEVICE == "cuda"))')
                                ).run_profile
    assert profile.precision == "fp16" and "autocast" in profile.evidence["precision"]


def test_autocast_naming_bfloat16_is_bf16(tmp_path):
    run = _loop_notebook(tmp_path / "run", "torch.autocast(device_type=DEVICE, dtype=torch.bfloat16)", scaled=False)
    assert forensics.analyze(run).run_profile.precision == "bf16"


def test_autocast_turned_off_or_of_an_unknown_dtype_says_nothing(tmp_path):
    off = _loop_notebook(tmp_path / "off", "torch.autocast(device_type=DEVICE, enabled=False)", scaled=False)
    unknown = _loop_notebook(tmp_path / "unknown", "torch.autocast(device_type=DEVICE, dtype=ptdtype)", scaled=False)
    assert forensics.analyze(off).run_profile.precision == "unknown"
    assert forensics.analyze(unknown).run_profile.precision == "unknown"


# ---- change 7: a notebook cell that launches its training program with --fp16 / --bf16 says the precision ----------


def _launch_notebook(folder, command: str, count: int | None = 3):
    """A notebook that trains through a script (`!python src/train.py ...`, continued over lines) whose printed
    progress is the cell's output."""
    rows = "".join(f"Epoch {i} | batch 334/334 | loss {4.0 - 0.1 * i:.4f}\n" for i in range(1, 25))
    outputs = [{"output_type": "stream", "name": "stdout", "text": rows}] if count is not None else []
    return _notebook(folder / "train.ipynb", [(1, "!pip install -q sentencepiece\n", []),
                                              (count, command, outputs)])


_LAUNCH = "!python src/train.py \\\n    --data_dir data/ \\\n    --epochs 100 \\\n    --fp16 \\\n    --log_every 53\n"


def test_a_launch_cell_with_fp16_makes_the_precision_fp16(tmp_path):
    profile = forensics.analyze(_launch_notebook(tmp_path / "run", _LAUNCH)).run_profile
    assert profile.precision == "fp16"


def test_a_launch_cell_without_a_precision_flag_or_two_launches_say_nothing(tmp_path):
    plain = _launch_notebook(tmp_path / "plain", _LAUNCH.replace("    --fp16 \\\n", ""))
    two = _launch_notebook(tmp_path / "two", _LAUNCH + "!python src/train.py --bf16 --epochs 3\n")
    assert forensics.analyze(plain).run_profile.precision == "unknown"
    assert forensics.analyze(two).run_profile.precision == "unknown"


# ---- change 8: an autocast block that trains nothing (a generate after training) says nothing of the precision -----

_TRAINER_CELLS = [(1, "import torch\nfrom transformers import AutoModelForCausalLM, TrainingArguments, Trainer\n" + _LOAD,
                   []),
                  (2, 'args = TrainingArguments(output_dir="out", learning_rate=5e-4, max_steps=100)\n', []),
                  (3, _TRAIN, _train_output())]
_GENERATE = ('ids = tokenizer(prompt, return_tensors="pt")["input_ids"].to("cuda")\n'
             "with torch.cuda.amp.autocast():\n    out = model.generate(input_ids=ids, max_new_tokens=64)\n")


def test_autocast_around_generate_after_training_leaves_the_trainer_default_fp32(tmp_path):
    run = _notebook(tmp_path / "run" / "train.ipynb", _TRAINER_CELLS + [(4, _GENERATE, [])])
    assert forensics.analyze(run).run_profile.precision == "fp32"


def test_autocast_around_the_training_call_still_blocks_fp32(tmp_path):
    wrapped = "with torch.autocast(device_type=\"cuda\"):\n    trainer.train()\n"
    cells = _TRAINER_CELLS[:2] + [(3, "trainer = Trainer(model=model, args=args, train_dataset=ds)\n" + wrapped,
                                   _train_output())]
    assert forensics.analyze(_notebook(tmp_path / "run" / "train.ipynb", cells)).run_profile.precision == "unknown"


# ---- change 9: the script a %%writefile cell writes is code that ran where a shell line that ran launches it --------

_SCRIPT_CELL = ("%%writefile train.py\nimport torch\nfrom transformers import AutoModelForCausalLM, TrainingArguments\n"
                "from trl import SFTTrainer\n" + _LOAD +
                'args = TrainingArguments(output_dir="out", learning_rate=2e-4, bf16=True)\n'
                "trainer = SFTTrainer(model=model, args=args, train_dataset=ds)\ntrainer.train()\n")


def _writefile_notebook(folder, launch: str):
    return _notebook(folder / "train.ipynb", [(None, _SCRIPT_CELL, [{"output_type": "stream", "name": "stdout",
                                                                     "text": "Writing train.py\n"}]),
                                              (11, launch, _train_output())])


def test_a_written_script_that_the_notebook_launches_is_read_as_its_code(tmp_path):
    profile = forensics.analyze(_writefile_notebook(tmp_path / "run", "!accelerate launch --num_processes=1 train.py\n")
                                ).run_profile
    assert (profile.precision, profile.objective, profile.framework) == ("bf16", "sft", "trl")


def test_a_written_script_that_another_program_is_launched_beside_is_not_read(tmp_path):
    """The launched program's name says nothing of its stage (`main.py`, not `finetune.py`, whose name alone now says
    sft as a launch script's name does): what the written train.py holds (bf16, SFTTrainer) is not read for it."""
    profile = forensics.analyze(_writefile_notebook(tmp_path / "run", "!python main.py --epochs 3\n")).run_profile
    assert profile.precision == "unknown" and profile.objective != "sft"


# ---- change 10: a Markdown display shows its text/markdown (a printed model put in a code block) -------------------


def _markdown_display(text: str) -> dict:
    return {"output_type": "display_data", "metadata": {},
            "data": {"text/plain": ["<IPython.core.display.Markdown object>"], "text/markdown": [text]}}


def _display_notebook(folder, shown: str):
    lora = 'config = LoraConfig(r=16, lora_alpha=32, task_type="CAUSAL_LM")\nmodel = get_peft_model(model, config)\n'
    return _notebook(folder / "train.ipynb", [(1, "from peft import LoraConfig, get_peft_model\n" + _LOAD + lora, []),
                                              (2, 'display(Markdown(f"```\\n{model}\\n```"))\n',
                                               [_markdown_display(shown)]),
                                              (3, _ARGS + _TRAIN, _train_output())])


def test_a_printed_model_shown_as_markdown_is_read(tmp_path):
    shown = "```\n" + "\n".join(_printed_model("Linear4bit")) + "\n```"
    assert forensics.analyze(_display_notebook(tmp_path / "run", shown)).run_profile.method == "qlora"


def test_a_markdown_display_of_plain_layers_stays_lora(tmp_path):
    shown = "```\n" + "\n".join(_printed_model("Linear")) + "\n```"
    assert forensics.analyze(_display_notebook(tmp_path / "run", shown)).run_profile.method == "lora"


# ---- change 11: a settings class's literal fields are read where the code passes them (`bf16=CONFIG.bf16`) ---------

_SETTINGS = "@dataclass\nclass CONFIG:\n    model_id: str = \"mistralai/Mistral-7B-v0.1\"\n    bf16: bool = {bf16}\n"
_ARGS_FROM_SETTINGS = 'args = TrainingArguments(output_dir="out", bf16=CONFIG.bf16)\n'


def _settings_notebook(folder, bf16: str):
    """The settings cell was edited after it ran (no count, no output); the cells that use it ran."""
    return _notebook(folder / "train.ipynb", [(None, _SETTINGS.format(bf16=bf16), []),
                                              (2, _LOAD + _ARGS_FROM_SETTINGS, []), (3, _TRAIN, _train_output())])


def test_bf16_passed_as_a_settings_class_field_is_read(tmp_path):
    assert forensics.analyze(_settings_notebook(tmp_path / "run", "True")).run_profile.precision == "bf16"


def test_a_settings_field_that_is_no_literal_says_nothing(tmp_path):
    run = _settings_notebook(tmp_path / "run", "torch.cuda.is_available()")
    assert forensics.analyze(run).run_profile.precision == "unknown"
