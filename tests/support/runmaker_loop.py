"""How `runmaker` drives the real `transformers.Trainer`: tiny models, seeded data, and the hooks.

Everything here runs inside HF's own training loop, so what lands on disk (trainer_state.json, event
files, checkpoints) is what the Trainer writes: the incidents only change weights, the loss or the LR
at chosen steps through a `compute_loss` override and callbacks. The incident objects (runmaker.py)
say WHEN; this module says HOW. transformers, torch and peft are imported only when a run is made.
"""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

# Block container of a parameter name, after PEFT's `base_model.model.` wrapper is removed.
_BLOCK_RE = re.compile(r"^((?:\w+\.)*?(?:layers|h)\.\d+)\.")
_PEFT_PREFIX = "base_model.model."
VOCAB = 128


def block_of(param_name: str) -> str | None:
    """The block of an in-memory parameter name (`model.layers.1`, `transformer.h.0`); None outside blocks."""
    if param_name.startswith(_PEFT_PREFIX):
        param_name = param_name[len(_PEFT_PREFIX):]
    match = _BLOCK_RE.match(param_name)
    return match.group(1) if match else None


def natural_key(name: str) -> tuple[tuple[int, Any], ...]:
    """Sort key putting `model.layers.2` before `model.layers.10`."""
    return tuple((0, int(t)) if t.isdigit() else (1, t) for t in name.split("."))


def block_names(spec) -> tuple[str, ...]:
    """Every block of the spec's model, in order (`model.layers.0`, ... or `transformer.h.0`, ...)."""
    prefix = "transformer.h" if spec.arch == "gpt2" else "model.layers"
    return tuple(f"{prefix}.{i}" for i in range(spec.num_layers))


# ---------------------------------------------------------------- data and model

def pattern_dataset(spec):
    """512 arithmetic token sequences (start + k*stride mod VOCAB), seeded: learnable, so the loss falls."""
    import torch

    class PatternDataset(torch.utils.data.Dataset):
        def __init__(self) -> None:
            g = torch.Generator().manual_seed(spec.seed)
            start = torch.randint(0, VOCAB, (512, 1), generator=g)
            stride = torch.randint(1, 4, (512, 1), generator=g)
            self.ids = (start + stride * torch.arange(spec.seq_len)) % VOCAB

        def __len__(self) -> int:
            return len(self.ids)

        def __getitem__(self, i: int) -> dict[str, Any]:
            return {"input_ids": self.ids[i], "labels": self.ids[i].clone()}

    return PatternDataset()


def build_model(spec):
    """A randomly initialised tiny model of the spec's architecture (seeded), LoRA-wrapped on request."""
    import torch
    import transformers as tf

    torch.manual_seed(spec.seed)
    if spec.arch == "gpt2":
        config = tf.GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=spec.num_layers, n_head=4, n_positions=64)
        model, targets = tf.GPT2LMHeadModel(config), ["c_attn"]
    else:
        config_cls, model_cls = {"qwen2": (tf.Qwen2Config, tf.Qwen2ForCausalLM),
                                 "llama": (tf.LlamaConfig, tf.LlamaForCausalLM)}[spec.arch]
        config = config_cls(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=spec.num_layers,
                            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
        model, targets = model_cls(config), ["q_proj", "v_proj"]
    if spec.weights_dtype == "bfloat16":
        model = model.to(torch.bfloat16)  # pure-bf16 weights, as with from_pretrained(torch_dtype=bfloat16)
    if spec.lora:
        import peft

        lora = peft.LoraConfig(r=4, lora_alpha=8, target_modules=targets, task_type="CAUSAL_LM")
        model = peft.get_peft_model(model, lora)
    return model


# ---------------------------------------------------------------- what the hooks do to the model

def nonfinite_params(model) -> tuple[list[str], list[str]]:
    """Where the in-memory model holds NaN/Inf: (blocks in block order, tensor names outside blocks)."""
    import torch

    bad = [n for n, p in model.named_parameters() if p.requires_grad and not bool(torch.isfinite(p.detach()).all())]
    blocks = sorted({block_of(n) for n in bad} - {None}, key=natural_key)
    return blocks, sorted(n for n in bad if block_of(n) is None)


def poison_blocks(model, blocks: tuple[int, ...]) -> None:
    """Fill every trainable tensor of the chosen blocks with NaN (in a LoRA model: its adapters there)."""
    import torch

    names = sorted({b for n, _ in model.named_parameters() if (b := block_of(n))}, key=natural_key)
    chosen = {names[i] for i in blocks}
    with torch.no_grad():
        for name, param in model.named_parameters():
            if param.requires_grad and block_of(name) in chosen:
                param.fill_(math.nan)


def set_lr(optimizer, lr_scheduler, lr: float) -> None:
    """Change the LR for good: the scheduler's base LR (it rescales every step) and the current value.

    `_last_lr` is what the Trainer logs as learning_rate, so the log shows the jump at the step it acts.
    """
    factors = [g["lr"] / base if base else 1.0 for g, base in zip(optimizer.param_groups, lr_scheduler.base_lrs)]
    lr_scheduler.base_lrs = [lr for _ in lr_scheduler.base_lrs]
    for group, factor in zip(optimizer.param_groups, factors):
        group["lr"] = lr * factor
    lr_scheduler._last_lr = [g["lr"] for g in optimizer.param_groups]


def drop_nonfinite_update(model) -> None:
    """Skip the optimizer step when a gradient is non-finite, as torch's GradScaler skips an overflow.

    AdamW leaves a parameter whose .grad is None untouched, so the NaN stays in the poisoned blocks
    instead of reaching every tensor through the clipped (NaN-scaled) gradients.
    """
    import torch

    grads = [p for p in model.parameters() if p.grad is not None]
    if any(not bool(torch.isfinite(p.grad).all()) for p in grads):
        for p in grads:
            p.grad = None


# ---------------------------------------------------------------- the Trainer subclass and callbacks

# Each hook asks the incidents what to do at the step being computed: `state.global_step` counts
# finished steps, so that is global_step + 1. The classes are made in functions so that transformers
# is imported only when a run is made.

def _incident_trainer_class():
    """A Trainer whose loss the incidents may scale, or empty of labels, at chosen steps."""
    import torch
    from transformers import Trainer

    class IncidentTrainer(Trainer):
        def __init__(self, *args, incidents: tuple = (), **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self.incidents = incidents

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            step = self.state.global_step + 1
            if any(i.masks_labels(step) for i in self.incidents):
                # Every label masked: HF's loss is then 0.0 with zero gradients (checked on 5.23).
                inputs = {**inputs, "labels": torch.full_like(inputs["labels"], -100)}
            loss = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            factor = math.prod(i.loss_factor(step) for i in self.incidents)
            if factor == 1.0:
                return loss
            # A scaled loss scales every gradient by the same factor: the pre-clip grad_norm that HF
            # logs jumps by that factor, while clipping (max_grad_norm) bounds the update, as a bad batch.
            return (loss[0] * factor, loss[1]) if return_outputs else loss * factor

    return IncidentTrainer


def _injection_callback_class():
    """Weights/LR changes before a step, NaN confinement before the optimizer, the early stop."""
    from transformers import TrainerCallback

    class InjectionCallback(TrainerCallback):
        def __init__(self, incidents: tuple, stop_at: int | None) -> None:
            self.incidents, self.stop_at = incidents, stop_at

        def on_step_begin(self, args, state, control, model=None, optimizer=None, lr_scheduler=None, **kw):
            for incident in self.incidents:
                incident.before_step(state.global_step + 1, model, optimizer, lr_scheduler)

        def on_pre_optimizer_step(self, args, state, control, model=None, **kw):
            if any(i.confines_nan for i in self.incidents):
                drop_nonfinite_update(model)

        def on_step_end(self, args, state, control, **kw):
            if self.stop_at is not None and state.global_step >= self.stop_at:
                control.should_training_stop = True  # the attempt ends after this step's log and save

    return InjectionCallback


def _recorder_callback_class():
    """At each save: which blocks of the in-memory model are non-finite; re-shards when asked."""
    from transformers import TrainerCallback

    class RecorderCallback(TrainerCallback):
        def __init__(self, shard_size: str | None) -> None:
            self.shard_size, self.saved = shard_size, {}

        def on_save(self, args, state, control, model=None, **kw):
            folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            if self.shard_size:
                # A small max_shard_size gives model-0000i-of-0000n.safetensors + the index, as a big
                # model's save does; save_pretrained leaves the Trainer's single file, so remove it.
                model.save_pretrained(folder, max_shard_size=self.shard_size)
                if (folder / "model.safetensors.index.json").exists():
                    (folder / "model.safetensors").unlink(missing_ok=True)
            blocks, others = nonfinite_params(model)
            self.saved[folder.name] = {"step": state.global_step, "nonfinite_blocks": blocks,
                                       "nonfinite_outside_blocks": others}

    return RecorderCallback


def training_args(out_dir: Path, spec):
    """The TrainingArguments of a spec: tensorboard logging on CPU, no worker processes."""
    import inspect

    from transformers import TrainingArguments

    kwargs = dict(
        output_dir=str(out_dir), max_steps=spec.max_steps, per_device_train_batch_size=spec.batch_size,
        learning_rate=spec.learning_rate, warmup_steps=spec.warmup_steps, lr_scheduler_type=spec.lr_scheduler_type,
        max_grad_norm=spec.max_grad_norm, optim=spec.optim, weight_decay=spec.weight_decay,
        logging_steps=spec.logging_steps,
        save_steps=spec.save_steps, save_only_model=spec.save_only_model, seed=spec.seed,
        bf16=spec.weights_dtype == "bfloat16", report_to=list(spec.report_to), use_cpu=True,
        dataloader_num_workers=0, disable_tqdm=not spec.progress_bars,
    )
    # 4.x had save_safetensors (default True since 4.35); 5.x always writes safetensors and dropped it.
    if "save_safetensors" in inspect.signature(TrainingArguments).parameters:
        kwargs["save_safetensors"] = True
    return TrainingArguments(**kwargs)


def run_attempt(out_dir: Path, spec, incidents: tuple, stop_at: int | None,
                resume_from: int | None) -> tuple[Any, dict[str, dict[str, Any]]]:
    """One `trainer.train()` call; returns the trainer and, per checkpoint folder saved, what it held."""
    import torch
    import transformers

    transformers.logging.set_verbosity_error()  # quiet tests; nothing written to disk depends on it
    threads = torch.get_num_threads()
    # One thread: the matrices are tiny, and multi-threaded kernels on a busy machine spent ~6x the CPU
    # spinning (measured: 6-7 s vs 1 s per run); it also keeps the float sums the same on any machine.
    torch.set_num_threads(1)
    try:
        return _train(out_dir, spec, incidents, stop_at, resume_from)
    finally:
        torch.set_num_threads(threads)


def _train(out_dir: Path, spec, incidents: tuple, stop_at: int | None, resume_from: int | None):
    """Build the model, the Trainer and its callbacks, and train; see run_attempt."""
    from transformers.trainer_callback import PrinterCallback

    recorder = _recorder_callback_class()(spec.shard_size)
    trainer = _incident_trainer_class()(
        model=build_model(spec), args=training_args(out_dir, spec), train_dataset=pattern_dataset(spec),
        incidents=incidents, callbacks=[_injection_callback_class()(incidents, stop_at), recorder])
    trainer.remove_callback(PrinterCallback)  # no log dicts on stdout; the files are the same without it
    checkpoint = str(out_dir / f"checkpoint-{resume_from}") if resume_from is not None else None
    trainer.train(resume_from_checkpoint=checkpoint)
    return trainer, recorder.saved
