"""torch.distributed.checkpoint folders written by real FSDP2 (gloo, 2 CPU ranks), read offline without torch.

scripts/make_dcp_checkpoints.py writes the same 3-step run as torchtitan `step-N/` folders and as
accelerate SHARDED_STATE_DICT `checkpoint-N/{pytorch_model_fsdp_0,optimizer_0}/`; before the
step-3 save rank 1 puts one NaN into its shard of `layers.1.weight`. The full state dicts that torch
itself gathered are the reference.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from support.bigstack import ROOT, free_port, run_script

from forensics.analysis import analyze
from forensics.bisection import bisect
from forensics.checkpoints.scan import scan_table
from forensics.checkpoints import open_checkpoint, scan_checkpoint
from forensics.checkpoints.dcp_file import DcpFile
from forensics.checkpoints.dtypes import Scratch
from forensics.checkpoints.scan import NOT_FULLY_READ
from forensics.cli import cli
from forensics.errors import UnreadableFile

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def dcp_runs(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dcp")
    run_script([str(ROOT / "scripts" / "make_dcp_checkpoints.py"), str(out)], {"DCP_PORT": str(free_port())})
    return out


def _values(wf: DcpFile, name: str, chunk_bytes: int) -> np.ndarray:
    entry = next(e for e in wf.entries if e.name == name)
    return np.concatenate([b.copy() for b in wf.chunks(entry, 0, entry.numel, Scratch(chunk_bytes))]).view(np.float32)


@pytest.mark.parametrize("step", [2, 3])
@pytest.mark.parametrize("chunk_bytes", [16, 1 << 20])  # a few elements at a time, and whole chunks
def test_model_tensors_equal_what_torch_gathered(dcp_runs, step, chunk_bytes):
    reference = torch.load(dcp_runs / f"step-{step}.full.pt", weights_only=True)
    for folder in (dcp_runs / "titan" / "checkpoint" / f"step-{step}",
                   dcp_runs / "accel" / f"checkpoint-{step}" / "pytorch_model_fsdp_0"):
        wf = DcpFile(folder / ".metadata")
        try:
            for name, expected in reference.items():
                # FSDP2 shards dim 0, so the chunks in order are the row-major elements
                got = _values(wf, name, chunk_bytes)
                np.testing.assert_array_equal(got, expected.reshape(-1).numpy())
        finally:
            wf.close()


def test_optimizer_moments_are_named_per_parameter(dcp_runs):
    wf = DcpFile(dcp_runs / "accel" / "checkpoint-3" / "optimizer_0" / ".metadata")
    names = {e.name: e for e in wf.entries}
    assert names["layers.1.weight.exp_avg"].shape == (8, 8)
    assert names["layers.1.weight.exp_avg_sq"].dtype == "F32"
    assert all(e.problem is None for e in wf.entries)


@pytest.mark.parametrize("layout", ["titan", "accel"])
def test_scan_names_the_nan_tensor_and_block(dcp_runs, layout):
    facts = json.loads((dcp_runs / "facts.json").read_text())
    folder = (dcp_runs / "titan" / "checkpoint" / "step-3") if layout == "titan" else (dcp_runs / "accel" / "checkpoint-3")
    ref = open_checkpoint(folder)
    assert ref.kind == "dcp" and ref.step == 3
    stats = scan_checkpoint(ref, workers=1)
    bad = stats[stats["n_nan"] + stats["n_inf"] > 0]
    assert list(bad["name"]) == [facts["nan_param"]] and list(bad["block"]) == ["layers.1"]
    assert int(bad["n_nan"].iloc[0]) == 1


@pytest.mark.parametrize("layout", ["titan", "accel"])
def test_analyze_and_bisect_a_dcp_run(dcp_runs, layout):
    run = dcp_runs / layout
    result = analyze(run)
    assert result.status == "broken"
    assert result.first_bad_checkpoint.step == 3 and result.last_good_checkpoint.step == 2
    assert result.first_bad_checkpoint.nonfinite_blocks == ["layers.1"]
    folders = [run / "checkpoint" / "step-2", run / "checkpoint" / "step-3"] if layout == "titan" \
        else [run / "checkpoint-2", run / "checkpoint-3"]
    found = bisect(*folders)
    assert found.last_good.step == 2 and found.first_bad.step == 3


def test_a_missing_distcp_file_is_one_clear_line(dcp_runs, tmp_path):
    import shutil

    folder = Path(shutil.copytree(dcp_runs / "titan" / "checkpoint" / "step-3", tmp_path / "step-3"))
    (folder / "__1_0.distcp").unlink()
    table = scan_table(folder, workers=1)
    stats, skipped = table.frame, table.skipped
    assert [s.reason for s in skipped] == ["its data file __1_0.distcp: no such file or directory"]
    assert stats.loc[stats["name"] == "layers.1.weight", "note"].iloc[0] == NOT_FULLY_READ
    result = CliRunner().invoke(cli, ["scan", str(folder)])
    assert "tensors not fully read (see the skipped lines): no verdict on them" in result.stdout
    assert "all values read are finite" in result.stdout and "all values finite" not in result.stdout


def test_a_damaged_metadata_is_unreadable(tmp_path):
    (tmp_path / ".metadata").write_bytes(b"\x80\x04not a pickle")
    with pytest.raises(UnreadableFile, match=r"\.metadata"):
        DcpFile(tmp_path / ".metadata")
