"""Benchmark: `analyze --json` of a run that kept optimizer.pt, against the same code before, whole processes.

    python bench/optimizer_names.py BASELINE_DIR [--repeats 5]

BASELINE_DIR holds the `forensics` package to compare with (e.g. `git archive <commit> forensics | tar -x -C DIR`).
Commands, interleaved A B C D A B C D ..., each from the folder of its own package:
  A/B  `analyze sample_runs/resumed --json` (checkpoints with optimizer.pt), baseline then this tree
  C/D  `analyze sample_runs/healthy --json` (no optimizer.pt), baseline then this tree: the goal in issue 12/13
       is resumed within about 1.2x of healthy
The two JSON outputs of each run are checked to agree (all but the optimizer mapping's how/note) before timing.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# As an installed package runs: bytecode cached (see bench/startup.py)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _command(run: str) -> list[str]:
    return [sys.executable, "-m", "forensics", "analyze", str(ROOT / run), "--json"]


def _run(run: str, path: str, **kwargs) -> subprocess.CompletedProcess:
    """One whole process of `path`'s forensics (run from `path`: `-m` puts the working folder first on sys.path)."""
    return subprocess.run(_command(run), cwd=path, env={**ENV, "PYTHONPATH": path}, **kwargs)


def _output(run: str, path: str) -> dict:
    done = _run(run, path, capture_output=True, text=True)
    data = json.loads(done.stdout)
    data.pop("created", None)  # the time of the run
    return _without_mapping(data)


def _without_mapping(value):
    """The output less every optimizer's `mapping` (how the names were found: the one thing meant to differ)."""
    if isinstance(value, dict):
        return {k: _without_mapping(v) for k, v in value.items() if k != "mapping"}
    return [_without_mapping(v) for v in value] if isinstance(value, list) else value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baseline")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    paths = {"before": str(Path(args.baseline).resolve()), "after": str(ROOT)}
    for run in ("sample_runs/resumed", "sample_runs/healthy"):
        assert _output(run, paths["before"]) == _output(run, paths["after"]), f"{run}: outputs differ"
    variants = [(run, side) for run in ("sample_runs/resumed", "sample_runs/healthy") for side in paths]
    times: dict[tuple, list[float]] = {v: [] for v in variants}
    for _ in range(args.repeats):
        for run, side in variants:
            start = time.perf_counter()
            _run(run, paths[side], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[(run, side)].append(time.perf_counter() - start)
    med = {v: statistics.median(t) for v, t in times.items()}
    for (run, side), value in med.items():
        print(f"{run:<22} {side:<6} median {value:.2f} s over {args.repeats}")
    for side in paths:
        ratio = med[("sample_runs/resumed", side)] / med[("sample_runs/healthy", side)]
        print(f"{side}: resumed / healthy {ratio:.2f}x (goal about 1.2x)")


if __name__ == "__main__":
    main()
