"""Tests of the readers of TensorBoard event files as torch / Lightning / Accelerate write them, and of checkpoints.

Tracker and checkpoint formats found in the writers' own source (fmt4 sweep): torch's SummaryWriter as the
torch.utils.tensorboard docs show it, Lightning's TensorBoardLogger (lightning 2.6.6), Accelerate's TensorBoard
tracker (accelerate 1.15.0), sharded safetensors from transformers' save_pretrained (5.24.0) and PEFT adapters
(peft 0.21.2). Every event file is written by torch's own SummaryWriter (torch 2.13), every checkpoint by the library's
own save. A failing test is a reader gap; a passing one records coverage (at most one per format).

Also checked outside this file, all read correctly: real W&B offline runs logged with wandb.log (0.31.0), a
pre-0.10 `wandb-history.jsonl` run folder, real MLflow file stores logged with mlflow.log_metrics (3.17.2), real
DeepSpeed 0.19.8 ZeRO-2 and ZeRO-3 bf16 checkpoints (`bf16_zero_pp_rank_0_mp_rank_00_optim_states.pt`) with NaN
fp32 masters from global_step25 (analyze and bisect name global_step20 / global_step25)."""
from __future__ import annotations

import json
import time

import pytest

import forensics
from support.format_runs import analyze_logs, assert_broken_at, assert_healthy_loss

N = 30


def losses(nan_at=None, n=N):
    """Step 1..n: a loss falling from 2.5 to 1.2, NaN from step `nan_at` on."""
    return [float("nan") if nan_at is not None and s >= nan_at else 2.5 - 1.3 * (s - 1) / (n - 1)
            for s in range(1, n + 1)]


def _summary_writer(folder):
    from torch.utils.tensorboard import SummaryWriter

    return SummaryWriter(str(folder))


def _write_scalars(folder, loss_tag, lr_tag, eval_tag, nan_at=None, extra=()):
    """One event file: loss and LR at every step, an eval every 10 steps, `extra` (tag, value) at every step."""
    w = _summary_writer(folder)
    for s, v in enumerate(losses(nan_at), 1):
        w.add_scalar(loss_tag, v, s)
        w.add_scalar(lr_tag, 1e-4 * (1 - s / 40), s)
        for tag, value in extra:
            w.add_scalar(tag, value, s)
        if s % 10 == 0:
            w.add_scalar(eval_tag, 2.4 - s * 0.03, s)
    w.close()
    return folder


# --- torch.utils.tensorboard as its own documentation shows it -------------------------------------------------

def test_torch_tutorial_loss_train_tags_are_the_loss_and_a_nan_is_broken(tmp_path):
    """pytorch docs/source/tensorboard.rst (the torch.utils.tensorboard page) logs
    `writer.add_scalar('Loss/train', loss, n_iter)` and `'Loss/test'`; copied into countless training scripts.
    `Loss/train` / `Loss/test` (and `loss/train`, `Train/Loss`) stay unmapped: the run says 'the logs hold no loss'
    (warning) and a NaN from step 25 is not seen (warning, first incident at step 1)."""
    ok = _write_scalars(tmp_path / "ok", "Loss/train", "lr", "Loss/test")
    assert_healthy_loss(analyze_logs(ok))
    assert "eval_loss" in analyze_logs(ok).timeline.metrics
    assert_broken_at(analyze_logs(_write_scalars(tmp_path / "nan", "Loss/train", "lr", "Loss/test", nan_at=25)), 25)


# --- Lightning's TensorBoardLogger --------------------------------------------------------------------------------

def _lightning_version_dir(root, nan_at=None, forked=True):
    """lightning_logs/version_0/ as TensorBoardLogger (pytorch/loggers/tensorboard.py:83, hparams.yaml) and
    fabric/loggers/tensorboard.py:200-213 (`log_metrics`: add_scalar(k, v, step)) leave it for
    `self.log("train_loss", loss, on_step=True, on_epoch=True)` (result.py:157-160 `forked_name`: `_step` /
    `_epoch`), LearningRateMonitor's `lr-AdamW` (callbacks/lr_monitor.py:332) and `self.log("val_loss", ...)`."""
    folder = root / "lightning_logs" / "version_0"
    name = "train_loss_step" if forked else "train_loss"
    _write_scalars(folder, name, "lr-AdamW", "val_loss", nan_at=nan_at, extra=(("epoch", 0.0),))
    (folder / "hparams.yaml").write_text("lr: 0.001\nmodel_name: tiny\n")
    return root


def test_lightning_tensorboard_train_loss_step_is_the_loss_and_a_nan_is_broken(tmp_path):
    """Real Lightning 2.6.6 fit (self.log(..., on_step=True, on_epoch=True), LearningRateMonitor) writes the tags
    `train_loss_step`, `train_loss_epoch`, `lr-AdamW`, `val_loss`, `epoch`, `hp_metric`. The TensorBoard reader maps
    none of `train_loss_step` / `lr-AdamW` (the CSV reader does, csv_metrics.py `_ROW_LOSS`): no loss, and a run whose
    loss is NaN from step 25 is called healthy."""
    a = analyze_logs(_lightning_version_dir(tmp_path / "ok"))
    assert_healthy_loss(a)
    assert "learning_rate" in a.timeline.metrics
    assert_broken_at(analyze_logs(_lightning_version_dir(tmp_path / "nan", nan_at=25)), 25)


def test_lightning_tensorboard_per_step_train_loss_is_the_loss(tmp_path):
    """`self.log("train_loss", loss)` in training_step (Lightning's default for that hook: on_step=True,
    on_epoch=False, fx_validator.py `training_step` options; result.py:157-160 keeps the name unforked) gives a
    `train_loss` tag at every step. The tool keeps it as `train_loss` (HF's end-of-run average) so the run has no
    loss series; the NaN is caught, but only as `train_loss`."""
    a = analyze_logs(_lightning_version_dir(tmp_path / "ok", forked=False))
    assert_healthy_loss(a)


# --- Accelerate's TensorBoard tracker -----------------------------------------------------------------------------

def test_accelerate_tensorboard_tracker_hparams_are_the_run_config(tmp_path):
    """accelerate/tracking.py:220-236 (TensorBoardTracker.store_init_configuration, from
    `accelerator.init_trackers(project, config=vars(args))`) calls `writer.add_hparams(values, metric_dict={})`
    (a second event file in `<project>/<time.time()>/`) and writes the same values to
    `<project>/<time.time()>/hparams.yml`; `accelerator.log({...}, step=completed_steps)` writes the scalars
    (transformers' run_clm_no_trainer.py logs train_loss / eval_loss / perplexity / epoch / step). The tool reads the
    scalars but neither hparams.yml nor the hparams event: the learning rate was unknown."""
    project = tmp_path / "clm_no_trainer"
    values = {"learning_rate": 0.0001, "model_name_or_path": "gpt2", "lr_scheduler_type": "linear",
              "num_warmup_steps": 0, "per_device_train_batch_size": 8, "mixed_precision": "bf16"}
    w = _summary_writer(project)
    w.add_hparams(values, metric_dict={})
    w.flush()
    (project / str(time.time())).mkdir()
    next(project.glob("1*")).joinpath("hparams.yml").write_text(
        "".join(f"{k}: {v}\n" for k, v in sorted(values.items())))
    for s, v in enumerate(losses(), 1):
        w.add_scalar("train_loss", v, s)
        w.add_scalar("lr", 1e-4 * (1 - s / 40), s)
    w.close()
    a = analyze_logs(tmp_path)
    assert a.config.get("learning_rate") == pytest.approx(1e-4), a.config.missing


# --- checkpoints: transformers' sharded safetensors and PEFT adapters ----------------------------------------------

def _tiny_llama():
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=3,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32)
    return LlamaForCausalLM(cfg)


def _save_series(model, root, save):
    """checkpoint-10, -20, -25, -30, every trainable weight moved a little each time; model.layers.1 NaN from 25."""
    import torch

    for s in (10, 20, 25, 30):
        with torch.no_grad():
            for name, p in model.named_parameters():
                if p.requires_grad:
                    p.add_(0.001)
                    if s >= 25 and "layers.1." in name:
                        p.fill_(float("nan"))
        save(model, root / f"checkpoint-{s}")
    return root


def test_sharded_safetensors_nan_block_and_last_good_checkpoint_are_named(tmp_path):
    """Coverage. transformers modeling_utils.py `save_pretrained(max_shard_size=...)` writes
    `model-0000k-of-0000n.safetensors` and `model.safetensors.index.json` (weight_map). NaN in model.layers.1 from
    checkpoint-25: analyze names the block and checkpoint-20, bisect finds 20 / 25."""
    run = _save_series(_tiny_llama(), tmp_path, lambda m, d: m.save_pretrained(d, max_shard_size="20KB"))
    assert json.loads((run / "checkpoint-25" / "model.safetensors.index.json").read_text())["weight_map"]
    a = forensics.analyze(run)
    assert_broken_at(a, 25)
    assert a.first_incident.evidence["nonfinite_blocks"] == ["model.layers.1"]
    assert a.first_incident.evidence["last_good"] == "checkpoint-20"
    r = forensics.bisect(run / "checkpoint-10", run / "checkpoint-30")
    assert (r.last_good.name, r.first_bad.name) == ("checkpoint-20", "checkpoint-25")


def test_peft_adapter_bin_nan_block_and_last_good_checkpoint_are_named(tmp_path):
    """Coverage. peft/peft_model.py `save_pretrained(safe_serialization=False)` writes `adapter_model.bin`
    (torch.save of the lora_A / lora_B state dict) beside adapter_config.json; the .safetensors form reads the same."""
    from peft import LoraConfig, get_peft_model

    model = get_peft_model(_tiny_llama(), LoraConfig(r=4, target_modules=["q_proj", "v_proj"],
                                                     init_lora_weights=False))
    run = _save_series(model, tmp_path, lambda m, d: m.save_pretrained(d, safe_serialization=False))
    a = forensics.analyze(run)
    assert_broken_at(a, 25)
    assert a.run_profile.method == "lora"
    assert a.first_incident.evidence["last_good"] == "checkpoint-20"
    assert any("layers.1" in b for b in a.first_incident.evidence["nonfinite_blocks"])
