"""Optimizer-state names for layouts the usual module order misses (review of the name-order fit).

Each test saves a real AdamW state the way the HF Trainer does (two param groups in module order, one step,
`torch.save` of its state_dict beside the weights) and checks the names forensics gives each index.
"""
from __future__ import annotations

import pytest

from forensics.checkpoints.layout import open_checkpoint
from forensics.checkpoints.optimizer_stats import read_optimizer_state
from support.trainer_checkpoints import count_model_builds, trainer_checkpoint

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
safetensors_torch = pytest.importorskip("safetensors.torch")


class _Moe(torch.nn.Module):
    """A decoder block laid out as older transformers wrote Mixtral: the router (`gate`) before a ModuleList of
    experts, each w1/w2/w3."""

    def __init__(self, hidden: int, ffn: int, experts: int):
        super().__init__()
        self.gate = torch.nn.Linear(hidden, experts, bias=False)
        self.experts = torch.nn.ModuleList(torch.nn.ModuleDict({
            "w1": torch.nn.Linear(hidden, ffn, bias=False), "w2": torch.nn.Linear(ffn, hidden, bias=False),
            "w3": torch.nn.Linear(hidden, ffn, bias=False)}) for _ in range(experts))


class _Layer(torch.nn.Module):
    def __init__(self, hidden: int, ffn: int, experts: int):
        super().__init__()
        self.self_attn = torch.nn.ModuleDict({p: torch.nn.Linear(hidden, hidden, bias=False) for p in
                                              ("q_proj", "k_proj", "v_proj", "o_proj")})
        self.block_sparse_moe = _Moe(hidden, ffn, experts)
        self.input_layernorm = torch.nn.LayerNorm(hidden, bias=False)
        self.post_attention_layernorm = torch.nn.LayerNorm(hidden, bias=False)


class _MoeModel(torch.nn.Module):
    def __init__(self, experts: int, vocab: int = 50, hidden: int = 16, ffn: int = 24, layers: int = 2):
        super().__init__()
        self.model = torch.nn.Module()
        self.model.embed_tokens = torch.nn.Embedding(vocab, hidden)
        self.model.layers = torch.nn.ModuleList(_Layer(hidden, ffn, experts) for _ in range(layers))
        self.model.norm = torch.nn.LayerNorm(hidden, bias=False)
        self.lm_head = torch.nn.Linear(hidden, vocab, bias=False)


def _adamw_checkpoint(tmp_path, model, poison: str | None = None):
    """checkpoint-3 of `model`: model.safetensors and optimizer.pt after three AdamW steps on the Trainer's two
    groups (decay, then no decay, each in module order). Returns the folder and the true name of each index."""
    torch.manual_seed(0)
    named = dict(model.named_parameters())
    no_decay = set(named) - set(transformers.Trainer.get_decay_parameter_names(None, model))
    groups = [[n for n in named if n not in no_decay], [n for n in named if n in no_decay]]
    optimizer = torch.optim.AdamW([{"params": [named[n] for n in g], "weight_decay": wd}
                                   for g, wd in zip(groups, (0.01, 0.0))], lr=1e-3)
    for _ in range(3):
        sum((p.float() ** 2).sum() * torch.rand(()) for p in named.values()).backward()
        optimizer.step()
        optimizer.zero_grad()
    truth = groups[0] + groups[1]
    state = optimizer.state_dict()
    if poison is not None:
        state["state"][truth.index(poison)]["exp_avg_sq"].view(-1)[0] = float("nan")
    folder = tmp_path / "checkpoint-3"
    folder.mkdir()
    safetensors_torch.save_file({n: p.detach().contiguous() for n, p in named.items()}, folder / "model.safetensors")
    torch.save(state, folder / "optimizer.pt")
    return folder, truth


def test_numbered_experts_are_named_in_number_order(tmp_path):
    poison = "model.layers.1.block_sparse_moe.experts.2.w2.weight"
    folder, truth = _adamw_checkpoint(tmp_path, _MoeModel(experts=12), poison=poison)
    state = read_optimizer_state(open_checkpoint(folder))
    assert state.mapping.how == "name order"
    assert [state.mapping.names[i] for i in range(len(truth))] == truth
    assert state.nonfinite_tensors == [f"{poison}.exp_avg_sq"]


def test_a_healthy_moe_state_with_fewer_than_ten_experts_keeps_its_names_and_has_no_nonfinite_moment(tmp_path):
    folder, truth = _adamw_checkpoint(tmp_path, _MoeModel(experts=4))
    state = read_optimizer_state(open_checkpoint(folder))
    assert state.mapping.how == "name order"
    assert [state.mapping.names[i] for i in range(len(truth))] == truth
    assert state.nonfinite_tensors == []
    assert state.is_finite is True


def _gpt2():
    """GPT2LMHeadModel: Conv1D blocks registering ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj, and
    wte before wpe: the name order sorts mlp.c_proj before mlp.c_fc and wpe before wte."""
    torch.manual_seed(0)
    return transformers.GPT2LMHeadModel(transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100))


def _t5():
    torch.manual_seed(0)
    return transformers.T5ForConditionalGeneration(transformers.T5Config(
        num_layers=2, d_model=32, d_kv=8, d_ff=64, num_heads=4, vocab_size=100, decoder_start_token_id=0))


def _bart():
    """BART also saves final_logits_bias, a buffer the optimizer never holds."""
    torch.manual_seed(0)
    return transformers.BartForConditionalGeneration(transformers.BartConfig(
        encoder_layers=2, decoder_layers=2, d_model=32, encoder_attention_heads=2, decoder_attention_heads=2,
        encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=100, max_position_embeddings=64))


def _switch_twelve_experts():
    """A MoE built from its config: T5's layout with experts expert_0 .. expert_11 in every sparse layer."""
    torch.manual_seed(0)
    return transformers.SwitchTransformersForConditionalGeneration(transformers.SwitchTransformersConfig(
        num_layers=2, num_decoder_layers=2, d_model=32, d_kv=8, d_ff=64, num_heads=4, vocab_size=100,
        num_experts=12, encoder_sparse_step=1, decoder_sparse_step=1, decoder_start_token_id=0))


@pytest.mark.parametrize("model, poison", [
    (_gpt2, "transformer.h.1.mlp.c_fc.weight"),
    (_t5, "decoder.block.1.layer.2.DenseReluDense.wi.weight"),
    (_bart, "model.decoder.layers.1.fc1.weight"),
    (_switch_twelve_experts, "encoder.block.1.layer.1.mlp.experts.expert_2.wo.weight"),
], ids=["gpt2", "t5", "bart", "switch"])
def test_layouts_the_name_order_misses_are_named_from_the_model_definition(tmp_path, model, poison):
    folder, truth, _ = trainer_checkpoint(tmp_path, model(), poison=poison)
    state = read_optimizer_state(open_checkpoint(folder))
    assert state.mapping.how == "model definition"
    assert [state.mapping.names[i] for i in range(len(truth))] == truth
    assert state.nonfinite_tensors == [f"{poison}.exp_avg_sq"]
    assert not state.blocks.empty


def test_a_gpt2_state_without_config_json_stays_by_index_and_says_why(tmp_path):
    folder, truth, _ = trainer_checkpoint(tmp_path, _gpt2(), poison="transformer.h.1.mlp.c_fc.weight")
    (folder / "config.json").unlink()
    state = read_optimizer_state(open_checkpoint(folder))
    assert state.mapping.how == "indices" and state.mapping.names == {}
    assert "no config.json" in state.mapping.note
    assert state.nonfinite_tensors == [f"{truth.index('transformer.h.1.mlp.c_fc.weight')}.exp_avg_sq"]


def test_a_healthy_state_the_name_order_fits_builds_no_model(tmp_path, monkeypatch):
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2))
    folder, truth, _ = trainer_checkpoint(tmp_path, model)
    builds = count_model_builds(monkeypatch)
    state = read_optimizer_state(open_checkpoint(folder))
    assert builds == []
    assert state.mapping.how == "name order"
    assert [state.mapping.names[i] for i in range(len(truth))] == truth
    assert state.nonfinite_tensors == []
