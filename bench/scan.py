"""Benchmark the checkpoint scan against the naive way and the I/O floor.

    python bench/scan.py                 # ~2 GB BF16 Qwen2-shaped checkpoint, 3 interleaved rounds
    python bench/scan.py --layers 4 --rounds 5 --keep /tmp/ckpt

It writes a sharded BF16 checkpoint shaped like a small Qwen2 (hidden 1536, 18 layers,
vocab 151936: ~2.2 GB) with planted NaN and Inf into a temporary folder, checks that every
variant agrees on it, then times whole processes, interleaved (A B C D, A B C D, ...):

  scan   forensics' full per-tensor stats (scan_checkpoint)
  cli    the same through the command line: `python -m forensics scan <dir>` (when the CLI has it)
  quick  forensics' non-finite check of every tensor (quick_check, stop_at_first=False)
  naive  safetensors.torch.load_file, then per tensor torch isnan/isinf/abs().max()/norm/mean/std
  floor  a Python loop that only readinto()s the (page-cached) files in 16 MB chunks

Each process (but `cli`) also reports the seconds of its own work (after imports), so the
fixed cost of starting Python and importing pandas/torch can be told apart from the scan
itself. Peak RSS is the largest single process of each variant's process tree (os.wait4),
plus the peak sum of PSS over the tree sampled from /proc every 10 ms (pages shared by forked
workers counted once). The checkpoint is written by a child process (a child inherits its
parent's peak RSS) and deleted at the end unless --keep is given. On a shared machine the
figures move by +-30% from run to run: compare ratios within one run.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

HIDDEN, INTER, VOCAB, KV = 1536, 8960, 151936, 256
SHARD_BYTES = 600 << 20
POOL = 1 << 24  # random BF16 values drawn once and reused at random offsets


def qwen2_tensors(layers: int) -> list[tuple[str, tuple[int, ...]]]:
    """Names and shapes of a Qwen2-style model (tied embeddings, q/k/v biases)."""
    out = [("model.embed_tokens.weight", (VOCAB, HIDDEN))]
    for i in range(layers):
        p = f"model.layers.{i}."
        out += [(p + "input_layernorm.weight", (HIDDEN,)), (p + "post_attention_layernorm.weight", (HIDDEN,))]
        for proj, rows in (("q", HIDDEN), ("k", KV), ("v", KV)):
            out += [(p + f"self_attn.{proj}_proj.weight", (rows, HIDDEN)), (p + f"self_attn.{proj}_proj.bias", (rows,))]
        out += [(p + "self_attn.o_proj.weight", (HIDDEN, HIDDEN)), (p + "mlp.gate_proj.weight", (INTER, HIDDEN)),
                (p + "mlp.up_proj.weight", (INTER, HIDDEN)), (p + "mlp.down_proj.weight", (HIDDEN, INTER))]
    return out + [("model.norm.weight", (HIDDEN,))]


def _bf16(values: np.ndarray) -> np.ndarray:
    bits = values.astype(np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)  # round to nearest even


def make_checkpoint(folder: Path, layers: int, seed: int = 0) -> dict:
    """Write the sharded checkpoint; return the float64 reference stats per tensor."""
    rng = np.random.default_rng(seed)
    pool = _bf16(rng.standard_normal(POOL) * 0.02)
    norm_pool = _bf16(1.0 + rng.standard_normal(HIDDEN) * 0.05)
    tensors = qwen2_tensors(layers)
    plant = {f"model.layers.{layers - 3}.mlp.down_proj.weight": ("nan", 1000),
             f"model.layers.{layers - 2}.self_attn.o_proj.weight": ("inf", 10)}
    shards = shard_plan(tensors, SHARD_BYTES)
    reference, weight_map = {}, {}
    for i, shard in enumerate(shards):
        fname = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        _write_shard(folder / fname, shard, rng, pool, norm_pool, plant, reference)
        weight_map.update({name: fname for name, _ in shard})
    index = {"metadata": {"total_size": sum(math.prod(s) * 2 for _, s in tensors)}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    return reference


def shard_plan(tensors, max_bytes: int) -> list[list[tuple[str, tuple[int, ...]]]]:
    """BF16 tensors cut into shards in order, as save_pretrained cuts them: a new shard when the
    next tensor would pass `max_bytes`."""
    shards, current, size = [], [], 0
    for name, shape in tensors:
        nbytes = math.prod(shape) * 2
        if current and size + nbytes > max_bytes:
            shards.append(current)
            current, size = [], 0
        current.append((name, shape))
        size += nbytes
    return shards + [current]


def _write_shard(path: Path, shard, rng, pool, norm_pool, plant, reference) -> None:
    header, offset = {}, 0
    for name, shape in shard:
        n = math.prod(shape)
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + 2 * n]}
        offset += 2 * n
    header["__metadata__"] = {"format": "pt"}
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as fh:
        fh.write(len(raw).to_bytes(8, "little") + raw)
        for name, shape in shard:
            values = _values(name, math.prod(shape), rng, pool, norm_pool)
            if name in plant:
                kind, count = plant[name]
                where = rng.choice(values.size, count, replace=False)
                values[where] = 0x7FC0 if kind == "nan" else np.where(np.arange(count) % 2, 0x7F80, 0xFF80)
            reference[name] = _reference(values)
            fh.write(values.tobytes())


def _values(name: str, n: int, rng, pool, norm_pool) -> np.ndarray:
    if name.endswith("layernorm.weight") or name == "model.norm.weight":
        return norm_pool[:n].copy()
    out = np.empty(n, dtype=np.uint16)
    for start in range(0, n, POOL // 2):
        k = min(POOL // 2, n - start)
        at = int(rng.integers(0, POOL - k + 1))
        out[start:start + k] = pool[at:at + k]
    return out


def _reference(bits: np.ndarray) -> dict:
    """n_nan, n_inf, l2 and std of the finite values, exact in float64 from a histogram of the 65536 patterns."""
    counts = np.bincount(bits, minlength=1 << 16).astype(np.float64)
    with np.errstate(invalid="ignore"):  # signalling-NaN patterns
        values = (np.arange(1 << 16, dtype=np.uint32) << 16).view(np.float32).astype(np.float64)
    mag = np.arange(1 << 16) & 0x7FFF
    finite = mag < 0x7F80
    c, v = counts[finite], values[finite]
    n = c.sum()
    mean = float(np.dot(c, v) / n)
    return {"n_nan": int(counts[mag > 0x7F80].sum()), "n_inf": int(counts[mag == 0x7F80].sum()),
            "l2": math.sqrt(float(np.dot(c, v * v))), "std": math.sqrt(float(np.dot(c, (v - mean) ** 2) / n))}


# ---------------------------------------------------------------- the timed processes
_SCAN = """
import sys, time, json
from forensics.checkpoints import scan_checkpoint
t = time.perf_counter()
df = scan_checkpoint(sys.argv[1])
work = time.perf_counter() - t
rows = {r.name: {"n_nan": int(r.n_nan), "n_inf": int(r.n_inf), "l2": r.l2, "std": r.std} for r in df.itertuples()}
print(json.dumps({"work_s": work, "rows": rows}))
"""
_QUICK = """
import sys, time, json
from forensics.checkpoints import quick_check
t = time.perf_counter()
info = quick_check(sys.argv[1], stop_at_first=False)
print(json.dumps({"work_s": time.perf_counter() - t, "status": info.status, "bad": info.nonfinite_tensors}))
"""
_NAIVE = """
import sys, time, json, glob, torch
from safetensors.torch import load_file
t = time.perf_counter()
rows = {}
for path in sorted(glob.glob(sys.argv[1] + "/*.safetensors")):
    for name, x in load_file(path).items():
        rows[name] = {"n_nan": int(torch.isnan(x).sum()), "n_inf": int(torch.isinf(x).sum()),
                      "absmax": float(x.abs().max()), "l2": float(x.norm()), "mean": float(x.mean()),
                      "std": float(x.std())}
print(json.dumps({"work_s": time.perf_counter() - t, "rows": rows}))
"""
_FLOOR = """
import sys, time, json, glob
t = time.perf_counter()
buf = bytearray(16 << 20); view = memoryview(buf); n = 0
for path in sorted(glob.glob(sys.argv[1] + "/*.safetensors")):
    with open(path, "rb", buffering=0) as fh:
        while True:
            k = fh.readinto(view)
            if not k:
                break
            n += k
print(json.dumps({"work_s": time.perf_counter() - t, "bytes": n}))
"""


def _tree_rss(pid: int) -> int:
    """Sum of PSS (bytes: each shared page split between its sharers) over pid and its descendants."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/smaps_rollup") as fh:
                total += next(int(line.split()[1]) * 1024 for line in fh if line.startswith("Pss:"))
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo += [int(c) for c in fh.read().split()]
        except (OSError, StopIteration, ValueError):
            continue
    return total


def run_process(argv: list[str], env: dict) -> dict:
    """Run one variant; wall seconds, its JSON line, peak RSS of one process and of the tree."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    peak_tree = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak_tree[0] = max(peak_tree[0], _tree_rss(proc.pid))
            done.wait(0.01)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    done.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    # `forensics scan` exits 1 when it finds NaN/Inf, which this checkpoint holds by design.
    expected = (0, 1) if argv[1:3] == ["-m", "forensics"] else (0,)
    if proc.returncode not in expected:
        raise SystemExit(f"{argv[:3]} failed ({proc.returncode}):\n{err.decode()[-3000:]}")
    lines = out.decode().strip().splitlines()
    result = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {"work_s": math.nan}
    result.update(wall_s=wall, peak_rss=usage.ru_maxrss * 1024, peak_tree_rss=peak_tree[0])
    return result


def check_agreement(name: str, result: dict, reference: dict, tol: float = 1e-5) -> None:
    """NaN/Inf counts equal everywhere; L2 and std within `tol` relative (scan only)."""
    rows = result["rows"]
    assert set(rows) == set(reference), f"{name}: tensor names differ"
    worst = 0.0
    for tensor, ref in reference.items():
        row = rows[tensor]
        assert (row["n_nan"], row["n_inf"]) == (ref["n_nan"], ref["n_inf"]), f"{name} {tensor}: {row} vs {ref}"
        if name == "scan":
            for key in ("l2", "std"):
                rel = abs(row[key] - ref[key]) / ref[key]
                worst = max(worst, rel)
                assert rel < tol, f"{name} {tensor} {key}: {row[key]!r} vs {ref[key]!r} ({rel:.2e})"
    print(f"  {name}: NaN/Inf counts match" + (f"; worst L2/std relative error {worst:.1e}" if name == "scan" else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int, default=18)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-naive", action="store_true", help="skip the naive way (it needs the whole file in RAM)")
    ap.add_argument("--keep", help="write the checkpoint here and keep it (reused when it is already there)")
    ap.add_argument("--make", help=argparse.SUPPRESS)  # internal: write the checkpoint and its reference here
    args = ap.parse_args()
    if args.make:
        reference = make_checkpoint(Path(args.make), args.layers)
        (Path(args.make) / "reference.json").write_text(json.dumps(reference))
        return
    params = sum(math.prod(s) for _, s in qwen2_tensors(args.layers))
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="forensics-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(folder).free
    if not (folder / "reference.json").exists() and free < 2 * params * 2 + (1 << 30):
        raise SystemExit(f"only {free / 1e9:.1f} GB free under {folder}; need {2 * params * 2 / 1e9 + 1:.1f} GB")
    try:
        _bench(folder, args, params)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
            print(f"deleted {folder}")


def _bench(folder: Path, args, params: int) -> None:
    t = time.perf_counter()
    if not (folder / "reference.json").exists():
        # In its own process: a child inherits its parent's peak RSS, so this one must stay small.
        subprocess.run([sys.executable, __file__, "--make", str(folder), "--layers", str(args.layers)], check=True)
    reference = json.loads((folder / "reference.json").read_text())
    size = sum(p.stat().st_size for p in folder.glob("*.safetensors"))
    print(f"{size / 1e9:.2f} GB ({params / 1e9:.2f} B params, BF16) ready in {time.perf_counter() - t:.0f} s in {folder}")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    py = [sys.executable, "-c"]
    variants = {"scan": py + [_SCAN, str(folder)], "quick": py + [_QUICK, str(folder)],
                "floor": py + [_FLOOR, str(folder)]}
    if subprocess.run([sys.executable, "-m", "forensics", "scan", "--help"], env=env, capture_output=True).returncode == 0:
        variants["cli"] = [sys.executable, "-m", "forensics", "scan", str(folder)]
    if not args.no_naive:
        variants["naive"] = py + [_NAIVE, str(folder)]
    print("checking that the variants agree (this run also warms the page cache):")
    for name, argv in variants.items():
        result = run_process(argv, env)
        if "rows" in result:
            check_agreement(name, result, reference)
        elif name == "quick":
            expected = sorted(t for t, r in reference.items() if r["n_nan"] or r["n_inf"])
            assert sorted(result["bad"]) == expected, result["bad"]
            print(f"  quick: finds exactly {expected}")
    timings = {name: [] for name in variants}
    for r in range(args.rounds):
        for name, argv in variants.items():
            timings[name].append(run_process(argv, env))
        print(f"round {r + 1}: " + ", ".join(f"{n} {timings[n][-1]['wall_s']:.2f} s" for n in variants))
    _report(timings, size)


def _report(timings: dict, size: int) -> None:
    med = {n: {k: statistics.median(r[k] for r in runs) for k in ("wall_s", "work_s")} for n, runs in timings.items()}
    peak = {n: (max(r["peak_rss"] for r in runs), max(r["peak_tree_rss"] for r in runs)) for n, runs in timings.items()}
    print(f"\n{size / 1e9:.2f} GB, {os.cpu_count()} cores, medians of {len(timings['scan'])} rounds")
    print(f"{'variant':8} {'wall s':>8} {'work s':>8} {'GB/s (work)':>12} {'peak RSS MB':>12} {'tree PSS MB':>12}")
    for n in timings:
        print(f"{n:8} {med[n]['wall_s']:8.2f} {med[n]['work_s']:8.3f} {size / med[n]['work_s'] / 1e9:12.2f} "
              f"{peak[n][0] / 2**20:12.0f} {peak[n][1] / 2**20:12.0f}")
    floor = med["floor"]
    for key, label in (("wall_s", "whole process"), ("work_s", "work only")):
        line = (f"{label:14}: scan = {med['scan'][key] / floor[key]:.1f}x floor time; "
                f"quick = {floor[key] / med['quick'][key]:.0%} of floor throughput")
        if "naive" in med:
            line += f"; scan is {med['naive'][key] / med['scan'][key]:.0f}x faster than naive"
        if "cli" in med and key == "wall_s":
            line += f"; cli = {med['cli'][key] / floor[key]:.1f}x floor time"
        print(line)


if __name__ == "__main__":
    main()
