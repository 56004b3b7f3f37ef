"""Tests of the judgement of GRPO / DPO / PPO / reward-model runs (analyzers, causes, profile).

Preference / RL / reward-model runs the tool misjudged (review day 6): a GRPO loss is not a cross-entropy, a
DPO loss is not the one TRL's token accuracy goes with, a reward model's near-0 loss after one pass is not
memorization, a GRPO run with a fifth of its groups scoring apart still has a signal, and fp16 on is no
evidence that anything overflowed."""
from __future__ import annotations

import json
import math

import forensics
from forensics.causes import infer_causes
from forensics.config import RunConfig, Thresholds
from forensics.findings import Finding
from forensics.timeline import Timeline


# --- notebooks as Colab keeps them: a GRPOConfig cell, the Trainer's HTML table, trainer.evaluate()'s dict --------


def _code(source: str, outputs=()) -> dict:
    return {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": source, "outputs": list(outputs)}


def _table(rows: list[tuple[int, str]], steps: int) -> dict:
    body = "".join(f"    <tr>\n      <td>{step}</td>\n      <td>{loss}</td>\n    </tr>\n" for step, loss in rows)
    html = (f"\n    <div>\n      \n      <progress value='{steps}' max='{steps}' style='width:300px; height:20px; "
            f"vertical-align: middle;'></progress>\n      [{steps}/{steps} 1:23:28, Epoch 3/3]\n    </div>\n"
            "    <table border=\"1\" class=\"dataframe\">\n  <thead>\n <tr style=\"text-align: left;\">\n"
            "      <th>Step</th>\n      <th>Training Loss</th>\n    </tr>\n  </thead>\n  <tbody>\n"
            f"{body}  </tbody>\n</table><p>")
    return {"output_type": "display_data", "metadata": {},
            "data": {"text/html": html, "text/plain": "<IPython.core.display.HTML object>"}}


def _result(text: str) -> dict:
    return {"output_type": "execute_result", "execution_count": 1, "metadata": {}, "data": {"text/plain": text}}


def _grpo_notebook(path, losses: list[tuple[int, str]], evaluation: dict | None = None, extra_config: str = ""):
    steps = losses[-1][0]
    cells = [
        _code("from trl import GRPOTrainer, GRPOConfig\n"),
        _code("training_args = GRPOConfig(\n    output_dir=\"output\",\n    num_train_epochs=3,\n    num_generations=4,\n"
              f"    per_device_train_batch_size=4,\n    logging_steps=10,{extra_config}\n)\n"),
        _code("trainer = GRPOTrainer(model=\"HuggingFaceTB/SmolLM2-135M\", reward_funcs=[reward], args=training_args, "
              "train_dataset=ds)\n"),
        _code("trainer.train()", [_table(losses, steps), _result(
            f"TrainOutput(global_step={steps}, training_loss=0.0, metrics={{'train_runtime': 5025.6719, "
            f"'train_samples_per_second': 0.119, 'train_steps_per_second': 0.06, 'total_flos': 0.0, 'train_loss': 0.0, "
            "'epoch': 3.0})")]),
    ]
    if evaluation is not None:  # the evaluation's table (its columns titled as the notebook callback does), then its dict
        heads = ["Training Loss", "Validation Loss", "Step"] + [_title(k) for k in evaluation if k != "eval_loss"]
        cells_ = ["No log", f"{evaluation['eval_loss']:.6f}", "0"] + [f"{v:.6f}" for k, v in evaluation.items()
                                                                      if k != "eval_loss"]
        html = ("<table border=\"1\" class=\"dataframe\">\n  <thead>\n <tr style=\"text-align: left;\">\n"
                + "".join(f"      <th>{h}</th>\n" for h in heads) + "    </tr>\n  </thead>\n  <tbody>\n    <tr>\n"
                + "".join(f"      <td>{c}</td>\n" for c in cells_) + "    </tr>\n  </tbody>\n</table><p>")
        table = {"output_type": "display_data", "metadata": {},
                 "data": {"text/plain": "<IPython.core.display.HTML object>", "text/html": html}}
        cells.append(_code("trainer.evaluate()", [table, _result("{" + ",\n ".join(f"'{k}': {v!r}" for k, v in
                                                                                   evaluation.items()) + "}")]))
    nb = {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
          "nbformat": 4, "nbformat_minor": 5}
    path.mkdir(parents=True, exist_ok=True)
    (path / "grpo.ipynb").write_text(json.dumps(nb, indent=1))
    return path


def _title(key: str) -> str:
    """A metric's column title in the notebook callback's table: `eval_reward_std` -> `Reward Std`."""
    words = key.removeprefix("eval_").replace("_", " ").split(" ")
    return " ".join(w[:1].upper() + w[1:] for w in words)


def _evaluation(zero_std: float, reward: float, reward_std: float) -> dict:
    return {"eval_loss": 0.0, "eval_num_tokens": 0.0, "eval_completions/mean_length": 229.8925,
            "eval_rewards/combined_reward_function/mean": reward, "eval_rewards/combined_reward_function/std": reward_std,
            "eval_reward": reward, "eval_reward_std": reward_std, "eval_frac_reward_zero_std": zero_std,
            "eval_entropy": 3.417125198841095}


ZERO_LOSSES = [(s, "0.000000") for s in range(10, 310, 10)]


def test_grpo_loss_exactly_zero_beside_an_evaluation_without_spread_is_no_learning_signal(tmp_path):
    """A GRPO notebook whose table holds the loss alone, 0.000000 at all 30 logged steps, and whose trainer.evaluate()
    finds no group with a reward spread (eval_frac_reward_zero_std 1.0, eval_reward 0.0): every advantage was 0, the
    run never had a learning signal (broken), not a healthy run with nothing said."""
    a = forensics.analyze(_grpo_notebook(tmp_path / "dead", ZERO_LOSSES, _evaluation(1.0, 0.0, 0.0)))
    assert a.run_profile.objective == "rl"
    assert a.status == "broken"
    assert (a.first_incident.kind, a.first_incident.step) == ("no_learning_signal", 10)
    assert [c.cause for c in a.causes] == ["no_reward_spread"]


def test_grpo_loss_exactly_zero_beside_an_evaluation_with_spread_is_no_evidence_either_way(tmp_path):
    """The same table with an evaluation whose groups did score apart: a GRPO loss can print as 0 with advantages that
    sum to 0 in each group, so no dead signal; but a loss alone, with no reward, is no evidence it learned."""
    a = forensics.analyze(_grpo_notebook(tmp_path / "live", ZERO_LOSSES, _evaluation(0.25, 0.6, 0.3)))
    assert a.status == "warning"
    assert [f.kind for f in a.findings] == ["no_learning_evidence"]


GRPO_LOSSES = [-0.0008, -0.0017, -0.0010, -0.0001, -0.0003, 0.0008, -0.0002, 0.0006, 0.0003, 0.0004, 0.0007, 0.0009,
               0.0010, 0.0011, 0.0012, 0.0012, 0.0013, 0.0012, 0.0014, 0.0013, 0.0015, 0.0013, 0.0014, 0.0012, 0.0013,
               0.0014, 0.0013, 0.0015, 0.0012, 0.0013]


def test_a_grpo_loss_alone_is_not_judged_as_a_cross_entropy(tmp_path):
    """A GRPOConfig notebook whose table logs GRPO's loss alone, -0.0017 .. 0.0015 (no reward column): a GRPO loss is
    negative or near 0 by construction, so it is neither an impossible (negative) cross-entropy nor a memorized
    training set; with no reward logged there is no evidence the run learned (a warning from the first step)."""
    rows = [(4 * (i + 1), f"{v:.4f}") for i, v in enumerate(GRPO_LOSSES)]
    a = forensics.analyze(_grpo_notebook(tmp_path / "grpo", rows, extra_config="\n    fp16=True,"))
    assert a.run_profile.objective == "rl"
    kinds = {f.kind for f in a.findings}
    assert not kinds & {"impossible_loss", "memorization", "zero_loss_unexplained", "loss_collapse"}
    assert a.status == "warning"
    assert (a.first_incident.kind, a.first_incident.step) == ("no_learning_evidence", 4)
    assert "no reward" in a.first_incident.message


# --- TRL GRPO trainer_state.json: groups with and without a reward spread ---------------------------------------

def _grpo_state(path, live_steps: set[int], live_frac_zero_std: float, live_reward: float, steps: int = 100):
    history = []
    for s in range(1, steps + 1):
        live = s in live_steps
        history.append({
            "step": s, "epoch": s / 12600, "loss": 0.0002, "grad_norm": 1.2 if live else 0.0009,
            "learning_rate": 5e-6, "kl": 0.11, "num_tokens": 1500.0 * s,
            "completions/mean_length": 1400.0, "completions/clipped_ratio": 0.5,
            "rewards/format_reward/mean": 1.0, "rewards/format_reward/std": 0.0,
            "rewards/accuracy_reward/mean": -1.0 + (live_reward if live else 0.0),
            "rewards/accuracy_reward/std": 0.9 if live else 0.0,
            "reward": live_reward if live else 0.0, "reward_std": 0.9 if live else 0.0,
            "frac_reward_zero_std": live_frac_zero_std if live else 1.0,
        })
    path.mkdir(parents=True, exist_ok=True)
    (path / "trainer_state.json").write_text(json.dumps({"global_step": steps, "max_steps": steps,
                                                         "log_history": history}))
    return path


def test_a_fifth_of_the_groups_scoring_apart_is_a_weak_signal_not_none(tmp_path):
    """One prompt of 8 completions a step: all 8 wrong (frac_reward_zero_std 1.0, reward 0) at 81 of 100 steps, 1-4
    right at the other 19 (frac 0.0, reward 0.75). Those 19 groups had advantages and a gradient (grad_norm 1.2): the
    run had a weak signal, not none. The reward did not rise: no evidence it learned (warning), not broken."""
    live = {3, 8, 13, 14, 23, 31, 37, 44, 50, 55, 60, 64, 71, 77, 80, 86, 90, 95, 99}
    a = forensics.analyze(_grpo_state(tmp_path / "weak", live, 0.0, 0.75))
    assert "no_learning_signal" not in {f.kind for f in a.findings}
    assert a.status == "warning"
    assert a.first_incident.kind == "no_learning_evidence"


def test_a_few_groups_of_many_scoring_apart_is_still_no_signal(tmp_path):
    """Eight prompts a step: at the same 19 steps one group of eight scored apart (frac_reward_zero_std 0.875): under
    a tenth of all groups ever had a spread, the run had no learning signal (broken)."""
    live = {3, 8, 13, 14, 23, 31, 37, 44, 50, 55, 60, 64, 71, 77, 80, 86, 90, 95, 99}
    a = forensics.analyze(_grpo_state(tmp_path / "dead", live, 0.875, 0.09))
    assert a.status == "broken"
    assert a.first_incident.kind == "no_learning_signal"


# --- TRL DPO console: a pairwise loss beside mean_token_accuracy -------------------------------------------------

def test_dpo_loss_is_not_held_to_the_token_accuracy(tmp_path):
    """TRL's DPOTrainer console dicts (no step field), loss 0.688 -> ~0.1 with rewards/margins growing and
    rewards/accuracies 0.7 -> 0.95, beside a mean_token_accuracy that stays at 0.96: a DPO loss is not the token
    cross-entropy that accuracy goes with, so no loss_accuracy_mismatch; a DPO loss well under ln 2 is healthy."""
    lines = []
    for i in range(1, 41):
        loss = 0.1 + 0.588 * math.exp(-(i - 1) / 5)
        margin = 2.5 * (1 - math.exp(-(i - 1) / 5)) + 0.011
        acc = 0.95 - 0.25 * math.exp(-(i - 1) / 5)
        lines.append("{" + f"'loss': {loss:.4f}, 'grad_norm': {7.4 * math.exp(-i / 10) + 0.9:.4f}, "
                     f"'learning_rate': 5e-06, 'rewards/chosen': {-0.005 * i:.4f}, "
                     f"'rewards/rejected': {-0.005 * i - margin:.4f}, 'rewards/accuracies': {acc:.4f}, "
                     f"'rewards/margins': {margin:.4f}, 'logps/chosen': -29.3, 'logps/rejected': -35.1, "
                     f"'logits/chosen': -1.2, 'logits/rejected': -1.1, 'num_tokens': {12000.0 * i}, "
                     f"'mean_token_accuracy': {0.964 + 0.001 * (-1) ** i:.4f}, 'epoch': {i / 20:.2f}" + "}")
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    a = forensics.analyze(tmp_path)
    assert a.run_profile.objective == "preference"
    assert "loss_accuracy_mismatch" not in {f.kind for f in a.findings}
    assert a.status == "healthy"


# --- TRL RewardTrainer console: a pairwise loss near 0 after one pass --------------------------------------------

REWARD_LOSSES = [0.3377, 0.0276, 0.0124, 0.0085, 0.0051, 0.0050, 0.0049, 0.0046, 0.0035, 0.0045, 0.0023, 0.0027,
                 0.0032, 0.0021, 0.0029, 0.0022, 0.0020, 0.0043, 0.0008, 0.0005]


def _reward_log(path, epoch_of):
    lines = ["{" + f"'loss': {loss}, 'learning_rate': {1.41e-05 * (1 - i / 20):.4e}, 'epoch': {epoch_of(i):.2f}" + "}"
             for i, loss in enumerate(REWARD_LOSSES, 1)]
    lines.append("{'train_runtime': 475.6744, 'train_samples_per_second': 67.273, 'train_steps_per_second': 2.102, "
                 "'train_loss': 0.021836, 'epoch': %.2f}" % epoch_of(20))
    path.mkdir(parents=True, exist_ok=True)
    (path / "reward.log").write_text("\n".join(lines) + "\n")
    return path


def test_a_loss_near_zero_after_little_more_than_one_pass_is_not_memorization(tmp_path):
    """A reward model's pairwise loss 0.34 -> 0.0005 over 1,000 steps that cover 1.07 epochs: it was under 0.02 from
    the third log, inside the first pass, and the two points past the first epoch's end are over examples mostly seen
    once. The data is easy, not learned by heart: no memorization, and the falling loss shows it learned."""
    a = forensics.analyze(_reward_log(tmp_path / "one_pass", lambda i: 0.0535 * i))
    assert "memorization" not in {f.kind for f in a.findings}
    assert a.status == "healthy"


# --- causes: fp16 on is no evidence of an overflow ----------------------------------------------------------------

def test_fp16_is_not_blamed_for_a_reward_that_fell_back():
    """An fp16 GRPO whose reward fell back late (a reward_decline warning) with nothing non-finite, no loss-scale event
    and no spike: no 'FP16 overflow' cause, which the run's own data does not support; a NaN beside it still names it."""
    config = RunConfig()
    config.add("fp16", True, "training_args.bin")
    decline = Finding(kind="reward_decline", severity="warning", step=26, message="reward fell back", metric="reward")
    found = infer_causes(config, Timeline.empty(), [decline], [], Thresholds())
    assert "fp16_overflow" not in {c.cause for c in found}
    nan = Finding(kind="nonfinite_metric", severity="error", step=40, message="grad_norm NaN", metric="grad_norm")
    found = infer_causes(config, Timeline.empty(), [decline, nan], [], Thresholds())
    assert "fp16_overflow" in {c.cause for c in found}


# --- a hand-driven trl.PPOTrainer loop's own prints ---------------------------------------------------------------

def test_a_ppo_loop_printing_dashed_steps_is_read_as_rl(tmp_path):
    """A course notebook's PPO loop prints, for each step, `------ STEP N ------` and then `rewards/mean:`,
    `ppo/returns/mean:`, `objective/kl:` lines (a tab, the value, a tab, an explanation): read as the RL run it is,
    the reward rising from about -15 to -5 with the KL levelling off, healthy."""
    blocks = []
    for step in range(50):
        reward = -15.0 + 10.0 * step / 49 + (0.4 if step % 3 == 0 else -0.3)
        kl = 12.0 * (1 - math.exp(-step / 10))
        blocks.append(f"{'-' * 30} STEP {step} {'-' * 30}\n"
                      f"rewards/mean:\t{reward:.9f}\t<---- average reward over this batch (higher=better, noisy)\n"
                      f"ppo/returns/mean:\t{reward * 0.65:.9f}\t<---- model-estimated average discounted reward\n"
                      f"objective/kl:\t{kl:.9f}\t<---- how far we are from the original model (regularizer)\n")
    (tmp_path / "ppo.log").write_text("\n".join(blocks))
    a = forensics.analyze(tmp_path)
    assert a.timeline.series("rewards/mean").index.tolist() == list(range(50))
    assert a.run_profile.objective == "rl"
    assert a.status == "healthy"
    assert a.learning is not None and a.learning.metric == "rewards/mean"
