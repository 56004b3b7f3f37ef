"""Run discovery: which files of which kind, read-only, robust to odd folders."""
import os

import pytest

from forensics.errors import NotARunDirectory
from forensics.discover.run import discover


def touch(path, text=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_hf_output_folder_is_sorted_by_kind(tmp_path):
    touch(tmp_path / "trainer_state.json", "{}")
    touch(tmp_path / "checkpoint-10" / "trainer_state.json", "{}")
    touch(tmp_path / "checkpoint-10" / "model.safetensors")
    touch(tmp_path / "checkpoint-10" / "training_args.bin")
    touch(tmp_path / "checkpoint-10" / "optimizer.pt")
    touch(tmp_path / "checkpoint-10" / "config.json", "{}")
    touch(tmp_path / "runs" / "Nov21_10-00-00_host" / "events.out.tfevents.1700000000.host.1.0")
    touch(tmp_path / "trainer_log.jsonl")
    touch(tmp_path / "logging.jsonl")
    touch(tmp_path / "train.log", "{'loss': 0.0, 'grad_norm': nan}\n")
    touch(tmp_path / "notes.txt", "nothing to see\n")
    layout = discover(tmp_path)
    rel = lambda paths: sorted(str(p.relative_to(tmp_path)) for p in paths)  # noqa: E731
    assert rel(layout.trainer_states) == ["checkpoint-10/trainer_state.json", "trainer_state.json"]
    assert rel(layout.tensorboard) == ["runs/Nov21_10-00-00_host/events.out.tfevents.1700000000.host.1.0"]
    assert rel(layout.llamafactory_logs) == ["trainer_log.jsonl"]
    assert rel(layout.swift_logs) == ["logging.jsonl"]
    assert rel(layout.text_logs) == ["train.log"]  # notes.txt holds no training line
    assert rel(layout.weight_files) == ["checkpoint-10/model.safetensors"]  # optimizer.pt is not weights
    assert rel(layout.config_files) == ["checkpoint-10/config.json", "checkpoint-10/training_args.bin"]


def test_only_deepspeed_like_json_names_count_as_deepspeed_configs(tmp_path):
    for name in ("ds_config.json", "ds_z3_config.json", "zero2.json", "zero_stage3_offload.json",
                 "deepspeed_config.json", "zero_shot_eval.json", "all_results.json"):
        touch(tmp_path / name, "{}")
    names = sorted(p.name for p in discover(tmp_path).config_files)
    assert names == ["deepspeed_config.json", "ds_config.json", "ds_z3_config.json", "zero2.json",
                     "zero_stage3_offload.json"]


def test_a_single_log_file_is_taken_whatever_its_name(tmp_path):
    log = touch(tmp_path / "console_capture", "{'loss': 1.0}\n")
    layout = discover(log)
    assert layout.text_logs == [log.resolve()]


def test_missing_path_is_a_clear_error(tmp_path):
    with pytest.raises(NotARunDirectory, match="no such file"):
        discover(tmp_path / "nope")


def test_symlink_loop_is_skipped_with_a_line_not_followed_forever(tmp_path):
    touch(tmp_path / "a" / "trainer_state.json", "{}")
    os.symlink(tmp_path, tmp_path / "a" / "loop")
    layout = discover(tmp_path)
    assert len(layout.trainer_states) == 1
    assert any("already visited" in s.reason for s in layout.skipped)


def test_discover_writes_nothing(tmp_path):
    touch(tmp_path / "trainer_state.json", "{}")
    before = sorted((p, p.stat().st_mtime_ns) for p in tmp_path.rglob("*"))
    discover(tmp_path)
    assert sorted((p, p.stat().st_mtime_ns) for p in tmp_path.rglob("*")) == before
