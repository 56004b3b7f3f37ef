"""Per-tensor stats against float64 references: every dtype, planted NaN/Inf, bit patterns, chunking, memory."""
from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from support.checkpoint_files import bf16_from_bits, reference, save_tensors, torch
from forensics.checkpoints import STATS_COLUMNS, quick_check, scan_checkpoint
from forensics.checkpoints import units

REL = 1e-6  # the bound is 1e-5; the scan keeps well inside it


def _planted(dtype, n=5000, seed=0):
    g = torch.Generator().manual_seed(seed)
    t = (torch.randn(n, generator=g) * 0.05 + 0.01).to(dtype)
    t[7] = float("nan")
    t[100] = float("inf")
    t[101] = float("-inf")
    t[2000] = 0.0
    t[3000] = -123.5
    return t


def _assert_row(row, ref, rel=REL):
    assert (row["n_nan"], row["n_inf"]) == (ref["n_nan"], ref["n_inf"])
    for key in ("absmax", "l2", "mean", "std", "zero_frac"):
        assert row[key] == pytest.approx(ref[key], rel=rel, abs=1e-12), key


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
@pytest.mark.parametrize("chunk_bytes", [units.DEFAULT_CHUNK_BYTES, 4096, 100])
def test_stats_match_float64_reference(tmp_path, dtype, chunk_bytes):
    t = _planted(dtype)
    path = save_tensors(tmp_path / "model.safetensors", {"model.layers.0.mlp.up_proj.weight": t.reshape(50, 100)})
    frame = scan_checkpoint(path, workers=1, chunk_bytes=chunk_bytes)
    assert list(frame.columns[: len(STATS_COLUMNS)]) == STATS_COLUMNS
    row = frame.iloc[0]
    _assert_row(row, reference(t))
    assert row["block"] == "model.layers.0"
    assert row["shape"] == (50, 100) and row["numel"] == 5000
    assert row["fp16_headroom"] == pytest.approx(65504 / reference(t)["absmax"])


def test_bf16_bit_patterns_decode_as_the_spec_says(tmp_path):
    # finite 1.0, NaN, +Inf, -Inf, +0, -0, smallest subnormal, largest finite, negative NaN, -1.0
    words = [0x3F80, 0x7FC0, 0x7F80, 0xFF80, 0x0000, 0x8000, 0x0001, 0x7F7F, 0xFFC1, 0xBF80]
    t = bf16_from_bits(words)
    frame = scan_checkpoint(save_tensors(tmp_path / "m.safetensors", {"w": t}), workers=1)
    row = frame.iloc[0]
    assert (row["n_nan"], row["n_inf"]) == (2, 2)
    assert row["zero_frac"] == pytest.approx(2 / 10)
    assert row["absmax"] == float(torch.finfo(torch.bfloat16).max)
    _assert_row(row, reference(t))  # the largest finite value squared overflows float32: float64 path


def test_f16_bit_patterns_including_subnormals(tmp_path):
    # smallest subnormal, its negative, largest finite, -Inf, NaN, 1.0, -2.0, a subnormal near the normals
    words = np.array([0x0001, 0x8001, 0x7BFF, 0xFC00, 0x7E00, 0x3C00, 0xC000, 0x03FF], dtype=np.uint16)
    t = torch.tensor(words.view(np.int16)).view(torch.float16)
    row = scan_checkpoint(save_tensors(tmp_path / "m.safetensors", {"w": t}), workers=1).iloc[0]
    assert (row["n_nan"], row["n_inf"], row["absmax"]) == (1, 1, 65504.0)
    _assert_row(row, reference(t))


def test_float8_types(tmp_path):
    e4 = torch.tensor([0x38, 0x7F, 0xFF, 0x7E, 0x00, 0xB8], dtype=torch.uint8).view(torch.float8_e4m3fn)
    e5 = torch.tensor([0x3C, 0x7C, 0xFC, 0x7D, 0x00, 0xBC], dtype=torch.uint8).view(torch.float8_e5m2)
    frame = scan_checkpoint(save_tensors(tmp_path / "m.safetensors", {"e4": e4, "e5": e5}), workers=1)
    rows = frame.set_index("name")
    assert (rows.loc["e4", "n_nan"], rows.loc["e4", "n_inf"]) == (2, 0)  # E4M3: 0x7F/0xFF are NaN, no Inf
    assert rows.loc["e4", "absmax"] == 448.0
    assert (rows.loc["e5", "n_nan"], rows.loc["e5", "n_inf"]) == (1, 2)
    for name, t in (("e4", e4), ("e5", e5)):
        _assert_row(rows.loc[name], reference(t))


def test_integer_and_bool_tensors_get_counts_and_absmax_only(tmp_path):
    path = save_tensors(tmp_path / "m.safetensors", {
        "ids": torch.tensor([-7, 0, 3, 0], dtype=torch.int64), "mask": torch.tensor([True, False, False, False]),
        "u8": torch.tensor([0, 255], dtype=torch.uint8)})
    rows = scan_checkpoint(path, workers=1).set_index("name")
    assert rows.loc["ids", "absmax"] == 7 and rows.loc["ids", "zero_frac"] == 0.5
    assert rows.loc["mask", "absmax"] == 1 and rows.loc["mask", "zero_frac"] == 0.75
    assert rows.loc["u8", "absmax"] == 255
    assert math.isnan(rows.loc["ids", "l2"]) and rows.loc["ids", "n_nan"] == 0
    assert quick_check(path, workers=1).status == "ok"


def test_std_of_a_mean_dominated_tensor_keeps_its_digits(tmp_path):
    # A norm weight: mean 1.0, spread 1e-3, over many chunks; E[x^2] - mean^2 alone would lose ~6 digits.
    g = torch.Generator().manual_seed(3)
    tensors = {"norm.weight": 1 + 1e-3 * torch.randn(300_000, generator=g),
               "const.weight": torch.full((70_000,), 0.3), "bf16.weight": (5 + 1e-2 * torch.randn(100_000, generator=g)).bfloat16()}
    rows = scan_checkpoint(save_tensors(tmp_path / "m.safetensors", tensors), workers=1, chunk_bytes=1 << 16).set_index("name")
    for name, t in tensors.items():
        _assert_row(rows.loc[name], reference(t))
    assert rows.loc["const.weight", "std"] == 0.0


def test_file_larger_than_the_chunk_budget_scans_in_bounded_memory(tmp_path):
    g = torch.Generator().manual_seed(1)
    tensors = {f"model.layers.{i}.mlp.down_proj.weight": torch.randn(1024, 2048, generator=g).bfloat16()
               for i in range(8)}  # 8 x 4 MiB = 32 MiB of BF16
    tensors["model.layers.5.mlp.down_proj.weight"][17, 3] = float("nan")
    path = save_tensors(tmp_path / "big.safetensors", tensors)
    budget = 1 << 18  # 256 KiB chunks: the file is 128x the budget
    tracemalloc.start()
    try:
        frame = scan_checkpoint(path, workers=1, chunk_bytes=budget)
        _, peak_scan = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        info = quick_check(path, workers=1, chunk_bytes=budget, stop_at_first=False)
        _, peak_quick = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert path.stat().st_size > 100 * budget
    assert peak_scan < 16 * budget and peak_quick < 16 * budget, (peak_scan, peak_quick)
    rows = frame.set_index("name")
    for name, t in tensors.items():
        _assert_row(rows.loc[name], reference(t))
    assert info.nonfinite_tensors == ["model.layers.5.mlp.down_proj.weight"]


@pytest.fixture
def parallel_everything(monkeypatch):
    """Make the pool worth it even for small files, so the parallel path runs in tests; counts pool runs."""
    monkeypatch.setattr(units, "PARALLEL_FROM_BYTES", 0)
    monkeypatch.setattr(units, "MIN_UNIT_BYTES", 1 << 16)
    pools = []
    real = units.map_in_pool

    def counted(fn, tasks, workers, *args):
        pools.append((len(tasks), workers))
        return real(fn, tasks, workers, *args)
    monkeypatch.setattr(units, "map_in_pool", counted)
    return pools


def test_parallel_scan_equals_inline_scan(tmp_path, parallel_everything):
    g = torch.Generator().manual_seed(2)
    tensors = {f"model.layers.{i}.w": torch.randn(300, 400, generator=g) for i in range(6)}
    tensors["model.embed_tokens.weight"] = torch.randn(1000, 300, generator=g).bfloat16()
    tensors["model.layers.4.w"][3, 3] = float("inf")
    save_tensors(tmp_path / "model-00001-of-00002.safetensors", dict(list(tensors.items())[:3]))
    save_tensors(tmp_path / "model-00002-of-00002.safetensors", dict(list(tensors.items())[3:]))
    inline = scan_checkpoint(tmp_path, workers=1, chunk_bytes=1 << 14)
    parallel = scan_checkpoint(tmp_path, workers=3, chunk_bytes=1 << 14)
    assert parallel_everything and parallel_everything[0][1] == 3  # the pool ran, with 3 workers
    assert list(inline["name"]) == list(parallel["name"])
    for col in ("n_nan", "n_inf", "absmax", "zero_frac"):
        assert list(inline[col]) == list(parallel[col])
    for col in ("l2", "mean", "std"):
        np.testing.assert_allclose(inline[col], parallel[col], rtol=1e-7)  # float32 rows grouped otherwise
    for name, t in tensors.items():
        _assert_row(parallel.set_index("name").loc[name], reference(t))


def test_parallel_quick_check_finds_and_stops(tmp_path, parallel_everything):
    g = torch.Generator().manual_seed(4)
    tensors = {f"model.layers.{i}.w": torch.randn(200, 300, generator=g) for i in range(8)}
    for i in (2, 6):
        tensors[f"model.layers.{i}.w"][5, 5] = float("nan")
    path = save_tensors(tmp_path / "m.safetensors", tensors)
    every = quick_check(path, workers=2, chunk_bytes=1 << 14, stop_at_first=False)
    assert parallel_everything
    assert every.nonfinite_blocks == ["model.layers.2", "model.layers.6"]
    first = quick_check(path, workers=2, chunk_bytes=1 << 14)
    assert first.status == "nonfinite" and set(first.nonfinite_tensors) <= {"model.layers.2.w", "model.layers.6.w"}
    assert first.stopped_early


def test_criterion_absmax_bound(tmp_path):
    path = save_tensors(tmp_path / "m.safetensors", {"a": torch.tensor([1.0, -2.0]), "b": torch.tensor([7e4, 1.0])})
    assert quick_check(path, workers=1).status == "ok"
    info = quick_check(path, "absmax>1e4", workers=1)
    assert info.status == "bad" and info.over_bound_tensors == ["b"]
    assert quick_check(path, 1e5, workers=1).status == "ok"
