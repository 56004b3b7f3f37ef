"""Review day 10: run-profile fields the tool got wrong on real cases (the corpus's profile_disagrees notes). Each
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
