"""An HF Trainer's TensorBoard folder, written the way transformers' TensorBoardCallback writes it, with the real
SummaryWriter: the `args` and `model_config` texts at the start, `train/<key>` scalars at each logging step, the
closing summary (`train/train_runtime` ... `train/train_loss`) at the global step the run ended on, and an
evaluation's `eval/<key>` scalars.

    write_hf_tensorboard(tmp_path / "runs" / "run1", steps={2: {"loss": 15.8}}, summary_step=2, train_loss=15.8)
"""
from __future__ import annotations

import json
from pathlib import Path

GPT2_CONFIG = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 768, "n_head": 12,
               "n_layer": 12, "n_positions": 1024, "vocab_size": 50257, "torch_dtype": "float32",
               "transformers_version": "4.57.0"}


def write_hf_tensorboard(folder: Path, steps: dict[int, dict], summary_step: int | None = None,
                         train_loss: float | None = None, evaluation: dict | None = None,
                         args: dict | None = None, model_config: dict | None = None) -> Path:
    """The event file's folder: `steps` maps a global step to the keys logged there (loss, grad_norm,
    learning_rate, epoch); the closing summary is written at `summary_step` with `train_loss`; `evaluation` (the
    eval keys without their prefix, e.g. {"loss": 11.0}) at the same step."""
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(log_dir=str(folder))
    writer.add_text("args", json.dumps(args or {"output_dir": "results", "logging_steps": 500,
                                                "gradient_accumulation_steps": 4, "fp16": False, "bf16": False}))
    writer.add_text("model_config", json.dumps(model_config or GPT2_CONFIG))
    for step, logs in sorted(steps.items()):
        for key, value in logs.items():
            writer.add_scalar(f"train/{key}", value, step)
    if summary_step is not None:
        summary = {"train_runtime": 18.4, "train_samples_per_second": 0.978, "train_steps_per_second": 0.163,
                   "total_flos": 1.2e13, "train_loss": train_loss, "epoch": float(max(
                       [logs.get("epoch", 0.0) for logs in steps.values()] or [0.0]))}
        for key, value in summary.items():
            writer.add_scalar(f"train/{key}", value, summary_step)
    for key, value in (evaluation or {}).items():
        writer.add_scalar(f"eval/{key}", value, summary_step or 0)
    writer.close()
    return folder
