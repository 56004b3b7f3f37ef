"""Replay a finished run into an empty folder as its job wrote it, step by step, for `forensics watch` tests.

`replay(src, dst)` writes the run's records in the order the job wrote them and yields, after
each logged step is complete, that step; between two yields a watcher can poll. What is written:
- TensorBoard event files, record by record, in wall-time order (both attempts of a resumed run);
- JSON-lines logs (LLaMA-Factory, ms-swift) and console logs, line by line, each line's bytes in
  two writes, so a poll can land on a half-written line;
- checkpoint folders, once the replay reaches their step: first half of each file, a yield
  (so a poll sees a checkpoint being written), then the rest; the root trainer_state.json last.

As a process: `python tests/support/replay.py SRC DST [--delay SECONDS]` (a writer beside a live watcher).
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import struct
import time
from pathlib import Path
from typing import Iterator

_STEP_DIR = re.compile(r"^(?:checkpoint|ckpt)-(\d+)$")


def tf_records(path: Path) -> list[tuple[float, int, bytes]]:
    """(wall_time, step, raw record bytes) of every record of an event file, read with TensorBoard's protos."""
    from tensorboard.compat.proto import event_pb2

    data = path.read_bytes()
    out, pos = [], 0
    while pos + 12 <= len(data):
        (length,) = struct.unpack_from("<Q", data, pos)
        end = pos + 12 + length + 4
        event = event_pb2.Event.FromString(data[pos + 12:pos + 12 + length])
        out.append((event.wall_time, int(event.step), data[pos:end]))
        pos = end
    return out


def _line_step(line: str, position: int) -> int:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError:
        return position
    for key in ("current_steps", "global_step/max_steps", "step", "global_step"):
        if key in obj:
            return int(str(obj[key]).split("/")[0])
    return position


def _events(src: Path) -> list[tuple[float, int, Path, bytes]]:
    """Everything appended to the run's logs, in write order: (order key, step, relative file, bytes)."""
    events = []
    for path in sorted(src.rglob("events.out.tfevents.*")):
        rel = path.relative_to(src)
        events += [(wall, step, rel, raw) for wall, step, raw in tf_records(path)]
    for path in sorted([*src.rglob("*.jsonl"), *src.rglob("*.log"), *src.rglob("*.txt"), *src.rglob("*.md")]):
        rel = path.relative_to(src)
        lines = path.read_bytes().splitlines(keepends=True)
        events += [(i, _line_step(ln.decode("utf-8", "replace"), i), rel, ln) for i, ln in enumerate(lines)]
    return sorted(events, key=lambda e: e[0]) if all(isinstance(e[0], float) for e in events) else events


def _checkpoints(src: Path) -> dict[int, Path]:
    return {int(m.group(1)): p for p in src.iterdir() if p.is_dir() and (m := _STEP_DIR.match(p.name))}


def replay(src, dst) -> Iterator[int]:
    """Write `src`'s logs and checkpoints into `dst` in write order, yielding each step once it is complete."""
    src, dst = Path(src), Path(dst)
    dst.mkdir(parents=True, exist_ok=True)
    pending = dict(sorted(_checkpoints(src).items()))
    events = _events(src)
    for i, (_, step, rel, raw) in enumerate(events):
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("ab") as fh:
            half = len(raw) // 2
            fh.write(raw[:half])
            fh.flush()
            fh.write(raw[half:])
        following = events[i + 1][1] if i + 1 < len(events) else None
        if following != step:
            yield from _save_due(pending, step, dst)
            yield step
    yield from _save_due(pending, float("inf"), dst)
    for name in ("trainer_state.json", "config.json", "training_args.bin"):
        if (src / name).exists():
            shutil.copy2(src / name, dst / name)
    yield -1


def _save_due(pending: dict[int, Path], reached: float, dst: Path) -> Iterator[int]:
    """Write every checkpoint saved at or before `reached`, each in two halves with a yield between."""
    for step in [s for s in pending if s <= reached]:
        folder = pending.pop(step)
        files = [p for p in sorted(folder.rglob("*")) if p.is_file()]
        for path in files:
            target = dst / folder.name / path.relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            data = path.read_bytes()
            target.write_bytes(data[:len(data) // 2])
        yield step  # a poll here sees a checkpoint half written
        for path in files:
            target = dst / folder.name / path.relative_to(folder)
            target.write_bytes(path.read_bytes())
        yield step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("dst", type=Path)
    parser.add_argument("--delay", type=float, default=0.01, help="seconds between steps")
    args = parser.parse_args()
    for _ in replay(args.src, args.dst):
        time.sleep(args.delay)


if __name__ == "__main__":
    main()
