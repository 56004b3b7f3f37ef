"""`forensics replay`: a probe batch through a real saved model names the first module whose output overflows.

Tiny Llama and Qwen2 models are built from a config and saved with save_pretrained (no downloads). One has
a layer's MLP output projection scaled so that its output overflows fp16, one a NaN in a layer's weights,
one is a LoRA adapter whose base lies beside it. Bad input is one line on stderr and exit 2.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

import forensics.replay.probe as replay_module
import forensics.replay.memory as replay_memory
from forensics.cli import cli
from forensics.errors import BadOption
from forensics.replay.probe import replay

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

SIZES = dict(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=3, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64)
DOWN_1 = "model.layers.1.mlp.down_proj"
FRAME_KEYS = {"module", "type", "absmax", "nonfinite", "nan", "inf", "input_absmax", "input_nonfinite"}
RESULT_KEYS = {"checkpoint", "base_model", "model_type", "dtype", "dtype_source", "limit", "device", "memory_gib",
               "tokens", "probe", "modules", "first_bad", "reason", "input_was_bad", "origin", "frames", "largest",
               "missing_weights"}


def _model(tmp_path, name: str, change=None, family: str = "qwen2", dtype=None):
    torch.manual_seed(0)
    if family == "llama":
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**SIZES))
    else:
        model = transformers.Qwen2ForCausalLM(transformers.Qwen2Config(**SIZES))
    if change:
        with torch.no_grad():
            change(model)
    if dtype is not None:
        model = model.to(dtype)
    folder = tmp_path / name
    model.save_pretrained(folder)
    return folder


def _overflow_layer_1(model):
    # up_proj's output stays in range (~1e2); down_proj's weights stay below 65504, its output does not
    model.model.layers[1].mlp.up_proj.weight.mul_(1e3)
    model.model.layers[1].mlp.down_proj.weight.mul_(2e5)


def _invoke(*args):
    return CliRunner().invoke(cli, ["replay", *map(str, args)])


def _subprocess(*args):
    return subprocess.run([sys.executable, "-m", "forensics", "replay", *map(str, args)], capture_output=True,
                          text=True)


def _files(folder):
    """Every file and folder under `folder` with its size and mtime: what a read-only command leaves alone."""
    return {(root, name, os.stat(os.path.join(root, name)).st_size, os.stat(os.path.join(root, name)).st_mtime_ns)
            for root, dirs, files in os.walk(folder) for name in dirs + files}


@pytest.mark.parametrize("family", ["llama", "qwen2"])
def test_a_healthy_model_stays_within_fp16(tmp_path, family):
    folder = _model(tmp_path, "ok", family=family)
    before = _files(folder)
    result = replay(folder, dtype="fp16")
    assert result.first_bad is None and result.reason is None and result.frames == ()
    assert result.dtype == "float16" and result.limit == 65504 and result.dtype_source == "--dtype"
    assert result.modules > 40 and result.device == "cpu" and result.missing_weights == ()
    assert 0 < result.largest[0].absmax < 100 and len(result.largest) == replay_module.FRAMES
    assert "no module output past the float16 limit 65504" in str(result) and "\n" not in str(result)
    out = _invoke(folder, "--dtype", "fp16")
    assert out.exit_code == 0, out.output
    assert _files(folder) == before  # nothing written into the checkpoint


@pytest.mark.parametrize("family", ["llama", "qwen2"])
def test_the_scaled_down_proj_is_named_first(tmp_path, family):
    folder = _model(tmp_path, "scaled", _overflow_layer_1, family=family)
    result = replay(folder, dtype="fp16")
    assert result.first_bad == DOWN_1 and result.reason == "overflow" and not result.input_was_bad
    assert result.origin == DOWN_1
    assert result.frames[-1].module == DOWN_1 and result.frames[-1].inf > 0
    # the frames before it: the same MLP's gate, activation and up projection, all in range
    assert {f.module for f in result.frames[-4:-1]} == {f"model.layers.1.mlp.{m}" for m in ("gate_proj", "act_fn",
                                                                                         "up_proj")}
    assert len(result.frames) == replay_module.FRAMES
    assert all(f.nonfinite == 0 and f.absmax <= 65504 for f in result.frames[:-1])
    assert f"{DOWN_1} is the first module whose output overflows float16" in str(result)
    # In fp32 the same weights stay finite: the overflow is fp16's.
    assert replay(folder, dtype="fp32").first_bad is None


def test_the_overflow_through_the_cli_json(tmp_path):
    folder = _model(tmp_path, "scaled", _overflow_layer_1)
    out = _subprocess(folder, "--dtype", "fp16", "--json")
    assert out.returncode == 1, out.stderr
    data = json.loads(out.stdout)
    assert set(data) == RESULT_KEYS
    assert data["first_bad"] == DOWN_1 and data["reason"] == "overflow" and data["dtype"] == "float16"
    assert data["limit"] == 65504 and data["model_type"] == "qwen2" and data["base_model"] is None
    assert data["probe"] == "random token ids (seed 0)" and data["tokens"] == 32
    last = data["frames"][-1]
    assert set(last) == FRAME_KEYS and last["module"] == DOWN_1 and last["type"] == "Linear"
    assert last["inf"] > 0 and last["input_nonfinite"] == 0 and last["input_absmax"] < 65504
    text = _invoke(folder, "--dtype", "fp16")
    assert text.exit_code == 1 and "<- first" in text.output and DOWN_1 in text.output.splitlines()[0]


@pytest.mark.parametrize("family", ["llama", "qwen2"])
def test_nan_weights_are_named_non_finite(tmp_path, family):
    def poison(model):
        model.model.layers[2].self_attn.o_proj.weight[0, 0] = float("nan")

    folder = _model(tmp_path, "nan", poison, family=family)
    result = replay(folder)  # auto: config.json's float32
    assert result.dtype == "float32" and result.dtype_source == "config.json torch_dtype"
    assert result.first_bad == "model.layers.2.self_attn.o_proj" and result.reason == "nan"
    assert result.frames[-1].nan > 0 and all(f.nonfinite == 0 for f in result.frames[:-1])
    out = _invoke(folder, "--json")
    assert out.exit_code == 1 and json.loads(out.stdout)["first_bad"] == "model.layers.2.self_attn.o_proj"


@pytest.mark.parametrize("family", ["llama", "qwen2"])
def test_an_overflow_between_modules_is_put_on_their_parent(tmp_path, family):
    def residual(model):
        # embeddings at 40000 and layer 0's attention output at 30720, both in fp16's range: their sum,
        # the residual add in the decoder layer's own forward, is not
        model.model.embed_tokens.weight.fill_(40000.0)
        model.model.layers[0].self_attn.v_proj.weight.fill_(0.1)
        model.model.layers[0].self_attn.o_proj.weight.fill_(300.0)

    result = replay(_model(tmp_path, "residual", residual, family=family), dtype="fp16")
    assert result.first_bad == "model.layers.0.post_attention_layernorm" and result.input_was_bad
    assert result.origin == "model.layers.0" and result.frames[-2].module == "model.layers.0.self_attn"
    assert result.frames[-2].absmax == 30720 and result.frames[-2].nonfinite == 0
    assert "came from model.layers.0's own code after model.layers.0.self_attn" in str(result)


def test_auto_dtype_is_the_runs(tmp_path):
    half = _model(tmp_path, "half", dtype=torch.float16)
    assert replay(half).dtype == "float16"
    # An fp16 mixed-precision run saves float32 weights; training_args.bin says what it computed in.
    scaled = _model(tmp_path, "amp", _overflow_layer_1)
    args = transformers.TrainingArguments(output_dir=str(tmp_path / "out"), fp16=True, report_to=[])
    torch.save(args, scaled / "training_args.bin")
    result = replay(scaled)
    assert (result.dtype, result.dtype_source) == ("float16", "training_args.bin fp16=True")
    assert result.first_bad == DOWN_1


def test_weights_missing_from_the_checkpoint_are_listed(tmp_path):
    from safetensors.torch import load_file, save_file

    folder = _model(tmp_path, "cut")
    weights = load_file(folder / "model.safetensors")
    del weights["model.layers.0.mlp.up_proj.weight"]
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    result = replay(folder)
    assert result.missing_weights == ("model.layers.0.mlp.up_proj.weight",)
    assert _invoke(folder).output.splitlines()[1].startswith("  warning: 1 weights missing")


def test_the_seed_and_length_of_the_probe(tmp_path):
    folder = _model(tmp_path, "ok")
    a, b = replay(folder, tokens=8, seed=1), replay(folder, tokens=8, seed=1)
    assert a == b and a.tokens == 8 and a.probe == "random token ids (seed 1)"
    assert replay(folder, tokens=8, seed=2).largest != a.largest


def _tokenizer():
    """A byte-level BPE tokenizer trained on one sentence, as the folder's tokenizer (ids below 256)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=260, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    raw.train_from_iterator(["the loss went to nan after the spike at step 3600"] * 10, trainer)
    return transformers.PreTrainedTokenizerFast(tokenizer_object=raw)


def test_a_text_probe_through_the_folders_tokenizer(tmp_path, monkeypatch):
    monkeypatch.setitem(SIZES, "vocab_size", 300)
    folder = _model(tmp_path, "ok")
    tokenizer = _tokenizer()
    tokenizer.save_pretrained(folder)
    probe = tmp_path / "probe.txt"
    probe.write_text("the loss went to nan after the spike")
    n = len(tokenizer("the loss went to nan after the spike")["input_ids"])
    result = replay(folder, text=probe, tokens=64)
    assert result.probe == str(probe) and result.tokens == n > 3 and result.first_bad is None
    assert replay(folder, text=probe, tokens=3).tokens == 3
    # a tokenizer whose ids the model's embedding does not have: one line, not an IndexError
    monkeypatch.setitem(SIZES, "vocab_size", 128)
    small = _model(tmp_path, "small")
    tokenizer.save_pretrained(small)
    with pytest.raises(BadOption, match="past the model's vocab_size 128"):
        replay(small, text=probe)


def _lora(tmp_path, change):
    peft = pytest.importorskip("peft")
    base = _model(tmp_path, "base")
    model = transformers.AutoModelForCausalLM.from_pretrained(base)
    config = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["down_proj", "o_proj"], init_lora_weights=False)
    lora = peft.get_peft_model(model, config)
    with torch.no_grad():
        change(lora)
    adapter = tmp_path / "adapter"
    lora.save_pretrained(adapter)
    return base, adapter


def test_an_adapter_is_replayed_on_its_local_base(tmp_path):
    def poison(lora):
        lora.base_model.model.model.layers[1].mlp.down_proj.lora_B["default"].weight[0, 0] = float("nan")

    base, adapter = _lora(tmp_path, poison)
    assert not (adapter / "config.json").exists()
    result = replay(adapter)
    assert result.base_model == str(base) and result.first_bad == DOWN_1 and result.reason == "nan"
    assert replay(base).first_bad is None  # the base alone is healthy: the NaN is the adapter's


def test_an_adapter_whose_base_is_in_the_hub_cache(tmp_path, monkeypatch):
    import shutil

    from huggingface_hub import constants

    base, adapter = _lora(tmp_path, lambda lora: None)
    cache, commit = tmp_path / "hub", "0123456789abcdef0123456789abcdef01234567"
    (cache / "models--some-org--tiny" / "refs").mkdir(parents=True)
    (cache / "models--some-org--tiny" / "refs" / "main").write_text(commit)
    shutil.copytree(base, cache / "models--some-org--tiny" / "snapshots" / commit)
    shutil.rmtree(base)
    config = json.loads((adapter / "adapter_config.json").read_text())
    (adapter / "adapter_config.json").write_text(json.dumps({**config, "base_model_name_or_path": "some-org/tiny"}))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    result = replay(adapter)
    assert result.base_model.endswith(commit) and result.first_bad is None and result.modules > 40


def test_an_adapter_whose_base_is_not_here(tmp_path):
    base, adapter = _lora(tmp_path, lambda lora: None)
    config = json.loads((adapter / "adapter_config.json").read_text())
    config["base_model_name_or_path"] = "some-org/not-on-this-machine"
    (adapter / "adapter_config.json").write_text(json.dumps(config))
    out = _invoke(adapter)
    assert out.exit_code == 2 and len(out.stderr.strip().splitlines()) == 1
    assert "needs its base model some-org/not-on-this-machine" in out.stderr


def test_too_big_for_this_machine_is_refused_before_loading(tmp_path, monkeypatch):
    folder = _model(tmp_path, "ok")
    params = sum(p.numel() for p in transformers.Qwen2ForCausalLM(transformers.Qwen2Config(**SIZES)).parameters())
    config = transformers.AutoConfig.from_pretrained(folder)
    need = replay_memory.estimate_bytes(folder, config, "float16", 32)
    assert need >= 2 * params and replay_memory.estimate_bytes(folder, config, "float32", 32) - need == 2 * params
    monkeypatch.setattr(replay_memory, "_available_memory", lambda: 64 * 2**20)
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained",
                        lambda *a, **k: pytest.fail("loaded although it does not fit"))
    out = _invoke(folder)
    assert out.exit_code == 2 and len(out.stderr.strip().splitlines()) == 1
    assert "too big for this machine" in out.stderr and "GiB" in out.stderr


def test_without_transformers_one_line_names_the_extra(tmp_path, monkeypatch):
    folder = _model(tmp_path, "ok")
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(BadOption, match=r"forensics\[replay\]"):
        replay(folder)
    out = _invoke(folder)
    assert out.exit_code == 2 and out.stderr.strip().splitlines() == [
        "forensics: forensics replay needs torch and transformers: pip install 'forensics[replay]'"]


@pytest.mark.parametrize("case", ["missing", "no_config", "adapter_only", "bad_dtype", "text_no_tokenizer",
                                  "text_missing", "too_many_tokens", "damaged_weights", "run_folder"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, case):
    folder = tmp_path / "x"
    args = [folder]
    if case == "no_config":
        folder.mkdir()
        (folder / "model.safetensors").write_bytes(b"")
    elif case == "adapter_only":
        folder.mkdir()
        (folder / "adapter_config.json").write_text("{}")
    elif case == "run_folder":
        for step in (500, 1000):
            _model(folder, f"checkpoint-{step}")
    elif case == "damaged_weights":
        folder = _model(tmp_path, "ok")
        (folder / "model.safetensors").write_bytes((folder / "model.safetensors").read_bytes()[:5000])
        args = [folder]
    else:
        folder = _model(tmp_path, "ok")
        args = {"missing": [tmp_path / "nope"], "bad_dtype": [folder, "--dtype", "bogus"],
                "text_no_tokenizer": [folder, "--text", __file__],
                "text_missing": [folder, "--text", tmp_path / "nope.txt"],
                "too_many_tokens": [folder, "--tokens", 65]}[case]
    out = _subprocess(*args) if case in ("missing", "bad_dtype") else _invoke(*args)
    if case == "text_no_tokenizer":
        assert "--text needs the tokenizer in the checkpoint folder" in out.stderr
    if case == "run_folder":
        assert out.stderr.strip().endswith(f"replay one of its 2 checkpoints, e.g. {folder / 'checkpoint-1000'}")
    code = out.returncode if case in ("missing", "bad_dtype") else out.exit_code
    assert code == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("forensics: ") and "Traceback" not in out.stderr
    assert out.stdout == ""
