"""Tests of starts near chance: a small-vocabulary model's pretrain objective, an adapter's no_learning_evidence.

Fixes from the real cases of corpus batches AS2/AS3: each test builds a run shaped like the real one (a Trainer's
checkpoint folder written as the Trainer writes it), asserts what its name says and fails on the code before its
change; each change also has a test of a run of the same shape where its rule must not fire.

Folder names here avoid the words the profile reads in a run's names (lora, sft, pretrain, finetune, ...)."""
from __future__ import annotations

import json
import math

import numpy as np

import forensics


def _checkpoint(folder, losses, model_config: dict, every: int = 10, extra_files: dict | None = None):
    """A Trainer's checkpoint folder: trainer_state.json with one logged loss every `every` steps (grad_norm and a
    linearly decaying learning rate beside it) and the model's config.json, plus any `extra_files` (name -> text)."""
    folder.mkdir(parents=True)
    steps = len(losses) * every
    history = [{"epoch": round((i + 1) * every / steps, 4), "grad_norm": 1.0 + 0.1 * (i % 3),
                "learning_rate": 5e-5 * (1 - i / len(losses)), "loss": round(float(v), 4), "step": (i + 1) * every}
               for i, v in enumerate(losses)]
    state = {"global_step": steps, "max_steps": steps, "num_train_epochs": 1, "epoch": 1.0, "log_history": history}
    (folder / "trainer_state.json").write_text(json.dumps(state, indent=2))
    if model_config:
        (folder / "config.json").write_text(json.dumps(model_config, indent=2))
    for name, text in (extra_files or {}).items():
        (folder / name).write_text(text)
    return folder


def _falling(start: float, end: float, n: int, noise: float, seed: int = 0) -> np.ndarray:
    """A loss falling geometrically from `start` to `end` over `n` points, with step-to-step noise of `noise`."""
    rng = np.random.default_rng(seed)
    return np.geomspace(start, end, n) + rng.normal(0, noise, n)


# ---- change 1: a fresh model's first loss at ln V of the small vocabulary its config gives is pre-training ----------

_CUSTOM_LM = {"architectures": ["TransformerLM"], "embedding_dim": 64, "hidden_dim": 128, "n_heads": 8, "num_layers": 2,
              "torch_dtype": "float32", "transformers_version": "4.41.2", "vocab_size": 151}


def test_a_custom_small_vocabulary_model_starting_at_ln_vocab_is_pretraining(tmp_path):
    """A 151-token model from its own config: the first losses at ln 151 = 5.02 (under any large vocabulary's
    guess), falling to about 3 over the run."""
    losses = _falling(math.log(151) + 0.2, 3.0, 120, 0.15)
    profile = forensics.analyze(_checkpoint(tmp_path / "run", losses, _CUSTOM_LM)).run_profile
    assert profile.objective == "pretrain"
    assert "ln 151" in profile.evidence["objective"]


def test_a_small_vocabulary_model_starting_far_under_ln_vocab_is_not_called_pretraining(tmp_path):
    """The same model and curve shape, but starting at 2.4 (half of ln 151): a trained model's level, which says
    nothing of random weights."""
    losses = _falling(2.4, 1.4, 120, 0.1)
    profile = forensics.analyze(_checkpoint(tmp_path / "run", losses, _CUSTOM_LM)).run_profile
    assert profile.objective != "pretrain"


# ---- change 2: a fine-tune of a trained base that starts near the uniform guess and ends over half of it -----------

_GPT2_ADAPTER = json.dumps({"base_model_name_or_path": "gpt2", "fan_in_fan_out": True, "lora_alpha": 32,
                            "lora_dropout": 0.05, "peft_type": "LORA", "r": 16, "target_modules": ["c_attn"],
                            "task_type": "CAUSAL_LM", "inference_mode": True})


def test_an_adapter_on_a_trained_base_starting_near_chance_and_ending_over_half_of_it_is_a_warning(tmp_path):
    """A GPT-2 LoRA whose loss starts at 9.46 (87% of ln 50257) and falls at every point to 7.22 (67%)."""
    losses = [9.4578, 8.9165, 8.2572, 8.1536, 7.6807, 7.4703, 7.2218]
    run = _checkpoint(tmp_path / "run", losses, {}, extra_files={"adapter_config.json": _GPT2_ADAPTER})
    analysis = forensics.analyze(run)
    assert analysis.status == "warning"
    assert analysis.first_incident.kind == "no_learning_evidence"
    assert analysis.first_incident.step == 10


def test_an_adapter_on_a_trained_base_starting_at_a_fine_tunes_level_is_healthy(tmp_path):
    """The same LoRA and shape of curve at the level a trained GPT-2 reads English at: 3.6 falling to 2.4."""
    losses = [3.61, 3.32, 3.05, 2.88, 2.66, 2.52, 2.41]
    run = _checkpoint(tmp_path / "run", losses, {}, extra_files={"adapter_config.json": _GPT2_ADAPTER})
    assert forensics.analyze(run).status == "healthy"


def test_an_adapter_whose_start_near_chance_is_left_far_behind_is_healthy(tmp_path):
    """A first window near the guess (8.64, a template or new tokens) that the run leaves for 0.4: put right."""
    losses = [8.637, 3.9, 1.9, 1.1, 0.8, 0.6, 0.5, 0.45, 0.42, 0.415]
    run = _checkpoint(tmp_path / "run", losses, {}, extra_files={"adapter_config.json": _GPT2_ADAPTER})
    assert not any(f.kind == "no_learning_evidence" for f in forensics.analyze(run).findings)
