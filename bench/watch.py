"""Benchmark of `forensics watch`: CPU per poll as a long run grows, against re-analyzing from scratch.

    python bench/watch.py [--steps 200000] [--batch 1000] [--checkpoints 10000,50000,100000,150000,200000]

A LLaMA-Factory `trainer_log.jsonl` (loss, grad_norm, lr every step: the densest common log) grows
by `batch` steps between polls until it holds `steps` steps. At each size in `--checkpoints` the CPU
time (process time) of the watcher's poll is recorded, and, interleaved with it, the CPU time of the
named baseline: what a poll would cost without following, `forensics.load_timeline` + `run_all` on the
whole file. Before timing, both must report the same findings on the final file (kind and step).
Prints per size the median poll CPU of each (over the polls near that size) and their ratio.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
import time
from pathlib import Path


def _lines(first: int, last: int) -> str:
    out = []
    for s in range(first, last + 1):
        loss = 2.0 + 1.5 * math.exp(-s / 20000) + 0.05 * math.sin(s * 0.37)
        grad = 1.0 + 0.3 * math.cos(s * 0.11)
        if s == 170_000:  # one incident, so both sides have something to find
            loss, grad = float("nan"), float("nan")
        out.append(json.dumps({"current_steps": s, "total_steps": 200000, "loss": loss, "grad_norm": grad,
                               "lr": 1e-5, "epoch": s / 50000}))
    return "\n".join(out) + "\n"


def _baseline_poll(root: Path):
    from forensics import load_timeline
    from forensics.analyzers import run_all
    from forensics.config import Thresholds

    return run_all(load_timeline(root), Thresholds())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--checkpoints", default="10000,50000,100000,150000,200000")
    parser.add_argument("--samples", type=int, default=3, help="polls timed around each checkpoint size")
    args = parser.parse_args()
    sizes = [int(s) for s in args.checkpoints.split(",")]

    from forensics.watch import Watcher

    root = Path(tempfile.mkdtemp(prefix="bench-watch-"))
    log = root / "trainer_log.jsonl"
    log.write_text("")
    watcher = Watcher(root, check_checkpoints=False)
    ours: dict[int, list[float]] = {s: [] for s in sizes}
    base: dict[int, list[float]] = {s: [] for s in sizes}
    written = 0
    while written < args.steps:
        with log.open("a") as fh:
            fh.write(_lines(written + 1, written + args.batch))
        written += args.batch
        near = next((s for s in sizes if s - args.samples * args.batch < written <= s), None)
        t0 = time.process_time()
        watcher.poll()
        t_ours = time.process_time() - t0
        if near is not None:  # interleaved: our poll, then the baseline on the same file
            t0 = time.process_time()
            _baseline_poll(root)
            base[near].append(time.process_time() - t0)
            ours[near].append(t_ours)
    live = {(f.kind, f.step) for f in watcher.reported if f.severity != "info"}
    full = {(f.kind, f.step) for f in _baseline_poll(root) if f.severity != "info"}
    assert live == full, f"findings differ: live {sorted(live)} vs full {sorted(full)}"
    watcher.close()
    print(f"findings agree: {sorted(live)}")
    print(f"{'steps':>8} {'watch poll CPU s':>17} {'re-analyze CPU s':>17} {'ratio':>7}")
    for s in sizes:
        a, b = statistics.median(ours[s]), statistics.median(base[s])
        print(f"{s:>8} {a:>17.4f} {b:>17.4f} {b / a:>7.1f}x")


if __name__ == "__main__":
    main()
