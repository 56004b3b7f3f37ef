"""Every case of the repository's real-run corpus gets the judgement written down for it beforehand.

The cases and their provenance are in tests/realworld/ (PROVENANCE.md); each expected/<case>.json was
written from the file's own numbers before the tool ran on it. Checked: the status, the first incident
(kind and step, within the tolerance written down), and every run-profile field not left "unknown".
A case where the tool is still wrong keeps its judgement and says so in `tool_disagrees` (what the tool
says instead about the status or first incident) or `profile_disagrees` (about the run profile): each
makes its own test a strict expected failure, so fixing the tool makes the test say so, and a case whose
status the tool gets wrong still has its run profile checked (and the other way round).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import forensics

CORPUS = Path(__file__).resolve().parent / "realworld"
CASE_NAMES = sorted(p.stem for p in (CORPUS / "expected").glob("*.json"))


def _expected(case: str) -> dict:
    return json.loads((CORPUS / "expected" / f"{case}.json").read_text())


def _case(case: str, field: str = "tool_disagrees"):
    """A case as a test parameter; strict xfail where the judgement says the tool disagrees on this point
    (`tool_disagrees`: status or first incident; `profile_disagrees`: the run profile)."""
    disagrees = _expected(case).get(field)
    return pytest.param(case, marks=pytest.mark.xfail(strict=True, reason=disagrees) if disagrees else ())


@pytest.mark.parametrize("case", [_case(c) for c in CASE_NAMES])
def test_status_and_first_incident(case):
    expected, a = _expected(case), forensics.analyze(CORPUS / case)
    assert a.status == expected["status"], [f.message for f in a.findings]
    first = expected["first_incident"]
    if first is None:
        assert a.first_incident is None or a.first_incident.severity == "warning" and expected["status"] != "healthy"
    else:
        assert a.first_incident.kind == first["kind"]
        assert abs(a.first_incident.step - first["step"]) <= first.get("step_tolerance", 0)


@pytest.mark.parametrize("case", [_case(c, "profile_disagrees") for c in CASE_NAMES])
def test_run_profile_where_the_files_say_it(case):
    expected, profile = _expected(case)["run_profile"], forensics.analyze(CORPUS / case).run_profile.to_dict()
    for field, value in expected.items():
        if value not in ("unknown", None):
            assert profile[field] == value, (field, profile)
