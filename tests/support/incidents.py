"""Builders for the five runs of INCIDENTS.md, made with the real Trainer (tests/support/runmaker.py) on CPU.

Each builder trains a tiny model with the incident's own settings recorded by the real writers
(TrainingArguments -> training_args.bin and the TensorBoard `args` text, model.config -> config.json
and the `model_config` text) and injects the failure inside the Trainer loop. What cannot run on a CPU
is added with the real writers next to what the Trainer wrote, and said so at the builder:

1. Qwen2 full fine-tune, LR 3e-4 constant, no warm-up, no clipping; NaN from step 31 spreads everywhere.
2. QLoRA (real peft LoRA; bitsandbytes cannot run here, so the base config carries the 4-bit
   double-quant quantization_config the real run had); NaN in the adapters from step 31, loss logged 0.0.
3. fp16 (recorded in the arguments; CPU autocast is not the CUDA GradScaler): the loss overflows to
   inf from step 31, the update is skipped as the GradScaler does, and each checkpoint gets the
   `scaler.pt` of a real GradScaler driven through the same successes and overflows.
4. GPT-2 layout (`transformer.h.N`, as Qwen-1) with 24 blocks, LR 1e-4; NaN confined to h.21-h.23.
   The NaN is injected with no precursor in the logs, so the damage pattern (late blocks) is the
   likely cause and the learning rate (2x the top of the full fine-tuning range) only possible.
5. DeepSpeed (cannot run here): the grad_norm spike and collapse come from the loop; the run folder
   gets the DeepSpeed config (communication_data_type fp32), the training args naming it, the
   `global_stepN/` model and optimizer states with skipped_steps and the embedded config, and a
   console log with DeepSpeed's overflow lines.
"""
from __future__ import annotations

import contextlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

from . import runmaker as rm
from . import runmaker_loop as loop


@dataclass(frozen=True)
class IncidentRun:
    """A built incident run and what a diagnosis must say about it (from how it was made)."""

    path: Path
    facts: rm.RunFacts
    cause: str                     # the cause infer_causes must name first
    also: tuple[str, ...] = ()     # causes that must be among the rest
    blocks: tuple[str, ...] = ()   # the damaged blocks of the first bad checkpoint, if any
    confidence: str = "likely"     # how sure the first cause is, from the run's own metrics


@dataclass(frozen=True)
class Fp16Overflow(rm._Incident):
    """From step `first` on the loss overflows to inf (as an fp16 activation past 65504 does); the
    optimizer step is skipped on the non-finite gradients, as torch's GradScaler does, so weights stay finite."""

    first: int

    @property
    def confines_nan(self) -> bool:  # type: ignore[override]
        return True

    def loss_factor(self, step: int) -> float:
        return math.inf if step >= self.first else 1.0

    def first_visible_step(self) -> int:
        return self.first


@contextlib.contextmanager
def _patched(name: str, wrap):
    """Wrap one runmaker_loop function for the duration of a build (the run maker has no hook for it)."""
    original = getattr(loop, name)
    setattr(loop, name, wrap(original))
    try:
        yield
    finally:
        setattr(loop, name, original)


def _with_args(**changes):
    """TrainingArguments changed after __post_init__, so a CPU run records settings it cannot execute."""
    def wrap(original):
        def training_args(out_dir, spec):
            args = original(out_dir, spec)
            for key, value in changes.items():
                setattr(args, key, value)
            return args
        return training_args
    return wrap


# ---------------------------------------------------------------- the five cases

def case1_lr_full_ft(out: Path) -> IncidentRun:
    spec = rm.RunSpec(arch="qwen2", learning_rate=3e-4, lr_scheduler_type="constant", warmup_steps=0,
                      max_grad_norm=0.0, incidents=(rm.NanInjection(step=31, blocks=(-1,), confine=False),))
    facts = rm.make_run(out, spec)
    # No "no_warmup": the NaN comes at step 35 of 60 after a calm stretch, long after any warm-up would have ended
    # (tests/test_causes_advice_warm_up_clipping_and_stages.py); the learning-rate cause's own advice still asks for
    # one.
    # The NaN is injected into the weights: grad_norm is calm up to it, nothing builds up before it, so the log shows
    # a sudden break (data or numerics) first, and the rate, 15x the recipes' top, only as possible: "likely" needs a
    # precursor in the run's own metrics (day 11's review).
    return IncidentRun(out, facts, "sudden_break", also=("lr_too_high", "masked_nan_loss", "no_clipping"),
                       confidence="possible")


def case2_qlora_double_quant(out: Path) -> IncidentRun:
    def wrap(original):
        def build_model(spec):
            from transformers import BitsAndBytesConfig
            model = original(spec)
            # What from_pretrained(quantization_config=...) leaves on the config of a QLoRA model.
            model.config.quantization_config = BitsAndBytesConfig(
                load_in_4bit=True, bnb_4bit_use_double_quant=True, bnb_4bit_quant_type="nf4",
                bnb_4bit_compute_dtype="bfloat16")
            return model
        return build_model

    spec = rm.RunSpec(arch="qwen2", lora=True, learning_rate=2e-4, max_grad_norm=0.3,
                      incidents=(rm.NanInjection(step=31, blocks=(-1,), confine=True),))
    with _patched("build_model", wrap):
        facts = rm.make_run(out, spec)
    return IncidentRun(out, facts, "qlora_double_quant", also=("masked_nan_loss",))


def case3_fp16(out: Path) -> IncidentRun:
    spec = rm.RunSpec(arch="qwen2", learning_rate=1e-5, incidents=(Fp16Overflow(first=31),))
    with _patched("training_args", _with_args(fp16=True)):
        facts = rm.make_run(out, spec)
    for name, info in facts.checkpoints.items():
        _write_scaler(out / name / "scaler.pt", steps=info["step"], first_overflow=31)
    return IncidentRun(out, facts, "fp16_overflow", also=("masked_nan_loss",))


def _write_scaler(path: Path, steps: int, first_overflow: int) -> None:
    """The state of a real GradScaler after `steps` steps, overflowing from `first_overflow` on."""
    import torch

    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)
    param = torch.nn.Parameter(torch.ones(2))
    optimizer = torch.optim.SGD([param], lr=0.0)
    for step in range(1, steps + 1):
        scaler.scale(param.sum()).backward()
        if step >= first_overflow:
            param.grad.fill_(math.inf)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    torch.save(scaler.state_dict(), path)


def case4_late_blocks(out: Path) -> IncidentRun:
    spec = rm.RunSpec(arch="gpt2", num_layers=24, learning_rate=1e-4, warmup_steps=0,
                      incidents=(rm.NanInjection(step=31, blocks=(21, 22, 23), confine=True),))
    facts = rm.make_run(out, spec)
    blocks = tuple(f"transformer.h.{i}" for i in (21, 22, 23))
    return IncidentRun(out, facts, "late_blocks", also=("lr_too_high", "masked_nan_loss"), blocks=blocks)


# DeepSpeed's own constants: fp16 starts at 2**initial_scale_power (16) and halves per overflow.
_DS_CONFIG = {
    "fp16": {"enabled": "auto", "loss_scale": 0, "initial_scale_power": 16, "loss_scale_window": 1000,
             "hysteresis": 2, "min_loss_scale": 1},
    "bf16": {"enabled": "auto"},
    "communication_data_type": "fp32",
    "zero_optimization": {"stage": 2, "overlap_comm": True, "contiguous_gradients": True},
    "gradient_accumulation_steps": "auto", "gradient_clipping": "auto",
    "train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "steps_per_print": 100,
}
_OVERFLOW_STEPS = range(5, 10)


def case5_deepspeed(out: Path) -> IncidentRun:
    spec = rm.RunSpec(arch="qwen2", learning_rate=1e-5, max_steps=20, logging_steps=1, save_steps=10,
                      incidents=(rm.EarlyCollapse(first=2, last=4),))
    with _patched("training_args", _with_args(fp16=True, deepspeed="ds_config.json")):
        facts = rm.make_run(out, spec)
    (out / "ds_config.json").write_text(json.dumps(_DS_CONFIG, indent=2))
    for name, info in facts.checkpoints.items():
        _write_deepspeed_states(out / name, info["step"])
    _write_console_log(out / "train.log", facts)
    return IncidentRun(out, facts, "deepspeed_precision_conflict", also=("fp16_overflow",))


def _resolved_ds_config(batch: int) -> dict:
    """The ds_config as DeepSpeed holds it after HF filled the "auto" values (fp16=True, max_grad_norm=1.0)."""
    config = json.loads(json.dumps(_DS_CONFIG))
    config["fp16"]["enabled"], config["bf16"]["enabled"] = True, False
    config.update(gradient_accumulation_steps=1, gradient_clipping=1.0, train_batch_size=batch,
                  train_micro_batch_size_per_gpu=batch)
    return config


def _write_deepspeed_states(folder: Path, step: int) -> None:
    """`global_stepN/` as DeepSpeed's engine saves it (ZeRO-2, fp16: no bf16_ prefix), plus `latest`."""
    import torch
    from safetensors.torch import load_file

    tag = folder / f"global_step{step}"
    tag.mkdir()
    skipped = sum(1 for s in _OVERFLOW_STEPS if s <= step)
    module = {k: v.half() for k, v in load_file(folder / "model.safetensors").items()}
    torch.save({"module": module, "skipped_steps": skipped, "global_steps": step, "global_samples": step * 8,
                "dp_world_size": 1, "mp_world_size": 1, "ds_version": "0.14.4"}, tag / "mp_rank_00_model_states.pt")
    scale = 2.0 ** (16 - skipped)
    torch.save({"optimizer_state_dict": {"loss_scaler": {"cur_scale": scale, "cur_iter": step},
                                         "dynamic_loss_scale": True, "overflow": False, "clip_grad": 1.0},
                "ds_config": _resolved_ds_config(8), "ds_version": "0.14.4"},
               tag / "zero_pp_rank_0_mp_rank_00_optim_states.pt")
    (folder / "latest").write_text(f"global_step{step}")


def _write_console_log(path: Path, facts: rm.RunFacts) -> None:
    """A console capture: tqdm bar fragments, DeepSpeed's overflow lines (its logger format), HF's dict lines."""
    state = json.loads((Path(facts.path) / "trainer_state.json").read_text())
    total = facts.final_step
    lines, scale = [], 2 ** 16
    for entry in (e for e in state["log_history"] if "loss" in e):
        step = entry["step"]
        lines.append(f"{int(100 * (step - 1) / total):3d}%|          | {step - 1}/{total} [00:0{step % 10}<00:10,  1.00it/s]")
        if step in _OVERFLOW_STEPS:
            lines.append("[2024-05-01 12:00:0%d,123] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! "
                         "Rank 0 Skipping step. Attempted loss scale: %d, reducing to %d" % (step % 10, scale, scale // 2))
            scale //= 2
        lines.append(f"{int(100 * step / total):3d}%|          | {step}/{total} [00:0{step % 10}<00:10,  1.00it/s]")
        body = ", ".join(f"'{k}': {v!r}" for k, v in entry.items() if k in ("loss", "grad_norm", "learning_rate", "epoch"))
        lines.append("{" + body + "}")
    path.write_text("\n".join(lines) + "\n")


CASES = {
    "case1_lr_full_ft": case1_lr_full_ft,
    "case2_qlora_double_quant": case2_qlora_double_quant,
    "case3_fp16": case3_fp16,
    "case4_late_blocks": case4_late_blocks,
    "case5_deepspeed": case5_deepspeed,
}
