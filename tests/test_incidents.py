"""The five incidents of INCIDENTS.md: the expected cause comes first, from the run's own files.

Runs come from tests/incidents.py (the real Trainer on CPU, plus real writers for what a CPU cannot
run). Expected causes, steps and blocks come from how each run was made (RunFacts), never from
the tool's output.
"""
from __future__ import annotations

import importlib

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from forensics.causes import infer_causes  # noqa: E402
from forensics.config import Thresholds  # noqa: E402
from forensics.ingest import read_logs  # noqa: E402
from forensics.ingest.run_config import read_run_config  # noqa: E402
from forensics.run import discover  # noqa: E402
from forensics.timeline import build_timeline  # noqa: E402

from incidents import CASES  # noqa: E402  (tests/ is on sys.path, as for runmaker)


@pytest.fixture(scope="module", params=sorted(CASES))
def incident(request, tmp_path_factory):
    return CASES[request.param](tmp_path_factory.mktemp(request.param) / "run")


def _optional(module: str, name: str):
    """A pipeline piece another part of the project provides, or None while it does not exist yet."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


def _diagnose(path):
    """read_run_config + infer_causes on the run, with the project's analyzers and checkpoint check."""
    layout = discover(path)
    records, _ = read_logs(layout)
    timeline = build_timeline(records)
    thresholds = Thresholds()
    run_all = _optional("forensics.analyzers", "run_all")
    check = _optional("forensics.checkpoints", "check_run_checkpoints")
    findings = run_all(timeline, thresholds) if run_all else []
    checkpoints = check(layout, thresholds)[0] if check else _scan_checkpoints(path)
    config = read_run_config(layout, timeline)
    return config, infer_causes(config, timeline, findings, checkpoints, thresholds)


def _scan_checkpoints(path):
    """Until the checkpoint helper exists: NaN/Inf tensors of each checkpoint-N, read with safetensors."""
    import re

    import torch
    from safetensors.torch import load_file

    from forensics.checkpoints.types import CheckpointInfo, CheckpointRef

    infos = []
    for folder in sorted(path.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1])):
        files = tuple(sorted(folder.glob("*.safetensors")))
        bad = [n for f in files for n, t in load_file(f).items() if not bool(torch.isfinite(t.float()).all())]
        blocks = sorted({m.group(0) for n in bad if (m := re.match(r"^(?:\w+\.)*?(?:layers|h)\.\d+", n))},
                        key=lambda b: int(b.rsplit(".", 1)[1]))
        ref = CheckpointRef(folder.name, int(folder.name.split("-")[1]), folder, files)
        infos.append(CheckpointInfo(ref, "nonfinite" if bad else "ok", bad, blocks))
    return infos


def test_config_evidence_is_read(incident):
    config, _ = _diagnose(incident.path)
    args = incident.facts.training_args
    assert config.get("learning_rate") == args["learning_rate"]
    assert config.get("max_grad_norm") == args["max_grad_norm"]
    assert "training_args.bin" in config.source_of("learning_rate")


def test_expected_cause_first(incident):
    _, causes = _diagnose(incident.path)
    assert causes, "no cause named"
    assert causes[0].cause == incident.cause and causes[0].confidence == "likely", [c.cause for c in causes]
    named = {c.cause for c in causes}
    assert set(incident.also) <= named, named


def test_case_specific_evidence(incident):
    config, causes = _diagnose(incident.path)
    first = causes[0]
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
        assert ", ".join(incident.blocks) in " ".join(late.evidence)


def test_analyze_names_the_cause_step_and_blocks(incident):
    """End to end through forensics.analyze (needs every part of the pipeline)."""
    for module, name in (("forensics.analyzers", "run_all"), ("forensics.analyzers", "status_of"),
                         ("forensics.analyzers", "first_incident_of"),
                         ("forensics.checkpoints", "check_run_checkpoints"), ("forensics.checkpoints", "weight_findings")):
        if _optional(module, name) is None:
            pytest.skip(f"{module}.{name} does not exist yet")
    import forensics

    analysis = forensics.analyze(incident.path)
    facts = incident.facts
    assert analysis.status == "broken"
    assert analysis.causes[0].cause == incident.cause
    first_step = facts.first_nonfinite_step
    if first_step is not None:
        assert analysis.first_incident is not None and analysis.first_incident.step <= first_step
    if facts.first_bad_checkpoint:
        assert analysis.first_bad_checkpoint.name == facts.first_bad_checkpoint
        assert analysis.last_good_checkpoint.name == facts.last_good_checkpoint
    if incident.blocks:
        assert tuple(analysis.first_bad_checkpoint.nonfinite_blocks) == incident.blocks
    assert analysis.to_dict()["causes"][0]["cause"] == incident.cause
