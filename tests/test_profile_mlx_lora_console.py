"""Tests of the run profile of an mlx-examples LoRA console.

From the consoles and run texts the tool did not read, found on real runs (day 7, second batch)."""
from __future__ import annotations

from support.final_series import _analyze


# ---- (3) mlx-examples' lora.py console -------------------------------------------------------------------------------


def test_mlx_examples_lora_console_names_mlx_and_lora_but_not_the_packed_size(tmp_path):
    """mlx-examples lora/lora.py (`Total parameters 7411.242M`, `Trainable parameters 2.229M`, `Iter N: Train loss X,
    It/sec Y, Tokens/sec Z`, `Iter N: Val loss X, Val took Ts`, `Iter 100: Saved adapter weights to adapters.npz.`):
    the framework was unknown; it is mlx, the method LoRA (the script trains LoRA adapters only), and the total, a
    4-bit model's packed arrays, is no model size."""
    lines = ["Loading pretrained model", "Total parameters 7411.242M", "Trainable parameters 2.229M",
             "Loading datasets", "Training", "Iter 1: Val loss 3.298, Val took 268.159s"]
    for i in range(10, 210, 10):
        lines.append(f"Iter {i}: Train loss {3.2 - i / 100:.3f}, It/sec 0.108, Tokens/sec 61.375")
        if i % 100 == 0:
            lines.append(f"Iter {i}: Saved adapter weights to adapters.npz.")
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    a = _analyze(tmp_path)
    profile = a.run_profile.to_dict()
    assert (profile["framework"], profile["method"], profile["model_params"]) == ("mlx", "lora", None), profile
    assert a.status == "healthy"
