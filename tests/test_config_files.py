"""Configuration readers (config_files) and the RunConfig they feed (run_config), on files made by the real writers."""
from __future__ import annotations

import dataclasses
import json

import pytest

from forensics.errors import UnreadableFile
from forensics.ingest import config_files as cf
from forensics.ingest import framework_configs as fc
from forensics.ingest.flat_yaml import read_flat_yaml
from forensics.ingest.run_config import read_run_config
from forensics.discover.run import discover
from forensics.timeline import Timeline

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def _tiny_qwen2_config(**extra):
    return transformers.Qwen2Config(hidden_size=64, num_hidden_layers=3, intermediate_size=128, num_attention_heads=4,
                                    num_key_value_heads=2, vocab_size=1000, **extra)


def _training_args(**kw):
    kw.setdefault("report_to", [])
    return transformers.TrainingArguments(output_dir="/tmp/unused-forensics-out", **kw)


# --- config.json / adapter_config.json ------------------------------------------------------------

def test_model_config_with_quantization(tmp_path):
    config = _tiny_qwen2_config()
    config.quantization_config = transformers.BitsAndBytesConfig(
        load_in_4bit=True, bnb_4bit_use_double_quant=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype="bfloat16")
    config.save_pretrained(tmp_path)
    values = cf.read_model_config(tmp_path / "config.json")
    assert values["model.model_type"] == "qwen2"
    assert values["model.num_hidden_layers"] == 3 and values["model.hidden_size"] == 64
    assert values["quant.bnb_4bit_use_double_quant"] is True and values["quant.load_in_4bit"] is True
    assert values["quant.quant_method"] == "bitsandbytes"


def test_gpt2_names_map_to_common_keys(tmp_path):
    transformers.GPT2Config(n_layer=5, n_embd=32, n_head=4, vocab_size=100).save_pretrained(tmp_path)
    values = cf.read_model_config(tmp_path / "config.json")
    assert values["model.num_hidden_layers"] == 5 and values["model.hidden_size"] == 32


def test_adapter_config_from_peft(tmp_path):
    peft = pytest.importorskip("peft")
    peft.LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj"]).save_pretrained(tmp_path)
    values = cf.read_adapter_config(tmp_path / "adapter_config.json")
    assert values["adapter.peft_type"] == "LORA" and values["adapter.r"] == 8 and values["adapter.lora_alpha"] == 16


@pytest.mark.parametrize("text, reason", [("{not json", "invalid JSON"), ("[1, 2]", "JSON object"),
                                          ('{"hello": 1}', "PEFT")])
def test_bad_adapter_config(tmp_path, text, reason):
    path = tmp_path / "adapter_config.json"
    path.write_text(text)
    with pytest.raises(UnreadableFile, match=reason):
        cf.read_adapter_config(path)


# --- DeepSpeed ---------------------------------------------------------------------------------

def test_deepspeed_config_flattened(tmp_path):
    path = tmp_path / "ds_config.json"
    path.write_text(json.dumps({"fp16": {"enabled": True, "loss_scale": 0}, "bfloat16": {"enabled": False},
                                "communication_data_type": "fp32", "zero_optimization": {"stage": 2},
                                "gradient_clipping": 1.0}))
    values = cf.read_deepspeed_config(path)
    assert values["ds.fp16.enabled"] is True and values["ds.fp16.loss_scale"] == 0
    assert values["ds.bf16.enabled"] is False  # the legacy 'bfloat16' section
    assert values["ds.communication_data_type"] == "fp32" and values["ds.zero_optimization.stage"] == 2


def test_json_that_is_not_deepspeed(tmp_path):
    path = tmp_path / "zero_shot_results.json"
    path.write_text('{"accuracy": 0.5}')
    with pytest.raises(UnreadableFile, match="not a DeepSpeed config"):
        cf.read_deepspeed_config(path)


class DynamicLossScaler:
    """Stands in for deepspeed.runtime.fp16.loss_scaler.DynamicLossScaler (DeepSpeed is not installed)."""

    def __init__(self, cur_scale):
        self.cur_scale, self.cur_iter, self.last_overflow_iter = cur_scale, 40, 39


def test_optim_states_embedded_config_and_scaler(tmp_path):
    path = tmp_path / "zero_pp_rank_0_mp_rank_00_optim_states.pt"
    ds_config = {"fp16": {"enabled": True}, "communication_data_type": "fp32", "train_micro_batch_size_per_gpu": 1}
    torch.save({"optimizer_state_dict": {"loss_scaler": DynamicLossScaler(1.0), "overflow": True,
                                         "base_optimizer_state": {"state": {0: {"exp_avg": torch.zeros(2)}}}},
                "ds_config": ds_config, "ds_version": "0.14.0"}, path)
    values = cf.read_optim_states(path)
    assert values["ds.communication_data_type"] == "fp32" and values["ds.fp16.enabled"] is True
    assert values["state.loss_scale"] == 1.0 and values["state.overflow"] is True
    assert values["state.ds_version"] == "0.14.0"


def test_model_states_skipped_steps(tmp_path):
    path = tmp_path / "mp_rank_00_model_states.pt"
    torch.save({"module": {"w": torch.zeros(2)}, "skipped_steps": 12, "global_steps": 30, "global_samples": 240}, path)
    assert cf.read_model_states(path) == {"state.skipped_steps": 12, "state.global_steps": 30,
                                          "state.global_samples": 240}


def test_scaler_from_a_real_grad_scaler(tmp_path):
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)
    param = torch.nn.Parameter(torch.ones(2))
    optimizer = torch.optim.SGD([param], lr=0.1)
    overflows = 3
    for _ in range(overflows):
        scaler.scale(param.sum()).backward()
        param.grad.fill_(float("inf"))  # an overflowing gradient: the step is skipped, the scale halved
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    torch.save(scaler.state_dict(), tmp_path / "scaler.pt")
    assert cf.read_scaler(tmp_path / "scaler.pt")["state.loss_scale"] == 2.0 ** 16 / 2 ** overflows


def test_scaler_without_scale_is_unreadable(tmp_path):
    torch.save({"something": 1}, tmp_path / "scaler.pt")
    with pytest.raises(UnreadableFile, match="scale"):
        cf.read_scaler(tmp_path / "scaler.pt")


# --- LLaMA-Factory and ms-swift -----------------------------------------------------------------

LF_ARGS = {"stage": "sft", "do_train": True, "model_name_or_path": "Qwen/Qwen2-72B-Instruct", "finetuning_type": "lora",
           "quantization_bit": 4, "lora_target": "all", "lora_rank": 8, "learning_rate": 5.0e-5,
           "lr_scheduler_type": "cosine", "warmup_ratio": 0.1, "max_grad_norm": 1.0, "bf16": True,
           "deepspeed": "cache/ds_z3_config.json", "report_to": "none", "template": "qwen",
           "dataset": "alpaca_zh_demo,identity", "output_dir": "saves/Qwen2-72B/lora/train_2024", "val_size": 0.0,
           "optim": "adamw_torch", "plot_loss": True, "include_num_input_tokens_seen": False, "eval_steps": None,
           "modules": ["a", "b c"], "quoted": "a: b # not a comment"}


def test_flat_yaml_reads_what_pyyaml_writes(tmp_path):
    yaml = pytest.importorskip("yaml")
    path = tmp_path / "training_args.yaml"
    path.write_text(yaml.dump(LF_ARGS))
    assert read_flat_yaml(path) == yaml.safe_load(path.read_text())


def test_llamafactory_values(tmp_path):
    yaml = pytest.importorskip("yaml")
    path = tmp_path / "training_args.yaml"
    path.write_text(yaml.dump(LF_ARGS))
    values = fc.read_llamafactory_args(path)
    assert values["method"] == "qlora" and values["learning_rate"] == 5e-5 and values["max_grad_norm"] == 1.0
    assert values["quant.bnb_4bit_use_double_quant"] is True  # LLaMA-Factory's default when not written
    assert values["adapter.r"] == 8 and values["deepspeed"] == "cache/ds_z3_config.json"


def test_llamafactory_double_quant_off_and_full():
    values = fc.llamafactory_values({"finetuning_type": "full", "learning_rate": 1e-5})
    assert values["method"] == "full" and "quant.bnb_4bit_use_double_quant" not in values
    off = fc.llamafactory_values({"finetuning_type": "lora", "quantization_bit": 4, "double_quantization": False})
    assert off["quant.bnb_4bit_use_double_quant"] is False and off["method"] == "qlora"


def test_bad_yaml_is_unreadable(tmp_path):
    path = tmp_path / "training_args.yaml"
    path.write_text("learning_rate: 1e-4\nthis line has no colon\n")
    with pytest.raises(UnreadableFile, match="line 2"):
        read_flat_yaml(path)


def test_swift_args(tmp_path):
    path = tmp_path / "args.json"
    path.write_text(json.dumps({"model": "Qwen/Qwen2.5-7B-Instruct", "train_type": "lora", "torch_dtype": "bfloat16",
                                "quant_bits": 4, "quant_method": "bnb", "bnb_4bit_use_double_quant": True,
                                "learning_rate": 1e-4, "max_grad_norm": 1.0, "warmup_ratio": 0.05, "lora_rank": 8,
                                "deepspeed": {"zero_optimization": {"stage": 2}, "bf16": {"enabled": "auto"}}}))
    values = fc.read_swift_args(path)
    assert values["method"] == "qlora" and values["quant.bnb_4bit_use_double_quant"] is True
    assert values["model.torch_dtype"] == "bfloat16" and values["ds.zero_optimization.stage"] == 2
    assert values["learning_rate"] == 1e-4 and values["adapter.r"] == 8


def test_swift_args_of_a_full_fine_tune_name_no_adapter(tmp_path):
    """fyh2001/megatron-sft-recipes: a later ms-swift leaves train_type null and says tuner_type 'full', while
    args.json still lists the lora_rank / lora_alpha defaults; they are no adapter of this run."""
    path = tmp_path / "args.json"
    path.write_text(json.dumps({"train_type": None, "tuner_type": "full", "lora_rank": 8, "lora_alpha": 32,
                                "model": "google/gemma-4-26B-A4B-it", "learning_rate": 2e-5}))
    values = fc.read_swift_args(path)
    assert values["method"] == "full" and "adapter.r" not in values and "adapter.lora_alpha" not in values
    assert values["_framework"] == "swift"


# --- read_run_config ------------------------------------------------------------------------------

def _timeline_with_texts(**texts) -> Timeline:
    timeline = Timeline.empty()
    timeline.texts = dict(texts)
    return timeline


@pytest.fixture
def ds_run(tmp_path):
    """A run folder: training_args.bin naming ds_config.json (fp16/clipping 'auto', fp32 communication), config.json."""
    args = _training_args(learning_rate=1e-5, fp16=True, max_grad_norm=1.0)
    args.deepspeed = "ds_config.json"  # set after init: DeepSpeed is not installed here
    torch.save(args, tmp_path / "training_args.bin")
    (tmp_path / "checkpoint-2").mkdir()
    torch.save(args, tmp_path / "checkpoint-2" / "training_args.bin")
    (tmp_path / "ds_config.json").write_text(json.dumps({
        "fp16": {"enabled": "auto"}, "bf16": {"enabled": "auto"}, "gradient_clipping": "auto",
        "communication_data_type": "fp32", "zero_optimization": {"stage": 2}, "train_micro_batch_size_per_gpu": "auto"}))
    _tiny_qwen2_config().save_pretrained(tmp_path)
    (tmp_path / "trainer_state.json").write_text('{"log_history": []}')
    return tmp_path


def test_run_config_sources_and_auto(ds_run):
    config = read_run_config(discover(ds_run), _timeline_with_texts())
    assert config.get("learning_rate") == 1e-5 and config.source_of("learning_rate") == "training_args.bin"
    assert config.get("ds.fp16.enabled") is True and "auto" in config.source_of("ds.fp16.enabled")
    assert config.get("ds.bf16.enabled") is False
    assert config.get("ds.gradient_clipping") == 1.0
    assert config.get("ds.communication_data_type") == "fp32"
    assert config.get("model.num_hidden_layers") == 3
    assert len(config.values["learning_rate"]) == 1  # the checkpoint copy agrees and adds no second value
    assert {"training_args.bin", "checkpoint-2/training_args.bin", "ds_config.json", "config.json"} <= set(config.sources)
    assert config.missing == []
    assert config.conflicts() == {}


def test_run_config_shows_conflicts(ds_run):
    tb_args = json.dumps({"learning_rate": 3e-4, "fp16": True})
    config = read_run_config(discover(ds_run), _timeline_with_texts(args=tb_args))
    conflict = config.conflicts()["learning_rate"]
    assert [(v.value, v.source) for v in conflict] == [(1e-5, "training_args.bin"), (3e-4, "TensorBoard 'args' text")]


def test_run_config_missing_evidence(tmp_path):
    args = _training_args(learning_rate=1e-5)
    args.deepspeed = "/nonexistent/ds_z3.json"
    torch.save(args, tmp_path / "training_args.bin")
    (tmp_path / "adapter_config.json").write_text("{broken")
    config = read_run_config(discover(tmp_path), _timeline_with_texts(model_config="not json"))
    text = "\n".join(config.missing)
    assert "adapter_config.json: invalid JSON" in text
    assert "'/nonexistent/ds_z3.json'" in text and "not found" in text
    assert "TensorBoard 'model_config' text: not JSON" in text
    assert "no readable config.json" in text


def test_run_config_nothing_readable(tmp_path):
    (tmp_path / "training_args.bin").write_bytes(b"garbage")
    config = read_run_config(discover(tmp_path), _timeline_with_texts())
    assert config.values == {}
    assert any(line.startswith("training_args.bin: ") for line in config.missing)
    assert any("learning rate, warm-up, clipping and precision settings unknown" in line for line in config.missing)


def test_tensorboard_texts_are_read(tmp_path):
    (tmp_path / "trainer_state.json").write_text('{"log_history": []}')
    args = _training_args(learning_rate=2e-4, bf16=True, use_cpu=True)
    model = _tiny_qwen2_config()
    config = read_run_config(discover(tmp_path), _timeline_with_texts(args=args.to_json_string(),
                                                                      model_config=model.to_json_string()))
    assert config.get("learning_rate") == 2e-4 and config.get("bf16") is True
    assert config.source_of("learning_rate") == "TensorBoard 'args' text"
    assert config.get("model.model_type") == "qwen2"


@pytest.mark.parametrize("files, method", [
    (["adapter_model.safetensors"], "lora"),
    (["model.safetensors"], "full"),
    ([], None),
])
def test_method_from_weight_files(tmp_path, files, method):
    (tmp_path / "trainer_state.json").write_text('{"log_history": []}')
    for name in files:
        (tmp_path / name).write_bytes(b"")
    config = read_run_config(discover(tmp_path), _timeline_with_texts())
    assert config.get("method") == method


def test_method_qlora_from_quantized_model_config(tmp_path):
    config = _tiny_qwen2_config()
    config.quantization_config = transformers.BitsAndBytesConfig(load_in_4bit=True)
    config.save_pretrained(tmp_path)
    (tmp_path / "adapter_model.safetensors").write_bytes(b"")
    assert read_run_config(discover(tmp_path), _timeline_with_texts()).get("method") == "qlora"


def test_n_params_estimate_close_to_the_real_model(tmp_path):
    config = _tiny_qwen2_config(tie_word_embeddings=False)
    config.save_pretrained(tmp_path)
    real = sum(p.numel() for p in transformers.Qwen2ForCausalLM(config).parameters())
    estimate = read_run_config(discover(tmp_path), _timeline_with_texts()).get("n_params")
    assert abs(estimate - real) / real < 0.03


@pytest.mark.parametrize("name", ["Pegasus", "Bart"])
def test_n_params_estimate_of_an_encoder_decoder_counts_the_decoder_too(tmp_path, name):
    """minkduck's pegasus-large fine-tune was estimated at 465M from num_hidden_layers (the encoder's 16 layers
    counted as a decoder-only model's); with the decoder's cross-attention it is 568.7M."""
    config = getattr(transformers, f"{name}Config")(
        vocab_size=2000, d_model=64, encoder_layers=3, decoder_layers=2, encoder_ffn_dim=256, decoder_ffn_dim=128,
        encoder_attention_heads=4, decoder_attention_heads=4, max_position_embeddings=16)
    config.save_pretrained(tmp_path)
    real = sum(p.numel() for p in getattr(transformers, f"{name}ForConditionalGeneration")(config).parameters())
    estimate = read_run_config(discover(tmp_path), _timeline_with_texts()).get("n_params")
    assert abs(estimate - real) / real < 0.05


def test_n_params_estimate_of_a_glm4_config_names(tmp_path):
    """THUDM's GLM-4-9B config.json spells its sizes ChatGLM's way (num_layers, ffn_hidden_size, multi_query_group_num,
    padded_vocab_size): about 9.40B parameters (it was read as 12B with the MLP and KV heads guessed)."""
    (tmp_path / "config.json").write_text(json.dumps({
        "model_type": "chatglm", "num_layers": 40, "hidden_size": 4096, "ffn_hidden_size": 13696,
        "num_attention_heads": 32, "multi_query_attention": True, "multi_query_group_num": 2, "kv_channels": 128,
        "padded_vocab_size": 151552, "tie_word_embeddings": False}))
    estimate = read_run_config(discover(tmp_path), _timeline_with_texts()).get("n_params")
    assert abs(estimate - 9.40e9) / 9.40e9 < 0.03


def test_n_params_from_the_shard_index(tmp_path):
    model = transformers.Qwen2ForCausalLM(_tiny_qwen2_config())
    model.save_pretrained(tmp_path, max_shard_size="100KB")
    assert (tmp_path / "model.safetensors.index.json").exists()
    config = read_run_config(discover(tmp_path), _timeline_with_texts())
    assert config.get("n_params") == model.num_parameters()
    assert "total_parameters" in config.source_of("n_params")


# --- configurations under other names (batch Q2 of the real-run corpus) ------------------------------

def test_a_training_args_bin_written_as_json_text_is_read(tmp_path):
    """Early LLaMA-Factory releases saved TrainingArguments.to_json_string() as training_args.bin (KMnO4-zx's run)."""
    (tmp_path / "training_args.bin").write_text(_training_args(fp16=False, learning_rate=5e-5).to_json_string()
                                                .replace('"fp16": false', '"fp16": true'))
    values = cf.read_training_args_values(tmp_path / "training_args.bin")
    assert values["fp16"] is True and values["learning_rate"] == 5e-5


def test_a_config_json_that_carries_a_peft_adapter_gives_the_adapter_and_a_model_card_its_quantization(tmp_path):
    """ccccai239's DPO save: the adapter's fields merged into config.json (no adapter_config.json), and PEFT's model
    card listing the 4-bit bitsandbytes setting the adapter was trained on: QLoRA."""
    run = tmp_path / "run"
    run.mkdir()
    config = _tiny_qwen2_config().to_dict() | {"peft_type": "LORA", "r": 8, "lora_alpha": 16, "task_type": "CAUSAL_LM"}
    (run / "config.json").write_text(json.dumps(config))
    (run / "README.md").write_text("---\nlibrary_name: peft\n---\n## Training procedure\n\n\nThe following "
                                   "`bitsandbytes` quantization config was used during training:\n- load_in_8bit: False\n"
                                   "- load_in_4bit: True\n- llm_int8_threshold: 6.0\n- bnb_4bit_quant_type: fp4\n"
                                   "### Framework versions\n\n\n- PEFT 0.4.0\n")
    got = read_run_config(discover(run), Timeline.empty())
    assert got.get("adapter.peft_type") == "LORA" and got.get("quant.load_in_4bit") is True
    assert got.get("quant.llm_int8_threshold") == 6.0 and got.get("method") == "qlora"
    (run / "README.md").write_text("# My project\n\nWe trained with load_in_4bit: True, see below.\n")
    got = read_run_config(discover(run), Timeline.empty())  # a README that is no model card says nothing
    assert got.get("quant.load_in_4bit") is None and got.get("method") == "lora"
    assert "README.md" not in got.sources and not [m for m in got.missing if "README" in m]


LLAMAFACTORY_YAML = """### model
model_name_or_path: /models/Qwen2.5-7B-Instruct
### method
stage: dpo
do_train: true
finetuning_type: lora
lora_target: all
pref_beta: 0.1
### train
per_device_train_batch_size: 2
learning_rate: 5.0e-6
num_train_epochs: 2.0
bf16: true
"""


def test_a_llamafactory_yaml_of_any_name_gives_stage_method_and_precision(tmp_path):
    (tmp_path / "qwen25_7b_lora_dpo.yaml").write_text(LLAMAFACTORY_YAML)
    got = read_run_config(discover(tmp_path), Timeline.empty())
    assert (got.get("stage"), got.get("method"), got.get("bf16"), got.get("_framework")) == \
        ("dpo", "lora", True, "llamafactory")
    assert got.get("learning_rate") == 5e-6 and got.source_of("stage") == "qwen25_7b_lora_dpo.yaml"


def test_an_axolotl_config_gives_method_quantization_and_the_run_settings(tmp_path):
    (tmp_path / "qlora.yml").write_text(
        "base_model: NousResearch/Llama-3.2-1B\nload_in_8bit: false\nload_in_4bit: true\ndatasets:\n"
        "  - path: teknium/GPT4-LLM-Cleaned\n    type: alpaca\nadapter: qlora\nlora_r: 32\nlora_alpha: 16\n"
        "sequence_len: 2048\ngradient_accumulation_steps: 4\nmicro_batch_size: 2\nnum_epochs: 1\n"
        "optimizer: paged_adamw_8bit\nlr_scheduler: cosine\nlearning_rate: 0.0002\nbf16: auto\nfp16:\nwarmup_steps: 10\n")
    got = read_run_config(discover(tmp_path), Timeline.empty())
    assert (got.get("method"), got.get("quant.load_in_4bit"), got.get("_framework")) == ("qlora", True, "axolotl")
    assert (got.get("learning_rate"), got.get("per_device_train_batch_size"), got.get("num_train_epochs")) == \
        (0.0002, 2, 1)
    assert got.get("bf16") is None  # 'auto': bf16 where the hardware has it, unknown here
    (tmp_path / "qlora.yml").write_text("base_model: x\nmicro_batch_size: 1\n")  # no adapter: every weight
    assert read_run_config(discover(tmp_path), Timeline.empty()).get("method") == "full"


def test_a_yaml_file_that_is_no_run_configuration_is_passed_over_silently(tmp_path):
    (tmp_path / "dataset_card.yaml").write_text("license: mit\ntags:\n  - chat\n")
    (tmp_path / "hydra.yaml").write_text("a:\n  b:\n    c:\n      d: 1\n")  # deeper than the flat reader goes
    got = read_run_config(discover(tmp_path), Timeline.empty())
    assert got.get("method") is None and got.sources == []
    assert not [m for m in got.missing if "dataset_card" in m or "hydra" in m]


def test_a_llamafactory_training_args_yaml_gives_the_stage(tmp_path):
    (tmp_path / "training_args.yaml").write_text(LLAMAFACTORY_YAML.replace("stage: dpo", "stage: sft"))
    assert read_run_config(discover(tmp_path), Timeline.empty()).get("stage") == "sft"


def test_a_wandb_config_yaml_is_not_read_as_a_llamafactory_configuration(tmp_path):
    (tmp_path / "config.yaml").write_text("wandb_version: 1\n\nfinetuning_type:\n  desc: null\n  value: lora\n"
                                          "learning_rate:\n  desc: null\n  value: 5.0e-05\n")
    assert cf.read_config_yaml(tmp_path / "config.yaml") == {}


def _lightning_run(tmp_path, hparams: dict):
    """A Lightning CSVLogger folder, written by the real logger: hparams.yaml beside metrics.csv."""
    loggers = pytest.importorskip("lightning.pytorch.loggers")
    logger = loggers.CSVLogger(str(tmp_path), name="run")
    logger.log_hyperparams(hparams)
    for step in range(49, 1000, 50):
        logger.log_metrics({"train_loss": 4.0 - step / 500}, step=step)
    logger.save()
    logger.finalize("success")
    return read_run_config(discover(tmp_path), Timeline.empty())


def test_lightnings_hparams_of_a_model_built_from_its_sizes_say_from_scratch_and_the_framework(tmp_path):
    """BvoJa/GPTTT: cfg.model.n_layer / n_embd nested, no pre-trained model named: built from random weights."""
    got = _lightning_run(tmp_path, {"cfg": {"model": {"n_layer": 6, "n_embd": 384, "learning_rate": 3e-4}},
                                    "vocab_size": 65})
    assert (got.get("_framework"), got.get("learning_rate")) == ("lightning", 3e-4)
    assert got.get("model.built_from_sizes") == "n_embd=384, n_layer=6" and got.get("method") is None


def test_lightnings_hparams_naming_a_pretrained_model_and_no_adapter_are_a_full_fine_tune(tmp_path):
    """Melissasssss/TurnGPT: pretrained_model_name_or_path gpt2, pretrained true, nothing about an adapter."""
    got = _lightning_run(tmp_path, {"pretrained_model_name_or_path": "gpt2", "pretrained": True,
                                    "learning_rate": 6.25e-5})
    assert (got.get("method"), got.get("model.name_or_path")) == ("full", "gpt2")
    assert got.get("model.built_from_sizes") is None
    lora = _lightning_run(tmp_path / "lora", {"pretrained_model_name_or_path": "gpt2", "lora_r": 8})
    assert lora.get("method") is None  # an adapter's hyperparameter: not said to be full
    named = _lightning_run(tmp_path / "named", {"model_name_or_path": "meta-llama/Llama-2-7b-hf", "finetuning": "lora"})
    assert named.get("method") is None  # an adapter named in a value


@pytest.mark.parametrize("make", [
    lambda: transformers.GPT2Config(n_layer=3, n_embd=64, n_head=2, vocab_size=501, n_positions=128),
    lambda: transformers.T5Config(d_model=64, d_ff=128, num_layers=2, num_heads=2, d_kv=32, vocab_size=1000),
    lambda: transformers.T5Config(d_model=64, d_ff=128, num_layers=2, num_decoder_layers=3, num_heads=2, d_kv=32,
                                  vocab_size=1000, feed_forward_proj="gated-gelu", tie_word_embeddings=False),
])
def test_gpt2_and_t5_sizes_are_counted_exactly_from_their_config(tmp_path, make):
    """The judged sizes of the real GPT-2 and t5-small fine-tunes are the models' exact counts; the decoder-only
    estimate missed GPT-2's position embeddings and biases and T5's encoder and cross-attention."""
    config = make()
    config.save_pretrained(tmp_path)
    model_class = transformers.GPT2LMHeadModel if config.model_type == "gpt2" else transformers.T5ForConditionalGeneration
    with torch.device("meta"):
        expected = model_class(config).num_parameters()
    got = read_run_config(discover(tmp_path), Timeline.empty())
    assert got.get("n_params") == expected and "count from" in got.source_of("n_params")


def test_mlx_lms_adapter_config_gives_the_method_and_the_run(tmp_path):
    """Arjun-254's adapters/adapter_config.json: mlx_lm.lora's own arguments, no peft_type."""
    (tmp_path / "adapters").mkdir()
    mlx = {"adapter_path": "adapters", "batch_size": 1, "iters": 600, "learning_rate": 1e-05, "lora_layers": 4,
           "lora_parameters": {"rank": 8, "alpha": 16, "dropout": 0.0, "scale": 10.0},
           "model": "mlx-community/quantized-gemma-2b", "seed": 0, "train": True, "use_dora": False}
    (tmp_path / "adapters" / "adapter_config.json").write_text(json.dumps(mlx))
    got = read_run_config(discover(tmp_path), Timeline.empty())
    assert (got.get("method"), got.get("_framework"), got.get("max_steps")) == ("qlora", "mlx", 600)
    assert not [m for m in got.missing if "adapter_config" in m]
    mlx.update(model="mlx-community/Qwen2.5-0.5B-Instruct-bf16", fine_tune_type="full")
    (tmp_path / "adapters" / "adapter_config.json").write_text(json.dumps(mlx))
    assert read_run_config(discover(tmp_path), Timeline.empty()).get("method") == "full"


@dataclasses.dataclass
class FinetuningArguments:  # the shape of ChatGLM-Efficient-Tuning's utils.config.FinetuningArguments
    finetuning_type: str = "lora"
    pre_seq_len: int = 16
    lora_rank: int = 8


def test_finetuning_args_bin_names_the_tuner_and_is_no_checkpoint(tmp_path):
    """linhuall's ChatGLM-Efficient-Tuning run: finetuning_args.bin (hiyouga's pickled FinetuningArguments, its
    finetuning_type 'p_tuning') was opened as a weight file, failed, and the report said 'none could be read'."""
    torch = pytest.importorskip("torch")
    torch.save(FinetuningArguments("p_tuning"), tmp_path / "finetuning_args.bin")
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 20, "log_history": [
        {"step": s, "loss": 2.0 - s / 100, "epoch": s / 20} for s in (10, 20)]}))
    layout = discover(tmp_path)
    assert layout.weight_files == [] and [p.name for p in layout.config_files] == ["finetuning_args.bin"]
    assert read_run_config(layout, _timeline_with_texts()).get("method") == "peft"


def test_fp16_off_in_a_release_without_a_bf16_field_is_fp32(tmp_path):
    """jacobdgm's irish-tunes GPT-2 (transformers 4.9): its pickled TrainingArguments hold fp16 False and no bf16
    field at all (TrainingArguments has had one since 4.13), so the run was fp32. A user's YAML without bf16 says
    nothing of the kind."""
    from forensics.analysis import analyze

    fields = {f"field_{i}": i for i in range(70)}
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 30, "log_history": [
        {"step": s, "loss": 3.0 - s / 20, "epoch": s / 30} for s in (10, 20, 30)]}))
    (tmp_path / "training_args.bin").write_text(json.dumps(dict(fields, output_dir="out", per_device_train_batch_size=16,
                                                                  fp16=False)))
    assert analyze(tmp_path).run_profile.precision == "fp32"
    (tmp_path / "training_args.bin").write_text(json.dumps({"output_dir": "out", "per_device_train_batch_size": 16,
                                                             "fp16": False}))
    assert analyze(tmp_path).run_profile.precision == "unknown"
