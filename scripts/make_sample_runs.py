"""Regenerate sample_runs/: small runs made by the real transformers.Trainer (tests/support/runmaker.py).

    python scripts/make_sample_runs.py              # rewrites every sample run (about a minute on CPU)
    python scripts/make_sample_runs.py nan_masked   # just one

Each run folder is exactly what the Trainer wrote. Beside it, `<name>.facts.json` records how it was
made (injection step, first logged bad step, last good / first bad checkpoint, training arguments),
and sample_runs/README.md lists them. The facts stay OUTSIDE the run folders so that analyzing a
folder reads only the run. Same seeds, same numbers on every run of this script; the TensorBoard
folder and file names carry the date, host and pid, as real ones do.
"""
from __future__ import annotations

import shutil
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.runmaker import (EarlyCollapse, LossSpike, LrBlowup, NanInjection, Resume, RunSpec,  # noqa: E402
                      make_run)

OUT = ROOT / "sample_runs"
# Shipped checkpoints hold model weights, trainer_state.json, training_args.bin and config.json as the
# Trainer writes them; optimizer/scheduler/RNG state only where a resume needs them.
_LEAN = RunSpec(save_only_model=True)

SAMPLES: dict[str, tuple[RunSpec, str]] = {
    "healthy": (_LEAN, "60 steps, loss falls, nothing injected; checkpoint-20/40/60 all finite."),
    "nan_masked": (
        replace(_LEAN, incidents=(NanInjection(step=31),)),
        "last block (model.layers.1) set to NaN before step 31: from step 35 every logged loss is 0.0 "
        "next to grad_norm NaN (HF's logging_nan_inf_filter); checkpoint-20 good, checkpoint-40 and -60 "
        "NaN in model.layers.1 only."),
    "spike_recovers": (
        replace(_LEAN, incidents=(LossSpike(step=30),)),
        "loss of step 30 multiplied by 1000: grad_norm ~1000x at step 30, clipped (max_grad_norm=1), "
        "the run goes on normally; all checkpoints finite."),
    "resumed": (
        RunSpec(max_steps=80, incidents=(NanInjection(step=50),), resume=Resume(stop_at=60, from_checkpoint=40)),
        "attempt 1 goes NaN before step 50 (grad_norm NaN logged at 50, loss 0.0 from 55) and stops after "
        "checkpoint-60; attempt 2 resumes from checkpoint-40 without the NaN, rewrites checkpoint-60 and "
        "ends at 80. Two runs/ folders; the root trainer_state.json holds attempt 2's history only."),
    "lr_blowup": (
        replace(_LEAN, max_steps=80, lr_scheduler_type="constant", max_grad_norm=0.0, weight_decay=1.0,
                save_state=False, incidents=(LrBlowup(step=20, lr=10.0),)),
        "LR 3e-3 raised to 10 at step 20, no clipping, weight_decay 1.0: AdamW's decoupled decay then "
        "multiplies the weights by -9 every step, so the loss and grad_norm jump and the run goes "
        "non-finite on any machine (by step 66 at the latest); no root trainer_state.json (save_state "
        "never ran, as after a kill)."),
    "early_collapse": (
        replace(_LEAN, max_steps=30, logging_steps=1, save_steps=10, lr_scheduler_type="constant",
                incidents=(EarlyCollapse(),)),
        "case 5 of INCIDENTS.md: grad_norm ~1e4 at steps 2-4 (loss scaled by 1e4), then every label "
        "masked: loss 0.0 and grad_norm 0.0 from step 5 to the end."),
    "bf16_sharded": (
        replace(_LEAN, max_steps=40, save_steps=10, weights_dtype="bfloat16", shard_size="40KB",
                incidents=(NanInjection(step=26, blocks=(0,)),)),
        "BF16 weights (bf16=True), every checkpoint saved as shards + model.safetensors.index.json; "
        "model.layers.0 NaN before step 26: checkpoint-20 good, checkpoint-30 first bad."),
    "qwen1_names": (
        replace(_LEAN, arch="gpt2", num_layers=24, max_steps=30, save_steps=15, checkpoint_prefix="ckpt",
                incidents=(NanInjection(step=16, blocks=(21, 22, 23)),)),
        "GPT-2 / Qwen-1 tensor names (transformer.h.N), 24 blocks, folders renamed ckpt-N: NaN in "
        "transformer.h.21-23 only (case 4) before step 16; ckpt-15 good, ckpt-30 bad."),
    "lora_adapter": (
        replace(_LEAN, max_steps=40, save_steps=10, learning_rate=1e-2, lora=True,
                incidents=(NanInjection(step=26),)),
        "peft LoRA (r=4 on q_proj/v_proj), checkpoints hold adapter_model.safetensors; the last block's "
        "adapters NaN before step 26: checkpoint-20 good, checkpoint-30 first bad."),
}


def make_sample(name: str) -> None:
    """(Re)make sample_runs/<name>/ and sample_runs/<name>.facts.json."""
    spec, _ = SAMPLES[name]
    target = OUT / name
    if target.exists():
        shutil.rmtree(target)
    facts = make_run(target, spec)
    replace(facts, path=f"sample_runs/{name}").write_json(OUT / f"{name}.facts.json")


def write_readme() -> None:
    lines = ["# Sample runs", "",
             "Made by the real `transformers.Trainer` on tiny models (no downloads) with",
             "`python scripts/make_sample_runs.py`; the generator is `tests/support/runmaker.py`.",
             "`<name>.facts.json` beside each folder says how it was made (the expected first incident",
             "step, last good / first bad checkpoint, the training arguments).", "",
             "| run | what happened |", "|---|---|"]
    lines += [f"| `{name}/` | {text} |" for name, (_, text) in SAMPLES.items()]
    (OUT / "README.md").write_text("\n".join(lines) + "\n")


def main(names: list[str]) -> None:
    OUT.mkdir(exist_ok=True)
    for name in names or list(SAMPLES):
        make_sample(name)
    write_readme()


if __name__ == "__main__":
    main(sys.argv[1:])
