"""Lines of hand-written training loops met in the real notebooks of corpus batches AI1 to AI4: a step line whose
loss is named with an underscore (`train_loss`), and the model sizes such loops print in millions."""
from __future__ import annotations

import pytest

import forensics
from forensics.ingest.stdout import console_facts
from forensics.discover.run import discover


def _dpo_loop_lines(n: int = 12) -> str:
    """AnandaRimal/PocketCoder's DPO loop: `step N: train_loss T | val_loss V | val_acc A% | val_margin M`."""
    return "".join(f"step {50 * k}: train_loss {0.69 - 0.03 * k:.4f} | val_loss {0.52 - 0.02 * k:.4f} | "
                   f"val_acc {79.7 + k / 2:.1f}% | val_margin {0.5 + k / 5:.4f}\n" for k in range(1, n + 1))


def test_a_step_line_naming_its_loss_train_loss_makes_the_file_a_log(tmp_path):
    (tmp_path / "train.log").write_text(_dpo_loop_lines())
    assert [p.name for p in discover(tmp_path).text_logs] == ["train.log"]
    result = forensics.analyze(tmp_path)
    assert result.status == "healthy"
    assert len(result.timeline.series("eval_loss")) == 12


def test_one_such_line_in_prose_is_still_no_log(tmp_path):
    """The hint needs three lines of a loop: a note quoting one is not a training log."""
    (tmp_path / "notes.txt").write_text("We saw step 50: train_loss 0.6760 and then moved on to the next idea.\n")
    assert discover(tmp_path).text_logs == []


@pytest.mark.parametrize("line, params", [
    ("0.209729 M parameters", 209_729),  # Karpathy's gpt-dev: print(sum(p.numel() ...)/1e6, 'M parameters')
    ("The model has a total of 2.11 M parameters.", 2_110_000),
    ("Loaded SFT model from Ananda100/100m-sftd-python - 95.87M params (policy trainable, reference frozen)",
     95_870_000),
    ("1.5B parameters", 1_500_000_000),
])
def test_a_model_size_printed_in_millions_or_billions_is_the_models_size(line, params):
    assert console_facts(line + "\n")["console_params_said"] == params


@pytest.mark.parametrize("line", ["Trainable: 4.19M params", "4.19M trainable params (LoRA)", "QLoRA 4.19M params",
                                  "PEFT model: 4.19M params",
                                  "LoRA adapters: 4.19M params", "I trained 5 m params on my laptop"])
def test_a_count_that_names_a_part_of_the_model_or_is_prose_is_not_its_size(line):
    assert "console_params_said" not in console_facts(line + "\n")


def _dpo_table_state(eval_loss) -> dict:
    """A DPO run whose training rows hold the loss alone and whose evaluations hold the pair metrics
    (cyanisthecolor/Contradicting-Preference's Trainer table, batch AI1): loss 0.595 -> ~0.001."""
    train = [0.5952, 0.2757, 0.095, 0.1316, 0.0886, 0.1228, 0.0483, 0.0723, 0.0188, 0.0266, 0.0108, 0.0003, 0.0024,
             0.0005, 0.0003, 0.001, 0.0028, 0.0043, 0.0002, 0.001]
    history = []
    for k, (loss, held_out) in enumerate(zip(train, eval_loss), 1):
        history.append({"loss": loss, "epoch": k / 10, "step": 10 * k})
        history.append({"eval_loss": held_out, "eval_rewards/accuracies": 1.0, "eval_rewards/margins": 5 + k / 2,
                        "epoch": k / 10, "step": 10 * k})
    return {"global_step": 200, "max_steps": 200, "log_history": history}


def test_a_dpo_loss_near_zero_whose_held_out_pairs_follow_it_is_no_memorization(tmp_path):
    import json
    eval_loss = [0.474 * 0.75 ** k for k in range(20)]  # the held-out pairs separated as far
    (tmp_path / "trainer_state.json").write_text(json.dumps(_dpo_table_state(eval_loss)))
    result = forensics.analyze(tmp_path)
    assert result.status == "healthy", [(f.kind, f.step) for f in result.findings]
    assert result.run_profile.objective == "preference"


_PHUOC_DPO = [0.7443, 0.7853, 0.8, 0.752, 0.7804, 0.6884, 0.7769, 0.8192, 0.78, 0.7528, 0.7377, 0.7657, 0.8349,
              0.7712, 0.7668, 0.7875, 0.8227, 0.8362, 0.8104, 0.7706, 0.8302, 0.7577, 0.8521, 0.8571, 0.8507]


def test_a_hand_written_dpo_loss_that_never_went_under_ln2_never_learned(tmp_path):
    """PhuocThuan246's mT5 DPO loop (batch AI2): `Step N/500 | Loss = X` every 20 steps, 0.744 -> 0.851."""
    run = tmp_path / "mt5_dpo"
    run.mkdir()
    (run / "train.log").write_text("".join(f"Step {20 * k}/500 | Loss = {v}\n" for k, v in enumerate(_PHUOC_DPO)))
    result = forensics.analyze(run)
    assert (result.run_profile.objective, result.run_profile.algorithm) == ("preference", "dpo")
    assert result.status == "broken"
    assert (result.first_incident.kind, result.first_incident.step) == ("never_learned", 0)


@pytest.mark.parametrize("losses", [
    [0.6931 - 0.0015 * k for k in range(25)],  # a slow descent: 0.693 -> 0.657
    [0.6931 * 0.93 ** k for k in range(25)],  # a DPO that learns: 0.693 -> 0.13
])
def test_a_hand_written_dpo_loss_that_falls_under_ln2_learned(losses):
    from forensics.analyzers.never_learned import detect_dpo_loss_never_under_chance
    from forensics.config import Thresholds
    import pandas as pd

    loss = pd.Series(losses, index=range(0, 20 * len(losses), 20))
    assert detect_dpo_loss_never_under_chance({"loss": loss}, Thresholds()) == []


_LOOP = ("data = torch.tensor(encode(text), dtype=torch.long)\nmodel = BigramLanguageModel()\n"
         "optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)\nfor it in range(3000):\n"
         "    logits, loss = model(xb, yb)\n    optimizer.zero_grad(set_to_none=True)\n    loss.backward()\n"
         "    optimizer.step()\n")


@pytest.mark.parametrize("cells, precision", [
    (["!pip install torch", "!wget https://example.org/input.txt", _LOOP], "fp32"),  # Karpathy's gpt-dev
    # (autocast is no fp32; since review day 10 its dtype is read: bf16)
    ([_LOOP.replace("    logits, loss", "    with torch.autocast('cuda', dtype=torch.bfloat16):\n        logits, loss")],
     "bf16"),
    ([_LOOP.replace("BigramLanguageModel()", "BigramLanguageModel().half()")], "unknown"),
    (["!python train.py --compile=False", _LOOP], "unknown"),  # a program trains too: its precision is its own
    (["args = TrainingArguments(output_dir='out', learning_rate=5e-5)\ntrainer = Trainer(model=model, args=args)\n"
      "trainer.train()"], "fp32"),
    (["args = TrainingArguments(**config['training'])\ntrainer = Trainer(model=model, args=args)\ntrainer.train()"],
     "unknown"),
])
def test_a_notebook_that_trains_in_its_own_code_asking_for_nothing_below_float32_trains_in_fp32(tmp_path, cells, precision):
    from support.review_runs import training_notebook

    assert forensics.analyze(training_notebook(tmp_path / "nb", cells)).run_profile.precision == precision


_GPT_CLASS = ("class GPTLanguageModel(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.head = nn.Linear(64, 65)\n")


@pytest.mark.parametrize("cells, objective", [
    ([_GPT_CLASS, "model = GPTLanguageModel()\n" + _LOOP.split("\n", 2)[2]], "pretrain"),  # Karpathy's gpt-dev
    (["from previous_chapters import GPTModel\nmodel = GPTModel(GPT_CONFIG_124M)\n" + _LOOP.split("\n", 2)[2]],
     "unknown"),  # its own module's class: a backbone may be loaded there, out of the notebook's sight
    (["config = GPT2Config(n_layer=4)\nmodel = GPT2LMHeadModel(config)\n" + _LOOP.split("\n", 2)[2]], "pretrain"),
    ([_GPT_CLASS, "model = GPTLanguageModel()\nmodel.load_state_dict(torch.load('ckpt.pt'))\n"
      + _LOOP.split("\n", 2)[2]], "unknown"),  # trained weights loaded: a run that goes on
    ([_GPT_CLASS, "# model.load_state_dict(torch.load('ckpt.pt'))\nmodel = GPTLanguageModel()\n"
      + _LOOP.split("\n", 2)[2]], "pretrain"),  # a commented-out load is none
    (["model = AutoModelForCausalLM.from_pretrained('gpt2')\n" + _LOOP.split("\n", 2)[2]], "unknown"),
])
def test_a_notebook_that_builds_its_model_and_loads_no_weights_trains_from_scratch(tmp_path, cells, objective):
    from support.review_runs import training_notebook

    profile = forensics.analyze(training_notebook(tmp_path / "nb", cells)).run_profile
    assert profile.objective == objective
    assert profile.method == ("full" if objective == "pretrain" else profile.method)


def test_pairs_memorized_is_dated_where_the_loss_went_to_zero_though_the_epoch_is_logged_only_at_the_end():
    """kat-le's Unsloth DPO on two pairs (batch AI7): 500 steps, the table has no Epoch column and the closing
    TrainOutput says epoch 500; the loss is exactly 0 from step 15. Dated at the last step before (every pass but
    the last had no epoch)."""
    import pandas as pd

    from forensics.analyzers.collapse import detect_loss_collapse
    from forensics.config import Thresholds

    steps = list(range(5, 501, 5))
    loss = pd.Series([0.0018, 0.0002] + [0.0] * (len(steps) - 2), index=steps)
    margins = pd.Series([6.4 + k / 8 for k in range(len(steps))], index=steps)
    (found,) = detect_loss_collapse({"loss": loss, "rewards/margins": margins, "epoch": pd.Series([500.0], index=[500])},
                                    Thresholds())
    assert found.kind == "memorization" and found.step <= 15


@pytest.mark.parametrize("cells, precision", [
    (["model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen1.5-1.8B', torch_dtype=torch.bfloat16)\n"
      "args = TrainingArguments(output_dir='out', learning_rate=2e-4)\ntrainer = Trainer(model=model, args=args)\n"
      "trainer.train()"], "bf16"),  # weiyuli20 (batch AI8): the weights themselves in bfloat16
    (["model = AutoModelForCausalLM.from_pretrained('x', quantization_config=bnb)\n"
      "args = TrainingArguments(output_dir='out', fp16=False, bf16=False)\ntrainer = SFTTrainer(model=model, args=args)\n"
      "trainer.train()", "base = AutoModelForCausalLM.from_pretrained('x', torch_dtype=torch.float16)\n"
      "merged = PeftModel.from_pretrained(base, 'out').merge_and_unload()"], "fp32"),  # a reload to merge after
])
def test_a_model_loaded_in_half_precision_with_no_mixed_precision_flag_trains_in_it(tmp_path, cells, precision):
    from support.review_runs import training_notebook

    assert forensics.analyze(training_notebook(tmp_path / "nb", cells)).run_profile.precision == precision
