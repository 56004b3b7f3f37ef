"""The advice on the real runs keeps the rules of issue 11 (`support.advice_invariants`; `scripts/audit_advice.py`
prints every violation over the whole corpus): no full fine-tuning range alone to an adapter run, both ranges or
"unknown" where the method is unknown, a preference or RL range named with its objective, a precursor behind every
"likely" learning-rate cause and no sudden break beside one, no resume advice to a run that went on by itself, advice
worded for the run's objective and method, no setting named that the run did not have, the last good checkpoint
finite and before the incident (later finite ones said to be after it), HF's NaN filter never leading.

Checked on the cases judged warning or broken, and on those where the tool's status disagrees with the judgement:
a run judged healthy that the tool also calls healthy gets no cause at all (test_realworld_corpus), so no advice to
check, and leaving those ~600 out keeps this under a minute on two cores (one analysis per case)."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import forensics
from forensics.analysis import Analysis
from forensics.findings import Cause
from forensics.profile import RunProfile
from forensics.timeline import Timeline
from support.advice_invariants import RULES, violations

CORPUS = Path(__file__).resolve().parent / "realworld"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "realworld"
SOURCES = {"corpus": (CORPUS, CORPUS / "expected"), "shared": (SHARED, CORPUS / "expected_shared")}


def _with_advice(source: str) -> list:
    folder, judged = SOURCES[source]
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(judged.glob("*.json")):
        expected = json.loads(path.read_text())
        if expected["status"] != "healthy" or expected.get("tool_disagrees"):
            out.append(pytest.param(folder / path.stem, id=path.stem if source == "corpus" else f"shared-{path.stem}"))
    return out


CASES = _with_advice("corpus") + _with_advice("shared")


@pytest.mark.parametrize("folder", CASES)
def test_the_advice_keeps_the_rules(folder):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            analysis = forensics.analyze(folder)
        except forensics.NotARunDirectory:  # the corpus test says what these are; nothing here to advise on
            pytest.skip("no training logs or checkpoints")
    assert violations(analysis) == []


def _analysis(method: str, objective: str, cause: Cause) -> Analysis:
    return Analysis(path=Path("."), status="broken", findings=[], first_incident=None, timeline=Timeline.empty(),
                    causes=[cause], run_profile=RunProfile(method=method, objective=objective))


def test_the_rules_catch_what_they_name():
    """The rules can fail: a LoRA run told full fine-tuning's range alone, a LoRA DPO run told its range without the
    objective, a "likely" rate with no precursor, a GRPO run told SFT words."""
    told = [
        ("adapter_told_full_range", _analysis("lora", "sft", Cause(
            "lr_too_high", "possible", ["peak 0.001"], "Lower the learning rate to 1e-05 to 2e-05."))),
        ("range_without_objective", _analysis("lora", "preference", Cause(
            "lr_too_low", "possible", ["recipes for LoRA use 5e-06 to 5e-05 (a source)"], "Raise it."))),
        ("likely_lr_without_precursor", _analysis("full", "sft", Cause(
            "lr_too_high", "likely", ["peak 0.01"], "Lower the learning rate."))),
        ("objective_words", _analysis("full", "rl", Cause(
            "lr_too_high", "possible", ["peak 0.01"], "Use the SFT recipe's rate."))),
    ]
    for rule, analysis in told:
        assert rule in {name for name, _ in violations(analysis)}, rule
    assert len(RULES) >= 9
