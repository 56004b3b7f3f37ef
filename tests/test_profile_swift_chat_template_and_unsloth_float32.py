"""Tests of the run profile: an ms-swift SFT with the chat template off, Unsloth's
float32 for another model.

From the adversarial review of the rules added on 2026-11-26 (after 14:00): every test FAILS on the code it was
written against (15cf9c0); its docstring names the change it targets."""
from __future__ import annotations

import json
from tests.support.review_runs import training_notebook

from support.trainer_state_files import _analyze


# ---- change 3 (ms-swift args.json -> stage) --------------------------------------------------------------------------


def test_an_ms_swift_sft_with_the_chat_template_off_is_not_pre_training(tmp_path):
    """Change 3. `swift sft --use_chat_template false` on a base model (Qwen2.5-7B, LoRA): ms-swift's generation
    template for plain prompt/response data; args.json says use_chat_template false and loss_scale 'default' (the loss
    on the responses only). `swift pt` differs from it by loss_scale 'all' as well (PretrainArguments), which the rule
    does not look at. The tool says objective pretrain ("stage pt (args.json)"). Right: not pre-training; a run that
    trains on responses only, with the chat template off, is supervised fine-tuning."""
    run = tmp_path / "run"
    run.mkdir()
    rows = [{"loss": round(2.1 - 0.8 * s / 40, 4), "token_acc": 0.55 + 0.2 * s / 40, "grad_norm": 1.1,
             "learning_rate": 1e-4, "epoch": s / 40, "global_step/max_steps": f"{s * 5}/200"} for s in range(1, 41)]
    (run / "logging.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "args.json").write_text(json.dumps({"model": "Qwen/Qwen2.5-7B", "train_type": "lora", "task_type": "causal_lm",
                                               "torch_dtype": "bfloat16", "use_chat_template": False,
                                               "loss_scale": "default"}))
    profile = _analyze(run).run_profile
    assert profile.objective != "pretrain", profile.evidence.get("objective")


# ---- change 7 (stdout.py: Unsloth's float32 lines) -------------------------------------------------------------------


def test_unsloth_float32_for_another_model_in_the_notebook_is_not_the_runs_precision(tmp_path):
    """Change 7. A Colab notebook on a T4: its first cell loads Gemma-3-270M to try it (Unsloth prints "Using float16
    precision for gemma3 won't work! Using float32."), the next loads Llama-3.2-1B with FastLanguageModel, and the
    SFTTrainer trains that with Unsloth's usual `fp16=not is_bf16_supported(), bf16=is_bf16_supported()` (fp16 on a
    T4). The tool says precision fp32 ("fp16 and bf16 both off (... gemma3 won't work! Using float32.)"); before the
    change it said unknown. The line is about a model the notebook did not train. Right: not fp32."""
    folder = training_notebook(tmp_path / "run", [
        "from unsloth import FastModel\nmodel, tok = FastModel.from_pretrained('unsloth/gemma-3-270m-it', "
        "load_in_4bit=False)\nprint(model.generate('hi'))",
        "del model\nfrom unsloth import FastLanguageModel\nmodel, tokenizer = FastLanguageModel.from_pretrained("
        "'unsloth/Llama-3.2-1B-Instruct', dtype=None, load_in_4bit=True)",
        "from unsloth import is_bf16_supported\nfrom trl import SFTTrainer, SFTConfig\ntrainer = SFTTrainer(model=model, "
        "tokenizer=tokenizer, train_dataset=ds, args=SFTConfig(per_device_train_batch_size=2, learning_rate=2e-4, "
        "fp16=not is_bf16_supported(), bf16=is_bf16_supported(), max_steps=30, logging_steps=1, output_dir='outputs'))"
        "\ntrainer.train()",
    ])
    nb = json.loads((folder / "train.ipynb").read_text())
    nb["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text":
                                  "==((====))==  Unsloth 2025.3.19: Fast Gemma3 patching. Transformers: 4.50.0.\n"
                                  "   \\\\   /|    Tesla T4. Num GPUs = 1. Max memory: 14.741 GB. Platform: Linux.\n"
                                  "Unsloth: Using float16 precision for gemma3 won't work! Using float32.\n"}]
    (folder / "train.ipynb").write_text(json.dumps(nb))
    profile = _analyze(folder).run_profile
    assert profile.precision != "fp32", profile.evidence.get("precision")
