"""diff_checkpoints: relative change per tensor, streamed, whatever the two sides' dtypes and files."""
from __future__ import annotations

import numpy as np
import pytest

from support.checkpoint_files import save_tensors, torch
from forensics.bisection import bisect_checkpoints as bisect
from forensics.checkpoints import diff_checkpoints, diff_table, quick_check
from forensics.checkpoints.diff import PairUnit, compare_unit
from forensics.checkpoints.dtypes import WIDEN, Scratch
from forensics.checkpoints.readers import open_weight_file
from forensics.checkpoints.units import Piece


def test_a_tensor_saved_as_f32_then_bf16_is_compared_across_many_chunks(tmp_path):
    # More elements than one chunk holds on either side: F32 and BF16 chunks differ in length.
    x = torch.randn(1_000_000, generator=torch.Generator().manual_seed(0))
    save_tensors(tmp_path / "checkpoint-10" / "model.safetensors", {"w": x})
    save_tensors(tmp_path / "checkpoint-20" / "model.safetensors", {"w": x.to(torch.bfloat16)})
    row = diff_checkpoints(tmp_path / "checkpoint-10", tmp_path / "checkpoint-20", workers=1).iloc[0]
    a, b = x.double().numpy(), x.to(torch.bfloat16).double().numpy()
    assert row["rel_change"] == pytest.approx(np.linalg.norm(b - a) / np.linalg.norm(a), rel=1e-5)
    assert row["l2_b"] == pytest.approx(np.linalg.norm(b), rel=1e-6)


def test_the_diff_leaves_the_tensors_it_reads_untouched(tmp_path):
    # Files opened once and shared (the inline path): b's tensor must read the same after a compare.
    a, b = tmp_path / "a.bin", tmp_path / "b.bin"
    torch.save({"w": torch.full((1024,), 2.0)}, a)
    torch.save({"w": torch.full((1024,), 5.0)}, b)
    wf_a, wf_b = open_weight_file(a), open_weight_file(b)
    result = compare_unit(PairUnit(str(a), str(b), (Piece("w", 0, 1024),), 4096), 1 << 20, wf_a, wf_b)
    assert result.sums[0][1].sq_diff == pytest.approx(1024 * 3.0 ** 2)
    entry = wf_b.entries[0]
    bits = next(iter(wf_b.chunks(entry, 0, 1024, Scratch(1 << 20))))
    assert set(WIDEN[entry.info.code](bits, Scratch(1 << 20)).tolist()) == {5.0}


def test_bisect_keeps_a_nan_the_diff_cannot_compare(tmp_path):
    # The tensor changed shape between the two, so no element-wise diff exists for it; the probe saw the NaN.
    save_tensors(tmp_path / "checkpoint-10" / "model.safetensors", {"model.layers.0.w": torch.ones(4)})
    save_tensors(tmp_path / "checkpoint-20" / "model.safetensors",
                 {"model.layers.0.w": torch.tensor([1.0, float("nan"), 1.0, 1.0, 1.0, 1.0])})
    assert quick_check(tmp_path / "checkpoint-20").status == "nonfinite"
    result = bisect(tmp_path / "checkpoint-10", tmp_path / "checkpoint-20")
    assert result.first_bad.status == "nonfinite"
    assert result.first_bad.nonfinite_tensors == ["model.layers.0.w"]
    assert result.first_bad.nonfinite_blocks == ["model.layers.0"]


def test_a_damaged_shard_is_named_in_the_diff_tables_skipped_files(tmp_path):
    for step in (10, 20):
        save_tensors(tmp_path / f"checkpoint-{step}" / "model-00001-of-00002.safetensors", {"a": torch.ones(4) * step})
        save_tensors(tmp_path / f"checkpoint-{step}" / "model-00002-of-00002.safetensors", {"b": torch.ones(4)})
    damaged = tmp_path / "checkpoint-20" / "model-00002-of-00002.safetensors"
    damaged.write_bytes(b"\x00" * 5)
    table = diff_table(tmp_path / "checkpoint-10", tmp_path / "checkpoint-20", workers=1)
    assert [s.path for s in table.skipped] == [str(damaged)]
    row = table.frame.set_index("tensor").loc["a"]
    assert row["rel_change"] == pytest.approx(1.0)  # ||20 - 10|| / ||10||
    assert table.frame.equals(diff_checkpoints(tmp_path / "checkpoint-10", tmp_path / "checkpoint-20", workers=1))
