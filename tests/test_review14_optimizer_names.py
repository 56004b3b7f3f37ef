"""Optimizer-state names cost nothing unless the report shows them.

Naming the parameters of a block where two share a shape needs the model's own module order, which
means building the model with torch and transformers (seconds). The per-block figures do not need
it, so it is done only when a moment of such a block is non-finite and the report names it.
Runs: a tiny Qwen2 (its k_proj and v_proj share a shape) saved as HF Trainer saves a checkpoint,
with the optimizer the Trainer builds, after one real step.
"""
from __future__ import annotations

import pytest

from forensics.checkpoints import optimizer_names
from forensics.checkpoints.layout import open_checkpoint
from forensics.checkpoints.optimizer_stats import read_optimizer_state

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def _checkpoint(tmp_path, poison: str | None = None):
    """checkpoint-1 with model.safetensors, config.json and optimizer.pt; `poison`: a parameter whose
    exp_avg_sq is set to NaN. Returns the folder and the true name of each optimizer index."""
    torch.manual_seed(0)
    config = transformers.Qwen2Config(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, vocab_size=64)
    model = transformers.Qwen2ForCausalLM(config)
    args = transformers.TrainingArguments(output_dir=str(tmp_path / "out"), report_to=[], use_cpu=True)
    optimizer = transformers.Trainer(model=model, args=args).create_optimizer()
    model(input_ids=torch.randint(0, 64, (2, 8)), labels=torch.randint(0, 64, (2, 8))).loss.backward()
    optimizer.step()
    name_of = {id(p): n for n, p in model.named_parameters()}
    truth = [name_of[id(p)] for group in optimizer.param_groups for p in group["params"]]
    state = optimizer.state_dict()
    if poison is not None:
        state["state"][truth.index(poison)]["exp_avg_sq"][0, 0] = float("nan")
    folder = tmp_path / "checkpoint-1"
    model.save_pretrained(folder)
    torch.save(state, folder / "optimizer.pt")
    return folder, truth


def _count_model_builds(monkeypatch) -> list:
    calls = []
    real = optimizer_names._defined_order

    def counted(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(optimizer_names, "_defined_order", counted)
    return calls


def test_a_finite_state_is_measured_without_building_the_model(tmp_path, monkeypatch):
    folder, truth = _checkpoint(tmp_path)
    builds = _count_model_builds(monkeypatch)
    state = read_optimizer_state(open_checkpoint(folder))
    assert builds == []
    assert state.is_finite and state.mapping.names and state.mapping.how == "name order"
    assert set(state.blocks["block"]) >= {"model.layers.0", "model.layers.1"}  # blocks are exact by shape


def test_a_nonfinite_moment_in_a_shared_shape_block_is_named_exactly(tmp_path, monkeypatch):
    folder, truth = _checkpoint(tmp_path, poison="model.layers.1.self_attn.v_proj.weight")
    builds = _count_model_builds(monkeypatch)
    state = read_optimizer_state(open_checkpoint(folder))
    assert len(builds) == 1
    assert state.mapping.how == "model definition"
    assert state.nonfinite_tensors == ["model.layers.1.self_attn.v_proj.weight.exp_avg_sq"]
    assert [state.mapping.names[i] for i in range(len(truth))] == truth
