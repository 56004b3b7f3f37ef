"""A run with nothing at warning level or worse is given no cause: a cause says why something went wrong, and where
nothing did, an info finding (how to read the log) is the whole of what there is to say.

cbt12123_meituan_takeout_review (AS108), judged healthy: its train loss sits 4.2x its eval loss with 4 accumulation
steps - a logging scale the `train_eval_mismatch` info already reads - and the tool named 'The training loss was logged
summed over 4 accumulation steps' as a cause of a run with nothing wrong."""
from __future__ import annotations

from pathlib import Path

from forensics.causes import infer_causes
from forensics.config import RunConfig, Thresholds
from forensics.findings import Finding
from forensics.timeline import Timeline

import forensics


def _accumulation_config() -> RunConfig:
    config = RunConfig()
    config.add("gradient_accumulation_steps", 4, "training_args.bin")
    return config


def _scaled(severity: str) -> Finding:
    return Finding("train_eval_mismatch", severity, 33, "the training loss is 4.2x the eval loss", metric="loss",
                   evidence={"median_ratio": 4.2})


def _causes(*findings: Finding) -> list:
    return infer_causes(_accumulation_config(), Timeline.empty(), list(findings), [], Thresholds())


def test_an_info_finding_alone_gets_no_cause():
    assert _causes(_scaled("info")) == []


def test_the_same_reading_beside_a_warning_is_still_a_cause():
    overfit = Finding("overfitting", "warning", 200, "the eval loss rose", metric="eval_loss")
    assert [c.cause for c in _causes(_scaled("info"), overfit)] == ["accumulation_scaled_loss"]
    assert [c.cause for c in _causes(_scaled("warning"))] == ["accumulation_scaled_loss"]


def test_the_corpus_case_is_healthy_with_its_reading_and_no_cause():
    a = forensics.analyze(Path(__file__).parent / "realworld" / "cbt12123_meituan_takeout_review")
    assert a.status == "healthy"
    assert [f.kind for f in a.findings] == ["train_eval_mismatch"]  # the scale is still said, as an info
    assert a.causes == []
