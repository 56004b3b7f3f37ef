"""Tests of the run profile of ChatGLM configs: prefix tuning, the model size.

From review day 8 (batch AO): each test fails on the code before its change; each change also has a test where
its rule must not fire. Folder names here avoid the words the profile reads in a run's names."""
from __future__ import annotations

import json

import forensics
from support.review_runs import falling


# ---- change 5: config_files, ChatGLM's pre_seq_len is P-Tuning v2; run_config, ChatGLM-6B's two-matrix MLP --------


_CHATGLM_6B = {"architectures": ["ChatGLMForConditionalGeneration"], "hidden_size": 4096, "inner_hidden_size": 16384,
               "layernorm_epsilon": 1e-05, "max_sequence_length": 2048, "model_type": "chatglm",
               "num_attention_heads": 32, "num_layers": 28, "position_encoding_2d": True, "pre_seq_len": None,
               "prefix_projection": False, "quantization_bit": 4, "torch_dtype": "float16", "vocab_size": 130528}
_CHATGLM3_6B = {"architectures": ["ChatGLMModel"], "model_type": "chatglm", "add_qkv_bias": True, "ffn_hidden_size": 13696,
                "hidden_size": 4096, "kv_channels": 128, "multi_query_attention": True, "multi_query_group_num": 2,
                "num_attention_heads": 32, "num_layers": 28, "padded_vocab_size": 65024, "pre_seq_len": None,
                "seq_length": 8192, "torch_dtype": "float16"}


def _saved_run(folder, model_config):
    folder.mkdir(parents=True)
    rows = [{"step": 10 * k, "epoch": k / 100, "loss": round(v, 4), "learning_rate": 2e-2}
            for k, v in enumerate(falling(30, 5.0, 3.6), 1)]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 300, "log_history": rows}))
    (folder / "config.json").write_text(json.dumps(model_config))
    return folder


def test_a_chatglm_config_with_pre_seq_len_is_a_prefix_tuned_peft_run(tmp_path):
    run = _saved_run(tmp_path / "run", {**_CHATGLM_6B, "pre_seq_len": 128})
    assert forensics.analyze(run).run_profile.method == "peft"


def test_a_chatglm_config_with_no_prefix_stays_a_whole_model_save(tmp_path):
    assert forensics.analyze(_saved_run(tmp_path / "run", _CHATGLM_6B)).run_profile.method == "full"


def test_chatglm_6b_is_estimated_with_its_two_matrix_mlp_at_about_6_2b(tmp_path):
    n = forensics.analyze(_saved_run(tmp_path / "run", _CHATGLM_6B)).run_profile.model_params
    assert abs(n - 6.2e9) < 0.1e9, n


def test_chatglm3_6b_keeps_its_gated_mlp_and_multi_query_attention_at_about_6_24b(tmp_path):
    n = forensics.analyze(_saved_run(tmp_path / "run", _CHATGLM3_6B)).run_profile.model_params
    assert abs(n - 6.24e9) < 0.1e9, n
    from forensics.ingest.tracker_config import tracker_config_values
    said = tracker_config_values({**_CHATGLM3_6B, "learning_rate": 5e-5})  # W&B's copy of the same config
    assert (said["model.intermediate_size"], said["model.num_key_value_heads"]) == (13696, 2)
