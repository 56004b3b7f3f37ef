"""Trainer runs with checkpoints for the bisect and checkpoint-reader tests."""
from __future__ import annotations

import json
import math

import pytest

from support.checkpoint_files import qwen2_state, save_tensors
import forensics


torch = pytest.importorskip("torch")

STEPS = (10, 20, 30, 40, 50, 60)


def _loss(step: int, diverge_from: int | None) -> float:
    """A falling loss with batch noise; from `diverge_from` on it rises many-fold and stays up."""
    loss = 3.0 * 0.99 ** step + 0.05 * math.sin(step * 1.7)
    if diverge_from is not None and step >= diverge_from:
        loss *= 3.0 + (step - diverge_from) * 0.4
    return loss


def _adamw_state(state: dict, nan_moment: bool) -> dict:
    """The state_dict of a real torch AdamW that took one step over these weights."""
    params = [torch.nn.Parameter(t.clone()) for t in state.values() if t.is_floating_point()]
    optimizer = torch.optim.AdamW(params, lr=1e-4)
    for p in params:
        p.grad = torch.full_like(p, 0.01)
    optimizer.step()
    saved = optimizer.state_dict()
    if nan_moment:
        saved["state"][0]["exp_avg_sq"].view(-1)[0] = float("nan")
    return saved


def trainer_run(root, diverge_from=None, optimizer_nan_from=None):
    """checkpoint-10 ... checkpoint-60 of one run, each with the log up to its step (every step logged)."""
    for i, step in enumerate(STEPS):
        folder = root / f"checkpoint-{step}"
        state = qwen2_state(seed=i)
        save_tensors(folder / "model.safetensors", state)
        history = [{"step": s, "epoch": s / 60, "loss": _loss(s, diverge_from), "grad_norm": 1.0 + 0.1 * (s % 3),
                    "learning_rate": 1e-4} for s in range(1, step + 1)]
        (folder / "trainer_state.json").write_text(json.dumps({"global_step": step, "log_history": history}))
        nan = optimizer_nan_from is not None and step >= optimizer_nan_from
        torch.save(_adamw_state(state, nan), folder / "optimizer.pt")
    return root


def _bisect(root):
    return forensics.bisect(root / "checkpoint-10", root / "checkpoint-60").to_dict()
