"""Tests of the str/repr of `Analysis.checkpoints` (analysis.py) and `Analysis.config` (config.py).

Short, readable str/repr of what a notebook user prints: `a.checkpoints` a line a checkpoint, `a.config` its
key settings (the whole of each stays in `.frame` / `.stats` / `.values`).

Objects are built as the analysis builds them: CheckpointInfo with a per-tensor stats frame of a full scan,
a RunConfig filled from a whole TrainingArguments dump and a model config.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from forensics.analysis import CheckpointList
from forensics.checkpoints.types import CheckpointInfo, CheckpointRef
from forensics.config import RunConfig


def _checkpoint(step: int, bad_blocks=()) -> CheckpointInfo:
    names = [f"model.layers.{i}.mlp.up_proj.weight" for i in range(200)]
    stats = pd.DataFrame({"name": names, "numel": 4096, "n_nan": [1 if f"layers.{i}." in "".join(
        f"layers.{b}." for b in bad_blocks) else 0 for i in range(200)], "absmax": 1.0})
    ref = CheckpointRef(name=f"checkpoint-{step}", step=step, path=Path(f"/runs/out/checkpoint-{step}"), files=())
    blocks = [f"model.layers.{b}" for b in bad_blocks]
    return CheckpointInfo(ref=ref, status="nonfinite" if blocks else "ok", stats=stats, full_scan=True,
                          nonfinite_blocks=blocks, nonfinite_tensors=[f"{b}.mlp.up_proj.weight" for b in blocks])


def _config(n_args: int = 150) -> RunConfig:
    config = RunConfig(sources=["training_args.bin", "config.json"])
    for i in range(n_args):
        config.add(f"some_argument_{i}", f"value {i}", "training_args.bin")
    for key, value in (("learning_rate", 2e-05), ("bf16", True), ("max_grad_norm", 1.0)):
        config.add(key, value, "training_args.bin")
    config.add("model.model_type", "llama", "config.json")
    return config


def test_checkpoints_print_one_line_each():
    checkpoints = CheckpointList([_checkpoint(s) for s in range(100, 1100, 100)] + [_checkpoint(1100, (21, 22, 23))])
    text = str(checkpoints)
    assert text == repr(checkpoints) and len(text.splitlines()) == 12 and len(text) < 1000
    assert text.splitlines()[0] == "<11 checkpoints>"
    assert text.splitlines()[-1] == "  checkpoint-1100 (step 1100): nonfinite, 3 tensors with NaN/Inf in model.layers.21-23"
    assert "up_proj" not in repr(checkpoints[0])  # the stats frame stays out


def test_config_prints_its_key_settings():
    text = str(_config())
    assert text == ("<RunConfig model.model_type='llama', learning_rate=2e-05, max_grad_norm=1.0, bf16=True; "
                    "154 keys from 2 files>")
    html = _config()._repr_html_()
    assert "<td>learning_rate</td><td>2e-05</td><td>training_args.bin</td>" in html and "some_argument" not in html


def test_a_config_without_key_settings_says_so():
    assert str(RunConfig()) == "<RunConfig no key setting; 0 keys from 0 files>"
