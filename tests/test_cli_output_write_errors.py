"""Tests of the CLI's output writes (cli.py): a write the disk refuses.

From the day-11 reading fixes from a read-only review (runs it built with the real writers):

* an output file the OS refuses while it is written (`--html /dev/full`: disk full) is one line naming the file and
  the problem, exit 2, not a traceback."""
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


def test_the_result_on_a_stdout_the_disk_refuses_is_one_line_and_exit_2(monkeypatch):
    """`forensics analyze DIR --json > file` on a full disk: the result cannot be printed; one line says so."""
    def refused(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("forensics.cli.click.echo", lambda message=None, *a, err=False, **k: (
        refused() if not err else print(message)))
    result = _cli("analyze", SAMPLES / "healthy", "--json")
    assert result.exit_code == 2 and "standard output" in result.output, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


def test_a_parquet_write_that_fails_leaves_the_path_in_place(tmp_path, monkeypatch):
    """pyarrow deletes the path it was given when its write fails; a device (/dev/full) or an earlier export must
    not be deleted by a failed export. The write fails here inside pyarrow's writer, as a full disk makes it."""
    pq = pytest.importorskip("pyarrow.parquet")

    def full_disk(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pq.ParquetWriter, "write_table", full_disk)
    target = tmp_path / "timeline.parquet"
    target.write_bytes(b"an earlier export")
    result = _cli("timeline", SAMPLES / "healthy", "--parquet", target)
    assert result.exit_code == 2 and "no space left" in result.output.lower(), result.output
    assert target.exists()


def test_an_output_file_that_can_be_written_is_written_as_before(tmp_path):
    report = tmp_path / "report.html"
    result = _cli("analyze", SAMPLES / "healthy", "--html", report)
    assert result.exit_code == 0, result.output
    assert report.stat().st_size > 1000 and f"HTML report: {report}" in result.output
