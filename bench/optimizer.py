"""Benchmark the optimizer-state scan against the weight scan it should keep pace with.

    python bench/optimizer.py                    # ~0.6 GB fp32 weights + ~1.2 GB optimizer.pt, 3 rounds
    python bench/optimizer.py --layers 4 --rounds 5

Writes a checkpoint folder shaped like a small Qwen2 (hidden 1536, vocab 32000, fp32): model.safetensors
and an optimizer.pt saved by torch.save in the HF Trainer's layout (decay group, then no-decay group,
`step`, `exp_avg`, `exp_avg_sq` per parameter). Checks that the optimizer figures match torch on one
parameter, then times whole processes, interleaved (A B C, A B C, ...):

  weights    `python -m forensics scan <ckpt>/model.safetensors --json` (the weight scan)
  opt-scan   `python -m forensics scan <ckpt>/optimizer.pt --json` (per-moment rows, like the weight scan)
  opt-state  read_optimizer_state: m, v and W read together, per-block figures (what `analyze` does)
  opt-state-1  the same with workers=1 (the same path since it stopped using a process pool locally)

GB/s is the bytes each variant reads (weights: the safetensors file; opt-scan: optimizer.pt;
opt-state: optimizer.pt + the weights) over the median wall time of the whole process; peak RSS is
the largest process of its tree (os.wait4; pool workers are reaped by their parent, so theirs is not
included: each holds one batch's chunk buffers, like the parent). Files are page-cached after the first round. The machine
is shared: compare within one run.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HIDDEN, INTER, VOCAB, KV = 1536, 8960, 32000, 256


def _names(layers: int) -> list[tuple[str, tuple[int, ...]]]:
    out = [("model.embed_tokens.weight", (VOCAB, HIDDEN))]
    for i in range(layers):
        p = f"model.layers.{i}."
        for proj, rows in (("q", HIDDEN), ("k", KV), ("v", KV)):
            out += [(p + f"self_attn.{proj}_proj.weight", (rows, HIDDEN)), (p + f"self_attn.{proj}_proj.bias", (rows,))]
        out += [(p + "self_attn.o_proj.weight", (HIDDEN, HIDDEN)), (p + "mlp.gate_proj.weight", (INTER, HIDDEN)),
                (p + "mlp.up_proj.weight", (INTER, HIDDEN)), (p + "mlp.down_proj.weight", (HIDDEN, INTER)),
                (p + "input_layernorm.weight", (HIDDEN,)), (p + "post_attention_layernorm.weight", (HIDDEN,))]
    return out + [("model.norm.weight", (HIDDEN,)), ("lm_head.weight", (VOCAB, HIDDEN))]


WRITER = r'''
import sys, torch
from safetensors.torch import save_file
folder, layers = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, sys.argv[3])
from optimizer import _names
torch.manual_seed(0)
names = _names(layers)
weights = {n: torch.randn(s) * 0.02 for n, s in names}
save_file(weights, f"{folder}/model.safetensors")
no_decay = lambda n: "bias" in n or "norm" in n
order = [n for n, _ in names if not no_decay(n)] + [n for n, _ in names if no_decay(n)]
state = {i: {"step": torch.tensor(100.0), "exp_avg": torch.randn(weights[n].shape) * 1e-3,
             "exp_avg_sq": torch.rand(weights[n].shape) * 1e-6} for i, n in enumerate(order)}
k = sum(1 for n in order if not no_decay(n))
groups = [dict(lr=1e-4, betas=(0.9, 0.999), eps=1e-8, weight_decay=wd, params=ids)
          for wd, ids in ((0.01, list(range(k))), (0.0, list(range(k, len(order)))))]
torch.save({"state": state, "param_groups": groups}, f"{folder}/optimizer.pt")
'''

STATE = r'''
import sys
from forensics.checkpoints.layout import open_checkpoint
from forensics.checkpoints.optimizer_stats import read_optimizer_state
s = read_optimizer_state(open_checkpoint(sys.argv[1]), workers=int(sys.argv[2]) if len(sys.argv) > 2 else None)
print(len(s.tensors), s.blocks["update_ratio"].median())
'''


def _run(cmd: list[str]) -> tuple[float, int]:
    """(wall seconds, peak RSS in MiB of the process) of one whole process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{cmd} failed: {proc.stderr.read().decode()[-2000:]}")
    return wall, usage.ru_maxrss // 1024


def _agree(folder: Path) -> None:
    """The optimizer figures of one parameter against torch, before anything is timed."""
    import math

    import torch
    from safetensors.torch import load_file

    from forensics.checkpoints.layout import open_checkpoint
    from forensics.checkpoints.optimizer_stats import read_optimizer_state

    state = read_optimizer_state(open_checkpoint(folder))
    saved = torch.load(folder / "optimizer.pt", weights_only=True, mmap=True)
    name = state.mapping.names[1]
    m = saved["state"][1]["exp_avg"].double()
    row = state.tensors[state.tensors["index"] == 1].iloc[0]
    assert row["name"] == name and load_file(folder / "model.safetensors")[name].shape == m.shape
    assert math.isclose(row["m_rms"], float(m.pow(2).mean().sqrt()), rel_tol=1e-6), (row["m_rms"],)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--agree", type=Path, help=argparse.SUPPRESS)  # run in a child: see below
    args = parser.parse_args()
    if args.agree:
        _agree(args.agree)
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "checkpoint-100"
        folder.mkdir()
        subprocess.run([sys.executable, "-c", WRITER, str(folder), str(args.layers), str(Path(__file__).parent)],
                       check=True)
        w_bytes = (folder / "model.safetensors").stat().st_size
        o_bytes = (folder / "optimizer.pt").stat().st_size
        # In a child: a forked process starts with its parent's peak RSS, so the parent stays small.
        subprocess.run([sys.executable, __file__, "--agree", str(folder)], check=True)
        variants = {
            "weights": ([sys.executable, "-m", "forensics", "scan", str(folder / "model.safetensors"), "--json"], w_bytes),
            "opt-scan": ([sys.executable, "-m", "forensics", "scan", str(folder / "optimizer.pt"), "--json"], o_bytes),
            "opt-state": ([sys.executable, "-c", STATE, str(folder)], o_bytes + w_bytes),
            "opt-state-1": ([sys.executable, "-c", STATE, str(folder), "1"], o_bytes + w_bytes),
        }
        times: dict[str, list[float]] = {k: [] for k in variants}
        rss: dict[str, int] = dict.fromkeys(variants, 0)
        for _ in range(args.rounds):
            for name, (cmd, _) in variants.items():
                wall, peak = _run(cmd)
                times[name].append(wall)
                rss[name] = max(rss[name], peak)
        print(f"weights {w_bytes / 1e9:.2f} GB, optimizer.pt {o_bytes / 1e9:.2f} GB, {args.rounds} rounds, interleaved")
        print(f"{'variant':10} {'median s':>9} {'GB/s':>6} {'peak RSS MiB':>13}")
        for name, (_, nbytes) in variants.items():
            med = statistics.median(times[name])
            print(f"{name:10} {med:9.2f} {nbytes / med / 1e9:6.2f} {rss[name]:13d}")


if __name__ == "__main__":
    main()
