"""Finding the checkpoints of a run: folders, steps, shards, single files, siblings."""
from __future__ import annotations

import json

import pytest

from support.checkpoint_files import save_tensors, torch
from forensics.checkpoints import find_checkpoints, open_checkpoint, quick_check, siblings_between
from forensics.errors import NoCheckpoints
from forensics.discover.run import discover

W = {"model.layers.0.w": torch.ones(4)}


def _names(refs):
    return [(r.name, r.step) for r in refs]


def test_checkpoint_folders_of_every_naming_sorted_by_step_unknown_last(tmp_path):
    for name in ("checkpoint-300", "ckpt-20", "global_step100", "step_5", "iter-1000"):
        save_tensors(tmp_path / name / "model.safetensors", W)
    save_tensors(tmp_path / "final" / "model.safetensors", W)  # no step anywhere
    save_tensors(tmp_path / "model.safetensors", W)  # the final model at the root ...
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 1200}))  # ... whose step is known
    refs = find_checkpoints(tmp_path)
    assert _names(refs) == [("step_5", 5), ("ckpt-20", 20), ("global_step100", 100), ("checkpoint-300", 300),
                            ("iter-1000", 1000), (tmp_path.name, 1200), ("final", None)]


def test_a_run_layout_works_as_well_as_a_path(tmp_path):
    save_tensors(tmp_path / "checkpoint-1" / "model.safetensors", W)
    assert _names(find_checkpoints(discover(tmp_path))) == [("checkpoint-1", 1)]


def test_step_from_trainer_state_inside_a_folder_without_a_step_name(tmp_path):
    save_tensors(tmp_path / "best" / "model.safetensors", W)
    (tmp_path / "best" / "trainer_state.json").write_text('{"global_step": 77, "best_metric": NaN}')
    assert _names(find_checkpoints(tmp_path)) == [("best", 77)]


def test_single_file_checkpoints_with_steps_in_their_names(tmp_path):
    for step in (30, 10, 20):
        save_tensors(tmp_path / f"model_step_{step}.safetensors", W)
    torch.save(W, tmp_path / "ckpt-40.pt")
    refs = find_checkpoints(tmp_path)
    assert _names(refs) == [("model_step_10.safetensors", 10), ("model_step_20.safetensors", 20),
                            ("model_step_30.safetensors", 30), ("ckpt-40.pt", 40)]
    assert refs[-1].kind == "torch" and refs[0].files == (tmp_path / "model_step_10.safetensors",)


def test_sharded_set_is_one_checkpoint_and_a_missing_shard_is_named(tmp_path):
    folder = tmp_path / "checkpoint-8"
    save_tensors(folder / "model-00001-of-00003.safetensors", {"model.layers.0.w": torch.ones(2)})
    save_tensors(folder / "model-00002-of-00003.safetensors", {"model.layers.1.w": torch.ones(2)})
    weight_map = {"model.layers.0.w": "model-00001-of-00003.safetensors",
                  "model.layers.1.w": "model-00002-of-00003.safetensors",
                  "model.layers.2.w": "model-00003-of-00003.safetensors"}
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    [ref] = find_checkpoints(tmp_path)
    assert ref.kind == "sharded" and [f.name for f in ref.files] == sorted(set(weight_map.values()))
    info = quick_check(ref, workers=1)
    assert info.status == "unreadable" and "model-00003-of-00003.safetensors" in info.reason


def test_safetensors_preferred_over_a_bin_copy_and_deepspeed_tag_joins_its_folder(tmp_path):
    folder = tmp_path / "checkpoint-4"
    save_tensors(folder / "model.safetensors", W)
    torch.save(W, folder / "pytorch_model.bin")
    (folder / "global_step4").mkdir()
    torch.save({"module": W, "skipped_steps": 0}, folder / "global_step4" / "mp_rank_00_model_states.pt")
    torch.save({}, folder / "optimizer.pt")
    [ref] = find_checkpoints(tmp_path)
    assert (ref.name, ref.step) == ("checkpoint-4", 4)
    assert [f.name for f in ref.files] == ["model.safetensors"]
    assert [f.name for f in ref.aux_files] == ["mp_rank_00_model_states.pt"]


def test_open_checkpoint_takes_folders_files_and_indexes(tmp_path):
    save_tensors(tmp_path / "checkpoint-7" / "model.safetensors", W)
    save_tensors(tmp_path / "checkpoint-9" / "model-00001-of-00001.safetensors", W)
    (tmp_path / "checkpoint-9" / "model.safetensors.index.json").write_text(
        json.dumps({"weight_map": {"model.layers.0.w": "model-00001-of-00001.safetensors"}}))
    assert _names([open_checkpoint(tmp_path / "checkpoint-7")]) == [("checkpoint-7", 7)]
    by_file = open_checkpoint(tmp_path / "checkpoint-7" / "model.safetensors")
    assert (by_file.name, by_file.step) == ("checkpoint-7/model.safetensors", 7)
    by_index = open_checkpoint(tmp_path / "checkpoint-9" / "model.safetensors.index.json")
    assert (by_index.name, by_index.kind) == ("checkpoint-9", "sharded")
    with pytest.raises(NoCheckpoints, match="2 checkpoint"):
        open_checkpoint(tmp_path)
    with pytest.raises(NoCheckpoints, match="no such"):
        open_checkpoint(tmp_path / "checkpoint-8")
    (tmp_path / "empty").mkdir()
    with pytest.raises(NoCheckpoints, match="no weight files"):
        open_checkpoint(tmp_path / "empty")


def test_siblings_between(tmp_path):
    for step in (100, 200, 300, 400, 500):
        save_tensors(tmp_path / f"checkpoint-{step}" / "model.safetensors", W)
    a, b = open_checkpoint(tmp_path / "checkpoint-100"), open_checkpoint(tmp_path / "checkpoint-400")
    assert _names(siblings_between(a, b)) == [("checkpoint-200", 200), ("checkpoint-300", 300)]
    assert _names(siblings_between(b, a)) == [("checkpoint-200", 200), ("checkpoint-300", 300)]
    c = open_checkpoint(tmp_path / "checkpoint-200")
    assert siblings_between(a, c) == []
    by_file = open_checkpoint(tmp_path / "checkpoint-500" / "model.safetensors")
    assert _names(siblings_between(a, by_file)) == [("checkpoint-200", 200), ("checkpoint-300", 300),
                                                   ("checkpoint-400", 400)]
