"""Weight file readers: corrupt safetensors in one line, torch files, DeepSpeed states, adapters."""
from __future__ import annotations

import argparse
import json
import math
import sys

import pandas as pd
import pytest

from forensics.causes import infer_causes
from forensics.checkpoints import check_run_checkpoints, find_checkpoints, quick_check, scan_checkpoint, scan_table
from forensics.checkpoints.readers import open_weight_file
from forensics.config import RunConfig, Thresholds
from forensics.errors import UnreadableFile
from forensics.findings import Finding
from forensics.timeline import LogRecords, build_timeline
from support.checkpoint_files import deepspeed_checkpoint, qwen2_state, raw_safetensors, reference, save_tensors, torch

GOOD_HEADER = {"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}, "__metadata__": {"format": "pt"}}
DATA = bytes(16)


def _truncated(p):
    full = save_tensors(p, {"w": torch.randn(100, 100)})
    full.write_bytes(full.read_bytes()[:-1000])


CORRUPT = {
    "truncated": (_truncated, "truncated"),
    "shorter than 8 bytes": (lambda p: p.write_bytes(b"\x10\x00"), "truncated"),
    "empty file": (lambda p: p.write_bytes(b""), "truncated"),
    "header over 100 MB": (lambda p: raw_safetensors(p, GOOD_HEADER, DATA, length=200_000_000), "100 MB"),
    "header past the end": (lambda p: raw_safetensors(p, GOOD_HEADER, DATA, length=10_000), "truncated"),
    "bad JSON": (lambda p: p.write_bytes((7).to_bytes(8, "little") + b'{"w": [' + DATA), "not valid JSON"),
    "no opening brace": (lambda p: p.write_bytes((2).to_bytes(8, "little") + b"[]" + DATA), "start with '{'"),
    "not UTF-8": (lambda p: p.write_bytes((2).to_bytes(8, "little") + b"\xff\xfe" + DATA), "UTF-8"),
    "size mismatch": (lambda p: raw_safetensors(
        p, {"w": {"dtype": "F32", "shape": [3, 2], "data_offsets": [0, 16]}}, DATA), "needs 24 bytes"),
    "hole": (lambda p: raw_safetensors(
        p, {"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}}, DATA), "starts at data byte 8"),
    "overlap": (lambda p: raw_safetensors(p, {
        "a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
        "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}}, DATA), "starts at data byte 8"),
    "trailing bytes": (lambda p: raw_safetensors(p, GOOD_HEADER, DATA + bytes(8)), "after the last tensor"),
    "negative offset": (lambda p: raw_safetensors(
        p, {"w": {"dtype": "F32", "shape": [4], "data_offsets": [-16, 0]}}, DATA), "data_offsets"),
    "shape not a list": (lambda p: raw_safetensors(
        p, {"w": {"dtype": "F32", "shape": "4", "data_offsets": [0, 16]}}, DATA), "shape"),
}


@pytest.mark.parametrize("case", list(CORRUPT))
def test_corrupt_safetensors_is_reported_in_one_line(tmp_path, case):
    make, words = CORRUPT[case]
    path = tmp_path / "model.safetensors"
    make(path)
    info = quick_check(path, workers=1)
    assert info.status == "unreadable"
    assert words in info.reason and "\n" not in info.reason
    assert info.unreadable_files[0].path == str(path)
    with pytest.raises(UnreadableFile, match="model.safetensors"):
        scan_checkpoint(path, workers=1)


def test_a_bad_shard_does_not_stop_the_others(tmp_path):
    save_tensors(tmp_path / "model-00001-of-00002.safetensors", {"model.layers.0.w": torch.tensor([1.0, float("nan")])})
    (tmp_path / "model-00002-of-00002.safetensors").write_bytes(b"\x00" * 5)
    info = quick_check(tmp_path, workers=1, stop_at_first=False)
    assert info.status == "nonfinite" and info.nonfinite_blocks == ["model.layers.0"]
    assert "model-00002-of-00002.safetensors" in info.reason
    table = scan_table(tmp_path, workers=1)
    assert list(table.frame["name"]) == ["model.layers.0.w"] == list(scan_checkpoint(tmp_path, workers=1)["name"])
    assert [s.path for s in table.skipped] == [str(tmp_path / "model-00002-of-00002.safetensors")]


def test_unsupported_dtype_is_reported_not_a_crash(tmp_path):
    path = raw_safetensors(tmp_path / "m.safetensors", {
        "c": {"dtype": "C64", "shape": [2], "data_offsets": [0, 16]},
        "w": {"dtype": "F32", "shape": [4], "data_offsets": [16, 32]}}, bytes(32))
    rows = scan_checkpoint(path, workers=1).set_index("name")
    assert "C64 is not supported" in rows.loc["c", "note"]
    assert rows.loc["w", "absmax"] == 0.0 and rows.loc["w", "zero_frac"] == 1.0
    info = quick_check(path, workers=1)
    assert info.status == "ok" and info.unchecked_tensors == ["c"]


def test_empty_zero3_adapter_is_empty_not_ok(tmp_path):
    path = save_tensors(tmp_path / "checkpoint-5" / "adapter_model.safetensors", {})
    assert path.stat().st_size == 40  # exactly the file a ZeRO-3 save leaves (FORMATS.md section 1)
    (tmp_path / "checkpoint-5" / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 8}))
    ref = find_checkpoints(tmp_path)[0]
    assert ref.kind == "adapter"
    info = quick_check(ref, workers=1)
    assert info.status == "empty"
    assert "no tensors" in info.reason and "ZeRO-3" in info.reason


def test_peft_adapter_names_map_to_base_blocks(tmp_path):
    g = torch.Generator().manual_seed(0)
    tensors = {}
    for i in range(4):
        for proj in ("q_proj", "v_proj"):
            p = f"base_model.model.model.layers.{i}.self_attn.{proj}."
            tensors[p + "lora_A.weight"] = torch.randn(4, 32, generator=g)
            tensors[p + "lora_B.weight"] = torch.zeros(32, 4)
    tensors["base_model.model.model.layers.2.self_attn.v_proj.lora_B.weight"][0, 0] = float("nan")
    save_tensors(tmp_path / "adapter_model.safetensors", tensors)
    info = quick_check(tmp_path, workers=1, stop_at_first=False)
    assert info.status == "nonfinite"
    assert info.nonfinite_blocks == ["model.layers.2"]
    assert info.nonfinite_tensors == ["base_model.model.model.layers.2.self_attn.v_proj.lora_B.weight"]


def test_torch_bin_reads_like_safetensors(tmp_path):
    state = qwen2_state(dtype=torch.bfloat16)
    state["model.layers.1.mlp.up_proj.weight"][2, 2] = float("inf")
    torch.save(state, tmp_path / "pytorch_model.bin")
    info = quick_check(tmp_path, workers=1, stop_at_first=False)
    assert info.ref.kind == "torch"
    assert info.status == "nonfinite" and info.nonfinite_tensors == ["model.layers.1.mlp.up_proj.weight"]
    rows = scan_checkpoint(tmp_path, workers=1).set_index("name")
    for name, t in state.items():
        row = rows.loc[name]
        ref = reference(t)
        assert (row["n_nan"], row["n_inf"]) == (ref["n_nan"], ref["n_inf"])
        assert row["l2"] == pytest.approx(ref["l2"], rel=1e-6)


def test_legacy_torch_format_without_mmap(tmp_path):
    torch.save({"model.layers.0.w": torch.tensor([1.0, float("nan")])}, tmp_path / "model.pt",
               _use_new_zipfile_serialization=False)
    assert quick_check(tmp_path / "model.pt", workers=1).nonfinite_blocks == ["model.layers.0"]


def test_without_torch_a_bin_file_is_unreadable_with_the_install_hint(tmp_path, monkeypatch):
    torch.save({"w": torch.ones(2)}, tmp_path / "pytorch_model.bin")
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    info = quick_check(tmp_path, workers=1)
    assert info.status == "unreadable"
    assert "pip install 'forensics[torch]'" in info.reason
    with pytest.raises(UnreadableFile, match="install torch"):
        open_weight_file(tmp_path / "pytorch_model.bin")


def test_truncated_torch_file(tmp_path):
    path = tmp_path / "pytorch_model.bin"
    torch.save({"w": torch.ones(1000)}, path)
    path.write_bytes(path.read_bytes()[:-200])
    info = quick_check(path, workers=1)
    assert info.status == "unreadable" and "\n" not in info.reason


def test_deepspeed_states_belong_to_their_checkpoint_and_give_counters(tmp_path):
    state = qwen2_state()
    deepspeed_checkpoint(tmp_path / "checkpoint-10", 10, state)
    deepspeed_checkpoint(tmp_path / "checkpoint-20", 20, state, with_weights=False)
    refs = find_checkpoints(tmp_path)
    assert [(r.name, r.step, r.kind) for r in refs] == [("checkpoint-10", 10, "safetensors"),
                                                        ("checkpoint-20", 20, "deepspeed")]
    assert [p.name for p in refs[0].aux_files] == ["mp_rank_00_model_states.pt"]
    infos, skipped = check_run_checkpoints(tmp_path, Thresholds(), workers=1)
    assert skipped == []
    assert [i.status for i in infos] == ["ok", "ok"]
    for info, step in zip(infos, (10, 20)):
        counters = info.deepspeed
        assert (counters.skipped_steps, counters.global_steps, counters.global_samples) == (3, step, step * 8)


def test_deepspeed_states_that_weights_only_refuses(tmp_path):
    # Megatron-DeepSpeed saves an argparse.Namespace beside the module: weights_only refuses it, the
    # inert load reads it (the Namespace as a Record) and checks the module weights.
    deepspeed_checkpoint(tmp_path / "checkpoint-30", 30, qwen2_state(), with_weights=False,
                         extra={"args": argparse.Namespace(lr=1e-4)})
    infos, skipped = check_run_checkpoints(tmp_path, Thresholds(), workers=1)
    assert infos[0].status == "ok" and not skipped
    assert infos[0].deepspeed.skipped_steps == 3
    stats = scan_checkpoint(tmp_path / "checkpoint-30", workers=1)
    assert sorted(stats["name"]) == sorted(qwen2_state())


@pytest.mark.parametrize("skipped_steps", [7, 0])
def test_deepspeed_skipped_steps_of_a_checkpoint_reach_the_fp16_cause_evidence(tmp_path, skipped_steps):
    # The run config has no state.skipped_steps (no model_states read for it): the checkpoint's own counter
    # is the only place the overflow skips show, and the fp16 cause must cite it (issue 16: it never did).
    deepspeed_checkpoint(tmp_path / "checkpoint-20", 20, qwen2_state(), skipped_steps=skipped_steps)
    infos, _ = check_run_checkpoints(tmp_path, Thresholds(), workers=1)
    assert infos[0].deepspeed.skipped_steps == skipped_steps
    cfg = RunConfig()
    cfg.add("fp16", True, "training_args.bin")
    grad_nan = pd.DataFrame({"step": pd.Series([5, 10], dtype="int64"), "metric": "grad_norm",
                             "value": [1.0, math.nan], "wall_time": math.nan})
    timeline = build_timeline([LogRecords(source="trainer_state.json", format="trainer_state", frame=grad_nan)])
    findings = [Finding("nonfinite_metric", "error", 10, "grad_norm is NaN", metric="grad_norm")]
    [cause] = [c for c in infer_causes(cfg, timeline, findings, infos, Thresholds()) if c.cause == "fp16_overflow"]
    cited = "checkpoint-20: DeepSpeed skipped_steps=7"
    assert (cited in cause.evidence) == (skipped_steps > 0), cause.evidence
