"""DeepSpeed ZeRO-1/2/3 checkpoints written by real DeepSpeed (CPU, gloo, 2 ranks), read without deepspeed.

The checkpoints come from scripts/make_zero_checkpoints.py, once per module: global_step2 clean,
global_step3 with one NaN put into the fp32 master copy of `layers.1.weight` (element 40, held by
rank 1) by DeepSpeed's own safe_set_full_fp32_param, the bf16 weights left finite. DeepSpeed's own
zero_to_fp32 reconstruction of every tag is the reference for the names and values.
"""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.bigstack import ROOT, free_port, run_script

from forensics.analysis import analyze
from forensics.bisection import bisect
from forensics.checkpoints import open_checkpoint, quick_check, scan_checkpoint
from forensics.checkpoints.zero import param_of, rank_of

STAGES = (1, 2, 3)

pytestmark = pytest.mark.skipif(importlib.util.find_spec("deepspeed") is None,
                                reason="deepspeed is needed to write the fixtures (dev extra)")


@pytest.fixture(scope="module")
def zero_runs(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("zero")
    run_script(["-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", str(free_port()),
                str(ROOT / "scripts" / "make_zero_checkpoints.py"), str(out)], {"DS_ACCELERATOR": "cpu"})
    return out


def _reference(zero_runs: Path, stage: int, tag: str) -> dict:
    import torch

    return torch.load(zero_runs / f"zero{stage}.{tag}.fp32.pt", weights_only=True)


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("tag", ["global_step2", "global_step3"])
def test_master_fragments_joined_over_ranks_equal_zero_to_fp32(zero_runs, stage, tag):
    import torch

    from forensics.checkpoints.zero import ZeroRankFile

    folder = zero_runs / f"zero{stage}" / tag
    files = sorted(folder.glob("*optim_states.pt"), key=rank_of)
    pieces: dict[str, list] = {}
    for path in files:
        wf = ZeroRankFile(path)
        for name, tensor in wf._flat.items():
            pieces.setdefault(name, []).append(tensor)
    reference = _reference(zero_runs, stage, tag)
    for name, expected in reference.items():
        joined = torch.cat(pieces[name + ".fp32"])
        assert torch.equal(joined.isnan(), expected.reshape(-1).isnan()), name
        assert torch.equal(joined.nan_to_num(), expected.reshape(-1).nan_to_num()), name
        for moment in ("exp_avg", "exp_avg_sq"):
            assert sum(t.numel() for t in pieces[f"{name}.{moment}"]) == expected.numel()


@pytest.mark.parametrize("stage", STAGES)
def test_scan_names_the_tensor_the_block_and_the_rank(zero_runs, stage):
    facts = json.loads((zero_runs / f"zero{stage}" / "facts.json").read_text())
    stats = scan_checkpoint(zero_runs / f"zero{stage}" / "global_step3")
    bad = stats[stats["n_nan"] + stats["n_inf"] > 0]
    assert list(bad["name"]) == [facts["nan_param"] + ".fp32"]
    assert list(bad["block"]) == ["layers.1"]
    assert [rank_of(f) for f in bad["file"]] == [facts["nan_rank"]]
    assert int(bad["n_nan"].sum()) == 1
    sixteen_bit = stats[stats["name"] == facts["nan_param"]]
    if stage < 3:  # ZeRO-1/2 keep the bf16 module weights, finite here
        assert list(sixteen_bit["dtype"]) == ["BF16"] and int(sixteen_bit["n_nan"].sum()) == 0
    else:  # ZeRO-3 keeps only empty placeholders there
        assert sixteen_bit.empty
    roles = {param_of(n)[1] for n in stats["name"]}
    assert {"fp32", "exp_avg", "exp_avg_sq"} <= roles


@pytest.mark.parametrize("stage", STAGES)
def test_clean_tag_is_ok(zero_runs, stage):
    info = quick_check(zero_runs / f"zero{stage}" / "global_step2", stop_at_first=False)
    assert info.status == "ok" and info.ref.kind == "deepspeed"
    assert len([f for f in info.ref.files if f.name.endswith("optim_states.pt")]) == 2


@pytest.mark.parametrize("stage", (2, 3))
def test_analyze_tells_the_story_of_a_zero_run(zero_runs, stage):
    result = analyze(zero_runs / f"zero{stage}")
    assert result.status == "broken"
    assert result.first_bad_checkpoint.name == "global_step3"
    assert result.last_good_checkpoint.name == "global_step2"
    assert result.first_bad_checkpoint.nonfinite_blocks == ["layers.1"]
    assert not result.skipped


@pytest.mark.parametrize("stage", (2, 3))
def test_bisect_between_global_steps(zero_runs, stage):
    run = zero_runs / f"zero{stage}"
    result = bisect(run / "global_step2", run / "global_step3")
    assert result.last_good.name == "global_step2" and result.first_bad.name == "global_step3"
    assert result.first_bad.nonfinite_tensors == ["layers.1.weight.fp32"]


def test_deepspeed_is_never_imported(zero_runs):
    code = ("import sys, forensics\n"
            f"forensics.scan_checkpoint({str(zero_runs / 'zero3' / 'global_step3')!r}, workers=1)\n"
            "forensics.analyze(" + repr(str(zero_runs / "zero2")) + ")\n"
            "assert not [m for m in sys.modules if m.split('.')[0] == 'deepspeed'], 'deepspeed imported'\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def test_open_checkpoint_of_a_tag_folder(zero_runs):
    ref = open_checkpoint(zero_runs / "zero1" / "global_step3")
    assert ref.step == 3 and ref.kind == "deepspeed"


@pytest.mark.parametrize("stage", STAGES)
def test_master_and_16bit_disagreement_is_said_with_the_rank(zero_runs, stage):
    info = quick_check(zero_runs / f"zero{stage}" / "global_step3", stop_at_first=False)
    damaged = {rank_of(f) for f in info.nonfinite_files}
    assert damaged == {1}  # only rank 1's partition holds the NaN
    if stage < 3:
        assert info.copy_disagreements == [
            "layers.1.weight: the fp32 master copy holds NaN/Inf (rank 1) while the 16-bit weights are finite"]
    else:  # ZeRO-3 saves no 16-bit weights: nothing to compare
        assert info.copy_disagreements == []
    result = analyze(zero_runs / f"zero{stage}")
    finding = next(f for f in result.findings if f.kind == "nonfinite_weights")
    assert finding.evidence["copy_disagreements"] == info.copy_disagreements


def test_clean_checkpoint_has_no_disagreement(zero_runs):
    info = quick_check(zero_runs / "zero2" / "global_step2", stop_at_first=False)
    assert info.nonfinite_files == {} and info.copy_disagreements == []


def _hf_deepspeed_run(zero_runs: Path, root: Path) -> Path:
    """The HF Trainer + DeepSpeed layout (checkpoint-N/ holding the saved model, `latest` and
    global_stepN/) around the real ZeRO-2 tags; model.safetensors is the tag's own bf16 module."""
    import shutil

    import torch
    from safetensors.torch import save_file

    for step in (2, 3):
        folder = root / f"checkpoint-{step}"
        shutil.copytree(zero_runs / "zero2" / f"global_step{step}", folder / f"global_step{step}")
        (folder / "latest").write_text(f"global_step{step}")
        module = torch.load(folder / f"global_step{step}" / "mp_rank_00_model_states.pt", weights_only=True)["module"]
        save_file({k: v.contiguous() for k, v in module.items()}, str(folder / "model.safetensors"))
    return root


def test_hf_deepspeed_checkpoint_with_a_finite_model_file_but_nan_master_is_not_safe(zero_runs, tmp_path):
    run = _hf_deepspeed_run(zero_runs, tmp_path / "run")
    info = quick_check(run / "checkpoint-3", stop_at_first=False, workers=1)
    assert info.ref.kind == "safetensors"  # the saved model comes first; the partitions are read beside it
    assert info.status == "nonfinite" and info.nonfinite_tensors == ["layers.1.weight.fp32"]
    assert info.copy_disagreements == [
        "layers.1.weight: the fp32 master copy holds NaN/Inf (rank 1) while the 16-bit weights are finite"]
    result = analyze(run)
    assert (result.last_good_checkpoint.name, result.first_bad_checkpoint.name) == ("checkpoint-2", "checkpoint-3")
