"""Benchmark of `forensics timeline --csv/--parquet` against tbparse, whole processes, interleaved.

    python bench/export.py [--points 1000000] [--repeats 3] [--workdir DIR]

Writes ~`points` scalars with HF's tags through torch's SummaryWriter (bench/ingest.py's writer),
checks that the CSV and Parquet files hold every point (NaN where NaN), then times as fresh
processes, A B C A B C ...: `forensics timeline RUN --csv`, `forensics timeline RUN --parquet`,
and tbparse's `SummaryReader(RUN).scalars` (reading only: the baseline of issue 2). Prints medians
and the ratio tbparse / ours (goal >= 10x, the file written included).
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest import write_tensorboard  # noqa: E402  (the same writer as the ingest benchmark)

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
TBPARSE = "import sys; from tbparse import SummaryReader; print(len(SummaryReader(sys.argv[1]).scalars))"


def _ours(run: Path, out: Path, flag: str) -> list[str]:
    return [sys.executable, "-m", "forensics", "timeline", str(run), flag, str(out)]


def _check(csv_path: Path, parquet_path: Path, expected: int) -> None:
    import numpy as np
    import pandas as pd
    import pyarrow.parquet as pq

    table = pd.read_csv(csv_path, keep_default_na=False)
    assert len(table) == expected, f"CSV holds {len(table)} rows, the timeline {expected}"
    values = table["value"].replace({"nan": "NaN"}).astype(float)
    parquet = pq.read_table(parquet_path)
    assert parquet.num_rows == expected and parquet.column("value").null_count == 0
    assert int(np.isnan(values).sum()) == int(np.isnan(parquet.column("value").to_numpy()).sum())
    print(f"agreement: {expected} points in the CSV and the Parquet file, the same NaNs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-export-"))
    run = work / "run"
    run.mkdir(parents=True, exist_ok=True)
    event_file, _ = write_tensorboard(run, args.points)
    from forensics.ingest import tensorboard
    from forensics.timeline import build_timeline

    # The timeline keeps one point per (step, metric, value): HF logs train/epoch twice at eval steps.
    written = len(build_timeline([tensorboard.read(event_file)]).frame)
    csv_out, parquet_out = work / "t.csv", work / "t.parquet"
    commands = {"ours --csv": _ours(run, csv_out, "--csv"), "ours --parquet": _ours(run, parquet_out, "--parquet"),
                "tbparse (read only)": [sys.executable, "-c", TBPARSE, str(run)]}
    for cmd in commands.values():  # warm-up: bytecode caches, page cache
        subprocess.run(cmd, check=True, env=ENV, stdout=subprocess.DEVNULL)
    _check(csv_out, parquet_out, written)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.repeats):
        for name, cmd in commands.items():
            start = time.perf_counter()
            subprocess.run(cmd, check=True, env=ENV, stdout=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(t) for name, t in times.items()}
    for name, value in medians.items():
        print(f"{name:<22} median {value:.2f} s over {args.repeats}")
    base = medians["tbparse (read only)"]
    for name in ("ours --csv", "ours --parquet"):
        print(f"tbparse / {name}: {base / medians[name]:.1f}x (goal >= 10x)")


if __name__ == "__main__":
    main()
