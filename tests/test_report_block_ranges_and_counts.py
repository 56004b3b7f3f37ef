"""Tests of the report's wording (causes, report/text.py, report/story.py): block ranges and counts.

One way to write a block range, and counts in the right number, in every sentence of the report.

A range of consecutive blocks is written as `block_ranges` writes it (`transformer.h.21-23`) in the
cause's title and evidence as in the report's rows; a count of one takes the singular noun and verb.
"""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from forensics.causes import infer_causes
from forensics.checkpoints.types import CheckpointInfo, CheckpointRef
from forensics.config import RunConfig, Thresholds
from forensics.report.story import answer_checkpoints
from forensics.report.text import diff_text, scan_text
from forensics.timeline import LogRecords, Timeline, build_timeline


def _checkpoint(step, blocks=()) -> CheckpointInfo:
    ref = CheckpointRef(name=f"checkpoint-{step}", step=step, path=Path(f"/run/checkpoint-{step}"), files=())
    return CheckpointInfo(ref=ref, status="nonfinite" if blocks else "ok", nonfinite_blocks=list(blocks),
                          nonfinite_tensors=[f"{b}.attn.c_attn.weight" for b in blocks])


def _late_blocks(blocks):
    config = RunConfig()
    config.add("model.num_hidden_layers", 24, "config.json")
    found = infer_causes(config, Timeline.empty(), [], [_checkpoint(100), _checkpoint(200, blocks)], Thresholds())
    return next(c for c in found if c.cause == "late_blocks")


def test_a_range_of_damaged_blocks_is_written_one_way_in_the_cause():
    cause = _late_blocks([f"transformer.h.{i}" for i in (21, 22, 23)])
    assert cause.title == "Damage confined to the last blocks (transformer.h.21-23)"
    assert "non-finite values only in transformer.h.21-23: the last 3 of 24 blocks" in cause.evidence[1]
    assert not any(" to transformer" in text or "h.21, transformer" in text for text in (cause.title, *cause.evidence))


def test_blocks_that_are_not_consecutive_stay_a_list():
    cause = _late_blocks(["model.layers.20", "model.layers.23"])
    assert cause.title == "Damage confined to the last blocks (model.layers.20, model.layers.23)"


def test_one_later_damaged_checkpoint_is_singular():
    first, later = _checkpoint(200, ["model.layers.23"]), _checkpoint(300, ["model.layers.23"])
    analysis = SimpleNamespace(checkpoints=[_checkpoint(100), first, later], last_good_checkpoint=None,
                               first_bad_checkpoint=first, incident_step=None, findings=[], status="broken")
    text = " ".join(answer_checkpoints(analysis).paragraphs)
    assert "1 later checkpoint is damaged too; do not resume from it." in text


def test_counts_of_one_in_scan_diff_and_timeline_are_singular():
    stats = pd.DataFrame({"name": ["model.layers.0.mlp.up_proj.weight"], "block": ["model.layers.0"], "dtype": ["F32"],
                          "numel": [64], "n_nan": [1], "n_inf": [0], "absmax": [1.0], "l2": [1.0], "std": [0.1],
                          "fp16_headroom": [1.0], "note": [""]})
    scan = scan_text(stats, "checkpoint-10")
    assert "checkpoint-10: 1 tensor, 64 values" in scan and "NON-FINITE: 1 tensor holds NaN/Inf in block model.layers.0" in scan
    changes = pd.DataFrame({"tensor": ["a.weight"], "block": [None], "rel_change": [float("inf")], "became_nonfinite": [True]})
    diff = diff_text(changes, "checkpoint-10", "checkpoint-20")
    assert "1 tensor compared" in diff and "1 tensor became non-finite" in diff
    frame = pd.DataFrame({"step": [1], "metric": ["loss"], "value": [2.0], "wall_time": [float("nan")]})
    timeline = build_timeline([LogRecords(source="trainer_state.json", format="trainer_state", frame=frame)])
    assert repr(timeline) == "<Timeline 1 point, 1 metric, 1 segment>"


def test_many_keep_the_plural():
    stats = pd.DataFrame({"name": ["model.layers.0.a.weight", "model.layers.1.a.weight"], "block": ["model.layers.0",
                          "model.layers.1"], "dtype": ["F32"] * 2, "numel": [64] * 2, "n_nan": [1, 1], "n_inf": [0, 0],
                          "absmax": [1.0] * 2, "l2": [1.0] * 2, "std": [0.1] * 2, "fp16_headroom": [1.0] * 2, "note": [""] * 2})
    assert "NON-FINITE: 2 tensors hold NaN/Inf in blocks model.layers.0-1" in scan_text(stats, "checkpoint-10")
