"""Benchmark of the log ingestors against named baselines, whole processes, interleaved.

    python bench/ingest.py [--points 1000000] [--repeats 5] [--entries 200000] [--workdir DIR]

1. TensorBoard: writes ~`points` scalars with HF's tags through torch's SummaryWriter.add_scalar
   (train/loss, train/grad_norm, train/learning_rate, train/epoch every step; eval/* and a
   duplicate train/epoch every 500 steps; NaN/Inf injected), checks that our reader, tbparse and
   TensorBoard's EventAccumulator(size_guidance={'scalars': 0}) return the same points (same
   values, NaN where NaN), then times each as a fresh `python -c` process, A B C A B C ...
   Ours includes forensics.timeline.build_timeline and asserts torch was never imported.
2. trainer_state.json of `entries` log entries (dataclasses.asdict(TrainerState), json.dumps
   indent=2 sort_keys=True as HF writes it): ours to the timeline vs a bare json.load.
Prints medians and ratios.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

TRAIN_TAGS = ("train/loss", "train/grad_norm", "train/learning_rate", "train/epoch")
EVAL_TAGS = ("eval/loss", "eval/runtime", "eval/samples_per_second", "eval/steps_per_second", "train/epoch")

OURS_TB = ("import sys; from forensics.ingest import tensorboard; from forensics.timeline import build_timeline; "
           "t = build_timeline([tensorboard.read(sys.argv[1])]); "
           "assert 'torch' not in sys.modules, 'torch imported'; print(len(t.frame))")
TBPARSE = "import sys; from tbparse import SummaryReader; print(len(SummaryReader(sys.argv[1]).scalars))"
ACCUMULATOR = ("import sys; from tensorboard.backend.event_processing.event_accumulator import EventAccumulator; "
               "ea = EventAccumulator(sys.argv[1], size_guidance={'scalars': 0}); ea.Reload(); "
               "print(sum(len(ea.Scalars(t)) for t in ea.Tags()['scalars']))")
OURS_TS = ("import sys; from forensics.ingest import trainer_state; from forensics.timeline import build_timeline; "
           "t = build_timeline([trainer_state.read(sys.argv[1])]); "
           "assert 'torch' not in sys.modules, 'torch imported'; print(len(t.frame))")
BARE_JSON = "import sys, json; print(len(json.load(open(sys.argv[1]))['log_history']))"
# The same comparison inside one warm process (imports paid before timing), A B A B ...
IN_PROCESS_TS = """
import json, statistics, sys, time
from forensics.ingest import trainer_state
from forensics.timeline import build_timeline
bare, ours = [], []
for _ in range(int(sys.argv[2])):
    t0 = time.perf_counter(); json.load(open(sys.argv[1])); t1 = time.perf_counter()
    build_timeline([trainer_state.read(sys.argv[1])]); t2 = time.perf_counter()
    bare.append(t1 - t0); ours.append(t2 - t1)
print(statistics.median(bare), statistics.median(ours))
"""


def train_value(tag: str, step: int) -> float:
    """The generating formula of every train point (NaN/Inf planted at fixed steps)."""
    if tag == "train/loss":
        return math.nan if step % 9973 == 0 else 2.0 * math.exp(-step / 50_000) + 0.01 * math.sin(step)
    if tag == "train/grad_norm":
        return math.inf if step % 7919 == 0 else 1.0 + 0.5 * math.cos(step / 7)
    if tag == "train/learning_rate":
        return 2e-5 * (1 - step / 1e7)
    return step / 1000.0


def write_tensorboard(logdir: Path, points: int) -> tuple[Path, int]:
    """Write about `points` scalars the way HF's TensorBoardCallback does; returns (file, count)."""
    from torch.utils.tensorboard import SummaryWriter
    writer = SummaryWriter(str(logdir))
    writer.add_text("args", json.dumps({"learning_rate": 2e-5, "max_grad_norm": 1.0}, indent=2))
    written, step = 0, 0
    while written < points:
        step += 1
        for tag in TRAIN_TAGS:
            writer.add_scalar(tag, train_value(tag, step), step)
        written += len(TRAIN_TAGS)
        if step % 500 == 0:
            for i, tag in enumerate(EVAL_TAGS):
                writer.add_scalar(tag, step / 1000.0 if tag == "train/epoch" else 1.0 + i + step * 1e-6, step)
            written += len(EVAL_TAGS)
    writer.close()
    return next(logdir.glob("events.out.tfevents.*")), written


def write_trainer_state(path: Path, entries: int) -> None:
    from transformers.trainer_callback import TrainerState
    history = []
    for step in range(1, entries + 1):
        history.append({"loss": round(train_value("train/loss", step), 4),
                        "grad_norm": train_value("train/grad_norm", step),
                        "learning_rate": train_value("train/learning_rate", step),
                        "epoch": step / 1000.0, "step": step})
    state = TrainerState(global_step=entries, max_steps=entries, logging_steps=1, log_history=history)
    path.write_text(json.dumps(dataclasses.asdict(state), indent=2, sort_keys=True) + "\n")


def check_tensorboard_agreement(path: Path, expected: int) -> None:
    """Every point of ours equals tbparse's and EventAccumulator's (per tag, as multisets)."""
    from forensics.ingest import tensorboard
    from forensics.timeline import canonical_metric
    from tbparse import SummaryReader
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    ours = tensorboard.read(path).frame
    assert len(ours) == expected, f"ours read {len(ours)} points, {expected} written"
    theirs = SummaryReader(str(path)).scalars
    acc = EventAccumulator(str(path), size_guidance={"scalars": 0})
    acc.Reload()
    for tag in sorted(set(TRAIN_TAGS + EVAL_TAGS)):
        mine = ours[ours["metric"] == canonical_metric(tag)]
        a = _sorted_points(mine["step"].to_numpy(), mine["value"].to_numpy())
        rows = theirs[theirs["tag"] == tag]
        b = _sorted_points(rows["step"].to_numpy(), rows["value"].to_numpy())
        events = acc.Scalars(tag)
        c = _sorted_points(np.array([e.step for e in events]), np.array([e.value for e in events]))
        for name, other in (("tbparse", b), ("EventAccumulator", c)):
            assert a[0].shape == other[0].shape, f"{tag}: {len(a[0])} points vs {len(other[0])} in {name}"
            assert np.array_equal(a[0], other[0]), f"{tag}: steps differ from {name}"
            assert np.array_equal(a[1], other[1], equal_nan=True), f"{tag}: values differ from {name}"
    print(f"agreement: {len(ours)} points, same steps and values (NaN/Inf included) in all three readers")


def _sorted_points(steps: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    values = values.astype(np.float32).astype(np.float64)  # all three hold the float32 of simple_value
    order = np.lexsort((np.nan_to_num(values, nan=np.inf).view(np.int64), steps))
    return steps[order].astype(np.int64), values[order]


def time_interleaved(commands: dict[str, str], path: Path, repeats: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeats):
        for name, code in commands.items():
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code, str(path)], check=True, stdout=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - start)
    return times


def report(title: str, times: dict[str, list[float]], base: str) -> None:
    print(f"\n{title} (median of {len(times[base])} whole processes, seconds)")
    medians = {name: statistics.median(t) for name, t in times.items()}
    for name, med in medians.items():
        ratio = med / medians[base]
        print(f"  {name:<22} {med:8.3f}   x{ratio:6.2f} of {base}   runs: "
              + " ".join(f"{t:.2f}" for t in times[name]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--entries", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=None, help="reuse files written there before")
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="forensics-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    logdir = work / f"tb-{args.points}"
    if not list(logdir.glob("events.out.tfevents.*")):
        t0 = time.perf_counter()
        write_tensorboard(logdir, args.points)
        print(f"wrote {logdir} in {time.perf_counter() - t0:.0f}s")
    tb_file = next(logdir.glob("events.out.tfevents.*"))
    expected = _expected_points(args.points)
    print(f"TensorBoard file: {tb_file} ({tb_file.stat().st_size / 1e6:.1f} MB, {expected} scalars)")
    check_tensorboard_agreement(tb_file, expected)
    tb_times = time_interleaved({"ours (to timeline)": OURS_TB, "tbparse": TBPARSE,
                                 "EventAccumulator": ACCUMULATOR}, tb_file, args.repeats)
    report("TensorBoard, 1 file", tb_times, "ours (to timeline)")
    ts_file = work / f"trainer_state-{args.entries}.json"
    if not ts_file.exists():
        write_trainer_state(ts_file, args.entries)
    print(f"\ntrainer_state.json: {ts_file} ({ts_file.stat().st_size / 1e6:.1f} MB, {args.entries} entries)")
    ts_times = time_interleaved({"bare json.load": BARE_JSON, "ours (to timeline)": OURS_TS}, ts_file, args.repeats)
    report("trainer_state.json", ts_times, "bare json.load")
    out = subprocess.run([sys.executable, "-c", IN_PROCESS_TS, str(ts_file), str(args.repeats)], check=True,
                         capture_output=True, text=True).stdout.split()
    bare, ours = float(out[0]), float(out[1])
    print(f"  in one warm process (imports excluded): json.load {bare:.3f}s, ours {ours:.3f}s, x{ours / bare:.2f}")


def _expected_points(points: int) -> int:
    written, step = 0, 0
    while written < points:
        step += 1
        written += len(TRAIN_TAGS) + (len(EVAL_TAGS) if step % 500 == 0 else 0)
    return written


if __name__ == "__main__":
    main()
