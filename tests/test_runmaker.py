"""The runs made by tests/support/runmaker.py have the properties their specs claim.

Checked with plain readers only (json, safetensors, tensorboard's event protos), never with forensics
code, so a forensics test that trusts these runs trusts the real Trainer, not our own tool. Expected
steps come from the specs in conftest.FIXTURE_SPECS (the first logging step at or after an injection).
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from support.fixture_runs import FIXTURE_SPECS
from support.runmaker import LossSpike, LrBlowup, RunSpec, make_run

# Block of a tensor name as saved on disk (PEFT files carry `base_model.model.`).
_BLOCK = re.compile(r"^(?:base_model\.model\.)?((?:model\.layers|transformer\.h)\.\d+)\.")


def _first_log_at_or_after(step: int, logging_steps: int) -> int:
    return -(-step // logging_steps) * logging_steps


def _state(folder: Path) -> dict:
    return json.loads((folder / "trainer_state.json").read_text())  # json accepts the bare NaN tokens


def _train_logs(state: dict) -> dict[int, dict]:
    return {e["step"]: e for e in state["log_history"] if "loss" in e}


def _tensors(folder: Path) -> dict[str, "object"]:
    from safetensors.torch import load_file

    tensors = {}
    for file in sorted(folder.glob("*.safetensors")):
        tensors.update(load_file(file))
    return tensors


def _nonfinite_blocks(folder: Path) -> set[str]:
    import torch

    bad = [n for n, t in _tensors(folder).items() if not bool(torch.isfinite(t.float()).all())]
    return {(m.group(1) if (m := _BLOCK.match(n)) else n) for n in bad}


def _tb_runs(run: Path) -> dict[str, dict[str, dict[int, float]]]:
    """runs/<dir> -> tag -> step -> value, read from the raw event protos (simple_value form)."""
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto import event_pb2

    runs: dict[str, dict[str, dict[int, float]]] = {}
    for file in sorted(run.glob("runs/*/events.out.tfevents.*")):
        tags = runs.setdefault(file.parent.name, {})
        for record in RawEventFileLoader(str(file)).Load():
            event = event_pb2.Event.FromString(record)
            for value in event.summary.value:
                number = value.simple_value if value.HasField("simple_value") else math.nan
                tags.setdefault(value.tag, {})[event.step] = number
    return runs


# ---------------------------------------------------------------- healthy

def test_healthy_run_learns_with_finite_metrics_and_checkpoints(healthy_run):
    path, facts = healthy_run
    logs = _train_logs(_state(path))
    losses = [logs[s]["loss"] for s in sorted(logs)]
    assert sorted(logs) == list(range(5, 41, 5)) == list(facts.logged_steps)
    assert all(math.isfinite(e["loss"]) and math.isfinite(e["grad_norm"]) for e in logs.values())
    assert sum(losses[-3:]) / 3 < sum(losses[:3]) / 3 - 0.2  # the pattern is learned
    assert sorted(p.name for p in path.glob("checkpoint-*")) == [f"checkpoint-{s}" for s in (10, 20, 30, 40)]
    assert all(not _nonfinite_blocks(path / name) for name in facts.checkpoints)
    assert (facts.last_good_checkpoint, facts.first_bad_checkpoint, facts.expected_status) == \
        ("checkpoint-40", None, "healthy")


def test_healthy_checkpoints_hold_what_the_trainer_writes(healthy_run):
    path, _ = healthy_run
    for folder in path.glob("checkpoint-*"):
        names = {p.name for p in folder.iterdir()}
        assert {"model.safetensors", "config.json", "trainer_state.json", "training_args.bin", "optimizer.pt"} <= names
        assert _state(folder)["global_step"] == int(folder.name.split("-")[1])


def test_healthy_tensorboard_matches_trainer_state(healthy_run):
    path, facts = healthy_run
    (tags,) = _tb_runs(path).values()  # one launch, one runs/ folder
    logs = _train_logs(_state(path))
    assert sorted(tags["train/loss"]) == sorted(logs)
    for step, entry in logs.items():
        assert tags["train/loss"][step] == pytest.approx(entry["loss"], rel=1e-6)  # float32 copy
        assert tags["train/grad_norm"][step] == pytest.approx(entry["grad_norm"], rel=1e-6)
    assert "args/text_summary" in tags and "model_config/text_summary" in tags
    assert facts.training_args["learning_rate"] == FIXTURE_SPECS["healthy"].learning_rate


# ---------------------------------------------------------------- NaN with HF's loss-0.0 masking

def test_nan_run_logs_masked_zero_loss_from_the_first_window_after_injection(nan_run):
    path, facts = nan_run
    (injection,) = FIXTURE_SPECS["nan"].incidents
    first_bad = _first_log_at_or_after(injection.step, 5)
    logs = _train_logs(_state(path))
    assert facts.first_nonfinite_step == facts.first_masked_loss_step == first_bad == facts.injected[0]["log_step"]
    assert all(math.isfinite(logs[s]["grad_norm"]) and logs[s]["loss"] > 0 for s in logs if s < first_bad)
    assert all(logs[s]["loss"] == 0.0 and math.isnan(logs[s]["grad_norm"]) for s in logs if s >= first_bad)
    (tags,) = _tb_runs(path).values()
    assert tags["train/loss"][first_bad] == 0.0 and math.isnan(tags["train/grad_norm"][first_bad])


def test_nan_run_checkpoints_are_good_then_bad_in_the_poisoned_block_only(nan_run):
    path, facts = nan_run
    step = FIXTURE_SPECS["nan"].incidents[0].step
    for folder in sorted(path.glob("checkpoint-*")):
        expected = {"model.layers.1"} if int(folder.name.split("-")[1]) >= step else set()
        assert _nonfinite_blocks(folder) == expected, folder.name
    assert facts.poisoned_blocks == ("model.layers.1",)
    assert (facts.last_good_checkpoint, facts.first_bad_checkpoint) == ("checkpoint-20", "checkpoint-30")
    assert facts.expected_status == "broken"


# ---------------------------------------------------------------- recovering grad spike

def test_spike_run_grad_norm_jumps_at_the_spike_step_and_recovers(spike_run):
    path, facts = spike_run
    (spike,) = FIXTURE_SPECS["spike"].incidents
    logs = _train_logs(_state(path))
    others = sorted(e["grad_norm"] for s, e in logs.items() if s != spike.step)
    baseline = others[len(others) // 2]
    assert logs[spike.step]["grad_norm"] > 100 * baseline
    assert all(e["grad_norm"] < 5 * baseline for s, e in logs.items() if s != spike.step)
    assert all(logs[s]["loss"] < logs[spike.step - 5]["loss"] for s in logs if s > spike.step)  # kept learning
    assert all(not _nonfinite_blocks(path / n) for n in facts.checkpoints)
    assert facts.spike_steps == (spike.step,) and facts.expected_status == "warning"


def test_an_lr_blowup_that_might_stay_finite_is_refused(tmp_path):
    with pytest.raises(ValueError, match="weight_decay"):
        make_run(tmp_path / "a", RunSpec(incidents=(LrBlowup(step=10, lr=10.0),)))  # no weight decay
    with pytest.raises(ValueError, match="max_steps"):
        make_run(tmp_path / "b", RunSpec(max_steps=30, weight_decay=1.0, incidents=(LrBlowup(step=10, lr=10.0),)))


def test_a_loss_spike_off_the_logging_grid_is_refused(tmp_path):
    with pytest.raises(ValueError, match="not a logging step"):
        make_run(tmp_path / "run", RunSpec(logging_steps=5, incidents=(LossSpike(step=12),)))


# ---------------------------------------------------------------- LR blow-up

def test_lr_blowup_run_logs_the_new_lr_and_diverges_to_nonfinite(lr_blowup_run):
    path, facts = lr_blowup_run
    (blowup,) = FIXTURE_SPECS["lr_blowup"].incidents
    assert not (path / "trainer_state.json").exists() and not facts.has_root_trainer_state
    logs = _train_logs(_state(path / "checkpoint-70"))
    assert all(e["learning_rate"] == (blowup.lr if s >= blowup.step else 3e-3) for s, e in logs.items())
    assert logs[facts.injected[0]["log_step"]]["loss"] > 10 * logs[blowup.step - 5]["loss"]
    nonfinite = [s for s, e in logs.items() if not math.isfinite(e["grad_norm"])]
    assert nonfinite and nonfinite[0] == facts.first_nonfinite_step > blowup.step
    # certain, not chaotic: the decay factor |1 - lr*wd| grows the weights past fp32 within this bound
    spec = FIXTURE_SPECS["lr_blowup"]
    assert facts.first_nonfinite_step <= blowup.step + blowup.overflow_steps(spec.weight_decay) + spec.logging_steps
    assert all(not math.isfinite(e["grad_norm"]) for s, e in logs.items() if s >= nonfinite[0])
    assert facts.lr_change_step == blowup.step and facts.expected_status == "broken"


# ---------------------------------------------------------------- early collapse (case 5)

def test_collapse_run_spikes_early_then_logs_zero_loss_and_zero_grad_norm(collapse_run):
    path, facts = collapse_run
    (collapse,) = FIXTURE_SPECS["collapse"].incidents
    logs = _train_logs(_state(path))
    assert logs[1]["grad_norm"] < 10
    assert all(logs[s]["grad_norm"] > 1000 for s in range(collapse.first, collapse.last + 1))
    assert all(logs[s]["loss"] == 0.0 and logs[s]["grad_norm"] == 0.0 for s in logs if s > collapse.last)
    assert facts.first_nonfinite_step is None and facts.injected[0]["log_step"] == collapse.first


# ---------------------------------------------------------------- resumed run

def test_resumed_run_has_two_launches_with_overlapping_steps(resumed_run):
    path, facts = resumed_run
    resume = FIXTURE_SPECS["resumed"].resume
    first, second = (tags for _, tags in sorted(_tb_runs(path).items()))
    assert max(first["train/loss"]) == resume.stop_at
    assert min(second["train/loss"]) == resume.from_checkpoint + 5 and max(second["train/loss"]) == 40
    nan_step = facts.first_nonfinite_step
    assert nan_step == _first_log_at_or_after(FIXTURE_SPECS["resumed"].incidents[0].step, 5)
    assert math.isnan(first["train/grad_norm"][nan_step]) and math.isfinite(second["train/grad_norm"][nan_step])
    assert [a["abandoned"] for a in facts.attempts] == [True, False]


def test_resumed_run_final_history_and_checkpoints_are_attempt_two(resumed_run):
    path, facts = resumed_run
    logs = _train_logs(_state(path))
    assert sorted(logs) == list(range(5, 41, 5))  # attempt 1's steps after the resume point are gone
    assert all(math.isfinite(e["grad_norm"]) for e in logs.values())
    assert facts.overwritten_checkpoints == ("checkpoint-30",)
    assert facts.checkpoints["checkpoint-30"]["attempt"] == 2
    assert all(not _nonfinite_blocks(folder) for folder in path.glob("checkpoint-*"))
    assert facts.expected_status == "warning"


# ---------------------------------------------------------------- checkpoint variants

def test_bf16_run_saves_bf16_shards_and_damage_in_block_0(bf16_run):
    from safetensors import safe_open

    path, facts = bf16_run
    folder = path / "checkpoint-20"
    shards = sorted(folder.glob("model-*.safetensors"))
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    assert len(shards) > 1 and not (folder / "model.safetensors").exists()
    assert set(index["weight_map"].values()) == {s.name for s in shards}
    with safe_open(str(shards[0]), framework="pt") as f:
        assert all(str(f.get_slice(k).get_dtype()) == "BF16" for k in f.keys())
    assert _nonfinite_blocks(path / "checkpoint-10") == set()
    assert _nonfinite_blocks(folder) == {"model.layers.0"}
    assert (facts.last_good_checkpoint, facts.first_bad_checkpoint) == ("checkpoint-10", "checkpoint-20")


def test_gpt2_run_has_qwen1_style_names_renamed_folders_and_nan_in_blocks_21_to_23(gpt2_run):
    path, facts = gpt2_run
    assert sorted(p.name for p in path.iterdir() if p.is_dir() and p.name != "runs") == ["ckpt-12", "ckpt-4", "ckpt-8"]
    assert all(n.startswith("transformer.") for n in _tensors(path / "ckpt-4"))
    assert _nonfinite_blocks(path / "ckpt-4") == set()
    expected = {"transformer.h.21", "transformer.h.22", "transformer.h.23"}
    assert _nonfinite_blocks(path / "ckpt-8") == _nonfinite_blocks(path / "ckpt-12") == expected
    assert (facts.last_good_checkpoint, facts.first_bad_checkpoint) == ("ckpt-4", "ckpt-8")
    assert set(facts.checkpoints["ckpt-8"]["nonfinite_blocks"]) == expected


def test_lora_run_saves_adapters_with_nan_in_the_last_block(lora_run):
    path, facts = lora_run
    folder = path / facts.first_bad_checkpoint
    assert (folder / "adapter_model.safetensors").exists() and not (folder / "model.safetensors").exists()
    names = set(_tensors(folder))
    assert names and all(".lora_A." in n or ".lora_B." in n for n in names)
    assert _nonfinite_blocks(path / facts.last_good_checkpoint) == set()
    assert _nonfinite_blocks(folder) == {"model.layers.1"}


def test_facts_are_plain_json(nan_run):
    _, facts = nan_run
    text = json.dumps(facts.to_dict(), allow_nan=False)
    assert json.loads(text)["injected"][0]["kind"] == "NanInjection"
