"""Benchmark the scan of a 405B-layout checkpoint: 1 vs 2 local workers vs a Dask LocalCluster of 2.

    python bench/bigstack.py                      # 1 shard of the 405B layout, 3 interleaved rounds
    python bench/bigstack.py --shards 4 --rounds 3 --keep /tmp/llama405b

It writes the Llama-3.1-405B layout as Hugging Face saves it (hidden 16384, intermediate 53248,
126 layers, 8 KV heads, vocab 128256, untied lm_head: 405.8e9 BF16 values, ~811 GB) as 191
`model-000NN-of-000MM.safetensors` shards of at most 5 GB with real headers and names, plus the
index. The data are sparse holes (a few MB of disk for the whole 811 GB), except in the shards
the benchmark scans, which hold real-looking BF16 values (zeros would flatter the compute). Shards are cut in tensor order the way `save_pretrained` cuts
them (a new shard when the next tensor would pass the limit).

Variants, each a whole process, interleaved (A B C D, A B C D, ...), on the first --shards shards
(read once before the rounds, so every variant finds them in the page cache):
  floor   a readinto() loop over the same bytes, 16 MiB at a time: the read floor
  local1  scan_checkpoint(workers=1)
  local2  scan_checkpoint(workers=2)          (the default process pool)
  dask2   scan_checkpoint inside dask_scheduler(LocalCluster of 2 single-threaded workers)
Each reports its scan seconds (after imports and cluster start), the number of work units, and
peak RSS per worker process (the pool's children via getrusage; Dask workers via client.run).
The dask2 process also times 400 no-op tasks: the scheduler's overhead per task. Outputs of the
three are checked equal first. The projection for N machines assumes the per-worker throughput
measured here and a shared filesystem fast enough to feed it.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's forensics, not an installed one
from scan import shard_plan  # noqa: E402  (bench/ is the script's folder)

HIDDEN, INTER, LAYERS, VOCAB, KV_ROWS = 16384, 53248, 126, 128256, 8 * 128
MAX_SHARD = 5_000_000_000  # save_pretrained's default max_shard_size ("5GB")


def llama405b_tensors() -> list[tuple[str, tuple[int, ...]]]:
    out = [("model.embed_tokens.weight", (VOCAB, HIDDEN))]
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        out += [(p + "input_layernorm.weight", (HIDDEN,)), (p + "mlp.down_proj.weight", (HIDDEN, INTER)),
                (p + "mlp.gate_proj.weight", (INTER, HIDDEN)), (p + "mlp.up_proj.weight", (INTER, HIDDEN)),
                (p + "post_attention_layernorm.weight", (HIDDEN,)), (p + "self_attn.k_proj.weight", (KV_ROWS, HIDDEN)),
                (p + "self_attn.o_proj.weight", (HIDDEN, HIDDEN)), (p + "self_attn.q_proj.weight", (HIDDEN, HIDDEN)),
                (p + "self_attn.v_proj.weight", (KV_ROWS, HIDDEN))]
    return out + [("model.norm.weight", (HIDDEN,)), ("lm_head.weight", (VOCAB, HIDDEN))]


def make_layout(folder: Path, dense: int) -> list[Path]:
    """Write (or reuse) the 405B checkpoint, sparse but for the first `dense` shards; return the shards."""
    folder.mkdir(parents=True, exist_ok=True)
    tensors = llama405b_tensors()
    shards = shard_plan(tensors, MAX_SHARD)
    paths, weight_map = [], {}
    for i, shard in enumerate(shards):
        path = folder / f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        header, offset = {}, 0
        for name, shape in shard:
            header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + 2 * math.prod(shape)]}
            offset += 2 * math.prod(shape)
        raw = json.dumps({**header, "__metadata__": {"format": "pt"}}).encode()
        raw += b" " * (-len(raw) % 8)
        want_dense = i < dense
        is_dense = path.exists() and os.stat(path).st_blocks * 512 >= offset // 2
        if not path.exists() or path.stat().st_size != 8 + len(raw) + offset or want_dense != is_dense:
            with open(path, "wb") as fh:
                fh.write(len(raw).to_bytes(8, "little") + raw)
                if want_dense:
                    _write_values(fh, offset)
                fh.truncate(8 + len(raw) + offset)  # the data: one hole, or the values written
        weight_map.update({name: path.name for name, _ in shard})
        paths.append(path)
    total = sum(math.prod(s) * 2 for _, s in tensors)
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": total},
                                                                     "weight_map": weight_map}))
    return paths


def _write_values(fh, nbytes: int) -> None:
    """BF16 values ~N(0, 0.02) (a 64 MiB block drawn once, written again and again), so the scan
    computes over real-looking numbers, not the zeros of a hole."""
    import numpy as np

    rng = np.random.default_rng(0)
    bits = (rng.standard_normal(32 << 20).astype(np.float32) * 0.02).view(np.uint32)
    block = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16).tobytes()
    for _ in range(nbytes // len(block)):
        fh.write(block)
    fh.write(block[: nbytes % len(block)])


def _max_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_variant(variant: str, folder: str, n: int, out: str) -> None:
    """One measured process: scan the first n shards, write stats CSV and figures to `out`."""
    from forensics.checkpoints import scan_checkpoint
    from forensics.checkpoints.fanout import dask_scheduler
    from forensics.checkpoints.types import CheckpointRef
    from forensics.checkpoints.units import plan_units
    from forensics.checkpoints.scan import open_files, close_files

    files = sorted(Path(folder).glob("model-*.safetensors"))[:n]
    if variant == "floor":
        t = time.perf_counter()
        _read_all(files)
        Path(out + ".json").write_text(json.dumps({"variant": variant, "seconds": time.perf_counter() - t,
                                                   "bytes": sum(f.stat().st_size for f in files),
                                                   "worker_rss_mib": _max_rss_mib()}))
        return
    ref = CheckpointRef("llama405b-sample", None, Path(folder), tuple(files), "sharded")
    opened, _ = open_files(ref)
    n_units = len(plan_units(opened, 2, 2 << 20))
    close_files(opened)
    figures: dict = {"variant": variant, "units": n_units, "bytes": sum(f.stat().st_size for f in files)}
    if variant.startswith("local"):
        t = time.perf_counter()
        stats = scan_checkpoint(ref, workers=int(variant[-1]))
        figures["seconds"] = time.perf_counter() - t
        children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        figures["worker_rss_mib"] = children if variant == "local2" else _max_rss_mib()
    else:
        t0 = time.perf_counter()
        with dask_scheduler("local", workers=2) as client:
            figures["cluster_start_seconds"] = time.perf_counter() - t0
            t = time.perf_counter()
            stats = scan_checkpoint(ref, workers=2)
            figures["seconds"] = time.perf_counter() - t
            figures["worker_rss_mib"] = max(v / 1024 / 1024 for v in client.run(_worker_rss).values())
            t = time.perf_counter()
            client.gather(client.map(_noop, range(400), pure=False))
            figures["overhead_per_task_ms"] = (time.perf_counter() - t) / 400 * 1000
    figures["client_rss_mib"] = _max_rss_mib()
    stats.to_csv(out + ".csv", index=False)
    Path(out + ".json").write_text(json.dumps(figures))


def _read_all(files) -> None:
    """The read floor: readinto() every byte in 16 MiB chunks, nothing computed."""
    buf = memoryview(bytearray(16 << 20))
    for path in files:
        with open(path, "rb", buffering=0) as fh:
            while fh.readinto(buf):
                pass


def _worker_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _noop(i):
    return i


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep", help="write the sparse checkpoint here and keep it")
    ap.add_argument("--variant", nargs=4, help=argparse.SUPPRESS)  # internal: variant folder n out
    ap.add_argument("--make", nargs=2, help=argparse.SUPPRESS)  # internal: folder dense-shards
    args = ap.parse_args()
    if args.make:
        make_layout(Path(args.make[0]), int(args.make[1]))
        return None
    if args.variant:
        variant, folder, n, out = args.variant
        return run_variant(variant, folder, int(n), out)
    folder = Path(args.keep or tempfile.mkdtemp(prefix="llama405b-"))
    try:
        measure(folder, args)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


def measure(folder: Path, args) -> None:
    # written by a child: a child process inherits its parent's peak RSS, which would blur the figures
    subprocess.run([sys.executable, __file__, "--make", str(folder), str(args.shards)], check=True)
    paths = make_layout(folder, args.shards)  # all there already: only checked
    total = sum(p.stat().st_size for p in paths)
    print(f"405B layout: {len(paths)} shards, {total / 1e9:.1f} GB (sparse: "
          f"{sum(os.stat(p).st_blocks for p in paths) * 512 / 1e6:.1f} MB on disk); scanning {args.shards}")
    _read_all(paths[: args.shards])  # holes become page-cache pages once, before any variant is timed
    variants = ["floor", "local1", "local2", "dask2"]
    results: dict[str, list[dict]] = {v: [] for v in variants}
    work = Path(tempfile.mkdtemp(prefix="bigstack-bench-"))
    for r in range(args.rounds):
        for v in variants:
            out = str(work / f"{v}-{r}")
            subprocess.run([sys.executable, __file__, "--variant", v, str(folder), str(args.shards), out], check=True)
            results[v].append(json.loads(Path(out + ".json").read_text()))
    csvs = {v: Path(work / f"{v}-0.csv").read_text() for v in variants if v != "floor"}
    shutil.rmtree(work, ignore_errors=True)
    assert len(set(csvs.values())) == 1, "the variants disagree"
    report(results, total, args.shards)


def report(results: dict, total: int, n: int) -> None:
    med = {v: statistics.median(r["seconds"] for r in rs) for v, rs in results.items()}
    nbytes = results["local1"][0]["bytes"]
    print(f"outputs equal; {results['local1'][0]['units']} units over {nbytes / 1e9:.2f} GB; median seconds:")
    for v, rs in results.items():
        extra = ""
        if v == "dask2":
            extra = (f", cluster start {statistics.median(r['cluster_start_seconds'] for r in rs):.1f}s, "
                     f"overhead/task {statistics.median(r['overhead_per_task_ms'] for r in rs):.2f} ms")
        print(f"  {v:7s} {med[v]:7.2f}s  {nbytes / med[v] / 1e9:5.2f} GB/s  x{med['local1'] / med[v]:.2f} vs local1, "
              f"{med[v] / med['floor']:.2f}x the read floor, peak RSS per worker "
              f"{max(r['worker_rss_mib'] for r in rs):.0f} MiB{extra}")
    per_worker = nbytes / med["local1"]
    print(f"projection for the whole {total / 1e9:.0f} GB at {per_worker / 1e9:.2f} GB/s per worker "
          f"(fs bandwidth permitting), 2 workers per machine, Dask scaling as measured here:")
    scaling = med["local1"] / med["dask2"] / 2  # efficiency of 2 Dask workers on this machine
    for machines in (1, 8, 32, 128):
        seconds = total / (per_worker * 2 * machines * scaling)
        print(f"  {machines:4d} machine(s): {seconds / 60:7.1f} min")


if __name__ == "__main__":
    main()
