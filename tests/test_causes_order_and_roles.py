"""Tests of the causes' order and roles (causes/roles.py) in `--json` and the text report.

`analyze --json`'s causes are ordered by confidence (likely before possible), each with its `role` in the
report; the report still leads with the first cause that has a fix, and names HF's NaN filter as what hid it.

The broken run is the shipped sample run `nan_masked` (the real Trainer, a NaN injected; its loss logged as 0.0 by
HF's filter), the healthy one `healthy`; the lone-hider case is built from Cause records.
"""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from forensics.cli import cli
from forensics.findings import Cause
from forensics.causes.roles import cause_role, leading_cause


SAMPLE_RUNS = Path(__file__).resolve().parents[1] / "sample_runs"
ORDER = {"likely": 0, "possible": 1}


def _analyze(run: str) -> dict:
    result = CliRunner().invoke(cli, ["analyze", str(SAMPLE_RUNS / run), "--json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def test_causes_in_the_json_are_ordered_by_confidence_with_the_nan_filter_marked_as_what_hid_the_cause():
    data = _analyze("nan_masked")
    causes = data["causes"]
    assert [ORDER[c["confidence"]] for c in causes] == sorted(ORDER[c["confidence"]] for c in causes)
    (hider,) = [c for c in causes if c["cause"] == "masked_nan_loss"]
    assert hider["confidence"] == "likely" and hider["role"] == "hid_the_cause"
    (lead,) = [c for c in causes if c["role"] == "leading"]
    assert data["leading_cause"] == lead["cause"] != "masked_nan_loss"


def test_the_text_report_leads_with_the_cause_that_has_a_fix_and_shows_the_filter_as_hidden_by():
    data = _analyze("nan_masked")
    result = CliRunner().invoke(cli, ["analyze", str(SAMPLE_RUNS / "nan_masked")])
    lead = next(c for c in data["causes"] if c["role"] == "leading")
    cause_line = next(line for line in result.output.splitlines() if line.startswith("Cause"))
    assert lead["title"] in cause_line
    hidden_line = next(line for line in result.output.splitlines() if line.startswith("Hidden by"))
    assert next(c["title"] for c in data["causes"] if c["cause"] == "masked_nan_loss") in hidden_line


def test_the_nan_filter_alone_is_the_leading_cause():
    hider = Cause("masked_nan_loss", "likely", ["loss 0.0 beside grad_norm NaN"], "find the first NaN")
    assert leading_cause([hider], None) is hider and cause_role(None, hider, hider) == "leading"


def test_a_healthy_run_has_no_leading_cause_and_nothing_hid():
    data = _analyze("healthy")
    assert data["status"] == "healthy"
    assert all(c["role"] != "hid_the_cause" and c["confidence"] == "possible" for c in data["causes"])
    assert data["leading_cause"] == next((c["cause"] for c in data["causes"] if c["role"] == "leading"), None)
