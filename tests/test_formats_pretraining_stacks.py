"""Tests of the readers of pre-training stacks' logs: composer, nanotron, levanter, torchtune, litgpt, OLMo-core.

Formats found in the frameworks' own source (fmt1 sweep): composer / llm-foundry, open-instruct, nanotron,
levanter, torchtune, litgpt, OLMo-core. Each run below is built as that framework's code prints or writes it
(the source file and line in each docstring; commits: composer 6405188, llm-foundry 8c8dd48, open-instruct e6c3044,
nanotron 2411b02, levanter 9263f81, torchtune bd2a0fc, litgpt 2685705, OLMo-core fa6c501). A failing test is a
reader gap; a passing one records coverage (at most one per framework)."""
from __future__ import annotations

import math

from support.format_runs import analyze_logs, assert_broken_at, assert_healthy_loss, losses, write_file

# --- builders: what each framework prints / writes (30 logged steps, loss 2.5 -> 1.2, NaN from step 25) ---


def composer_log(nan_at=None):
    hp = """******************************
Config:
device_train_batch_size: 8
device_train_microbatch_size: 8
global_train_batch_size: 8
max_duration: 30ba
model:
  name: hf_causal_lm
  pretrained: true
  pretrained_model_name_or_path: gpt2
  peft_config:
    peft_type: LORA
    r: 16
    lora_alpha: 32
n_params: 124439808
n_trainable_params: 294912
optimizer:
  lr: 0.0001
  name: decoupled_adamw
precision: amp_bf16
run_name: gpt2-lora

******************************
"""
    lines = [hp]
    for s, l in enumerate(losses(nan_at), 1):
        lines.append(f"[batch={s}/30]:\n\t Train time/batch: {s-1}\n\t Train time/sample: {(s-1)*8}\n\t Train time/batch_in_epoch: {s-1}\n\t Train time/sample_in_epoch: {(s-1)*8}\n\t Train time/token: {(s-1)*8192}\n\t Train time/token_in_epoch: {(s-1)*8192}\n\t Train trainer/device_train_microbatch_size: 8\n\t Train loss/train/total: {l:.4f}\n\t Train metrics/train/LanguageCrossEntropy: {l:.4f}\n\t Train metrics/train/LanguagePerplexity: {math.exp(l) if l==l else l:.4f}\n\t Train metrics/train/TokenAccuracy: 0.4500\n\t Train l2_norm/grad/global: {0.9 - s*0.01 if l==l else float('nan'):.4f}\n\t Train lr-DecoupledAdamW/group0: {1e-4 * (1 - s/40):.4f}\n\t Train time/train: {s*0.001:.4f}\n\t Train time/val: 0.0000\n\t Train time/total: {s*0.001:.4f}\n\t Train throughput/batches_per_sec: 2.1000")
        if s % 10 == 0:
            for b in range(1, 5):
                lines.append(f"[Eval batch={b}/5] Eval on eval data")
            el = 2.4 - s * 0.03
            lines.append(f"[Eval batch=5/5] Eval on eval data:\n\t Eval metrics/eval/LanguageCrossEntropy: {el:.4f}\n\t Eval metrics/eval/LanguagePerplexity: {math.exp(el):.4f}\n\t Eval metrics/eval/TokenAccuracy: 0.4600")
    return "\n".join(lines) + "\n"


TT_CFG = """output_dir: /tmp/torchtune/llama3_2_1B/lora_single_device
model:
  _component_: torchtune.models.llama3_2.lora_llama3_2_1b
  lora_attn_modules: ['q_proj', 'v_proj', 'output_proj']
  apply_lora_to_mlp: True
  lora_rank: 64
  lora_alpha: 128
  lora_dropout: 0.0
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/Llama-3.2-1B-Instruct/original/tokenizer.model
checkpointer:
  _component_: torchtune.training.FullModelHFCheckpointer
  checkpoint_dir: /tmp/Llama-3.2-1B-Instruct/
  model_type: LLAMA3_2
dataset:
  _component_: torchtune.datasets.alpaca_cleaned_dataset
  packed: false
optimizer:
  _component_: torch.optim.AdamW
  fused: true
  lr: 0.0003
loss:
  _component_: torchtune.modules.loss.LinearCrossEntropyLoss
batch_size: 4
epochs: 1
max_steps_per_epoch: 30
gradient_accumulation_steps: 8
clip_grad_norm: 1.0
metric_logger:
  _component_: torchtune.training.metric_logging.DiskLogger
  log_dir: /tmp/torchtune/llama3_2_1B/lora_single_device/logs
log_every_n_steps: 1
device: cuda
dtype: bf16
"""


def torchtune_txt(nan_at=None, tensor_gn=False):
    out = []
    for s, l in enumerate(losses(nan_at), 1):
        gn = 0.9 - s * 0.01 if l == l else float("nan")
        gns = f"tensor({gn:.4f}, device='cuda:0')" if tensor_gn else f"{gn}"
        out.append(f"Step {s} | loss:{l} lr:{3e-4 * s / 30} tokens_per_second_per_gpu:{1500.0 + s} peak_memory_active:5.12 peak_memory_alloc:5.12 peak_memory_reserved:6.3 grad_norm:{gns} ")
    return "\n".join(out) + "\n"


def litgpt_log(nan_at=None):
    out = ["{'checkpoint_dir': PosixPath('checkpoints/meta-llama/Llama-3.2-1B'),\n 'precision': 'bf16-true',\n 'quantize': None,\n 'lora_r': 8,\n 'lora_alpha': 16}",
           "Number of trainable parameters: 1,126,400", "Number of non-trainable parameters: 1,235,814,400"]
    for s, l in enumerate(losses(nan_at), 1):
        val = "n/a" if s < 10 else f"{2.4 - (s // 10) * 0.3:.3f}"
        out.append(f"Epoch 1 | iter {s*2} step {s} | loss train: {l:.3f}, val: {val} | iter time: 123.45 ms (step)")
        if s % 10 == 0:
            out.append(f"iter {s*2}: val loss {2.4 - (s // 10) * 0.3:.4f}, val time: 512.00 ms")
    return "\n".join(out) + "\n"


def olmo_core_log(nan_at=None):
    out = []
    for s, l in enumerate(losses(nan_at), 1):
        ts = f"2025-06-01 12:00:{s:02d}.000\tjupiter-cs-aus-1:0\tolmo_core.train.callbacks.console_logger:68\tINFO\t"
        gn = "nan" if l != l else f"{0.9 - s*0.01:.4f}"
        out.append(ts + f"[step={s}/30,epoch=0,eta=0:00:{30-s:02d}]\n    train/CE loss={'nan' if l != l else f'{l:.4f}'}\n    train/PPL={'nan' if l != l else f'{math.exp(l):.4f}'}\n    optim/total grad norm={gn}\n    optim/LR (group 0)={3e-4:.4e}\n    throughput/total tokens=1,234,567")
        if s % 10 == 0:
            out.append(f"2025-06-01 12:01:{s:02d}.000\tjupiter-cs-aus-1:0\tolmo_core.train.callbacks.evaluator_callback:178\tINFO\tFinished lm evals in 1.0 seconds. Metrics:\n    CE loss={2.4 - s*0.03:.4f}\n    PPL={math.exp(2.4 - s*0.03):.4f}")
    return "\n".join(out) + "\n"


def open_instruct_log(nan_at=None, dpo=False):
    out = ["2025-08-20 12:00:00 - INFO - finetune.py:731 - ***** Running training *****",
           "2025-08-20 12:00:00 - INFO - finetune.py:737 -   Total optimization steps = 30"]
    for s, l in enumerate(losses(nan_at), 1):
        if dpo:
            l = l * 0.69 / 2.5
            out.append(f"2025-08-20 12:00:{s:02d} - INFO - dpo_tune_cache.py:677 -   Step: {s}, LR: {5e-7 * s / 30}, Loss: {l}")
        else:
            out.append(f"2025-08-20 12:00:{s:02d} - INFO - finetune.py:948 -   Step: {s}, LR: {2e-5 * (1 - s / 30)}, Loss: {l}, TPS: {12345.6 + s}")
    return "\n".join(out) + "\n"


def _hf(n):
    if abs(n) < 1: return "{:.3g}".format(n)
    sizes = ["", "K", "M", "B", "T"]; n = float("{:.3g}".format(n)); m = 0
    while abs(n) >= 1000 and m < 4: n /= 1000.0; m += 1
    return "{}{}".format("{:f}".format(n).rstrip("0").rstrip("."), sizes[m])


def nanotron_log(nan_at=None):
    out = ["04/22/2026 12:00:00 [INFO|DP=0|PP=0|TP=0]: [Start training] datetime: 2026-04-22 12:00:00 | mbs: 8 | grad_accum: 1 | cp: 1 | sequence_length: 1024 | global_batch_size: 8 | train_steps: 30 | start_iteration_step: 0 | consumed_tokens_total: 0"]
    for s, l in enumerate(losses(nan_at), 1):
        gn = float("nan") if l != l else 0.9 - s * 0.01
        out.append(f"04/22/2026 12:00:{s:02d} [INFO|DP=0|PP=0|TP=0]: iteration: {s} / 30 | consumed_tokens: {_hf(s*8192)} | time_per_iteration_ms: {_hf(1234.5)} | tokens_per_sec: {_hf(6636.2)} | tokens_per_sec_per_gpu: {_hf(6636.2)} | global_batch_size: {_hf(8192)} | grad_norm: {_hf(gn)} | lm_loss: {_hf(l)} | lr: {_hf(3e-4)} | model_tflops_per_gpu: {_hf(12.3)} | eta: 0:00:{30-s:02d}")
    return "\n".join(out) + "\n"


def levanter_log(nan_at=None):
    out = []
    for s, l in enumerate(losses(nan_at), 1):
        pct = int(100 * s / 30)
        out.append(f"train: {pct:3d}%|{'#' * (pct // 10):10s}| {s}/30 [00:{s:02d}<00:{30-s:02d},  1.00it/s, loss={'{0:.3g}'.format(l)}]")
    return "\r".join(out) + "\n"


def torchtune_stdout(nan_at=None):
    out = ["INFO:torchtune.utils._logging:Running LoRAFinetuneRecipeSingleDevice with resolved config:", "", TT_CFG,
           "INFO:torchtune.utils._logging:Model is initialized with precision torch.bfloat16."]
    bars = []
    for s, l in enumerate(losses(nan_at), 1):
        pct = int(100 * s / 30)
        bars.append(f"1|{s}|Loss: {l}: {pct:3d}%|{'#' * (pct // 10):10s}| {s}/30 [00:{s:02d}<00:{30-s:02d},  1.00s/it]")
    return "\n".join(out) + "\n" + "\r".join(bars) + "\n"


# --- mosaicml composer / llm-foundry -------------------------------------------------------------------------

def test_composer_console_logger_batch_blocks_give_the_loss(tmp_path):
    """composer/loggers/console_logger.py:235-246 (`log_to_console`) prints `[batch=N/M]:` then one
    `\n\t Train {name}: {value:.4f}` line per metric (`loss/train/total`, trainer.py:2668; LRMonitor
    `lr-DecoupledAdamW/group0`; OptimizerMonitor `l2_norm/grad/global`), evals as `[Eval batch=5/5] Eval on eval data:`
    + `\t Eval metrics/eval/LanguageCrossEntropy: X`, and the config at fit start (`Config:` + yaml.dump:
    precision: amp_bf16, model.peft_config.peft_type: LORA, n_params). The tool finds no training log at all."""
    a = analyze_logs(write_file(tmp_path, "train.log", composer_log()))
    assert_healthy_loss(a)
    assert "eval_loss" in a.timeline.metrics
    assert a.run_profile.framework in ("composer", "llm-foundry", "llmfoundry")
    assert a.run_profile.precision == "bf16"


def test_composer_console_nan_loss_is_broken_at_its_batch(tmp_path):
    """composer/loggers/logger.py:183 `format_log_data_value` prints a NaN float as `nan`
    (`\t Train loss/train/total: nan` under `[batch=25/30]:`): must be broken at batch 25."""
    assert_broken_at(analyze_logs(write_file(tmp_path, "train.log", composer_log(25))), 25)


# --- huggingface nanotron ------------------------------------------------------------------------------------

def test_nanotron_iteration_colon_lines_give_the_loss(tmp_path):
    """nanotron src/nanotron/logging/base.py:314-319 (`LoggerWriter.add_scalars_from_list`) prints
    `iteration: N / M | consumed_tokens: 81.9K | ... | lm_loss: 2.34 | lr: 0.0003 | ... | eta: 0:00:20`
    (values through `human_format`, base.py:268; entries in trainer.py ~774-786). `iteration:` has a colon where
    Megatron prints `iteration N/M |`, so the tool finds no training log (NotARunDirectory)."""
    a = analyze_logs(write_file(tmp_path, "train.log", nanotron_log()))
    assert_healthy_loss(a)
    assert "grad_norm" in a.timeline.metrics


def test_nanotron_nan_lm_loss_is_broken_at_its_iteration(tmp_path):
    """nanotron human_format (logging/base.py:268) prints NaN as `nan`: `iteration: 25 / 30 | ... | lm_loss: nan`."""
    assert_broken_at(analyze_logs(write_file(tmp_path, "train.log", nanotron_log(25))), 25)


# --- pytorch torchtune ---------------------------------------------------------------------------------------

def test_torchtune_disklogger_txt_is_read(tmp_path):
    """Coverage. torchtune/training/metric_logging.py:184-189 (`DiskLogger.log_dict`) writes
    `Step N | loss:X lr:Y tokens_per_second_per_gpu:Z ... grad_norm:G ` to {output_dir}/logs/log_{ts}.txt."""
    write_file(tmp_path, "torchtune_config.yaml", TT_CFG)
    a = analyze_logs(write_file(tmp_path, "logs/log_1712345678.txt", torchtune_txt()))
    assert_healthy_loss(a)
    b_dir = tmp_path / "nan"
    write_file(b_dir, "logs/log_1712345678.txt", torchtune_txt(25))
    assert_broken_at(analyze_logs(b_dir), 25)


def test_torchtune_config_yaml_gives_framework_method_precision(tmp_path):
    """torchtune/training/metric_logging.py:27-45 (`save_config`) writes `{output_dir}/torchtune_config.yaml`:
    nested `model: _component_: torchtune.models.llama3_2.lora_llama3_2_1b` with `lora_rank`, and `dtype: bf16`
    (recipes/configs/llama3_2/1B_lora_single_device.yaml). The tool says framework, method and precision unknown."""
    write_file(tmp_path, "torchtune_config.yaml", TT_CFG)
    a = analyze_logs(write_file(tmp_path, "logs/log_1712345678.txt", torchtune_txt()))
    assert a.run_profile.framework == "torchtune"
    assert a.run_profile.method == "lora"
    assert a.run_profile.precision == "bf16"


def test_torchtune_console_resolved_config_gives_method(tmp_path):
    """torchtune/config/_utils.py:29 logs `Running LoRAFinetuneRecipeSingleDevice with resolved config:` + the YAML
    (model `_component_: torchtune.models.llama3_2.lora_llama3_2_1b`, lora_rank); the tool reads the tqdm loss
    (`1|N|Loss: X`, recipes/lora_finetune_single_device.py:660) and the precision, but says method and framework
    unknown."""
    a = analyze_logs(write_file(tmp_path, "train.log", torchtune_stdout()))
    assert a.run_profile.method == "lora"
    assert a.run_profile.framework == "torchtune"


# --- Lightning-AI litgpt -------------------------------------------------------------------------------------

def test_litgpt_finetune_lines_are_read(tmp_path):
    """Coverage. litgpt/finetune/lora.py:395-401 prints `Epoch E | iter I step S | loss train: X, val: V | iter time:
    T ms (step)` and :419 `iter I: val loss X, val time: T ms`; the timeline's steps are litgpt's iter (fabric.log_dict
    step), a finding's the optimizer step the line prints beside it (review day 8: lit-gpt issue 628's judgement)."""
    a = analyze_logs(write_file(tmp_path, "train.log", litgpt_log()))
    assert_healthy_loss(a)
    assert len(a.timeline.series("eval_loss")) == 3
    b_dir = tmp_path / "nan"
    assert_broken_at(analyze_logs(write_file(b_dir, "train.log", litgpt_log(25))), 25)  # iter 50 is step 25


def test_litgpt_printed_hparams_give_precision_and_method(tmp_path):
    """litgpt/finetune/lora.py (setup -> main) prints `pprint.pformat(hparams)` (pretrain.py:154 likewise):
    `'precision': 'bf16-true'`, `'lora_r': 8`, and `Number of trainable parameters: 1,126,400` (lora.py:214).
    The tool says precision and method unknown."""
    a = analyze_logs(write_file(tmp_path, "train.log", litgpt_log()))
    assert a.run_profile.precision == "bf16"
    assert a.run_profile.method == "lora"


# --- allenai OLMo-core ---------------------------------------------------------------------------------------

def test_olmo_core_console_blocks_are_read(tmp_path):
    """Coverage. OLMo-core src/olmo_core/train/callbacks/console_logger.py:67-76 logs `[step=N/M,epoch=E,eta=...]`
    then `    train/CE loss=X` / `    optim/total grad norm=G` lines (format_float prints NaN as `nan`)."""
    a = analyze_logs(write_file(tmp_path, "train.log", olmo_core_log()))
    assert_healthy_loss(a)
    assert a.run_profile.framework == "olmo"
    b_dir = tmp_path / "nan"
    assert_broken_at(analyze_logs(write_file(b_dir, "train.log", olmo_core_log(25))), 25)


def test_olmo_core_evaluator_block_gives_eval_loss(tmp_path):
    """OLMo-core src/olmo_core/train/callbacks/evaluator_callback.py:170,178 logs `Finished lm evals in 1.0 seconds.
    Metrics:` then `    CE loss=X` / `    PPL=Y` (recorded as eval/lm/CE loss). The tool reads no eval_loss (its
    `PPL` lands in a metric named `PPL`)."""
    a = analyze_logs(write_file(tmp_path, "train.log", olmo_core_log()))
    assert "eval_loss" in a.timeline.metrics
    assert len(a.timeline.series("eval_loss")) == 3


# --- allenai open-instruct -----------------------------------------------------------------------------------

def test_open_instruct_finetune_step_lines_are_read(tmp_path):
    """Coverage. open-instruct open_instruct/finetune.py:948-950 logs `  Step: N, LR: X, Loss: Y, TPS: Z` through
    logger_utils.py:35's `%(asctime)s - %(levelname)s - %(filename)s:%(lineno)d - %(message)s`."""
    a = analyze_logs(write_file(tmp_path, "train.log", open_instruct_log()))
    assert_healthy_loss(a)
    b_dir = tmp_path / "nan"
    assert_broken_at(analyze_logs(write_file(b_dir, "train.log", open_instruct_log(25))), 25)


# --- stanford levanter ---------------------------------------------------------------------------------------

def test_levanter_pbar_postfix_loss_is_read(tmp_path):
    """Coverage. levanter src/levanter/callbacks/_metrics.py:153-165 (`pbar_logger`, desc "train") sets the tqdm
    postfix `loss=X` each step: `train:  33%|###| 10/30 [00:10<00:20,  1.00it/s, loss=2.34]`."""
    a = analyze_logs(write_file(tmp_path, "train.log", levanter_log()))
    assert_healthy_loss(a)
    b_dir = tmp_path / "nan"
    assert_broken_at(analyze_logs(write_file(b_dir, "train.log", levanter_log(25))), 25)
