"""Benchmark of start-up: whole processes, interleaved, against the named baselines.

    python bench/startup.py [--repeats 7]

Each command runs as a fresh process, A B C ... A B C ..., from the repository root:
  `python -c pass`                          baseline for --version / --help (goal: <= 4x)
  `python -c "import pandas"`               baseline for a small analyze --json (goal: <= 1.2x)
  `forensics --version`, `forensics --help`
  `forensics analyze sample_runs/healthy --json` and the same in text mode (goal: text no slower than --json)
The two analyze outputs are checked to name the same status before timing. Prints medians and ratios.
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
# As an installed package runs: bytecode cached (this machine sets PYTHONDONTWRITEBYTECODE, which
# would make every run compile every module and time the compiler instead of forensics).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
RUN = "sample_runs/healthy"
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "import pandas": [sys.executable, "-c", "import pandas"],
    "--version": [sys.executable, "-m", "forensics", "--version"],
    "--help": [sys.executable, "-m", "forensics", "--help"],
    "analyze --json": [sys.executable, "-m", "forensics", "analyze", RUN, "--json"],
    "analyze (text)": [sys.executable, "-m", "forensics", "analyze", RUN],
}
RATIOS = [("--version", "python -c pass", 4.0), ("--help", "python -c pass", 4.0),
          ("analyze --json", "import pandas", 1.2), ("analyze (text)", "analyze --json", 1.0)]


def _check_outputs_agree() -> None:
    data = json.loads(subprocess.run(COMMANDS["analyze --json"], capture_output=True, text=True, cwd=ROOT, env=ENV).stdout)
    text = subprocess.run(COMMANDS["analyze (text)"], capture_output=True, text=True, cwd=ROOT, env=ENV).stdout
    assert data["status"].upper() in text.upper(), "text and JSON disagree on the verdict"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    _check_outputs_agree()  # also the warm-up that writes the bytecode caches
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.repeats):
        for name, cmd in COMMANDS.items():
            start = time.perf_counter()
            subprocess.run(cmd, cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(t) for name, t in times.items()}
    for name, value in medians.items():
        print(f"{name:<16} median {value:.3f} s over {args.repeats}")
    for name, base, goal in RATIOS:
        ratio = medians[name] / medians[base]
        print(f"{name} / {base}: {ratio:.2f}x (goal <= {goal}x) {'met' if ratio <= goal else 'NOT met'}")


if __name__ == "__main__":
    main()
