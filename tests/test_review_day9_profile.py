"""Review day 9: what the run profile and the readers got wrong on real cases of batches AP and AQ. Each test builds
a run shaped like the real one, asserts what its name says, and fails on the code before its change; each change
also has a test where its rule must not fire.

Folder names here avoid the words the profile reads in a run's names (lora, sft, full, dpo, ...)."""
from __future__ import annotations

import forensics


def _mlx_console(folder, head: list[str], rows: list[str]):
    folder.mkdir(parents=True)
    (folder / "train.log").write_text("\n".join(head + rows) + "\n")
    return folder


def _mlx_preference_rows(n: int = 12) -> list[str]:
    """mlx-lm preference trainer step lines (ml-explore/mlx-lm PR 6): loss falling, chosen reward over rejected."""
    rows = []
    for i in range(1, n + 1):
        loss, chosen, rejected = 0.07 - 0.002 * i, -0.2 + 0.003 * i, -0.22 - 0.004 * i
        rows.append(f"Iter {10 * i}: Train loss {loss:.3f}, Chosen reward {chosen:.3f}, Rejected reward "
                    f"{rejected:.3f}, Accuracy 0.700, Margin {chosen - rejected:.3f}, Learning Rate 1.000e-05, "
                    f"It/sec 0.100, Tokens/sec 63.892, Peak mem 5.276 GB")
    return rows


# ---- change 1: mlx-lm's preference trainers print a chosen and a rejected reward: the pairs' rewards, no RL reward ----


def test_mlx_chosen_and_rejected_rewards_are_read_as_the_pairs_rewards_not_an_rl_reward(tmp_path):
    run = _mlx_console(tmp_path / "run", ["Starting training..., iters: 500"], _mlx_preference_rows())
    analysis = forensics.analyze(run)
    metrics = set(analysis.timeline.metrics)
    assert {"rewards/chosen", "rewards/rejected"} <= metrics and "reward" not in metrics
    assert analysis.run_profile.objective == "preference"
    assert not any(f.kind == "no_learning_evidence" for f in analysis.findings)


def test_a_held_out_chosen_reward_is_an_eval_metric(tmp_path):
    rows = ["Iter 1: Val loss 0.055, Val chosen reward -0.240, Val rejected reward -0.268, Val accuracy 1.000, "
            "Val margin 0.028, Val took 0.645s"] + _mlx_preference_rows()
    analysis = forensics.analyze(_mlx_console(tmp_path / "run", [], rows))
    assert analysis.timeline.series("eval_rewards/chosen").tolist() == [-0.24]
    assert analysis.timeline.series("rewards/chosen").index.min() == 10


def test_a_loop_printing_a_plain_reward_is_still_read_as_rl(tmp_path):
    rows = [f"step {s} | loss {0.5 - 0.01 * s:.3f} | reward {0.1 + 0.02 * s:.3f}" for s in range(1, 31)]
    analysis = forensics.analyze(_mlx_console(tmp_path / "run", [], rows))
    assert "reward" in analysis.timeline.metrics and analysis.run_profile.objective == "rl"


# ---- change 2: mlx-lm's start line names what it trains; its step lines name the framework ----------------------


def test_mlx_start_line_naming_orpo_makes_the_objective_preference_orpo(tmp_path):
    run = _mlx_console(tmp_path / "run", ["Starting ORPO training..., iters: 500"], _mlx_preference_rows())
    profile = forensics.analyze(run).run_profile
    assert (profile.objective, profile.algorithm, profile.framework) == ("preference", "orpo", "mlx")


def test_mlx_step_lines_alone_name_the_framework_mlx(tmp_path):
    rows = [f"Iter {10 * i}: Train loss {2.4 - 0.05 * i:.3f}, Learning Rate 1.000e-05, It/sec 3.374, "
            f"Tokens/sec 875.431, Trained Tokens {2595 * i}, Peak mem 5.258 GB" for i in range(1, 21)]
    profile = forensics.analyze(_mlx_console(tmp_path / "run", [], rows)).run_profile
    assert profile.framework == "mlx" and profile.objective == "unknown"


def test_iter_lines_of_another_loop_do_not_name_mlx(tmp_path):
    rows = [f"Iter {10 * i}: Train loss {2.4 - 0.05 * i:.3f}, lr 1e-05, time 0.3s" for i in range(1, 21)]
    assert forensics.analyze(_mlx_console(tmp_path / "run", [], rows)).run_profile.framework != "mlx"


# ---- change 3: mmengine's year-less date is no step count; its Epoch(train) [E][i/N] counter is ---------------------


def test_mmengine_epoch_lines_with_a_year_less_date_are_numbered_by_their_own_counter(tmp_path):
    rows = [f"10/30 22:{18 + i}:02 - mmengine - INFO - Epoch(train) [{1 + i // 5}][{(i % 5) * 100 + 100}/500]  "
            f"lr: 1.9870e-04  eta: 2:46:39  time: 2.8906  data_time: 0.0042  memory: 10762  loss: {2.7 - 0.05 * i:.4f}"
            f"  grad_norm: 3.0608" for i in range(10)]
    loss = forensics.analyze(_mlx_console(tmp_path / "run", [], rows)).timeline.series("loss")
    assert loss.index.tolist() == [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]


def test_a_count_before_a_time_is_not_read_as_a_step_but_a_count_after_one_is(tmp_path):
    rows = [f"10/30 22:18:0{i} step {i + 1}/30 loss {2.7 - 0.05 * i:.4f}" for i in range(8)]
    loss = forensics.analyze(_mlx_console(tmp_path / "run", [], rows)).timeline.series("loss")
    assert loss.index.tolist() == list(range(1, 9))


def test_mmengine_iter_lines_with_a_year_less_date_are_numbered_by_the_iteration(tmp_path):
    rows = [f"10/30 22:{18 + i}:02 - mmengine - INFO - Iter(train) [ {10 * i + 10}/2046]  lr: 1.7590e-04  "
            f"eta: 1:25:37  time: 2.9  data_time: 0.02  memory: 15266  loss: {0.7 - 0.01 * i:.4f}  grad_norm: 1.2"
            for i in range(8)]
    loss = forensics.analyze(_mlx_console(tmp_path / "run", [], rows)).timeline.series("loss")
    assert loss.index.tolist() == list(range(10, 90, 10))


# ---- change 4: a framework's "lora" beside a 4-bit base (PEFT's model card block) is QLoRA ----------------------------

import json  # noqa: E402

_CARD_QUANT = """---
library_name: peft
---
## Training procedure


The following `bitsandbytes` quantization config was used during training:
- load_in_8bit: False
- load_in_4bit: {four}
- bnb_4bit_quant_type: nf4
- bnb_4bit_compute_dtype: float16
"""


def _factory_save(folder, four: bool):
    folder.mkdir(parents=True)
    (folder / "finetuning_args.json").write_text(json.dumps({"finetuning_type": "lora", "lora_rank": 8}))
    (folder / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 8, "task_type": "CAUSAL_LM",
                                                             "base_model_name_or_path": "THUDM/chatglm2-6b"}))
    (folder / "README.md").write_text(_CARD_QUANT.format(four=four))
    log = [{"current_steps": s, "total_steps": 100, "loss": 2.0 - s / 100, "learning_rate": 1e-4} for s in range(5, 105, 5)]
    (folder / "trainer_log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in log))
    return folder


def test_a_lora_fine_tuning_type_on_a_base_the_model_card_says_was_4bit_is_qlora(tmp_path):
    profile = forensics.analyze(_factory_save(tmp_path / "run", True)).run_profile
    assert profile.method == "qlora" and "README.md" in profile.evidence["method"]


def test_a_lora_fine_tuning_type_on_a_base_not_loaded_in_4bit_stays_lora(tmp_path):
    assert forensics.analyze(_factory_save(tmp_path / "run", False)).run_profile.method == "lora"


# ---- change 5: a trained encoder-decoder fine-tuned on its targets is supervised fine-tuning --------------------------


def _seq2seq_save(folder, config: dict):
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config))
    log = [{"loss": 3.0 - s / 100, "learning_rate": 5e-5, "epoch": s / 100, "step": s} for s in range(10, 210, 10)]
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": log, "global_step": 200, "max_steps": 200}))
    return folder


def test_a_pretrained_encoder_decoder_trained_on_its_targets_is_sft(tmp_path):
    run = _seq2seq_save(tmp_path / "run", {"_name_or_path": "facebook/bart-base", "is_encoder_decoder": True,
                                          "architectures": ["BartForConditionalGeneration"], "model_type": "bart"})
    profile = forensics.analyze(run).run_profile
    assert profile.objective == "sft" and "facebook/bart-base" in profile.evidence["objective"]


def test_a_decoder_only_model_or_an_encoder_decoder_of_unknown_start_is_not_called_sft(tmp_path):
    decoder = _seq2seq_save(tmp_path / "a", {"_name_or_path": "gpt2", "architectures": ["GPT2LMHeadModel"]})
    unnamed = _seq2seq_save(tmp_path / "b", {"is_encoder_decoder": True, "architectures": ["T5ForConditionalGeneration"]})
    assert forensics.analyze(decoder).run_profile.objective == "unknown"
    assert forensics.analyze(unnamed).run_profile.objective == "unknown"


# ---- change 6: more ways a run says its base was 4-bit -------------------------------------------------------------------


def test_llamafactory_quantizing_the_model_to_4_bit_makes_an_adapter_qlora(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    log = ["07/13/2024 11:18:56 - INFO - llamafactory.model.model_utils.quantization - Quantizing model to 4 bit with "
           "bitsandbytes.", "trainable params: 4,194,304 || all params: 7,245,926,400 || trainable%: 0.0579"]
    log += [f"{{'loss': {2.0 - s / 100:.4f}, 'grad_norm': 1.1, 'learning_rate': 0.0001, 'epoch': {s / 50:.2f}}}"
            for s in range(1, 31)]
    (run / "train.log").write_text("\n".join(log) + "\n")
    assert forensics.analyze(run).run_profile.method == "qlora"


def _adapter_with_args(folder, output_dir: str):
    import torch
    from transformers import TrainingArguments
    folder.mkdir(parents=True)
    (folder / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 32, "task_type": "CAUSAL_LM",
                                                             "base_model_name_or_path": "models/gemma-2b-it"}))
    torch.save(TrainingArguments(output_dir=output_dir, report_to=[]), folder / "training_args.bin")
    log = [{"loss": 2.0 - s / 100, "learning_rate": 1e-4, "epoch": s / 50, "step": s} for s in range(10, 210, 10)]
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": log, "global_step": 200}))
    return folder


def test_a_run_named_for_its_4bit_base_is_qlora_but_a_parent_folder_is_not_its_name(tmp_path):
    pytest = __import__("pytest")
    pytest.importorskip("transformers")
    named = _adapter_with_args(tmp_path / "a", "experiments/10cat_4bit_r32_lr4e-4")
    parent = _adapter_with_args(tmp_path / "b", "runs_4bit_sweep/gemma_r32_lr4e-4")
    assert forensics.analyze(named).run_profile.method == "qlora"
    assert forensics.analyze(parent).run_profile.method == "lora"


# ---- change 7: a console saying it builds its model from scratch ----------------------------------------------------------


def test_nanogpt_initializing_a_new_model_from_scratch_is_full_pretraining(tmp_path):
    rows = ["Initializing a new model from scratch", "number of parameters: 10.65M"]
    rows += [f"iter {10 * i}: loss {4.17 - 0.1 * i:.4f}, time 30.12ms, mfu 12.30%" for i in range(30)]
    profile = forensics.analyze(_mlx_console(tmp_path / "run", [], rows)).run_profile
    assert (profile.objective, profile.method) == ("pretrain", "full")


def test_a_resumed_or_pretrained_start_is_not_from_scratch(tmp_path):
    rows = ["Initializing from OpenAI GPT-2 weights: gpt2", "we train the new model from scratch? no, from gpt2"]
    rows += [f"iter {10 * i}: loss {3.2 - 0.02 * i:.4f}, time 30.12ms, mfu 12.30%" for i in range(30)]
    assert forensics.analyze(_mlx_console(tmp_path / "run", [], rows)).run_profile.objective != "pretrain"


# ---- change 8: cells that lost their counts after a few counted ones, before a training cell that shows output ----------

from support.review_runs import training_notebook  # noqa: E402

_LOAD = ("from transformers import AutoModelForCausalLM\n"
         "model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf', load_in_8bit=True)")
_ADAPTER = "from peft import LoraConfig\nlora_config = LoraConfig(r=8, lora_alpha=8, task_type='CAUSAL_LM')"
_TRAIN = ("from trl import SFTTrainer\ntrainer = SFTTrainer(model=model, peft_config=lora_config)\n"
          "trainer.train()")


def _uncount(folder, from_cell: int, also_print: bool = False):
    path = folder / "train.ipynb"
    nb = json.loads(path.read_text())
    for cell in nb["cells"][from_cell:]:
        cell["execution_count"] = None
    if also_print:
        nb["cells"][from_cell]["source"] += "\nprint(model)"
    path.write_text(json.dumps(nb))
    return folder


def test_uncounted_silent_cells_before_an_uncounted_training_cell_with_output_ran(tmp_path):
    run = _uncount(training_notebook(tmp_path / "run", ["import torch", _LOAD, _ADAPTER, _TRAIN]), 1)
    profile = forensics.analyze(run).run_profile
    assert (profile.method, profile.objective, profile.framework) == ("lora", "sft", "trl")


def test_an_uncounted_cell_that_would_have_printed_but_shows_nothing_did_not_run(tmp_path):
    run = _uncount(training_notebook(tmp_path / "run", ["import torch", _ADAPTER, _LOAD, _TRAIN]), 1, also_print=True)
    assert forensics.analyze(run).run_profile.method != "lora"  # (the LoraConfig cell sits before the silent one)


# ---- change 9: Unsloth's banner with blank lines between its lines; a printed bitsandbytes 4-bit compute dtype -------------


def test_an_unsloth_banner_captured_with_blank_lines_between_gives_the_model_size(tmp_path):
    banner = ["==((====))==  Unsloth - 2x faster free finetuning | Num GPUs used = 1", "",
              "   \\\\   /|    Num examples = 200 | Num Epochs = 1 | Total steps = 200", "",
              "O^O/ \\_/ \\    Batch size per device = 1 | Gradient accumulation steps = 8", "",
              "\\        /    Data Parallel GPUs = 1 | Total batch size (1 x 8 x 1) = 8", "",
              ' "-____-"     Trainable parameters = 40,370,176 of 7,655,986,688 (0.53% trained)', ""]
    rows = [f"{{'loss': {0.5 - 0.01 * i:.4f}, 'grad_norm': 0.3, 'learning_rate': 5e-06, 'reward': {0.1 * i:.2f}, "
            f"'reward_std': 0.4, 'kl': 0.001, 'epoch': {i / 200:.3f}}}" for i in range(1, 31)]
    profile = forensics.analyze(_mlx_console(tmp_path / "run", banner, rows)).run_profile
    assert (profile.method, profile.model_params, profile.framework) == ("lora", 7655986688, "unsloth")


def test_a_printed_bitsandbytes_config_gives_the_4bit_layers_compute_dtype(tmp_path):
    head = ["Unsloth: vLLM Bitsandbytes config using kwargs = {'load_in_8bit': False, 'load_in_4bit': True, "
            "'bnb_4bit_compute_dtype': 'bfloat16', 'bnb_4bit_quant_type': 'nf4'}"]
    rows = [f"{{'loss': {0.5 - 0.01 * i:.4f}, 'grad_norm': 0.3, 'learning_rate': 5e-06, 'epoch': {i / 200:.3f}}}"
            for i in range(1, 31)]
    assert forensics.analyze(_mlx_console(tmp_path / "run", head, rows)).run_profile.precision == "bf16"
    off = [head[0].replace("'load_in_4bit': True", "'load_in_4bit': False")]
    assert forensics.analyze(_mlx_console(tmp_path / "off", off, rows)).run_profile.precision == "unknown"
