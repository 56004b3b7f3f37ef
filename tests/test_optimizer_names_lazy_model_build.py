"""Tests of checkpoints/optimizer_stats.py: the model is built only to name a non-finite block.

Optimizer-state names cost nothing unless the report shows them.

Naming the parameters of a block where two share a shape needs the model's own module order, which
means building the model with torch and transformers (seconds). The per-block figures do not need
it, so it is done only when a moment of such a block is non-finite and the report names it.
Runs: a tiny Qwen2 (its k_proj and v_proj share a shape) saved as HF Trainer saves a checkpoint,
with the optimizer the Trainer builds, after one real step.
"""
from __future__ import annotations

import pytest

from forensics.checkpoints.layout import open_checkpoint
from forensics.checkpoints.optimizer_stats import read_optimizer_state
from support.trainer_checkpoints import count_model_builds, trainer_checkpoint


torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def _checkpoint(tmp_path, poison: str | None = None):
    """checkpoint-1 with model.safetensors, config.json and optimizer.pt; `poison`: a parameter whose
    exp_avg_sq is set to NaN. Returns the folder and the true name of each optimizer index."""
    torch.manual_seed(0)
    config = transformers.Qwen2Config(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, vocab_size=64)
    folder, truth, _ = trainer_checkpoint(tmp_path, transformers.Qwen2ForCausalLM(config), poison)
    return folder, truth


def test_a_finite_state_is_measured_without_building_the_model(tmp_path, monkeypatch):
    folder, truth = _checkpoint(tmp_path)
    builds = count_model_builds(monkeypatch)
    state = read_optimizer_state(open_checkpoint(folder))
    assert builds == []
    assert state.is_finite and state.mapping.names and state.mapping.how == "name order"
    assert set(state.blocks["block"]) >= {"model.layers.0", "model.layers.1"}  # blocks are exact by shape


def test_a_nonfinite_moment_in_a_shared_shape_block_is_named_exactly(tmp_path, monkeypatch):
    folder, truth = _checkpoint(tmp_path, poison="model.layers.1.self_attn.v_proj.weight")
    builds = count_model_builds(monkeypatch)
    state = read_optimizer_state(open_checkpoint(folder))
    assert len(builds) == 1
    assert state.mapping.how == "model definition"
    assert state.nonfinite_tensors == ["model.layers.1.self_attn.v_proj.weight.exp_avg_sq"]
    assert [state.mapping.names[i] for i in range(len(truth))] == truth
