"""Read-only, proven: every command leaves the run folder exactly as it was.

Each command runs through click's CliRunner on a copy of sample_runs/nan_masked (logs and three
checkpoints), its outputs written outside the run. Before and after, the whole folder is walked:
every file's bytes, size and mtime and every folder's entries and mtime (a file created and
deleted again changes its folder's mtime) must be unchanged, and nothing added or removed.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import forensics
from forensics.cli import cli

SAMPLE = Path(forensics.__file__).parents[1] / "sample_runs" / "nan_masked"


def snapshot(root: Path) -> dict[str, tuple]:
    """path -> ("dir", mtime_ns, mode) or ("file", size, mtime_ns, mode, sha256) for everything under root."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        st = os.stat(dirpath)
        out[os.path.relpath(dirpath, root)] = ("dir", st.st_mtime_ns, st.st_mode)
        for name in filenames:
            path = os.path.join(dirpath, name)
            st = os.stat(path)
            digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
            out[os.path.relpath(path, root)] = ("file", st.st_size, st.st_mtime_ns, st.st_mode, digest)
    return out


@pytest.fixture
def run(tmp_path) -> Path:
    return Path(shutil.copytree(SAMPLE, tmp_path / "run"))


@pytest.fixture
def out(tmp_path) -> Path:
    path = tmp_path / "out"
    path.mkdir()
    return path


def _commands(run: Path, out: Path) -> list[tuple[list[str], list[Path], set[int]]]:
    """(arguments, the files they must write, the exit codes they may give) of every command."""
    c20, c40, c60 = (run / f"checkpoint-{s}" for s in (20, 40, 60))
    return [
        (["analyze", run, "--json", "--html", out / "report.html", "--workers", "1"], [out / "report.html"], {1}),
        (["analyze", run, "--workers", "1"], [], {1}),
        (["timeline", run, "--csv", out / "timeline.csv"], [out / "timeline.csv"], {0}),
        (["timeline", run, "--csv", out / "wide.csv", "--wide"], [out / "wide.csv"], {0}),
        (["scan", c40, "--csv", out / "stats.csv", "--workers", "1"], [out / "stats.csv"], {1}),
        (["scan", c20 / "model.safetensors", "--json", "--workers", "1"], [], {0}),
        (["diff", c20, c40], [], {1}),  # checkpoint-40 holds NaN: a finding
        (["diff", c20, c60, "--json"], [], {1}),
        (["bisect", c20, c60, "--json", "--html", out / "bisect.html"], [out / "bisect.html"], {1}),
        (["compare", run, run, "--json", "--html", out / "compare.html"], [out / "compare.html"], {1}),
        (["watch", run, "--max-polls", "2", "--interval", "0"], [], {1}),
    ]


def test_every_command_leaves_the_run_untouched(run, out):
    before = snapshot(run)
    assert len(before) > 20 and any(k.endswith("model.safetensors") for k in before)
    for args, writes, codes in _commands(run, out):
        result = CliRunner().invoke(cli, [str(a) for a in args])
        assert result.exit_code in codes, (args, result.output)
        for path in writes:
            assert path.is_file() and path.stat().st_size > 0, (args, path)
        assert snapshot(run) == before, args
    assert sorted(p.name for p in out.iterdir()) == sorted(
        p.name for _, writes, _ in _commands(run, out) for p in writes)


def test_html_without_a_name_goes_to_the_working_directory(run, tmp_path, monkeypatch):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    before = snapshot(run)
    result = CliRunner().invoke(cli, ["analyze", str(run), "--html", "--workers", "1"])
    assert result.exit_code == 1, result.output
    assert "HTML report: report.html" in result.output
    result = CliRunner().invoke(cli, ["bisect", str(run / "checkpoint-20"), str(run / "checkpoint-60"), "--html"])
    assert result.exit_code == 1, result.output
    assert sorted(p.name for p in cwd.iterdir()) == ["bisect.html", "report.html"]
    assert "checkpoint-40" in (cwd / "report.html").read_text()  # the first bad checkpoint, from the run
    assert snapshot(run) == before


def test_running_inside_the_run_folder_writes_only_what_was_asked(run, monkeypatch):
    """Even with the run as the working directory, only the named output appears."""
    monkeypatch.chdir(run)
    before = snapshot(run)
    result = CliRunner().invoke(cli, ["analyze", ".", "--json", "--workers", "1"])
    assert result.exit_code == 1, result.output
    result = CliRunner().invoke(cli, ["scan", "checkpoint-40", "--workers", "1"])
    assert result.exit_code == 1, result.output
    assert snapshot(run) == before


def test_snapshot_sees_a_change(tmp_path):
    """The check above can fail: a touched mtime, or a file created and deleted again, changes the snapshot."""
    (tmp_path / "a").write_bytes(b"x")
    first = snapshot(tmp_path)
    os.utime(tmp_path / "a", ns=(0, 12345))
    assert snapshot(tmp_path) != first
    second = snapshot(tmp_path)
    os.utime(tmp_path, ns=(0, 1))  # a fixed folder mtime, so the create + delete below must move it
    third = snapshot(tmp_path)
    assert third != second
    (tmp_path / "b").write_bytes(b"")
    (tmp_path / "b").unlink()
    assert snapshot(tmp_path) != third
