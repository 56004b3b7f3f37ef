"""The profile's method on an adapter whose base was quantized (QLoRA), where no adapter_config.json records it: the
run's own name beside QLoRA's paged optimizer, Unsloth's warning naming the model it loaded, LLaMA-Factory's
arguments saved as JSON. Each sign has a test where it must not fire (a LoRA on a bf16 base whose name holds `4b`, a
name that says neither, arguments that quantize nothing).

Runs are written the way the programs write them: the Trainer's save (trainer_state.json, training_args.bin pickled
by torch.save, PEFT's adapter_config.json), a notebook's cell outputs. Folder names here avoid the words the profile
reads in a run's names (lora, sft, full, ...)."""
from __future__ import annotations

import json

import pytest
import torch
import transformers

import forensics
from support.review_runs import falling, ran_notebook

_ADAPTER_CONFIG = {"base_model_name_or_path": "BASE", "bias": "none", "fan_in_fan_out": False, "inference_mode": True,
                   "init_lora_weights": True, "lora_alpha": 64, "lora_dropout": 0.1, "modules_to_save": None,
                   "peft_type": "LORA", "r": 16, "target_modules": ["q_proj", "v_proj"], "task_type": "CAUSAL_LM",
                   "use_dora": False, "use_rslora": False}


def _trainer_save(folder, output_dir: str, base: str = "microsoft/phi-2", optim: str = "paged_adamw_8bit",
                  adapter: bool = True):
    """`folder`: what Trainer.save_model and save_state leave of a PEFT run (trainer_state.json with thirty falling
    losses, training_args.bin naming `output_dir` and `optim`, adapter_config.json on `base` where `adapter`)."""
    folder.mkdir(parents=True)
    history = [{"step": s * 10, "epoch": s / 30, "loss": round(v, 4), "grad_norm": 0.8, "learning_rate": 2e-4}
               for s, v in enumerate(falling(30), 1)]
    state = {"global_step": 300, "max_steps": 300, "epoch": 1.0, "logging_steps": 10, "log_history": history,
             "best_model_checkpoint": None, "train_batch_size": 4}
    (folder / "trainer_state.json").write_text(json.dumps(state, indent=2))
    args = transformers.TrainingArguments(output_dir=output_dir, optim=optim, fp16=False, report_to=[],
                                          learning_rate=2e-4)
    torch.save(args, folder / "training_args.bin")
    if adapter:
        config = {**_ADAPTER_CONFIG, "base_model_name_or_path": base}
        (folder / "adapter_config.json").write_text(json.dumps(config, indent=2))
    return folder


# ---- the run's own name (training_args.bin's output_dir) says QLoRA, beside QLoRA's paged optimizer ---------------


@pytest.mark.parametrize("output_dir, optim", [("./models/qlora-phi2", "paged_adamw_8bit"),
                                               ("output/yi-6b-chat-qlora", "paged_adamw_32bit"),
                                               ("models/gpt2_qlora_squad", "paged_adamw_32bit")])
def test_an_adapter_saved_by_a_run_whose_output_dir_says_qlora_with_a_paged_optimizer_is_qlora(tmp_path, output_dir,
                                                                                               optim):
    profile = forensics.analyze(_trainer_save(tmp_path / "run", output_dir, optim=optim)).run_profile
    assert profile.method == "qlora"
    assert "says QLoRA" in profile.evidence["method"] and optim in profile.evidence["method"]


@pytest.mark.parametrize("output_dir, base, optim", [
    ("outputs/gemma-3-4b-adapter", "google/gemma-3-4b-it", "paged_adamw_8bit"),
    ("outputs/qwen3-4b-chat", "Qwen/Qwen3-4B", "paged_adamw_32bit"),
    ("outputs/loraqlora-compare", "Qwen/Qwen3-4B", "paged_adamw_8bit"),
    ("outputs/qlora_vs_plain", "microsoft/phi-2", "paged_adamw_8bit"),
    ("./results_qlora", "microsoft/phi-2", "adamw_torch")])
def test_an_adapter_on_a_bf16_base_whose_names_do_not_say_qlora_stays_lora(tmp_path, output_dir, base, optim):
    """`4b` is a size, not 4 bits; `loraqlora` is neither word; a name setting QLoRA against another is no claim; a
    name with the plain AdamW beside it may be a script named for QLoRA that loaded its base in 8 bits."""
    run = _trainer_save(tmp_path / "run", output_dir, base, optim)
    assert forensics.analyze(run).run_profile.method == "lora"


def test_a_name_that_says_qlora_beside_no_adapter_is_not_taken_as_the_words_method(tmp_path):
    """Without an adapter the name is the only word: `loraqlora-compare` says neither lora nor qlora."""
    run = _trainer_save(tmp_path / "run", "outputs/loraqlora-compare", adapter=False)
    assert forensics.analyze(run).run_profile.method == "unknown"


# ---- Unsloth's warning names the model it loaded: a bnb-4bit checkpoint ---------------------------------------------

_UNSLOTH_BANNER = """==((====))==  Unsloth: Fast Llama patching release 2024.4
   \\\\   /|    GPU: NVIDIA RTX 6000 Ada Generation. Max memory: 47.507 GB. Platform = Linux.
O^O/ \\_/ \\    Pytorch: 2.2.1. CUDA = 8.9. CUDA Toolkit = 12.1.
\\        /    Bfloat16 = TRUE. Xformers = 0.0.25. FA = False.
 "-____-"     Free Apache license: http://github.com/unslothai/unsloth
"""


def _unsloth_notebook(folder, load_line: str):
    """`folder/train.ipynb`: Unsloth loads a saved adapter folder by a variable (the base is named only by what
    Unsloth prints), then TRL's DPOTrainer logs thirty falling losses."""
    load = ('ADAPTER_DIR = "/root/adapters/run1"\nfrom unsloth import FastLanguageModel\n'
            'model, tokenizer = FastLanguageModel.from_pretrained(model_name=ADAPTER_DIR)')
    train = "trainer = DPOTrainer(model=model, ref_model=None, args=args, train_dataset=ds)\ntrainer.train()"
    dicts = "".join(f"{{'loss': {v:.4f}, 'grad_norm': 3.1, 'learning_rate': 5e-06, 'rewards/margins': {s / 30:.3f}, "
                    f"'epoch': {s / 30:.2f}}}\n" for s, v in enumerate(falling(30, 0.693, 0.35), 1))
    return ran_notebook(folder, "train.ipynb", [(load, _UNSLOTH_BANNER + load_line + "\n"), (train, dicts)])


_PAD_LINE = "{} does not have a padding token! Will use pad_token = <|reserved_special_token_250|>."


def test_unsloths_padding_warning_naming_a_bnb_4bit_model_makes_the_run_qlora(tmp_path):
    line = _PAD_LINE.format("/root/models/unsloth_llama-3-70b-Instruct-bnb-4bit/")
    profile = forensics.analyze(_unsloth_notebook(tmp_path / "run", line)).run_profile
    assert profile.method == "qlora"
    assert "bnb-4bit" in profile.evidence["method"]


@pytest.mark.parametrize("line", [_PAD_LINE.format("unsloth/Qwen3-4B"), _PAD_LINE.format("google/gemma-3-4b-it"),
                                  "Not loading unsloth/llama-3-8b-bnb-4bit: the bf16 base is used"])
def test_unsloths_padding_warning_naming_a_bf16_model_says_no_quantized_base(tmp_path, line):
    assert forensics.analyze(_unsloth_notebook(tmp_path / "run", line)).run_profile.method != "qlora"


# ---- LLaMA-Factory's arguments saved as JSON beside its trainer_log.jsonl ------------------------------------------


def _llamafactory_output(folder, args_name: str = "run_args.json", **args):
    """`folder`: a LLaMA-Factory output folder (trainer_log.jsonl of thirty falling losses, PEFT's adapter_config.json
    on Qwen/Qwen2.5-7B-Instruct) with its arguments dict saved as JSON under `args_name`, as a script calling
    llamafactory's run_exp(args) saves it."""
    folder.mkdir(parents=True)
    lines = [{"current_steps": s * 10, "total_steps": 300, "loss": round(v, 4), "lr": 2e-4 * (1 - s / 30),
              "epoch": s / 30, "percentage": round(100 * s / 30, 2), "elapsed_time": "0:10:00",
              "remaining_time": "0:10:00"} for s, v in enumerate(falling(30), 1)]
    (folder / "trainer_log.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    config = {**_ADAPTER_CONFIG, "base_model_name_or_path": "Qwen/Qwen2.5-7B-Instruct"}
    (folder / "adapter_config.json").write_text(json.dumps(config, indent=2))
    saved = {"model_name_or_path": "Qwen/Qwen2.5-7B-Instruct", **args, "stage": "sft", "do_train": True,
             "finetuning_type": "lora", "lora_target": "all", "template": "qwen", "output_dir": "saves/run",
             "learning_rate": 0.0002, "num_train_epochs": 1.0, "logging_steps": 10, "bf16": True}
    (folder / args_name).write_text(json.dumps(saved, ensure_ascii=False, indent=2))
    return folder


@pytest.mark.parametrize("bits", [4, 8])
def test_llamafactory_arguments_saved_as_json_with_a_quantization_bit_make_the_adapter_qlora(tmp_path, bits):
    """LLaMA-Factory quantizes the base for any quantization_bit (bitsandbytes 4 or 8 bits) and trains the LoRA on it:
    its training_args.yaml says qlora for either, and so does the same dict saved as JSON."""
    run = _llamafactory_output(tmp_path / "run", quantization_bit=bits, quantization_method="bitsandbytes")
    profile = forensics.analyze(run).run_profile
    assert (profile.method, profile.objective) == ("qlora", "sft")
    assert profile.evidence["method"] == "run_args.json"


def test_llamafactory_arguments_saved_as_json_without_quantization_leave_the_adapter_lora(tmp_path):
    profile = forensics.analyze(_llamafactory_output(tmp_path / "run", args_name="args_4b.json")).run_profile
    assert (profile.method, profile.objective) == ("lora", "sft")
    assert profile.evidence["objective"] == "stage sft (args_4b.json)"


def test_a_json_file_with_a_stage_but_no_finetuning_type_is_not_taken_for_llamafactory_arguments(tmp_path):
    run = _llamafactory_output(tmp_path / "run", quantization_bit=4)
    saved = json.loads((run / "run_args.json").read_text())
    del saved["finetuning_type"]  # (a pipeline's own record: {"stage": ..., "quantization_bit": ...})
    (run / "run_args.json").write_text(json.dumps(saved))
    assert forensics.analyze(run).run_profile.method == "lora"
