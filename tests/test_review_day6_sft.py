"""SFT / fine-tune misreadings found on real runs (branch fix-al-sft): each test builds the kind of files the library
writes, runs the tool and asserts the right reading. Every test here FAILS on the code it was written against
(main at a6d3009), except those whose docstring says 'its bound' (a control that holds before and after); its
docstring names the change, the input, what the tool said and why that was wrong."""
from __future__ import annotations

import json
import math
import random

from tests.test_review_day5b import _analyze, _trainer_state  # (trainer_state.json's log_history, files beside it)


def _findings(a):
    return [(f.kind, f.severity, f.step, f.message[:160]) for f in a.findings]


# ---- change 1: a point logged every k steps is the mean of k steps: its steadiness is read per step --------------------


def _small_batch_sft(jumps: dict[int, float], logging_steps=5, points=280, seed=3):
    """An HF Trainer LoRA SFT in fp16 logged every `logging_steps`: loss 2.0 falling to about 0.65 within 12 points,
    then that level with 7% point-to-point noise (each point the mean of `logging_steps` batches of 4 examples),
    `jumps` {point: factor} single points above the level, eval every 40 points falling."""
    rng, rows = random.Random(seed), []
    for i in range(1, points + 1):
        step = i * logging_steps
        level = 0.65 + 1.35 * math.exp(-i / 4) - 0.0002 * i
        loss = level * (1 + 0.07 * rng.gauss(0, 1)) * jumps.get(i, 1.0)
        rows.append({"loss": round(loss, 4), "grad_norm": round(3.5 + 0.4 * rng.gauss(0, 1), 3),
                     "learning_rate": 3e-5 * (1 - i / points), "epoch": round(2 * i / points, 4), "step": step})
        if i % 40 == 0:
            rows.append({"eval_loss": round(0.75 - 0.0003 * i, 4), "epoch": round(2 * i / points, 4), "step": step})
    return rows


def test_single_point_jumps_of_a_small_batch_fine_tune_logged_every_5_steps_are_per_step_noise(tmp_path):
    """Change 1 (loss_spike `_relative_noise`). LLaMA-Factory/HF Trainer LoRA SFT, batch 1 x 4, logging every 5 steps
    (280 points), loss at about 0.65 with 7% point-to-point noise, three single points at 1.9x, 2.4x and 2.0x the
    level, each back at the next point (TobyYang7's Quant-GPT v1). The tool said warning, loss_spike at the first:
    a point-to-point spread under 8% was read as a big-batch, every-step loss (modded-nanogpt's 5.6% on 491,520
    tokens a step) where 1.5x is a spike. But each point is the mean of 5 steps, whose spread is sqrt(5) under one
    step's: per step the loss moves 16% - the noise of small batches, where a 2x point is one hard group of examples
    (VERDICTS.md: per-step noise on small batches is healthy). Right: healthy, and no fp16 cause named."""
    run = _trainer_state(tmp_path / "run", _small_batch_sft({70: 1.9, 95: 2.4, 250: 2.0}),
                         training_args__yaml="stage: sft\nfinetuning_type: lora\nfp16: true\nlogging_steps: 5\n")
    a = _analyze(run)
    assert a.status == "healthy", _findings(a)
    assert not a.causes, [c.title for c in a.causes]


def test_the_same_jumps_in_a_steady_log_of_every_step_are_still_spikes(tmp_path):
    """Change 1, its bound: the same 2x single points on a loss logged at every step with 3% point-to-point noise
    (a big-batch run, where one step moves 3%) are still loss spikes: read per step, that loss is steady."""
    rows = []
    rng = random.Random(5)
    for i in range(1, 401):
        level = 3.2 + 7.6 * math.exp(-i / 30)
        rows.append({"loss": round(level * (1 + 0.03 * rng.gauss(0, 1)) * {150: 2.0, 300: 1.9}.get(i, 1.0), 4),
                     "grad_norm": 0.4, "learning_rate": 6e-4, "epoch": round(i / 400, 4), "step": i})
    a = _analyze(_trainer_state(tmp_path / "run", rows))
    assert [f.step for f in a.findings if f.kind == "loss_spike" and f.severity == "warning"][:1] == [150], _findings(a)


# ---- change 1b: an fp16 overflow is a cause only where the run's data shows one -----------------------------------------


def test_fp16_on_is_no_cause_for_a_finite_loss_spike(tmp_path):
    """Change 1b (causes/precision.py fp16_overflow). An fp16 SFT whose loss spikes (0.7 -> 4x for six points, back
    afterwards), with every loss and grad_norm finite, no skipped step, no loss scale logged. The tool named 'FP16
    overflow (range max 65504)' as its possible cause on the one fact that fp16 was on: an overflow leaves an inf or
    NaN (or a skipped step, a fallen loss scale) behind, and nothing here did. Right: the spike stays a warning, and
    no fp16 cause is named."""
    jumps = {i: 4.0 for i in range(100, 106)}
    run = _trainer_state(tmp_path / "run", _small_batch_sft(jumps),
                         training_args__yaml="stage: sft\nfinetuning_type: lora\nfp16: true\nlogging_steps: 5\n")
    a = _analyze(run)
    assert a.status == "warning" and a.first_incident.kind == "loss_spike", _findings(a)
    assert "fp16_overflow" not in [c.cause for c in a.causes], [c.title for c in a.causes]


def test_fp16_overflow_still_named_where_a_dpo_s_rewards_went_nan(tmp_path):
    """Change 1b, its bound: an fp16 TRL DPO whose loss stays finite while rewards/margins and logps go NaN at two
    steps (HF's NaN filter keeps them out of the loss) shows an overflow's trace in its own data: the cause is kept."""
    rows = []
    for i in range(1, 61):
        bad = i in (30, 40)
        margin = float("nan") if bad else 0.1 + i / 60
        rows.append({"loss": round(0.69 - 0.3 * i / 60, 4), "rewards/chosen": float("nan") if bad else 0.1,
                     "rewards/rejected": -margin if not bad else float("nan"), "rewards/accuracies": 0.5 + i / 200,
                     "rewards/margins": margin, "logps/chosen": float("nan") if bad else -100.0,
                     "logps/rejected": -120.0, "learning_rate": 5e-6, "epoch": round(i / 60, 4), "step": i * 10})
    run = _trainer_state(tmp_path / "run", rows, training_args__yaml="stage: dpo\nfp16: true\n")
    a = _analyze(run)
    assert any(f.kind == "nonfinite_metric" for f in a.findings), _findings(a)
    assert "fp16_overflow" in [c.cause for c in a.causes], [c.title for c in a.causes]


# ---- change 2: a first point alone above a flat log is a start-up transient, not learning -------------------------------


def _continued_pretraining(drift: float, points=160, seed=7):
    """A full continued pre-training logged every step: the first step's loss 2.10 with grad_norm 22.3 (the weights as
    loaded, the first batch), then from the second step on a level of 1.62 with 5% noise that moves by `drift` (a
    share of the level) over the run, grad_norm about 0.6, LR 3e-6 cosine, no eval."""
    rng, rows = random.Random(seed), []
    for i in range(1, points + 1):
        level = 1.62 * (1 - drift * i / points)
        loss = 2.1016 if i == 1 else level * (1 + 0.05 * rng.gauss(0, 1))
        rows.append({"loss": round(loss, 4), "grad_norm": 22.3 if i == 1 else round(0.6 + 0.05 * rng.gauss(0, 1), 3),
                     "learning_rate": 3e-6 * (1 + math.cos(math.pi * i / points)) / 2, "epoch": round(i / points, 4),
                     "step": i})
    return rows


def test_a_flat_loss_after_a_high_first_step_shows_no_learning(tmp_path):
    """Change 2 (learning_evidence `_fell`, its first-point branch). A LLaMA-Factory continued pre-training of a 6B
    base logged every step: 2.10 at step 1 (grad_norm 22.3), then 1.62 +- 5% to the end, its tenths' medians flat
    (yangjunx21's cpt4ta: eighth medians 1.628 ... 1.646 over 1053 steps). The tool said healthy: the fall from the
    first point to the last tenth (23%) was read as learning. That first point stands alone: the second is already at
    the level the log ends at, and nothing after it falls: a start-up transient, not a loss the run brought down.
    Right: warning no_learning_evidence (VERDICTS.md: no healthy without evidence it learned)."""
    a = _analyze(_trainer_state(tmp_path / "run", _continued_pretraining(drift=0.0)))
    assert a.status == "warning" and a.first_incident.kind == "no_learning_evidence", _findings(a)
    assert "about 2.1" not in a.first_incident.message, a.first_incident.message  # the level held, not step 1's


def test_a_high_first_step_followed_by_a_slow_fall_is_still_learning(tmp_path):
    """Change 2, its bound: the same start (2.10 at step 1, then 1.62) with the loss going on down 10% over the run
    (ljh696's MetaMath: 1.04, then 0.64 falling to 0.57) learned: the fall from the first step continues after it."""
    a = _analyze(_trainer_state(tmp_path / "run", _continued_pretraining(drift=0.10)))
    assert a.status == "healthy", _findings(a)


# ---- change 3: an eval loss several times the training loss from the first epoch on ------------------------------------


def _epochs_of_lora(evals: list[float]):
    """An HF Trainer LoRA run of 3 epochs = 168 steps, logging every 20 steps (loss 0.54 -> 0.51), an eval at each
    epoch's end with the given losses."""
    train = [0.541, 0.5337, 0.5772, 0.5262, 0.5239, 0.5342, 0.5072, 0.5143]
    rows = [{"loss": v, "grad_norm": 0.06, "learning_rate": 5e-5 * (1 - 20 * (i + 1) / 168),
             "epoch": round(3 * 20 * (i + 1) / 168, 2), "step": 20 * (i + 1)} for i, v in enumerate(train)]
    rows += [{"eval_loss": v, "eval_runtime": 101.8, "epoch": float(i + 1), "step": 56 * (i + 1)}
             for i, v in enumerate(evals)]
    return sorted(rows, key=lambda r: r["step"])


def test_an_eval_loss_four_times_the_training_loss_from_the_first_epoch_is_a_mismatch(tmp_path):
    """Change 3 (train_eval_gap `detect_eval_above_train`). CHEHHAO's Qwen2.5-0.5B LoRA: training loss 0.51-0.58 at
    every log, eval loss 2.146, 2.103, 2.088 at the three epoch ends, four times it from the first eval on. The tool
    said healthy: it compares the two only for a training loss far above the eval loss. Within the first epoch every
    batch is scored before the model trained on it, so the training loss is a held-out loss too; an eval loss 4x it
    that falls (no overfitting) says the two are not computed alike or the sets differ. Right: warning,
    train_eval_mismatch at the first evaluation."""
    a = _analyze(_trainer_state(tmp_path / "run", _epochs_of_lora([2.1459, 2.1029, 2.0885])))
    assert a.status == "warning", _findings(a)
    assert [(f.step, f.severity) for f in a.findings if f.kind == "train_eval_mismatch"] == [(56, "warning")], \
        _findings(a)


def test_an_eval_loss_that_rises_above_the_training_loss_is_left_to_overfitting(tmp_path):
    """Change 3, its bound: an eval loss that rises from 2.1 (overfitting's story) or that starts close to the
    training loss draws no train_eval_mismatch."""
    for evals in ([2.10, 2.20, 2.35], [0.60, 0.58, 0.57]):
        a = _analyze(_trainer_state(tmp_path / f"run{evals[0]}", _epochs_of_lora(evals)))
        assert "train_eval_mismatch" not in [f.kind for f in a.findings], _findings(a)


# ---- change 4: a start several times any uniform guess, by a loss that later comes down to per-token levels ------------


def _hf_console(folder, losses, evals):
    """An HF Trainer console (the dict lines it prints every logging_steps=5): NaN grad_norm at the first line (an
    fp16 scaler's first skip), eval lines every 100 points."""
    folder.mkdir(parents=True, exist_ok=True)
    lines, n = [], len(losses)
    for i, loss in enumerate(losses):
        grad = "nan" if i == 0 else f"{20.0 if i < 40 else 1.5}"
        lines.append(f"{{'loss': {loss}, 'grad_norm': {grad}, 'learning_rate': {5e-5 * (i + 1) / n}, "
                     f"'epoch': {round(3 * (i + 1) / n, 2)}}}")
        if (i + 1) % 100 == 0:
            lines.append(f"{{'eval_loss': {evals[(i + 1) // 100 - 1]}, 'eval_runtime': 12.6, 'epoch': "
                         f"{round(3 * (i + 1) / n, 2)}}}")
    (folder / "output.log").write_text("\n".join(lines) + "\n")
    return folder


def test_a_first_loss_several_times_any_uniform_guess_that_falls_to_per_token_levels_is_a_bad_start(tmp_path):
    """Change 4 (fine_tune_start `_far_above_any_guess`). olavodd42's GPT-2 chatbot
    through 8-bit layers, an HF Trainer console with no model config: loss 88.7 at the first log, falling over 80
    points to ln(vocab) and on to about 3, the eval loss 7.4 -> 3.0 with it. The tool said only skipped_steps (the
    first NaN grad_norm): no vocabulary known, the method not an adapter, the start drew nothing. 88.7 is nearly 7x
    the uniform guess of the largest vocabulary in use (ln 440k = 13), and the same logged loss comes down to 3, as a
    per-token mean does (no sum): the model at its start predicted the targets far worse than chance. Right:
    warning, start_above_uniform_guess at the first step, named before the scaler's skip at that step."""
    rng = random.Random(11)
    losses = [round(88.7 * math.exp(-i / 18) + 3.0 + 0.1 * rng.gauss(0, 1), 4) for i in range(400)]
    a = _analyze(_hf_console(tmp_path / "run", losses, [7.44, 3.68, 3.2, 3.03]))
    assert a.status == "warning", _findings(a)
    assert (a.first_incident.kind, a.first_incident.step) == ("start_above_uniform_guess", a.findings[0].step), \
        _findings(a)


def test_a_summed_loss_far_above_the_guess_that_stays_there_is_not_called_a_bad_start(tmp_path):
    """Change 4, its bound: a hand-written loop's loss summed over a batch's response tokens (91 -> 55, Tianshi-Xu's
    CS336 SFT) never comes down to a per-token level: no start_above_uniform_guess, the model's start is not judged."""
    rng = random.Random(2)
    losses = [round(91 - 36 * i / 400 + 8 * rng.gauss(0, 1), 3) for i in range(400)]
    a = _analyze(_hf_console(tmp_path / "run", losses, [80.0, 70.0, 62.0, 55.0]))
    assert "start_above_uniform_guess" not in [f.kind for f in a.findings], _findings(a)


# ---- change 5: TRL named by the card it tags and by the warnings its trainers raise ------------------------------------

_TRL_CARD = """---
library_name: peft
license: apache-2.0
tags:
{tags}
base_model: mistralai/Mistral-7B-Instruct-v0.2
model-index:
- name: out
  results: []
---

<!-- This model card has been generated automatically according to the information the Trainer had access to. You
should probably proofread and complete it, then remove this comment. -->

# out

## Training procedure

### Training results

| Training Loss | Epoch | Step | Validation Loss |
|:-------------:|:-----:|:----:|:---------------:|
| 1.5           | 0.5   | 50   | 1.47            |
"""


def _tensorboard_sft(folder, card_tags):
    """A TRL SFTTrainer output folder before TRL 0.12: runs/<date>/ TensorBoard events (train/loss, train/grad_norm,
    train/learning_rate every 10 steps, eval/loss at 25 and 50) written by torch's SummaryWriter, an adapter_config,
    and the README.md card the Trainer writes, its header tagged as TRL's trainer tags it."""
    from torch.utils.tensorboard import SummaryWriter

    folder.mkdir(parents=True)
    w = SummaryWriter(log_dir=str(folder / "runs" / "Mar05_14-37-58_host"))
    for step, loss in zip(range(10, 60, 10), (2.114, 1.730, 1.585, 1.543, 1.508)):
        w.add_scalar("train/loss", loss, step)
        w.add_scalar("train/grad_norm", 1.2, step)
        w.add_scalar("train/learning_rate", 2e-4, step)
    w.add_scalar("eval/loss", 1.549, 25)
    w.add_scalar("eval/loss", 1.470, 50)
    w.close()
    (folder / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 16, "task_type": "CAUSAL_LM",
                                                             "base_model_name_or_path": "mistralai/Mistral-7B"}))
    (folder / "README.md").write_text(_TRL_CARD.format(tags="\n".join(f"- {t}" for t in card_tags)))
    return folder


def test_a_model_card_tagged_trl_names_trl(tmp_path):
    """Change 5 (config_files `_card_tagger`). rohith4444's and ajvanderwal's TRL SFTTrainer folders: a README.md card
    whose header is tagged `trl`, `sft`, `generated_from_trainer` (TRL's trainers add their `_tag_names`), with the
    Trainer's '### Training results' table. The tool said hf_trainer: it read the Trainer's table and not the tags.
    Right: trl (a TRL trainer is a Trainer, and its card the Trainer's, tagged by TRL)."""
    a = _analyze(_tensorboard_sft(tmp_path / "run", ["trl", "sft", "generated_from_trainer"]))
    assert a.run_profile.framework == "trl", a.run_profile.to_dict()


def test_a_card_tagged_by_llama_factory_and_trl_is_llama_factory_s(tmp_path):
    """Change 5, its bound: LLaMA-Factory's DPO stage is TRL's DPOTrainer underneath, and its card carries TRL's tags
    after (or before) its own: the card is LLaMA-Factory's, whatever the order of the tags."""
    a = _analyze(_tensorboard_sft(tmp_path / "run", ["trl", "dpo", "llama-factory", "lora", "generated_from_trainer"]))
    assert a.run_profile.framework == "llamafactory", a.run_profile.to_dict()


def test_warnings_from_trl_s_sft_trainer_module_name_trl_and_sft(tmp_path):
    """Change 5 (stdout `console_trl_trainer`). TerryTong-Git's W&B console of an alignment-handbook run_sft.py: HF
    Trainer dict lines, and warnings raised from TRL's own module ('.../site-packages/trl/trainer/sft_trainer.py:158:
    UserWarning: You passed `model_init_kwargs` to the SFTTrainer ...'). The tool said framework hf_trainer (the
    Trainer's dict lines) and objective unknown. The warning is raised by SFTTrainer's own code: TRL's SFTTrainer ran.
    Right: framework trl, objective sft."""
    run = tmp_path / "run" / "files"
    run.mkdir(parents=True)
    warn = ("/opt/conda/envs/train/lib/python3.10/site-packages/trl/trainer/sft_trainer.py:{}: UserWarning: You passed "
            "a `{}` argument to the SFTTrainer, the value you passed will override the one in the `SFTConfig`.\n"
            "  warnings.warn(\n")
    lines = [warn.format(195, "packing"), warn.format(283, "max_seq_length")]
    lines += [f"{{'loss': {1.15 - 0.15 * i / 40:.4f}, 'grad_norm': 0.6, 'learning_rate': 1e-05, 'epoch': {i / 40:.2f}}}\n"
              for i in range(1, 41)]
    (run / "output.log").write_text("".join(lines))
    profile = _analyze(tmp_path / "run").run_profile
    assert (profile.framework, profile.objective) == ("trl", "sft"), profile.to_dict()


def test_an_eval_loss_above_the_training_loss_is_not_put_down_to_a_summed_training_loss(tmp_path):
    """Change 3, its cause: with gradient_accumulation_steps 4 in the run's arguments, an eval loss four times the
    training loss drew 'the training loss was logged summed over 4 accumulation steps': a summed training loss sits
    above the eval loss, never under it. Right: no such cause."""
    run = _trainer_state(tmp_path / "run", _epochs_of_lora([2.1459, 2.1029, 2.0885]),
                         args__json=json.dumps({"gradient_accumulation_steps": 4}))
    a = _analyze(run)
    assert any(f.kind == "train_eval_mismatch" for f in a.findings), _findings(a)
    assert "accumulation_scaled_loss" not in [c.cause for c in a.causes], [c.title for c in a.causes]
