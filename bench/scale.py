"""Does `forensics analyze` scale linearly? Many checkpoints, and a very long trainer_state.json.

    python bench/scale.py                       # 125..1000 checkpoints, 125k..1M log entries
    python bench/scale.py --rounds 3 --keep /tmp/scale

Writes into a temporary folder (deleted at the end unless --keep):
  * runs of 125, 250, 500 and 1000 checkpoints: checkpoint-N/model.safetensors (tiny, written
    with safetensors.numpy.save_file; the last quarter holds a NaN) plus a trainer_state.json with
    one entry per checkpoint interval;
  * trainer_state.json files of 125k, 250k, 500k and 1M log_history entries (loss, grad_norm,
    learning_rate, epoch, step; json.dumps with indent=2, as TrainerState.save_to_json), a NaN
    grad_norm near the end.
Each command (`forensics analyze --json RUN --workers 1`, and `forensics bisect FIRST LAST --json`
on the checkpoint runs) runs in a fresh process, best of --rounds: the whole process's seconds and
the seconds after `import forensics.cli`. The one-checkpoint run's time is the fixed cost; for
each doubling the ratio of the times above it is printed: ~2 is linear, ~4 quadratic ("(noise)"
when the smaller time is under 20 ms).
"""
from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CHECKPOINT_SIZES = (125, 250, 500, 1000)
ENTRY_SIZES = (125_000, 250_000, 500_000, 1_000_000)
SAVE_EVERY = 10


def write_checkpoint_run(root: Path, n: int) -> Path:
    """A run of `n` tiny checkpoints; from checkpoint 3n/4 on, one tensor holds a NaN."""
    from safetensors.numpy import save_file

    rng = np.random.default_rng(n)
    for i in range(1, n + 1):
        folder = root / f"checkpoint-{i * SAVE_EVERY}"
        folder.mkdir(parents=True)
        tensors = {f"model.layers.{b}.mlp.up_proj.weight": rng.standard_normal((8, 8)).astype(np.float32)
                   for b in range(2)}
        if i > 3 * n // 4:
            tensors["model.layers.1.mlp.up_proj.weight"][0, 0] = np.nan
        save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    write_trainer_state(root, n, every=SAVE_EVERY)
    return root


def write_trainer_state(root: Path, n: int, every: int = 1) -> Path:
    """trainer_state.json with `n` log entries, one every `every` steps; grad_norm NaN at 90% of the way."""
    bad_from = int(n * 0.9)
    history = [{"epoch": i / n, "grad_norm": math.nan if i >= bad_from else 1.0 + (i % 7) / 10,
                "learning_rate": 1e-4 * (1 - i / n), "loss": 0.0 if i >= bad_from else 3.0 - i / n,
                "step": (i + 1) * every} for i in range(n)]
    state = {"global_step": n * every, "logging_steps": every, "max_steps": n * every, "log_history": history}
    root.mkdir(parents=True, exist_ok=True)
    path = root / "trainer_state.json"
    path.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")
    return path


# Runs one CLI command in a fresh interpreter and reports, on stderr, the seconds after `import forensics.cli`.
_TIMED_CLI = """
import sys, time
from forensics.cli import cli
start = time.perf_counter()
try:
    cli.main(sys.argv[1:], prog_name="forensics")
except SystemExit as done:
    code = done.code
sys.stderr.write(f"\\nWORK {time.perf_counter() - start:.6f}\\n")
sys.exit(code)
"""


def time_command(args: list[str], rounds: int) -> tuple[float, float, dict]:
    """Best whole-process seconds, best seconds after imports, and the JSON output of `forensics ARGS`."""
    best, best_work, out = math.inf, math.inf, {}
    for _ in range(rounds):
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", _TIMED_CLI, *args], capture_output=True, text=True)
        best = min(best, time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"forensics {' '.join(args)} failed: {proc.stderr}")
        best_work = min(best_work, float(proc.stderr.rsplit("WORK ", 1)[1]))
        out = json.loads(proc.stdout)
    return best, best_work, out


def analyze_args(run: Path) -> list[str]:
    return ["analyze", "--json", str(run), "--workers", "1"]


def report(label: str, sizes, rows: list[tuple[float, float]], fixed: tuple[float, float]) -> None:
    """One line per size: whole-process and after-import seconds, and the growth per doubling of the latter."""
    print(f"\n{label}")
    print(f"{'size':>10} {'process s':>10} {'work s':>8} {'work - fixed':>13} {'x per doubling':>15}")
    prev = None
    for size, (total, work) in zip(sizes, rows):
        above = work - fixed[1]
        ratio = f"{above / prev:.2f}" if prev and prev > 0.02 else ("" if prev is None else "(noise)")
        print(f"{size:>10,} {total:>10.2f} {work:>8.3f} {above:>13.3f} {ratio:>15}")
        prev = above


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="timings per size (the best is kept)")
    parser.add_argument("--keep", type=Path, help="write the runs here and keep them")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="forensics-scale-"))
    try:
        one = write_checkpoint_run(base / "ckpt-1", 1)
        total, work, _ = time_command(analyze_args(one), max(args.rounds, 3))
        fixed = (total, work)
        print(f"fixed cost (analyze of a run of one checkpoint): {total:.2f} s process, {work:.3f} s after imports")
        analyzed, bisected = [], []
        for n in CHECKPOINT_SIZES:
            run = write_checkpoint_run(base / f"ckpt-{n}", n)
            total, work, out = time_command(analyze_args(run), args.rounds)
            first_bad = (3 * n // 4 + 1) * SAVE_EVERY
            assert len(out["checkpoints"]) == n and out["first_bad_checkpoint"]["step"] == first_bad, n
            analyzed.append((total, work))
            ends = [str(run / f"checkpoint-{s}") for s in (SAVE_EVERY, n * SAVE_EVERY)]
            total, work, out = time_command(["bisect", *ends, "--json"], args.rounds)
            assert out["first_bad"]["step"] == first_bad, out["first_bad"]
            bisected.append((total, work))
        report("checkpoints: analyze --json (every checkpoint quick-checked)", CHECKPOINT_SIZES, analyzed, fixed)
        report("checkpoints: bisect first..last --json (reads the run's logs too)", CHECKPOINT_SIZES, bisected, fixed)
        rows = []
        for n in ENTRY_SIZES:
            total, work, out = time_command(analyze_args(write_trainer_state(base / f"state-{n}", n).parent),
                                            args.rounds)
            assert out["first_incident"]["step"] == int(n * 0.9) + 1, out["first_incident"]
            rows.append((total, work))
        report("trainer_state.json entries: analyze --json", ENTRY_SIZES, rows, fixed)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
