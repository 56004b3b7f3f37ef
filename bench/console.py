"""Benchmark of the console-log reader on a Megatron log, against a bare regex loop, whole processes.

    python bench/console.py [--iterations 100000] [--repeats 5] [--workdir DIR]

Writes a Megatron-LM stdout of `iterations` iteration lines (one per iteration, the fields
training_log prints, a validation line every 1000) with a few launcher lines between them,
checks that our reader (stdout.read + build_timeline) and the baseline - a `for line in file`
loop with one regex for `iteration N/` and one for `lm loss: X`, what a user's own script would
do for the loss alone - return the same loss points, then times each as a fresh `python -c`
process, A B A B ... Prints medians and the ratio.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from ingest import report, time_interleaved  # noqa: E402  (the shared timing helpers of bench/)

OURS = ("import sys; from forensics.ingest import stdout; from forensics.timeline import build_timeline; "
        "t = build_timeline([stdout.read(sys.argv[1])]); l = t.series('loss'); "
        "print(len(l), repr(float(l.iloc[-1])))")
BASELINE = ("import re, sys\n"
            "it, lm = re.compile(r' iteration +(\\d+)/'), re.compile(r'\\| lm loss: ([^ |]+) \\|')\n"
            "loss = {}\n"
            "for line in open(sys.argv[1]):\n"
            "    a, b = it.search(line), lm.search(line)\n"
            "    if a and b: loss[int(a.group(1))] = float(b.group(1))\n"
            "print(len(loss), repr(loss[max(loss)]))")


def write_log(path: Path, iterations: int) -> None:
    """Lines in Megatron's training_log format (megatron/training/training.py)."""
    with open(path, "w") as out:
        out.write("using world size: 8, data-parallel size: 8\n")
        for it in range(1, iterations + 1):
            loss = 8.0 * (1 + it) ** -0.15
            out.write(f" iteration {it:8d}/{iterations:8d} | consumed samples: {it * 512:12d} | "
                      f"elapsed time per iteration (ms): 1379.8 | learning rate: {3e-4 * min(1, it / 2000):.6E} | "
                      f"global batch size:   512 | lm loss: {loss:.6E} | loss scale: 65536.0 | "
                      f"grad norm: {1 + (it % 7) / 10:.3f} | number of skipped iterations:   0 | "
                      f"number of nan iterations:   0 |\n")
            if it % 1000 == 0:
                out.write(f" validation loss at iteration {it} | lm loss value: {loss:.6E} | "
                          f"lm loss PPL: {2.718 ** loss:.6E} | \n")
                out.write(f"[Rank 0] (after {it} iterations) memory (MB) | allocated: 1024.0 | max allocated: 2048.0\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-console-"))
    path = workdir / f"megatron-{args.iterations}.out"
    if not path.exists():
        write_log(path, args.iterations)
    outputs = {name: subprocess.run([sys.executable, "-c", code, str(path)], check=True, capture_output=True,
                                    text=True).stdout.strip() for name, code in (("ours", OURS), ("baseline", BASELINE))}
    assert outputs["ours"] == outputs["baseline"], outputs
    print(f"{path} ({path.stat().st_size / 1e6:.1f} MB): both read {outputs['ours']} (loss points, last loss)")
    report("Megatron console log", time_interleaved({"baseline": BASELINE, "ours": OURS}, path, args.repeats),
           "baseline")


if __name__ == "__main__":
    main()
