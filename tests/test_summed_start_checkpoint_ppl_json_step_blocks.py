"""Tests of a summed start (analyzers.fine_tune_start), checkpoints' validation perplexities
(console_lines.checkpoint_evals) and consoles of pretty-printed JSON step objects (console_lines.json_blocks).

Corpus batch AS65 found wrong: a summed loss read as a per-token start far above any vocabulary's guess though its
own validation loss never came under that guess (raquel-github_ivd), a TRL PPO console printing its metrics as
pretty-printed JSON dicts (BuonHobo_fake-gpt), a list of checkpoints' validation perplexities (Roushelfy_LLM_HW3) and
an LR dropped at a resume that logged its step twice (wadkisson_Personal-Chatbot)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

import forensics
from forensics.analyzers.fine_tune_start import detect_start_above_uniform_guess
from forensics.config import Thresholds
from forensics.ingest.console_lines.checkpoint_evals import checkpoint_eval_reader
from forensics.ingest.console_lines.json_blocks import step_record
from forensics.discover.log_hints import log_hinted

CORPUS = Path(__file__).parent / "realworld"


def _epochs(values):
    return pd.Series(dict(enumerate(values, start=1)), dtype="float64")


# a question generator's NLLLoss summed over a game's words: the train loss memorizes its way down to a few nats, the
# validation loss stays tens of nats (raquel-github_ivd's shape, 20 epochs)
_SUMMED_TRAIN = [148.4, 119.2, 85.6, 63.8, 48.1, 36.0, 27.9, 20.7, 15.2, 11.3, 8.7, 6.5, 4.9, 3.6, 3.2, 3.0, 2.9,
                 2.8, 2.7, 2.67]
_SUMMED_VALIDATION = [159.3, 130.2, 97.0, 75.1, 63.8, 60.9, 60.1, 59.9, 60.2, 61.0, 61.5, 62.4, 63.4, 64.7, 65.8,
                      66.9, 67.9, 68.5, 69.0, 69.1]


def _start_kinds(train, validation):
    metrics = {"loss": _epochs(train), "eval_loss": _epochs(validation)}
    return [f.kind for f in detect_start_above_uniform_guess(metrics, Thresholds(), "unknown", None)]


def test_a_start_far_above_any_guess_whose_eval_never_comes_under_it_is_a_sum_not_a_start():
    assert _start_kinds(_SUMMED_TRAIN, _SUMMED_VALIDATION) == []


def test_the_same_start_beside_an_eval_that_comes_under_the_guess_is_still_a_start_above_it():
    per_token_eval = [v / 20 for v in _SUMMED_VALIDATION]  # 7.97 -> 3.0: a per-token mean's level
    assert _start_kinds(_SUMMED_TRAIN, per_token_eval) == ["start_above_uniform_guess"]


def test_the_summed_question_generator_is_first_judged_overfitting():
    analysis = forensics.analyze(CORPUS / "raquel-github_ivd")
    assert analysis.status == "warning"
    assert analysis.first_incident.kind == "overfitting" and abs(analysis.first_incident.step - 30) <= 8
    assert "start_above_uniform_guess" not in [f.kind for f in analysis.findings]


_CHECKPOINT_PPLS = {10: 16.6158, 20: 16.1096, 30: 15.7774, 40: 15.8478, 50: 15.8203, 60: 15.7382}


def _checkpoint_list(base: str = "opt-350m valid 19.4890\ndetected_model valid 14.9962\n") -> str:
    return "Using device: cuda\n" + base + "".join(f"results/checkpoint-{n} valid {ppl}\n"
                                                   for n, ppl in _CHECKPOINT_PPLS.items())


def test_a_checkpoint_list_of_validation_perplexities_is_a_log_of_eval_losses_from_the_base_at_step_0(tmp_path):
    (tmp_path / "ppl.log").write_text(_checkpoint_list())
    frame = forensics.load_timeline(tmp_path).frame
    evals = frame[frame.metric == "eval_loss"].set_index("step").value
    assert list(evals.index) == [0, *_CHECKPOINT_PPLS]  # the comparison model (detected_model) left out
    assert abs(evals[0] - math.log(19.4890)) < 1e-9 and abs(evals[60] - math.log(15.7382)) < 1e-9


def test_the_checkpoints_of_a_run_that_learned_and_held_its_level_are_healthy():
    analysis = forensics.analyze(CORPUS / "Roushelfy_LLM_HW3")
    assert analysis.status == "healthy" and analysis.first_incident is None


def test_two_checkpoint_lines_in_a_note_are_no_log(tmp_path):
    note = "we kept results/checkpoint-10 valid 16.6\nand results/checkpoint-20 valid 16.1\nopt-350m valid 19.5\n"
    assert not log_hinted(note.encode())
    assert checkpoint_eval_reader(note) is None


def _sample(i: int, reward: float, indent: str = "") -> str:
    return (f'{indent}{{\n{indent}\t"id": {i},\n{indent}\t"question": "Why? {{not a brace}}",\n'
            f'{indent}\t"reward": {reward},\n{indent}\t"generation_duration": 18.2\n{indent}}}')


def _ppo_step(batch: int, kl: float, mean_reward: float, rewards: list[float]) -> str:
    samples = ",\n".join(_sample(batch * 10 + i, r, "\t\t") for i, r in enumerate(rewards))
    return ('{\n\t"reward_type": "RangeReward",\n'
            f'\t"batch_number": {batch},\n\t"attempt": "lora",\n\t"Kl": {kl},\n\t"policy_loss": -0.064,\n'
            f'\t"value_loss": 8.37,\n\t"total_loss": 0.77,\n\t"mean_reward": {mean_reward},\n'
            f'\t"instances": [\n{samples}\n\t]\n}}\n')


def _ppo_console(batches: list[tuple[float, float, list[float]]]) -> str:
    text = "Setting `pad_token_id` to `eos_token_id`:128001 for open-end generation.\n"
    for batch, (kl, mean_reward, rewards) in enumerate(batches):
        text += "".join(_sample(batch * 10 + i, r) + "\n" for i, r in enumerate(rewards))
        text += "UserWarning: The average ratio of batch (754.16) exceeds threshold 10.00. Skipping batch.\n"
        text += _ppo_step(batch, kl, mean_reward, rewards)
    return text


_BATCHES = [(0.0, 0.523, [1.2, 1.1, -0.15, 0.04]), (48.67, 0.054, [0.5, -0.15, -0.14, 0.006]),
            (38.92, 0.077, [0.6, -0.15, -0.14, 0.0])]


def test_a_console_of_pretty_printed_json_step_objects_gives_each_steps_metrics_at_its_batch_number(tmp_path):
    (tmp_path / "lora.txt").write_text(_ppo_console(_BATCHES))
    frame = forensics.load_timeline(tmp_path).frame
    wide = frame.pivot_table(index="step", columns="metric", values="value")
    assert list(wide.index) == [0, 1, 2]  # the samples' own objects name no step: only the steps'
    assert list(wide["reward"]) == [0.523, 0.054, 0.077] and list(wide["kl"]) == [0.0, 48.67, 38.92]
    spread = pd.Series([0.5, -0.15, -0.14, 0.006]).std()
    assert abs(wide.loc[1, "step_reward_std"] - spread) < 1e-12


def test_a_step_object_naming_no_mean_reward_takes_its_samples_mean():
    record = step_record(json.loads(_ppo_step(4, 1.0, 0.0, [0.2, 0.4]).replace('\t"mean_reward": 0.0,\n', "")))
    assert record.step == 4 and abs(dict(record.metrics)["reward"] - 0.3) < 1e-12


def test_json_objects_that_name_no_step_give_no_record_and_two_are_no_log():
    assert step_record(json.loads(_sample(1, 0.2))) is None
    two = "".join(_sample(i, 0.1) + "\n" for i in range(2))
    assert not log_hinted(("some notes\n" + two).encode())


def test_the_ppo_console_is_read_as_a_lora_rl_trl_run():
    analysis = forensics.analyze(CORPUS / "BuonHobo_fake-gpt")
    profile = analysis.run_profile.to_dict()
    assert (profile["method"], profile["objective"], profile["framework"]) == ("lora", "rl", "trl")


def test_an_opening_brace_of_no_json_object_takes_no_line_from_the_other_readers(tmp_path):
    lines = "".join(f"{{'loss': {2.0 - s / 100:.4f}, 'learning_rate': 1e-05, 'epoch': {s / 100}}}\n" for s in range(1, 21))
    (tmp_path / "train.log").write_text("{\n  not json\n" + lines + _sample(0, 0.1) + "\n")
    frame = forensics.load_timeline(tmp_path).frame
    assert len(frame[frame.metric == "loss"]) == 20
