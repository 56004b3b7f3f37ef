"""Tests of checkpoints/optimizer_names.py: parameters outside the repeated blocks.

Optimizer-state names outside the blocks, and the weights each row is measured on.

A saved optimizer state numbers its parameters; the names come from their shapes in module order. Outside the
repeated blocks that order is a guess too (a final LayerNorm's weight and bias share a shape, so do an untied
lm_head and the embeddings), so a non-finite moment there must be named from the model definition, or the name
said to be uncertain, never a confident wrong one; and a row renamed must be measured on its own weight.
Runs: tiny models built from a config, their optimizer the HF Trainer's (two param groups), after one real step,
saved as the Trainer saves a checkpoint (model.safetensors, config.json, optimizer.pt).
"""
from __future__ import annotations

import math

import pytest

from forensics.checkpoints.layout import open_checkpoint
from forensics.checkpoints.optimizer_names import map_parameter_names
from forensics.checkpoints.optimizer_stats import read_optimizer_state
from support.trainer_checkpoints import count_model_builds, trainer_checkpoint


torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def _stablelm():
    """A Llama-ordered model whose final norm (model.norm) is a LayerNorm with a weight and a bias."""
    torch.manual_seed(0)
    return transformers.StableLmForCausalLM(transformers.StableLmConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, tie_word_embeddings=False))


def _phi_vocab_as_wide_as_hidden():
    """Phi (final_layernorm, then lm_head with a bias) with a vocabulary as wide as the hidden size: the norm's
    weight and bias and lm_head's bias share a shape, and lm_head sorts before model.final_layernorm by name."""
    torch.manual_seed(0)
    return transformers.PhiForCausalLM(transformers.PhiConfig(
        vocab_size=32, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=4))


def _row(state, name: str):
    rows = state.tensors[state.tensors["name"] == name]
    assert len(rows) == 1, name
    return rows.iloc[0]


def test_a_nan_moment_in_the_final_norm_is_named_from_the_model_definition(tmp_path, monkeypatch):
    folder, truth, _ = trainer_checkpoint(tmp_path, _stablelm(), poison="model.norm.weight")
    builds = count_model_builds(monkeypatch)
    state = read_optimizer_state(open_checkpoint(folder))
    assert len(builds) == 1
    assert state.mapping.how == "model definition"
    assert state.nonfinite_tensors == ["model.norm.weight.exp_avg_sq"]
    assert [state.mapping.names[i] for i in range(len(truth))] == truth


def test_the_note_counts_only_blocks_and_names_the_modules_outside_them(tmp_path):
    model = _stablelm()
    folder, truth, optimizer = trainer_checkpoint(tmp_path, model)
    groups = [tuple(g["params"]) for g in optimizer.state_dict()["param_groups"]]
    weights = {n: tuple(p.shape) for n, p in model.named_parameters()}
    shapes = {i: weights[n] for i, n in enumerate(truth)}
    mapping = map_parameter_names(groups, shapes, weights, folder, exact=False)
    assert mapping.note.startswith("in 2 block(s) and ")  # model.layers.0 and .1: no 'None' counted
    assert "model.norm" in mapping.note
    assert "model.norm" in mapping.ambiguous and "None" not in mapping.ambiguous


def test_an_adapter_state_without_config_json_is_said_ambiguous_without_an_install_hint(tmp_path):
    folder, _, _ = trainer_checkpoint(tmp_path, _stablelm(), poison="model.norm.weight")
    (folder / "config.json").unlink()  # as beside a PEFT adapter: adapter_config.json only
    state = read_optimizer_state(open_checkpoint(folder))
    assert state.mapping.how == "name order"
    assert "may be swapped" in state.mapping.note and "config.json" in state.mapping.note
    assert "install" not in state.mapping.note
    assert not _row(state, state.nonfinite_tensors[0].rsplit(".", 1)[0])["name_certain"]


def test_rows_renamed_from_the_model_definition_are_measured_on_their_own_weights(tmp_path):
    model = _phi_vocab_as_wide_as_hidden()
    folder, truth, optimizer = trainer_checkpoint(tmp_path, model, poison="lm_head.bias")
    state = read_optimizer_state(open_checkpoint(folder))
    assert state.mapping.how == "model definition"
    assert state.nonfinite_tensors == ["lm_head.bias.exp_avg_sq"]
    row = _row(state, "model.final_layernorm.weight")
    group = optimizer.param_groups[1]  # no weight decay: the update is m̂/(√v̂+ε) alone
    saved = optimizer.state[dict(model.named_parameters())["model.final_layernorm.weight"]]
    b1, b2 = group["betas"]
    m_hat = saved["exp_avg"].double() / (1 - b1)
    v_hat = saved["exp_avg_sq"].double() / (1 - b2)
    update = m_hat / (v_hat.sqrt() + group["eps"])
    weight = model.model.final_layernorm.weight.detach().double()
    assert row["update_ratio"] == pytest.approx(group["lr"] * float(update.norm() / weight.norm()), rel=1e-4)
    assert state.tensors["name_certain"].all()


def test_a_finite_state_builds_no_model_and_marks_the_names_shapes_cannot_settle(tmp_path, monkeypatch):
    folder, truth, _ = trainer_checkpoint(tmp_path, _stablelm())
    builds = count_model_builds(monkeypatch)
    state = read_optimizer_state(open_checkpoint(folder))
    assert builds == [] and state.is_finite and state.mapping.how == "name order"
    certain = dict(zip(state.tensors["name"], state.tensors["name_certain"]))
    assert not certain["model.norm.weight"] and not certain["model.norm.bias"]
    assert not certain["model.layers.0.self_attn.k_proj.weight"]  # k_proj and v_proj share a shape
    assert certain["model.layers.0.mlp.down_proj.weight"]  # its shape is its own in its block and group
    assert math.isfinite(_row(state, "model.layers.0.mlp.down_proj.weight")["update_ratio"])


def test_a_nan_moment_whose_shape_is_its_own_needs_no_model(tmp_path, monkeypatch):
    folder, truth, _ = trainer_checkpoint(tmp_path, _stablelm(), poison="model.layers.1.mlp.down_proj.weight")
    builds = count_model_builds(monkeypatch)
    state = read_optimizer_state(open_checkpoint(folder))
    assert builds == []
    assert state.nonfinite_tensors == ["model.layers.1.mlp.down_proj.weight.exp_avg_sq"]
