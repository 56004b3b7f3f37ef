"""Tests of run-profile readings: a parameter banner's model size, a from-scratch step-0 eval, gpt-2-simple, shells.

Run-profile readers from batch AS57: a scaled `total params = 10.79M` banner (ingest.console_facts), a character
model's step-0 evaluation at ln(a small vocabulary) (profile.losses), gpt-2-simple's `finetune` (ingest.notebook_code
.gpt2_simple) and an evaluation script's shell line, which hands no training to a program (notebook_code.cells)."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest.console_facts import console_facts
from forensics.ingest.notebook_code import code_values

CORPUS = Path(__file__).parent / "realworld"


def _cell(source: str, count: int = 1) -> dict:
    return {"cell_type": "code", "source": source, "execution_count": count, "outputs": []}


def test_a_total_params_banner_in_millions_is_the_model_size():
    assert console_facts("total params = 10.79M\nstep 0: train loss 4.2846, val loss 4.2820\n").get(
        "console_n_params") == 10_790_000


def test_a_total_params_banner_without_a_scale_or_in_a_sentence_is_not_read_scaled():
    assert "console_n_params" not in console_facts("the total params = many, about 10 M of them\n")


def _nanogpt_log(first_val: float, last_val: float) -> str:
    vals = [first_val + (last_val - first_val) * i / 9 for i in range(10)]
    return "".join(f"step {500 * i}: train loss {v - 0.05:.4f}, val loss {v:.4f}\n" for i, v in enumerate(vals))


def test_a_step_zero_eval_at_a_character_vocabularys_guess_that_halves_is_from_scratch(tmp_path: Path):
    (tmp_path / "train.log").write_text("total params = 10.79M\n" + _nanogpt_log(4.2820, 1.4719))
    profile = forensics.analyze(tmp_path).run_profile.to_dict()
    assert (profile["method"], profile["objective"], profile["model_params"]) == ("full", "pretrain", 10_790_000)


def test_a_step_zero_eval_that_does_not_halve_is_no_sign_of_random_weights(tmp_path: Path):
    (tmp_path / "train.log").write_text(_nanogpt_log(3.60, 3.05))  # a pretrained GPT-2 fine-tuned on Shakespeare
    assert forensics.analyze(tmp_path).run_profile.objective == "unknown"


def test_gpt2_simple_finetune_trains_every_weight_in_fp32():
    cells = [_cell("import gpt_2_simple as gpt2"),
             _cell("sess = gpt2.start_tf_sess()\ngpt2.finetune(sess, dataset='f.txt', model_name='345M', steps=1000)", 2)]
    said = code_values(cells, "")
    assert (said.get("method"), said.get("precision.default_fp32")) == ("full", True)


def test_gpt2_simple_with_only_the_transformer_layers_trained_is_not_said_full():
    cells = [_cell("import gpt_2_simple as gpt2"),
             _cell("gpt2.finetune(sess, dataset='f.txt', only_train_transformer_layers=True)", 2)]
    assert code_values(cells, "").get("method") is None


def test_an_evaluation_scripts_shell_line_leaves_the_trainers_fp32_default():
    cells = [_cell("from transformers import Trainer, TrainingArguments, AutoModelForCausalLM\n"
                   "model = AutoModelForCausalLM.from_pretrained('EleutherAI/pythia-70m')\n"
                   "args = TrainingArguments(output_dir='o', learning_rate=1e-5, max_steps=3)\n"
                   "Trainer(model=model, args=args).train()"),
             _cell("!python lm-evaluation-harness/main.py --model hf-causal --model_args pretrained=x", 2)]
    said = code_values(cells, "")
    assert said.get("precision.default_fp32") is True or said.get("precision.trainer_fp32") == "TrainingArguments"


def test_a_training_scripts_shell_line_still_hides_the_precision():
    cells = [_cell("from transformers import Trainer, TrainingArguments\n"
                   "args = TrainingArguments(output_dir='o')\nTrainer(model=m, args=args)"),
             _cell("!python train.py --do_eval --fp16", 2)]
    said = code_values(cells, "")
    assert "precision.trainer_fp32" not in said and "precision.default_fp32" not in said


def test_the_real_as57_profiles_agree():
    expected = {"MatthewZhang473_GPT_from_scratch": ("full", "pretrain", "unknown"),
                "Chrisgr1_openai-cookbook": ("full", "sft", "fp32"), "ra4wv2_CompQA": ("full", "sft", "fp32")}
    for case, (method, objective, precision) in expected.items():
        profile = forensics.analyze(CORPUS / case).run_profile
        assert (profile.method, profile.objective, profile.precision) == (method, objective, precision), case
