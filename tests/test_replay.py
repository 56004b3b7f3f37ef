"""`forensics replay`: a probe batch through a real saved model names the first module that overflows.

Tiny Qwen2 models are built from a config and saved with save_pretrained (no downloads); one has a
layer's MLP output projection scaled so that its output overflows fp16, one a NaN in a layer's weights.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from forensics.replay import replay

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def _model(tmp_path, name: str, change=None):
    torch.manual_seed(0)
    config = transformers.Qwen2Config(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    model = transformers.Qwen2ForCausalLM(config)
    if change:
        with torch.no_grad():
            change(model)
    folder = tmp_path / name
    model.save_pretrained(folder)
    return folder


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "forensics", "replay", *map(str, args)], capture_output=True, text=True)


def test_a_healthy_model_stays_within_fp16(tmp_path):
    folder = _model(tmp_path, "ok")
    result = replay(folder, dtype="fp16")
    assert result.first_bad is None and result.modules > 20
    assert _cli(folder, "--dtype", "fp16").returncode == 0


def test_the_scaled_layer_is_named_first(tmp_path):
    def scale(model):
        # up_proj's output stays in range (~1e2); down_proj's weights stay below 65504, its output does not
        model.model.layers[1].mlp.up_proj.weight.mul_(1e3)
        model.model.layers[1].mlp.down_proj.weight.mul_(2e5)

    folder = _model(tmp_path, "scaled", scale)
    result = replay(folder, dtype="fp16")
    assert result.first_bad == "model.layers.1.mlp.down_proj"
    assert result.frames[-1].module == "model.layers.1.mlp.down_proj" and len(result.frames) > 1
    assert all(f.nonfinite == 0 and f.absmax <= 65504 for f in result.frames[:-1])
    out = _cli(folder, "--dtype", "fp16", "--json")
    assert out.returncode == 1, out.stderr
    data = json.loads(out.stdout)
    assert data["first_bad"] == "model.layers.1.mlp.down_proj" and data["dtype"] == "float16"
    assert {"module", "absmax", "nonfinite"} <= set(data["frames"][0])
    # In fp32 the same weights stay finite: the overflow is fp16's.
    assert replay(folder, dtype="fp32").first_bad is None


def test_nan_weights_are_named(tmp_path):
    def poison(model):
        model.model.layers[2].self_attn.o_proj.weight[0, 0] = float("nan")

    result = replay(_model(tmp_path, "nan", poison), dtype="fp32")
    assert result.first_bad == "model.layers.2.self_attn.o_proj" and result.reason == "NaN/Inf"


@pytest.mark.parametrize("case", ["missing", "no_config", "adapter", "bad_dtype"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, case):
    folder = tmp_path / "x"
    args = [folder]
    if case == "no_config":
        folder.mkdir()
        (folder / "model.safetensors").write_bytes(b"")
    elif case == "adapter":
        folder.mkdir()
        (folder / "adapter_config.json").write_text("{}")
    elif case == "bad_dtype":
        folder = _model(tmp_path, "ok")
        args = [folder, "--dtype", "fp8"]
    out = _cli(*args)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
