"""The five incidents of INCIDENTS.md: the expected cause comes first, from the run's own files.

Runs come from tests/support/incidents.py (the real Trainer on CPU, plus real writers for what a CPU cannot
run). Expected causes, steps and blocks come from how each run was made (RunFacts), never from
the tool's output.
"""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

import forensics  # noqa: E402
from forensics.analyzers import run_all  # noqa: E402
from forensics.causes import HIDERS, infer_causes  # noqa: E402
from forensics.checkpoints import check_run_checkpoints  # noqa: E402
from forensics.config import Thresholds  # noqa: E402
from forensics.ingest import read_logs  # noqa: E402
from forensics.ingest.run_config import read_run_config  # noqa: E402
from forensics.discover.run import discover  # noqa: E402
from forensics.causes.roles import leading_cause  # noqa: E402
from forensics.report.notation import block_ranges  # noqa: E402
from forensics.timeline import build_timeline  # noqa: E402

from support.incidents import CASES  # noqa: E402


@pytest.fixture(scope="module", params=sorted(CASES))
def incident(request, tmp_path_factory):
    return CASES[request.param](tmp_path_factory.mktemp(request.param) / "run")


def _diagnose(path):
    """read_run_config + infer_causes on the run, with the project's analyzers and checkpoint check."""
    layout = discover(path)
    records, _ = read_logs(layout)
    timeline = build_timeline(records)
    thresholds = Thresholds()
    findings = run_all(timeline, thresholds)
    checkpoints, _ = check_run_checkpoints(layout, thresholds, workers=1)
    config = read_run_config(layout, timeline)
    return config, infer_causes(config, timeline, findings, checkpoints, thresholds)


def test_config_evidence_is_read(incident):
    config, _ = _diagnose(incident.path)
    args = incident.facts.training_args
    assert config.get("learning_rate") == args["learning_rate"]
    assert config.get("max_grad_norm") == args["max_grad_norm"]
    assert "training_args.bin" in config.source_of("learning_rate")


def _first_fix(causes):
    """The first cause that did more than hide the trouble: the list is by confidence, HF's NaN filter may lead it."""
    return next(c for c in causes if c.cause not in HIDERS)


def test_expected_cause_first(incident):
    _, causes = _diagnose(incident.path)
    assert causes, "no cause named"
    first = _first_fix(causes)
    assert first.cause == incident.cause and first.confidence == incident.confidence, [c.cause for c in causes]
    named = {c.cause for c in causes}
    assert set(incident.also) <= named, named


def test_case_specific_evidence(incident):
    config, causes = _diagnose(incident.path)
    first = _first_fix(causes)
    text = " ".join(first.evidence)
    if incident.cause == "lr_too_high":
        assert f"{incident.facts.training_args['learning_rate']:g}" in text and config.get("method") == "full"
    if incident.cause == "qlora_double_quant":
        assert config.get("quant.bnb_4bit_use_double_quant") is True and config.get("method") == "qlora"
        assert f"step {incident.facts.first_nonfinite_step}" in text
    if incident.cause == "fp16_overflow":
        assert config.get("fp16") is True and "scaler.pt" in text
    if incident.cause == "deepspeed_precision_conflict":
        assert config.get("ds.communication_data_type") == "fp32" and "communication_data_type" in text
        assert config.get("ds.fp16.enabled") is True and config.get("state.skipped_steps") == 5
    if incident.blocks:
        late = next(c for c in causes if c.cause == "late_blocks")
        assert block_ranges(incident.blocks) in " ".join(late.evidence)  # one way of writing a range: h.21-23


def test_analyze_names_the_cause_step_and_blocks(incident):
    """End to end through forensics.analyze."""
    analysis = forensics.analyze(incident.path, workers=1)
    facts = incident.facts
    assert analysis.status == "broken"
    assert leading_cause(analysis.causes, analysis.first_incident).cause == incident.cause
    # The first NaN where there is one; else (case 5) the injected early spike that starts the collapse.
    assert analysis.first_incident.step == (facts.first_nonfinite_step or facts.injected[0]["log_step"])
    if facts.first_bad_checkpoint:
        assert analysis.first_bad_checkpoint.name == facts.first_bad_checkpoint
        assert analysis.last_good_checkpoint.name == facts.last_good_checkpoint
    if incident.blocks:
        assert tuple(analysis.first_bad_checkpoint.nonfinite_blocks) == incident.blocks
    assert analysis.to_dict()["leading_cause"] == incident.cause
