"""Tests of `compare` (compare.py, report/compare_text.py): how each setting of two runs is scored.

`compare` scores a setting only one run records as unknown, reads precision from the profile where the
configuration lacks it, and gives weight decay and the optimizer type reasons of their own.

Runs are Analysis-shaped: a real RunConfig as the readers fill it (DeepSpeed keys under `ds.` from the
run's ds_config.json), a real Timeline of a learning loss, and the profile's precision.
"""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from forensics.compare import comparison_of
from forensics.config import RunConfig
from forensics.findings import Finding
from forensics.report.compare_text import comparison_text
from forensics.timeline import LogRecords, build_timeline


def _run(name, settings: dict, precision="unknown", broken_by: str | None = None):
    config = RunConfig()
    for key, value in settings.items():
        config.add(key, value, "ds_config.json" if key.startswith("ds.") else "training_args.bin")
    loss = [10.9 - 0.2 * i for i in range(20)]
    frame = pd.DataFrame({"step": pd.Series(range(10, 210, 10), dtype="int64"), "metric": "loss",
                          "value": pd.Series(loss, dtype="float64"), "wall_time": float("nan")})
    findings = [Finding(kind=broken_by, severity="error", step=100, message=broken_by)] if broken_by else []
    profile = {"method": "full", "objective": "pretrain", "framework": "deepspeed", "precision": precision,
               "model_params": None}
    return SimpleNamespace(path=Path(name), config=config, findings=findings, first_incident=findings[0] if findings else None,
                           status="broken" if broken_by else "healthy", checkpoints=[], first_bad_checkpoint=None,
                           run_profile=SimpleNamespace(precision=precision, to_dict=lambda: profile),
                           timeline=build_timeline([LogRecords(source="train.log", format="stdout", frame=frame)]))


DS = {"ds.fp16.enabled": True, "ds.optimizer.type": "AdamW", "ds.optimizer.params.weight_decay": 0.01,
      "ds.zero_optimization.stage": 1}


def test_precision_known_from_the_profile_is_no_difference_and_unrecorded_settings_are_unknown():
    recorded, bare = _run("a", DS, precision="fp16"), _run("b", {}, precision="fp16", broken_by="skipped_steps")
    c = comparison_of([recorded, bare])
    rows = {d.key: d for d in c.config_diff}
    assert "precision" not in rows
    for key in DS:
        assert rows[key].not_recorded == (1,) and rows[key].risk in ("low", "none"), rows[key]
        assert "not recorded for run 2" in rows[key].why
    text = comparison_text(c)
    assert "ds.fp16.enabled: yes | not recorded" in text and "| \n" not in text + "\n"


def test_weight_decay_and_the_optimizer_type_have_reasons_of_their_own():
    good = _run("a", {**DS, "ds.optimizer.params.weight_decay": 0.0}, precision="fp16")
    bad = _run("b", {**DS, "ds.optimizer.type": "Lamb", "ds.optimizer.params.weight_decay": 0.1}, precision="fp16",
               broken_by="divergence")
    rows = {d.key: d for d in comparison_of([good, bad]).config_diff}
    decay, kind = rows["ds.optimizer.params.weight_decay"], rows["ds.optimizer.type"]
    assert decay.topic == "weight_decay" and decay.risk == "low" and "weight decay" in decay.why
    assert kind.topic == "optimizer_type" and kind.risk == "high" and "optimizer" in kind.why
    assert "eps and betas" not in decay.why + kind.why


def test_a_key_absent_from_a_recorded_config_is_the_default_and_keeps_its_risk():
    good = _run("a", {"ds.fp16.enabled": True, "ds.zero_optimization.stage": 2}, precision="fp16")
    bad = _run("b", {"ds.fp16.enabled": True, "ds.zero_optimization.stage": 2, "ds.communication_data_type": "fp32"},
               precision="fp16", broken_by="nonfinite_metric")
    c = comparison_of([good, bad])
    top = c.config_diff[0]
    assert top.key == "ds.communication_data_type" and top.risk == "high" and top.not_recorded == ()
    assert "ds.communication_data_type: not set | fp32" in comparison_text(c)
