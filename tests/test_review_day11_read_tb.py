"""Day 11 reading fixes from a read-only review (runs it built with the real writers):

* an output file the OS refuses while it is written (`--html /dev/full`: disk full) is one line naming the file and
  the problem, exit 2, not a traceback.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from forensics.cli import cli

SAMPLES = Path(__file__).resolve().parents[1] / "sample_runs"
FULL_DEVICE = Path("/dev/full")  # every write there fails with ENOSPC, as on a full disk


def _cli(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.mark.skipif(not FULL_DEVICE.exists() or not os.access(FULL_DEVICE, os.W_OK), reason="needs /dev/full")
@pytest.mark.parametrize("args", [("analyze", SAMPLES / "healthy", "--html", FULL_DEVICE),
                                  ("timeline", SAMPLES / "healthy", "--csv", FULL_DEVICE)])
def test_an_output_file_the_disk_refuses_is_one_line_naming_it_and_exit_2(args):
    result = _cli(*args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert str(FULL_DEVICE) in result.output and "no space left" in result.output.lower(), result.output
    assert "Traceback" not in result.output


def test_an_output_file_that_can_be_written_is_written_as_before(tmp_path):
    report = tmp_path / "report.html"
    result = _cli("analyze", SAMPLES / "healthy", "--html", report)
    assert result.exit_code == 0, result.output
    assert report.stat().st_size > 1000 and f"HTML report: {report}" in result.output
