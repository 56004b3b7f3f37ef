"""An adapter fine-tune whose first loss is above the uniform guess over its vocabulary (start_above_uniform_guess).

Must fire: satishparaddi's first QLoRA attempt on Llama-3.2-1B (tests/realworld): 12.05 at step 10 above
ln(128256) = 11.76, a plateau at about 5.3 and mean_token_accuracy 0.27 -> 0.28. Must stay silent: its rerun
(1.69 -> 0.53), ms-swift's first-step blip (20.5 at step 1, 0.24 by step 20, token_acc 0.0 -> 0.93, judged
healthy by the shared corpus's judge), a full fine-tune, a classifier, and a training loss scaled by
gradient accumulation (its start says nothing about the model).
"""
from __future__ import annotations

import json
import math

import pandas as pd
import pytest

import forensics
from forensics.analyzers.fine_tune_start import detect_start_above_uniform_guess
from forensics.config import Thresholds

PLATEAU = {10: 12.05, 20: 9.80, 30: 7.39, 40: 6.94, 50: 5.97, 60: 5.6, 70: 5.45, 80: 5.36, 90: 5.40, 100: 5.40,
           110: 5.13, 120: 5.39, 130: 5.27}
FLAT_ACCURACY = {s: 0.27 + s / 13000 for s in PLATEAU}
BLIP = {1: 20.53, 10: 3.95, 20: 0.237, 30: 0.27, 40: 0.16, 50: 0.15, 60: 0.16, 70: 0.14, 80: 0.13, 90: 0.15}


def _run(loss, **others):
    return {"loss": pd.Series(loss, dtype="float64"), **{k: pd.Series(v, dtype="float64") for k, v in others.items()}}


def test_a_qlora_start_above_ln_vocab_that_plateaus_is_a_warning():
    found = detect_start_above_uniform_guess(_run(PLATEAU, mean_token_accuracy=FLAT_ACCURACY), Thresholds(),
                                             "qlora", 128256)
    assert [(f.kind, f.severity, f.step) for f in found] == [("start_above_uniform_guess", "warning", 10)]
    assert found[0].evidence["uniform_guess_loss"] == pytest.approx(math.log(128256))
    assert "QLoRA" in found[0].message and "mean_token_accuracy stayed at 0.27" in found[0].message.replace("0.2708", "0.27")


def test_without_the_vocabulary_only_a_start_above_any_tokenizers_guess_counts():
    assert detect_start_above_uniform_guess(_run(PLATEAU), Thresholds(), "lora", None) == []  # 12.05 < ln(440k)
    above = {s: v + 2 for s, v in PLATEAU.items()}  # 14.05
    assert [f.kind for f in detect_start_above_uniform_guess(_run(above), Thresholds(), "lora", None)] == [
        "start_above_uniform_guess"]


def test_a_start_still_at_chance_at_the_next_point_is_no_blip_though_the_loss_then_fell():
    """mycguo's GPT-2 LoRA (tests/realworld): 11.0 at step 10, 10.42 at 20, 9.61 at 30 (ln 50257 = 10.82), then
    0.65 by step 60 with token accuracy 0.10 -> 0.87: the base was at chance for two logging windows, so the fall
    that followed does not excuse the start (unlike a first step's blip, whose next point is already low)."""
    loss = {10: 10.996, 20: 10.42, 30: 9.61, 40: 5.34, 50: 1.88, 60: 0.89, 70: 0.66, 80: 0.64, 90: 0.65, 100: 0.66}
    accuracy = {10: 0.10, 20: 0.12, 30: 0.2, 40: 0.4, 50: 0.7, 60: 0.85, 100: 0.87}
    found = detect_start_above_uniform_guess(_run(loss, mean_token_accuracy=accuracy), Thresholds(), "lora", 50257)
    assert [(f.kind, f.step) for f in found] == [("start_above_uniform_guess", 10)]
    assert "still 10.42 at step 20, then down to about" in found[0].message
    assert "only came down" not in found[0].message


def test_a_first_window_above_the_guess_is_a_blip_only_where_the_next_is_at_a_fine_tunes_level():
    """Amankumar10's TinyLlama LoRA (tests/realworld): 12.36 over steps 1-10 (ln 32000 = 10.37), 4.88 at step 20,
    then 1.2 and 0.10-0.13 (labels that are mostly padding): the second window still 4.9 nats up, so no blip, a
    warning. tasfiahmrinmoyee's Gemma 3 LoRA (judged healthy): 14.75 over steps 1-50, then 1.22 at step 100, 0.54 at
    the end with the eval loss falling: the next window is at a fine-tune's level, a start-up blip."""
    padded = {10: 12.36, 20: 4.88, 30: 1.20, 40: 0.5, 50: 0.2, 60: 0.13, 70: 0.12, 80: 0.11, 90: 0.10, 100: 0.11}
    found = detect_start_above_uniform_guess(_run(padded), Thresholds(), "lora", 32000)
    assert [(f.kind, f.step) for f in found] == [("start_above_uniform_guess", 10)]
    gemma = {50: 14.75, 100: 1.217, 150: 0.773, 200: 0.89, 250: 0.79, 300: 0.72, 400: 0.66, 600: 0.62, 800: 0.58,
             1000: 0.54}
    assert detect_start_above_uniform_guess(_run(gemma), Thresholds(), "lora", None) == []


@pytest.mark.parametrize("metrics, method, task_type", [
    (_run({10: 1.69, 20: 1.2, 30: 0.9, 40: 0.53}), "qlora", None),  # the rerun: an ordinary start
    (_run(BLIP, token_acc={1: 0.0, 10: 0.55, 20: 0.93, 90: 0.94}), "lora", None),  # a first step's blip
    (_run(PLATEAU), "full", None),  # a full fine-tune may start from a fresh head
    (_run(PLATEAU), "unknown", None),
    (_run(PLATEAU), "lora", "SEQ_CLS"),  # a classifier's uniform guess is ln(labels), not ln(vocab)
    (_run(PLATEAU, eval_loss={20: 1.2, 60: 0.7, 100: 0.6, 130: 0.6}), "lora", None),  # train loss 8x eval
])
def test_ordinary_starts_and_other_kinds_of_run_raise_nothing(metrics, method, task_type):
    assert detect_start_above_uniform_guess(metrics, Thresholds(), method, 128256, task_type) == []


def _accumulated_lora_run(folder, per_step_start: float):
    """A LoRA run folder whose logged loss is 8x a per-step loss falling from `per_step_start`, logged with
    gradient_accumulation_steps 8 (ms-swift-style args.json)."""
    folder.mkdir()
    history = [{"step": 10 * k, "loss": 8 * (per_step_start - k / 100)} for k in range(1, 21)]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 200, "log_history": history}))
    (folder / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 8, "task_type": "CAUSAL_LM",
                                                            "base_model_name_or_path": "some/llama"}))
    (folder / "args.json").write_text(json.dumps({"gradient_accumulation_steps": 8}))
    return folder


def test_a_loss_logged_summed_over_accumulation_steps_is_judged_per_step(tmp_path):
    """transformers 4.46-4.47 logged the training loss summed over gradient_accumulation_steps: a LoRA start at
    8 x 1.5 = 12 is an ordinary 1.5, not a start above ln(vocabulary)."""
    run = _accumulated_lora_run(tmp_path / "run", 1.5)
    config = {"model_type": "llama", "vocab_size": 32000, "transformers_version": "4.46.0"}
    (run / "config.json").write_text(json.dumps(config))
    assert "start_above_uniform_guess" not in [f.kind for f in forensics.analyze(run).findings]
    (run / "config.json").write_text(json.dumps(dict(config, transformers_version="4.51.3")))
    assert "start_above_uniform_guess" in [f.kind for f in forensics.analyze(run).findings]


def test_without_the_transformers_release_an_accumulated_loss_gets_the_benefit_of_the_doubt(tmp_path):
    """A LoRA output folder rarely keeps config.json: with gradient_accumulation_steps 8 and no release known,
    a first loss of 15.3 (1.9 a step if summed) is not called worse than chance (the review's case)."""
    kinds = [f.kind for f in forensics.analyze(_accumulated_lora_run(tmp_path / "run", 1.9)).findings]
    assert "start_above_uniform_guess" not in kinds and "impossible_loss" not in kinds


@pytest.mark.parametrize("release_fields, fires", [
    ({}, True),  # 4.51 on: the deprecated evaluation_strategy is gone
    ({"tp_size": 0, "evaluation_strategy": "no"}, True),  # 4.50: tp_size
    ({"evaluation_strategy": "no"}, False),  # 4.46 - 4.49: maybe summed, the benefit of the doubt
])
def test_a_whole_training_arguments_dump_tells_whether_the_release_could_have_summed_the_loss(
        tmp_path, release_fields, fires):
    """Zaphenath-Official's Unsloth QLoRA: no config.json, but training_args.bin holds every TrainingArguments field,
    and which fields it has dates the release: include_for_metrics came in 4.46, tp_size in 4.50, and
    evaluation_strategy went in 4.51, so a dump without it was not written by 4.46-4.47, which logged the loss
    summed. Its first loss 8 x 1.9 = 15.2 is then a real start above any tokenizer's uniform guess."""
    import dataclasses

    transformers = pytest.importorskip("transformers")
    run = _accumulated_lora_run(tmp_path / "run", 1.9)
    dump = {f.name: 1 for f in dataclasses.fields(transformers.TrainingArguments)}
    dump = {k: v for k, v in dump.items() if k not in ("evaluation_strategy", "tp_size")}
    dump.update(release_fields, gradient_accumulation_steps=8, include_for_metrics=[])
    (run / "args.json").unlink()
    (run / "training_args.bin").write_text(json.dumps(dump))  # the fields as the Trainer pickles them
    kinds = [f.kind for f in forensics.analyze(run).findings]
    assert ("start_above_uniform_guess" in kinds) == fires


@pytest.mark.parametrize("base, fires", [("meta-llama/Llama-3.2-1B", True), ("unsloth/Llama-3.2-1B-Instruct", True),
                                         ("some-org/my-own-model", False)])
def test_an_adapter_saved_without_its_bases_config_knows_a_well_known_bases_vocabulary(tmp_path, base, fires):
    """satishparaddi's plateau (12.05 at its start) with only adapter_config.json beside the log: Llama 3's
    128256 tokens are known from the base's name, an unknown base's are not (12.05 < ln 440k)."""
    run = tmp_path / "run"
    run.mkdir()
    history = [{"step": s, "loss": v, "mean_token_accuracy": FLAT_ACCURACY[s]} for s, v in PLATEAU.items()]
    (run / "trainer_state.json").write_text(json.dumps({"global_step": 130, "log_history": history}))
    (run / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 8, "task_type": "CAUSAL_LM",
                                                         "base_model_name_or_path": base}))
    analysis = forensics.analyze(run)
    assert ("start_above_uniform_guess" in [f.kind for f in analysis.findings]) is fires
    assert analysis.config.get("model.vocab_size") == (128256 if fires else None)


# Johnny221B_latent-MAS (corpus batch AS97): a frozen Qwen3-4B under the repository's own fresh prefix / compressor
# modules, 274M of 4.30B parameters trainable (method "peft": an adapter of no named kind); loss 13.45, 10.74, 10.07,
# 7.27 ... 0.24 per step
_FRESH_MODULES = {1: 13.45, 2: 10.74, 3: 10.07, 4: 7.27, 5: 7.49, 6: 6.03, 7: 3.28, 8: 1.46, 9: 0.33, 10: 0.27,
                  20: 0.26, 40: 0.25, 80: 0.24}


def test_an_adapter_of_no_named_kind_is_not_known_to_start_as_the_identity():
    """Prefix and prompt tuning (and a repository's own added modules) feed the frozen base fresh vectors from the
    first step, so a first loss above the guess says nothing of the base; only LoRA's zero-initialised B (QLoRA's too)
    starts as the identity. The same curve under LoRA still fires."""
    assert detect_start_above_uniform_guess(_run(_FRESH_MODULES), Thresholds(), "peft", None) == []
    assert [f.kind for f in detect_start_above_uniform_guess(_run(_FRESH_MODULES), Thresholds(), "lora", None)] == [
        "start_above_uniform_guess"]


def test_a_lone_point_of_an_adapter_of_no_named_kind_is_held_to_another_runs_bar():
    """The one-point path holds the same premise as the curve's: only LoRA / QLoRA start as the identity, so a lone
    13.45 under method "peft" is not read as the base's start (a lone LoRA point there still is)."""
    lone = {1: 13.45}
    assert detect_start_above_uniform_guess(_run(lone), Thresholds(), "peft", None) == []
    assert [f.kind for f in detect_start_above_uniform_guess(_run(lone), Thresholds(), "lora", None)] == [
        "start_above_uniform_guess"]


def _summed_lora_run(folder, eval_scale: float, accumulation: int | None = 4):
    """Jinyeop3110_Post_Training_Protein_LLM's shape: a Qwen3 LoRA (vocabulary 151936, ln = 11.93) whose logged loss
    is 4x a per-token loss falling 4.4 -> 3.4 (17.6 -> 13.6), logged by a release that logs the mean (4.51.3), with two
    evaluations whose eval loss is the per-token level x `eval_scale`, and `accumulation` stated in args.json."""
    folder.mkdir()
    history = [{"step": 10 * k, "loss": 4 * (4.4 - k / 20) + (0.05 if k % 2 else -0.05)} for k in range(1, 21)]
    history += [{"step": s, "eval_loss": eval_scale * (3.9 - s / 1000)} for s in (100, 200)]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 200, "log_history": history}))
    (folder / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 8, "task_type": "CAUSAL_LM",
                                                            "base_model_name_or_path": "Qwen/Qwen3-8B"}))
    (folder / "config.json").write_text(json.dumps({"model_type": "qwen3", "vocab_size": 151936,
                                                    "transformers_version": "4.51.3"}))
    if accumulation is not None:
        (folder / "args.json").write_text(json.dumps({"gradient_accumulation_steps": accumulation}))
    return folder


def test_a_loss_at_the_accumulation_steps_times_the_eval_loss_is_judged_per_step(tmp_path):
    """The training loss is 4x the eval loss at both evaluations and the run states 4 accumulation steps: the logged
    loss is the sum over the micro-batches (whatever the release), so its start 17.6 is 4.4 a token, no start above
    ln 151936 (the `accumulation_scaled_loss` band, read at every evaluation however few)."""
    kinds = [f.kind for f in forensics.analyze(_summed_lora_run(tmp_path / "run", 1.0)).findings]
    assert "start_above_uniform_guess" not in kinds


@pytest.mark.parametrize("eval_scale, accumulation", [
    (4.0, 4),  # the eval loss as high as the training loss: a start really above the guess
    (1.0, None),  # a 4x gap with no accumulation stated: nothing says the loss is a sum
    (1.0, 16),  # the gap is not the stated accumulation's: no sum over 16 micro-batches
])
def test_a_gap_the_stated_accumulation_does_not_explain_leaves_the_start_above_the_guess(
        tmp_path, eval_scale, accumulation):
    kinds = [f.kind for f in forensics.analyze(_summed_lora_run(tmp_path / "run", eval_scale, accumulation)).findings]
    assert "start_above_uniform_guess" in kinds
