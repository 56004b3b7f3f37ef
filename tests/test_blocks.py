"""block_of: tensor names -> block names, on the names FORMATS.md section 9 lists."""
from __future__ import annotations

import pytest

from forensics.checkpoints import block_of, block_sort_key, blocks_in_order, strip_wrappers

CASES = [
    # GPT-2 saved by transformers (Conv1D, no lm_head) and the bare hub names
    ("transformer.h.11.attn.c_attn.weight", "transformer.h.11"),
    ("transformer.h.0.ln_1.bias", "transformer.h.0"),
    ("transformer.h.3.mlp.c_fc.weight", "transformer.h.3"),
    ("h.0.attn.c_attn.weight", "h.0"),
    ("transformer.wte.weight", None),
    ("transformer.wpe.weight", None),
    ("transformer.ln_f.weight", None),
    ("wte.weight", None),
    # Qwen-1
    ("transformer.h.21.mlp.w1.weight", "transformer.h.21"),
    ("transformer.h.23.mlp.w2.weight", "transformer.h.23"),
    ("transformer.h.22.mlp.c_proj.weight", "transformer.h.22"),
    ("transformer.h.21.attn.c_attn.bias", "transformer.h.21"),
    # Llama / Qwen2 / Qwen3
    ("model.layers.27.self_attn.q_proj.weight", "model.layers.27"),
    ("model.layers.0.self_attn.k_proj.bias", "model.layers.0"),
    ("model.layers.5.post_attention_layernorm.weight", "model.layers.5"),
    ("model.embed_tokens.weight", None),
    ("model.norm.weight", None),
    ("lm_head.weight", None),
    # VLM towers and MoE
    ("model.language_model.layers.3.mlp.down_proj.weight", "model.language_model.layers.3"),
    ("model.visual.blocks.7.attn.qkv.weight", "model.visual.blocks.7"),
    ("model.layers.4.mlp.experts.3.down_proj.weight", "model.layers.4"),
    ("model.layers.1.block_sparse_moe.experts.0.w1.weight", "model.layers.1"),
    # other families
    ("gpt_neox.layers.9.attention.dense.weight", "gpt_neox.layers.9"),
    ("bert.encoder.layer.3.attention.self.query.weight", "bert.encoder.layer.3"),
    ("encoder.block.2.layer.1.DenseReluDense.wi.weight", "encoder.block.2"),
    # PEFT (adapter name removed on save, or kept in memory) and its other forms
    ("base_model.model.model.layers.21.self_attn.q_proj.lora_A.weight", "model.layers.21"),
    ("base_model.model.model.layers.21.self_attn.q_proj.lora_B.weight", "model.layers.21"),
    ("base_model.model.model.layers.2.mlp.up_proj.lora_A.default.weight", "model.layers.2"),
    ("base_model.model.model.layers.2.self_attn.v_proj.base_layer.weight", "model.layers.2"),
    ("base_model.model.model.layers.2.self_attn.o_proj.lora_magnitude_vector", "model.layers.2"),
    ("base_model.model.lm_head.modules_to_save.default.weight", None),
    ("base_model.model.model.embed_tokens.lora_embedding_A", None),
    # wrapper prefixes: DDP, torch.compile, FSDP, activation checkpointing, and combinations
    ("module.model.layers.3.mlp.gate_proj.weight", "model.layers.3"),
    ("_orig_mod.model.layers.3.mlp.gate_proj.weight", "model.layers.3"),
    ("_fsdp_wrapped_module.model.layers.3.mlp.gate_proj.weight", "model.layers.3"),
    ("model.layers.3._checkpoint_wrapped_module.mlp.gate_proj.weight", "model.layers.3"),
    ("module._orig_mod.transformer.h.2.attn.c_proj.weight", "transformer.h.2"),
    ("_fsdp_wrapped_module.model.layers.0._fsdp_wrapped_module.self_attn.q_proj.weight", "model.layers.0"),
    ("_fsdp_wrapped_module._flat_param", None),
]


@pytest.mark.parametrize("name, block", CASES)
def test_block_of(name, block):
    assert block_of(name) == block


def test_the_list_covers_at_least_25_names():
    assert len(CASES) >= 25


def test_strip_wrappers_removes_leading_and_inner_wrappers():
    assert strip_wrappers("module._fsdp_wrapped_module.model.layers.1._orig_mod.mlp.w") == "model.layers.1.mlp.w"
    assert strip_wrappers("model.layers.1.mlp.w") == "model.layers.1.mlp.w"


def test_blocks_sort_naturally_and_skip_non_block_tensors():
    names = [f"transformer.h.{i}.mlp.w1.weight" for i in (23, 3, 21, 10)] + ["lm_head.weight"]
    assert blocks_in_order(names) == ["transformer.h.3", "transformer.h.10", "transformer.h.21", "transformer.h.23"]
    assert sorted(["b.10", "b.9", "a.2"], key=block_sort_key) == ["a.2", "b.9", "b.10"]
