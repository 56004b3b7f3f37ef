"""The checkpoints of whole runs: verdicts, damaged blocks, findings and diffs.

The runs come from the real transformers.Trainer (conftest fixtures) and from state dicts
written with safetensors; expected blocks and checkpoints come from how each run was made.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from support.checkpoint_files import checkpoint_series, qwen1_state, qwen2_state, save_tensors, torch
from forensics.analyzers.weights import weight_findings
from forensics.checkpoints import (check_run_checkpoints, diff_checkpoints, find_checkpoints, quick_check,
                                   scan_checkpoint)
from forensics.config import Thresholds
from forensics.timeline import Timeline

QWEN1_BAD = ["transformer.h.21", "transformer.h.22", "transformer.h.23"]


def test_qwen1_checkpoint_with_nan_in_blocks_21_to_23_reports_exactly_those(tmp_path):
    """Case 4 of INCIDENTS.md: ModelScope Qwen-1.8B, NaN/Inf confined to transformer.h.21-23."""
    save_tensors(tmp_path / "ckpt-100" / "model.safetensors", qwen1_state(seed=1))
    save_tensors(tmp_path / "ckpt-200" / "model.safetensors", qwen1_state(seed=2, nan_blocks=(21, 22, 23)))
    info = quick_check(tmp_path / "ckpt-200", workers=1, stop_at_first=False)
    assert info.nonfinite_blocks == QWEN1_BAD
    frame = scan_checkpoint(tmp_path / "ckpt-200", workers=1)
    bad = frame[(frame["n_nan"] + frame["n_inf"]) > 0]
    assert sorted(set(bad["block"])) == QWEN1_BAD
    assert sorted(bad["name"]) == sorted(f"{b}.{t}" for b in QWEN1_BAD for t in ("attn.c_proj.weight", "mlp.w2.weight"))

    infos, skipped = check_run_checkpoints(tmp_path, Thresholds(), workers=1)
    assert skipped == [] and [(i.name, i.status) for i in infos] == [("ckpt-100", "ok"), ("ckpt-200", "nonfinite")]
    assert all(i.full_scan and i.stats is not None for i in infos)  # last good and first bad (= final)
    [finding] = weight_findings(infos, Timeline.empty(), Thresholds())
    assert (finding.kind, finding.severity, finding.step) == ("nonfinite_weights", "error", 200)
    assert finding.evidence["nonfinite_blocks"] == QWEN1_BAD
    assert (finding.evidence["last_good"], finding.evidence["last_good_step"]) == ("ckpt-100", 100)
    assert finding.evidence["n_nonfinite_tensors"] == 6
    assert (finding.evidence["n_nan"], finding.evidence["n_inf"]) == (9, 3)
    json.dumps(finding.to_dict(), allow_nan=False)


def test_healthy_series_reads_ok_and_gives_no_finding(tmp_path):
    checkpoint_series(tmp_path, range(10, 60, 10), poison_from=None)
    infos, skipped = check_run_checkpoints(tmp_path, Thresholds(), workers=1)
    assert [i.status for i in infos] == ["ok"] * 5 and skipped == []
    assert [i.full_scan for i in infos] == [False] * 4 + [True]  # last good = final: scanned once
    assert weight_findings(infos, Timeline.empty(), Thresholds()) == []


def test_later_bad_checkpoints_and_the_one_before_are_named(tmp_path):
    checkpoint_series(tmp_path, range(10, 60, 10), poison_from=30)
    infos, _ = check_run_checkpoints(tmp_path, Thresholds(), workers=1)
    assert [i.status for i in infos] == ["ok", "ok", "nonfinite", "nonfinite", "nonfinite"]
    assert [i.full_scan for i in infos] == [False, True, True, False, True]
    [finding] = weight_findings(infos, Timeline.empty(), Thresholds())
    assert finding.step == 30 and finding.end_step == 50
    assert finding.evidence["later_bad_checkpoints"] == ["checkpoint-40", "checkpoint-50"]
    assert finding.evidence["nonfinite_blocks"] == ["model.layers.2"]


def test_weights_near_the_fp16_limit_warn(tmp_path):
    state = qwen2_state()
    state["model.layers.3.mlp.down_proj.weight"][0, 0] = 30000.0
    save_tensors(tmp_path / "checkpoint-10" / "model.safetensors", state)
    infos, _ = check_run_checkpoints(tmp_path, Thresholds(), workers=1)
    [finding] = weight_findings(infos, Timeline.empty(), Thresholds())
    assert (finding.kind, finding.severity, finding.step) == ("weights_near_fp16_limit", "warning", 10)
    assert finding.evidence["tensors"] == ["model.layers.3.mlp.down_proj.weight"]
    assert finding.evidence["blocks"] == ["model.layers.3"]


def test_bound_from_thresholds_and_empty_adapters_become_findings(tmp_path):
    save_tensors(tmp_path / "checkpoint-1" / "adapter_model.safetensors", {})
    save_tensors(tmp_path / "checkpoint-2" / "model.safetensors", {"model.layers.0.w": torch.tensor([5.0, -50.0])})
    thresholds = Thresholds(absmax_bound=10.0)
    infos, _ = check_run_checkpoints(tmp_path, thresholds, workers=1)
    assert [i.status for i in infos] == ["empty", "bad"]
    kinds = {f.kind: f for f in weight_findings(infos, Timeline.empty(), thresholds)}
    assert kinds["weights_over_bound"].evidence["tensors"] == ["model.layers.0.w"]
    assert kinds["empty_checkpoint"].severity == "warning" and "ZeRO-3" in kinds["empty_checkpoint"].message


@pytest.mark.parametrize("run", ["healthy_run", "nan_run", "bf16_run", "gpt2_run", "resumed_run", "lora_run"])
def test_real_trainer_runs_name_the_exact_checkpoints_and_blocks(run, request):
    path, facts = request.getfixturevalue(run)
    infos, skipped = check_run_checkpoints(path, Thresholds(), workers=1)
    assert skipped == []
    assert [i.name for i in infos] == list(facts.checkpoints)
    for info in infos:
        expected = facts.checkpoints[info.name]
        assert info.step == expected["step"]
        assert info.nonfinite_blocks == expected["nonfinite_blocks"], info.name
        assert info.status == ("nonfinite" if expected["nonfinite_blocks"] or expected["nonfinite_outside_blocks"]
                               else "ok"), info.name
    findings = weight_findings(infos, Timeline.empty(), Thresholds())
    bad = [f for f in findings if f.kind == "nonfinite_weights"]
    if facts.first_bad_checkpoint is None:
        assert bad == []
    else:
        assert bad[0].evidence["checkpoint"] == facts.first_bad_checkpoint
        assert bad[0].evidence["last_good"] == facts.last_good_checkpoint


def test_diff_measures_change_and_names_what_went_nonfinite(tmp_path):
    a = qwen2_state(seed=0)
    b = {k: v.clone() for k, v in a.items()}
    b["model.layers.1.mlp.up_proj.weight"] *= 1.5
    b["model.layers.3.self_attn.q_proj.weight"][0, :2] = float("nan")
    b["model.layers.0.mlp.down_proj.weight"] += 0.001
    del b["model.layers.0.self_attn.q_proj.bias"]
    b["extra.weight"] = torch.ones(3)
    save_tensors(tmp_path / "a" / "model.safetensors", a)
    save_tensors(tmp_path / "b" / "model.safetensors", b)
    frame = diff_checkpoints(tmp_path / "a", tmp_path / "b", chunk_bytes=1 << 10)
    rows = frame.set_index("tensor")
    top = rows.loc["model.layers.3.self_attn.q_proj.weight"]
    assert frame["tensor"].iloc[0] == "model.layers.3.self_attn.q_proj.weight"
    assert math.isinf(top["rel_change"]) and top["became_nonfinite"] and top["n_nonfinite_b"] == 2
    assert top["rel_change_finite"] == 0.0
    for name in ("model.layers.1.mlp.up_proj.weight", "model.layers.0.mlp.down_proj.weight"):
        va, vb = a[name].double().numpy(), b[name].double().numpy()
        expected = np.linalg.norm(vb - va) / np.linalg.norm(va)  # float64 from the values written
        assert rows.loc[name, "rel_change"] == pytest.approx(expected, rel=1e-6)
    assert rows.loc["model.layers.1.mlp.up_proj.weight", "rel_change"] == pytest.approx(0.5, rel=1e-6)
    assert rows.loc["model.layers.0.self_attn.q_proj.bias", "note"] == "only in a"
    assert rows.loc["extra.weight", "note"] == "only in b" and rows.loc["extra.weight", "l2_b"] == pytest.approx(3 ** 0.5)
    assert rows.loc["model.norm.weight", "rel_change"] == 0.0
    changes = frame["rel_change"].fillna(-1).tolist()
    assert changes == sorted(changes, reverse=True)


def test_find_checkpoints_on_a_real_trainer_run(nan_run):
    path, facts = nan_run
    refs = find_checkpoints(path)
    assert [(r.name, r.step) for r in refs] == [(n, c["step"]) for n, c in facts.checkpoints.items()]


def test_parallel_diff_equals_inline_diff(tmp_path, monkeypatch):
    from forensics.checkpoints import diff, units
    monkeypatch.setattr(units, "PARALLEL_FROM_BYTES", 0)
    monkeypatch.setattr(units, "MIN_UNIT_BYTES", 1 << 14)
    pools = []
    monkeypatch.setattr(diff, "map_in_pool", lambda fn, tasks, workers: pools.append(len(tasks)) or
                        units.map_in_pool(fn, tasks, workers))
    a = qwen2_state(seed=0, hidden=64, dtype=torch.bfloat16)
    b = {k: (v.float() * 1.01 + 0.001).to(torch.bfloat16) for k, v in a.items()}
    b["model.layers.2.mlp.gate_proj.weight"][1, 1] = float("-inf")
    save_tensors(tmp_path / "a" / "model.safetensors", a)
    save_tensors(tmp_path / "b" / "model.safetensors", b)
    inline = diff_checkpoints(tmp_path / "a", tmp_path / "b", workers=1, chunk_bytes=1 << 12).set_index("tensor")
    parallel = diff_checkpoints(tmp_path / "a", tmp_path / "b", workers=2, chunk_bytes=1 << 12).set_index("tensor")
    parallel = parallel.loc[inline.index]
    assert pools and pools[0] > 1  # the pool ran
    assert parallel["became_nonfinite"].tolist() == inline["became_nonfinite"].tolist()
    np.testing.assert_allclose(parallel["rel_change_finite"], inline["rel_change_finite"], rtol=1e-7)
    assert inline.loc["model.layers.2.mlp.gate_proj.weight", "became_nonfinite"]
    for name in a:
        va, vb = a[name].double().numpy(), b[name].double().numpy()
        finite = np.isfinite(vb)
        expected = np.linalg.norm((vb - va)[finite]) / np.linalg.norm(va[finite])
        assert parallel.loc[name, "rel_change_finite"] == pytest.approx(expected, rel=1e-6)
