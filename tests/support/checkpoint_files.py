"""Checkpoint files for the checkpoint tests, written by the real writers (safetensors, torch.save).

Expected values come from how the tensors were made (float64 references computed here from
the very tensors written), never from the tool's own output.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

torch = __import__("pytest").importorskip("torch")
from safetensors.torch import save_file  # noqa: E402

NAN_BF16 = 0x7FC0


def save_tensors(path, tensors: dict, metadata: dict | None = None) -> Path:
    """Write `tensors` (torch tensors) with the safetensors library, as transformers does."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in tensors.items()}, str(path), metadata=metadata or {"format": "pt"})
    return path


def raw_safetensors(path, header: dict, data: bytes, length: int | None = None) -> Path:
    """A safetensors file written byte by byte (for corrupt variants); `length` overrides the header size."""
    raw = json.dumps(header).encode()
    path = Path(path)
    path.write_bytes((len(raw) if length is None else length).to_bytes(8, "little") + raw + data)
    return path


def bf16_from_bits(words) -> torch.Tensor:
    """A BF16 tensor with exactly these 16-bit patterns."""
    return torch.tensor(np.asarray(words, dtype=np.uint16).view(np.int16)).view(torch.bfloat16)


def reference(t: torch.Tensor) -> dict:
    """Stats of a float tensor in float64: counts, and absmax/l2/mean/std (ddof=0) of the finite values."""
    v = t.detach().to(torch.float64).reshape(-1).numpy()
    finite = v[np.isfinite(v)]
    return {
        "n_nan": int(np.isnan(v).sum()), "n_inf": int(np.isinf(v).sum()),
        "absmax": float(np.abs(finite).max()) if finite.size else math.nan,
        "l2": float(np.sqrt(np.sum(finite * finite))), "mean": float(finite.mean()) if finite.size else math.nan,
        "std": float(finite.std()) if finite.size else math.nan,
        "zero_frac": float(np.count_nonzero(v == 0) / v.size),
    }


def qwen1_state(n_blocks: int = 24, hidden: int = 16, seed: int = 0, nan_blocks=()) -> dict:
    """A Qwen-1-named state dict (transformer.h.N.attn.c_attn, mlp.w1/w2/c_proj), NaN in `nan_blocks`."""
    g = torch.Generator().manual_seed(seed)
    out = {"transformer.wte.weight": torch.randn(64, hidden, generator=g)}
    for i in range(n_blocks):
        p = f"transformer.h.{i}."
        out.update({
            p + "ln_1.weight": 1 + 0.01 * torch.randn(hidden, generator=g),
            p + "attn.c_attn.weight": torch.randn(3 * hidden, hidden, generator=g) * 0.02,
            p + "attn.c_attn.bias": torch.randn(3 * hidden, generator=g) * 0.02,
            p + "attn.c_proj.weight": torch.randn(hidden, hidden, generator=g) * 0.02,
            p + "ln_2.weight": 1 + 0.01 * torch.randn(hidden, generator=g),
            p + "mlp.w1.weight": torch.randn(2 * hidden, hidden, generator=g) * 0.02,
            p + "mlp.w2.weight": torch.randn(2 * hidden, hidden, generator=g) * 0.02,
            p + "mlp.c_proj.weight": torch.randn(hidden, 2 * hidden, generator=g) * 0.02,
        })
        if i in nan_blocks:
            out[p + "mlp.w2.weight"][0, :3] = float("nan")
            out[p + "attn.c_proj.weight"][1, 1] = float("inf")
    out["transformer.ln_f.weight"] = torch.ones(hidden)
    out["lm_head.weight"] = torch.randn(64, hidden, generator=g)
    return out


def qwen2_state(n_layers: int = 4, hidden: int = 32, seed: int = 0, dtype=torch.float32) -> dict:
    """A Qwen2-named state dict (model.layers.N.self_attn.q_proj with biases, mlp.gate/up/down_proj)."""
    g = torch.Generator().manual_seed(seed)
    out = {"model.embed_tokens.weight": torch.randn(128, hidden, generator=g)}
    for i in range(n_layers):
        p = f"model.layers.{i}."
        out[p + "input_layernorm.weight"] = 1 + 0.01 * torch.randn(hidden, generator=g)
        for proj, rows in (("q", hidden), ("k", hidden // 2), ("v", hidden // 2), ("o", hidden)):
            out[p + f"self_attn.{proj}_proj.weight"] = torch.randn(rows, hidden, generator=g) * 0.02
            if proj != "o":
                out[p + f"self_attn.{proj}_proj.bias"] = torch.randn(rows, generator=g) * 0.02
        out[p + "post_attention_layernorm.weight"] = 1 + 0.01 * torch.randn(hidden, generator=g)
        for proj, shape in (("gate", (2 * hidden, hidden)), ("up", (2 * hidden, hidden)), ("down", (hidden, 2 * hidden))):
            out[p + f"mlp.{proj}_proj.weight"] = torch.randn(*shape, generator=g) * 0.02
    out["model.norm.weight"] = torch.ones(hidden)
    return {k: v.to(dtype) for k, v in out.items()}


def poison(state: dict, block: str) -> list[str]:
    """Put NaN into every weight matrix of `block`; returns the tensors poisoned."""
    names = [n for n in state if n.startswith(block + ".") and state[n].dim() == 2]
    for n in names:
        state[n][0, 0] = float("nan")
    return names


def checkpoint_series(root: Path, steps, poison_from: int | None, prefix: str = "checkpoint",
                      block: str = "model.layers.2", seed: int = 0) -> list[Path]:
    """`root/{prefix}-{step}/model.safetensors` per step; NaN in `block` from step `poison_from` on."""
    folders = []
    for i, step in enumerate(steps):
        state = qwen2_state(seed=seed + i)
        if poison_from is not None and step >= poison_from:
            poison(state, block)
        folder = root / f"{prefix}-{step}"
        save_tensors(folder / "model.safetensors", state)
        (folder / "trainer_state.json").write_text(json.dumps({"global_step": step, "log_history": []}))
        folders.append(folder)
    return folders


def deepspeed_checkpoint(folder, step, state, with_weights=True, extra=None, skipped_steps=3):
    """A DeepSpeed-style checkpoint folder: model.safetensors (optional) beside global_step{step}/
    mp_rank_00_model_states.pt written by torch.save with DeepSpeed's counters, and `latest`."""
    if with_weights:
        save_tensors(folder / "model.safetensors", state)
    states = {"module": state, "skipped_steps": skipped_steps, "global_steps": step, "global_samples": step * 8,
              "dp_world_size": 1, "mp_world_size": 1, "ds_config": {"fp16": {"enabled": True}}, "ds_version": "0.14.0",
              **(extra or {})}
    (folder / f"global_step{step}").mkdir(parents=True, exist_ok=True)
    torch.save(states, folder / f"global_step{step}" / "mp_rank_00_model_states.pt")
    (folder / "latest").write_text(f"global_step{step}")
