"""Tests of the run profile where a known value was stated wrongly (session 29, fx-profwrong): a wrapper framework's
run told by the engine it runs under, an objective word in the folder's name against the log file's own name.

Each test fails on the code before its change; each rule has a guard where the answer before it stays."""
from __future__ import annotations

import forensics
from support.console_files import _mlx_console

_ROWS = [f"{{'loss': {2.0 - 0.02 * i:.4f}, 'grad_norm': 0.3, 'learning_rate': 5e-05, 'epoch': {i / 40:.3f}}}"
         for i in range(1, 31)]
_UNSLOTH_BANNER = ["==((====))==  Unsloth: Fast Llama patching release 2024.4",
                   "   \\\\   /|    GPU: Tesla T4. Max memory: 14.748 GB. Platform = Linux.",
                   "O^O/ \\_/ \\    Pytorch: 2.2.1+cu121. CUDA = 7.5. CUDA Toolkit = 12.1.",
                   "\\        /    Bfloat16 = FALSE. Xformers = 0.0.25. FA = False.",
                   ' "-____-"     Free Apache license: http://github.com/unslothai/unsloth']
# LLaMA-Factory's own logger lines (llmtuner before v0.6), as `llamafactory-cli train` with use_unsloth prints them
_FACTORY_LINES = ["05/03/2024 16:58:49 - WARNING - llmtuner.hparams.parser - We recommend enable `upcast_layernorm` "
                  "in quantized training.",
                  "05/03/2024 16:58:53 - INFO - llmtuner.data.loader - Loading dataset alpaca_gpt4_data_en.json..."]


# ---- LLaMA-Factory runs Unsloth under it (use_unsloth): the wrapper's own log lines name the framework ------------


def test_a_llamafactory_console_that_prints_unsloths_banner_is_a_llamafactory_run(tmp_path):
    folder = _mlx_console(tmp_path / "run", _FACTORY_LINES + _UNSLOTH_BANNER, _ROWS)
    profile = forensics.analyze(folder).run_profile
    assert profile.framework == "llamafactory"
    assert "LLaMA-Factory" in profile.evidence["framework"] and "Unsloth" in profile.evidence["framework"]


def test_unsloths_banner_without_llamafactory_lines_stays_unsloth(tmp_path):
    profile = forensics.analyze(_mlx_console(tmp_path / "run", _UNSLOTH_BANNER, _ROWS)).run_profile
    assert profile.framework == "unsloth"


# ---- an objective word in the run folder's name against the log file's own name ----------------------------------


def _named_log(folder, name: str):
    folder.mkdir(parents=True)
    (folder / name).write_text("\n".join(_ROWS) + "\n")
    return folder


def test_the_log_files_own_name_outranks_the_folders_name_for_the_objective(tmp_path):
    # a repository named for ORPO whose log is its SFT stage's (Paul33333_ORPO's sft_log.txt)
    profile = forensics.analyze(_named_log(tmp_path / "alignment_orpo", "sft_log.txt")).run_profile
    assert (profile.objective, profile.algorithm) == ("sft", None)
    assert "sft_log.txt" in profile.evidence["objective"] and "orpo" in profile.evidence["objective"]


def test_the_folders_objective_word_stands_where_the_log_file_names_none(tmp_path):
    profile = forensics.analyze(_named_log(tmp_path / "alignment_orpo", "train_log.txt")).run_profile
    assert (profile.objective, profile.algorithm) == ("preference", "orpo")


# ---- transformers' `loading weights file` line: the model starts from trained weights ----------------------------

_GPT2_CONFIG = ["[09/10/2021 13:41:20 - INFO - transformers.configuration_utils] Model config {",
                '  "architectures": [', '    "GPT2LMHeadModel"', "  ],", '  "model_type": "gpt2",',
                '  "n_ctx": 1024,', '  "n_embd": 768,', '  "n_head": 12,', '  "n_layer": 12,',
                '  "n_positions": 1024,', '  "vocab_size": 50257', "}", ""]
_LOADED = ["[09/10/2021 13:41:22 - INFO - transformers.modeling_utils] loading weights file "
           "../models/gpt2-small/pytorch_model.bin"]
# a summed loss (generation + weighted auxiliary losses) whose first value falls near ln(50257) = 10.8
_STEP_LINES = [f"[09/10/2021 13:43:23 - INFO - root] Step: {20 * i} | Loss: {9.484 * 0.9 ** i:.4f} | "
               f"Gen loss: {6.832 * 0.9 ** i:.4f} | Gate Loss: 0.0219 | Triple Loss: 0.5701" for i in range(1, 15)]


def test_a_console_that_loads_a_weights_file_is_not_read_as_from_scratch_by_its_first_loss(tmp_path):
    profile = forensics.analyze(_mlx_console(tmp_path / "run", _GPT2_CONFIG + _LOADED, _STEP_LINES)).run_profile
    assert profile.objective != "pretrain"
    assert "random weights" not in profile.evidence.get("method", "")


def test_the_same_console_without_a_weights_file_loaded_stays_from_scratch(tmp_path):
    profile = forensics.analyze(_mlx_console(tmp_path / "run", _GPT2_CONFIG, _STEP_LINES)).run_profile
    assert (profile.objective, profile.method) == ("pretrain", "full")


# ---- a notebook's 4-bit config handed to another model's loader than the one its last trainer trains --------------

_PEFT = ("from peft import LoraConfig, get_peft_model\n"
         "lora_config = LoraConfig(r=16, lora_alpha=32, task_type='CAUSAL_LM')\n")


def _run_cell(tag: str, model_id: str, four_bit: bool) -> str:
    quantized = "quantization_config=bnb_config, " if four_bit else ""
    return ("from transformers import AutoModelForCausalLM, BitsAndBytesConfig, Trainer, TrainingArguments\n"
            + ("bnb_config = BitsAndBytesConfig(load_in_4bit=True)\n" if four_bit else "")
            + f"{tag}_base = AutoModelForCausalLM.from_pretrained('{model_id}', {quantized}device_map='auto')\n"
            f"{tag}_lora = get_peft_model({tag}_base, lora_config)\n"
            f"trainer_{tag} = Trainer(model={tag}_lora, args=TrainingArguments(output_dir='out_{tag}', fp16=True),\n"
            f"    train_dataset=train_ds)\ntrainer_{tag}.train()\n")


def test_a_notebooks_last_run_on_a_base_loaded_whole_is_lora_though_its_first_run_loaded_4_bits(tmp_path):
    from support.notebook_sessions import _analyzed, _losses
    cells = [(1, _PEFT, ""), (2, _run_cell("first", "Qwen/Qwen2.5-3B", True), _losses()),
             (3, _run_cell("second", "ibm-granite/granite-3.1-1b-a400m-instruct", False), _losses())]
    profile = _analyzed(tmp_path, cells).run_profile
    assert profile.method == "lora", profile.evidence


def test_a_notebooks_last_run_on_a_4_bit_base_stays_qlora(tmp_path):
    from support.notebook_sessions import _analyzed, _losses
    cells = [(1, _PEFT, ""), (2, _run_cell("first", "ibm-granite/granite-3.1-1b-a400m-instruct", False), _losses()),
             (3, _run_cell("second", "Qwen/Qwen2.5-3B", True), _losses())]
    assert _analyzed(tmp_path, cells).run_profile.method == "qlora"


def test_a_4_bit_reload_after_the_training_leaves_a_trained_whole_base_lora(tmp_path):
    from support.notebook_sessions import _analyzed, _losses
    reload = ("from transformers import BitsAndBytesConfig\nbnb = BitsAndBytesConfig(load_in_4bit=True)\n"
              "infer = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-3B', quantization_config=bnb)\n")
    cells = [(1, _PEFT, ""), (2, _run_cell("only", "Qwen/Qwen2.5-3B", False), _losses()), (3, reload, "")]
    assert _analyzed(tmp_path, cells).run_profile.method == "lora"


# ---- an adapter put on a model loaded before the one the trainer trains ----------------------------------------

_BNB = ("import transformers, peft\n"
        "quantization_config = transformers.BitsAndBytesConfig(load_in_4bit=True)\n")
_PROMPT_EXERCISE = ("model = transformers.AutoModelForCausalLM.from_pretrained('Qwen/Qwen3-4B',\n"
                    "    quantization_config=quantization_config)\n"
                    "peft_config = peft.PromptTuningConfig(task_type=peft.TaskType.CAUSAL_LM, num_virtual_tokens=16)\n"
                    "model = peft.get_peft_model(model, peft_config)\n")
_RELOAD_AND_TRAIN = ("del model\n"
                     "model = transformers.AutoModelForCausalLM.from_pretrained('unsloth/Llama-3.2-3B',\n"
                     "    quantization_config=quantization_config)\n"
                     "trainer = transformers.Trainer(model=model, args=transformers.TrainingArguments(output_dir='o',\n"
                     "    fp16=True), train_dataset=train_ds)\ntrainer.train()\n")


def test_a_prompt_tuning_config_on_a_deleted_model_is_not_the_trained_4_bit_models_adapter(tmp_path):
    from support.notebook_sessions import _analyzed, _losses
    cells = [(1, _BNB, ""), (2, _PROMPT_EXERCISE, ""), (3, _RELOAD_AND_TRAIN, _losses())]
    profile = _analyzed(tmp_path, cells).run_profile
    assert profile.method == "qlora", profile.evidence


def test_a_prompt_tuning_config_on_the_trained_model_stays_peft(tmp_path):
    from support.notebook_sessions import _analyzed, _losses
    train = _RELOAD_AND_TRAIN.split("trainer = ")[0] + "model = peft.get_peft_model(model, peft_config)\n" \
        + "trainer = " + _RELOAD_AND_TRAIN.split("trainer = ")[1]
    cells = [(1, _BNB, ""), (2, _PROMPT_EXERCISE, ""), (3, train, _losses())]
    assert _analyzed(tmp_path, cells).run_profile.method == "peft"


def test_an_adapter_loaded_to_go_on_training_after_an_earlier_wrap_stays_the_trained_models(tmp_path):
    from support.notebook_sessions import _analyzed, _losses
    go_on = _RELOAD_AND_TRAIN.replace(
        "trainer = ", "model = peft.PeftModel.from_pretrained(model, 'out/adapter', is_trainable=True)\ntrainer = ")
    cells = [(1, _BNB, ""), (2, _PROMPT_EXERCISE.replace("PromptTuningConfig(", "LoraConfig(r=8, "), ""),
             (3, go_on, _losses())]
    assert _analyzed(tmp_path, cells).run_profile.method == "qlora"


# ---- a hand loop's console: its reload of the saved model after training is no trained start ----------------------


def _nanogpt_console(folder, after: list[str]):
    # review probe p8 (session 29): nanoGPT's iteration lines from a first loss of 12.5 (about ln 50257 + 1.7), then
    # a sampling script's transformers reload of the weights the loop saved
    lines = ["number of parameters: 10.65M", "tokens per iteration will be: 16,384"]
    lines += [f"iter {i}: loss {10.9 * 0.975 ** (i / 10) + 1.6:.4f}, time 35.12ms, mfu 3.2%"
              for i in range(0, 2001, 10)]
    folder.mkdir()
    (folder / "train.log").write_text("\n".join(lines + ["training done"] + after) + "\n")
    return folder


def test_a_hand_loops_reload_of_its_saved_weights_after_training_leaves_it_from_scratch(tmp_path):
    reload = ["[INFO|modeling_utils.py:3474] 2024-01-01 >> loading weights file out/pytorch_model.bin"]
    profile = forensics.analyze(_nanogpt_console(tmp_path / "run", reload)).run_profile
    assert profile.objective == "pretrain", profile.evidence


def test_the_same_hand_loop_without_the_reload_is_from_scratch(tmp_path):
    assert forensics.analyze(_nanogpt_console(tmp_path / "run", [])).run_profile.objective == "pretrain"


# ---- a notebook's evaluate-only Trainer after its QLoRA training: the trained model is the one .train() ran on ----

_EVALUATOR = ("merged = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-3B', torch_dtype=torch.float16)\n"
              "evaluator = Trainer(model=merged, args=TrainingArguments(output_dir='eval', "
              "per_device_eval_batch_size=8))\nprint(evaluator.evaluate(eval_ds))\n")


def _code_values(*sources: str) -> dict:
    from forensics.ingest.notebook_code import code_values
    cells = [{"cell_type": "code", "source": s, "outputs": [], "execution_count": i} for i, s in enumerate(sources, 1)]
    return code_values(cells, "")


def test_an_evaluate_only_trainer_after_a_qlora_training_leaves_it_qlora(tmp_path):
    # review probe p9 (session 29): the evaluator, the last trainer built, was taken as the trained model's
    # loader (float16, no 4 bits, the adapter put on another model)
    values = _code_values(_PEFT + "import torch\n", _run_cell("only", "Qwen/Qwen2.5-3B", True), _EVALUATOR)
    assert values.get("quant.load_in_4bit") is True and values.get("adapter.peft_type") == "LORA", values
    assert "model.load_dtype" not in values, values
    from support.notebook_sessions import _analyzed, _losses
    cells = [(1, _PEFT + "import torch\n", ""), (2, _run_cell("only", "Qwen/Qwen2.5-3B", True), _losses()),
             (3, _EVALUATOR, "")]
    assert _analyzed(tmp_path, cells).run_profile.method == "qlora"


def test_a_later_trainer_whose_train_is_called_is_still_the_last_run():
    # guard: where the later trainer's .train() is called (by name or on the built trainer itself), it is the
    # notebook's last run, as before: its float16 whole model, no 4 bits
    for trains in ("evaluator.train()", "Trainer(model=merged, args=TrainingArguments(output_dir='o')).train()"):
        values = _code_values(_PEFT + "import torch\n", _run_cell("only", "Qwen/Qwen2.5-3B", True),
                              _EVALUATOR.replace("print(evaluator.evaluate(eval_ds))", trains))
        assert values.get("model.load_dtype") == "float16" and "quant.load_in_4bit" not in values, values


def test_a_train_call_with_a_positional_checkpoint_is_a_train_call():
    # review 29b: `trainer.train("ckpt")` (resume_from_checkpoint is Trainer.train's first parameter) runs the
    # trainer as much as `trainer.train()`; it is the notebook's last run
    for trains in ("evaluator.train('eval/checkpoint-100')", "evaluator.train(True)"):
        values = _code_values(_PEFT + "import torch\n", _run_cell("only", "Qwen/Qwen2.5-3B", True),
                              _EVALUATOR.replace("print(evaluator.evaluate(eval_ds))", trains))
        assert values.get("model.load_dtype") == "float16" and "quant.load_in_4bit" not in values, (trains, values)
