"""The CLI as a person meets it: bad output paths, misplaced options, odd criteria, exit codes, help, start-up.

Each case is one line on stderr and exit 2 for a usage mistake, checked before any work is done
(a missing run folder would be reported otherwise, so the output-path error proves it came first).
"""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from forensics.cli import cli
from forensics.cli_output import eta

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_runs"
NAN = SAMPLES / "nan_masked"


def _main(*args: str) -> subprocess.CompletedProcess:
    """The real entry point in a fresh process (as a user's shell runs it)."""
    return subprocess.run([sys.executable, "-m", "forensics", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT)


@pytest.mark.parametrize("args", [
    ["analyze", "{nope}", "--html", "/missing/dir/r.html"],
    ["analyze", "{nope}", "--html", "{tmp}"],
    ["timeline", "{nope}", "--csv", "/missing/dir/t.csv"],
    ["scan", "{nope}", "--csv", "/missing/dir/s.csv"],
    ["bisect", "{nope}", "{nope}", "--html", "/missing/dir/b.html"],
])
def test_a_bad_output_path_is_one_line_exit_2_before_any_work(args, tmp_path):
    args = [a.format(nope=tmp_path / "no-such-run", tmp=tmp_path) for a in args]
    result = _main(*args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert args[-1] in lines[0] and "no-such-run" not in lines[0]  # the output was checked first


def test_html_option_before_the_folder_says_what_was_meant():
    result = _main("analyze", "--html", NAN)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "is a folder" in line and f"forensics analyze {NAN} --html" in line
    assert not (ROOT / "report.html").exists() or (ROOT / "report.html").stat().st_mtime < 0


def test_unknown_criterion_lists_the_metric_that_exists_before_opening_checkpoints(tmp_path):
    result = _main("bisect", tmp_path / "a", tmp_path / "b", "--criterion", "foo<3")
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "foo<3" in line and "absmax" in line


def test_click_usage_errors_are_one_line_too():
    result = _main("analyze", NAN, "--fail-on", "bogus")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "bogus" in result.stderr and "analyze --help" in result.stderr


def test_diff_exit_codes_mean_what_they_mean_everywhere():
    runner = CliRunner()
    assert runner.invoke(cli, ["diff", str(SAMPLES / "healthy" / "checkpoint-20"),
                               str(SAMPLES / "healthy" / "checkpoint-40")]).exit_code == 0
    bad = runner.invoke(cli, ["diff", str(NAN / "checkpoint-20"), str(NAN / "checkpoint-40")])
    assert bad.exit_code == 1 and "NaN/Inf" in bad.output and " inf" not in bad.output


def test_diff_of_two_different_models_is_refused():
    result = _main("diff", NAN / "checkpoint-20", SAMPLES / "qwen1_names" / "ckpt-15")
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "not checkpoints of one model" in line


@pytest.mark.parametrize("command", sorted(cli.commands))
def test_every_command_help_has_an_example_and_the_exit_codes(command):
    text = CliRunner().invoke(cli, [command, "--help"]).output
    assert "Example" in text and "Exit codes" in text, text


def test_version_and_help_do_not_import_pandas_or_matplotlib():
    code = ("import sys; from forensics.cli import cli; import forensics; "
            "print(sorted(m for m in ('pandas', 'numpy', 'matplotlib', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT).stdout
    assert out.strip() == "[]"


def test_text_mode_does_not_import_matplotlib():
    code = ("import sys; from click.testing import CliRunner; from forensics.cli import cli; "
            f"CliRunner().invoke(cli, ['analyze', {str(NAN)!r}]); print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT).stdout
    assert out.strip() == "False"


def test_timeline_csv_tells_nan_from_not_logged_and_writes_relative_sources(tmp_path):
    wide, long = tmp_path / "w.csv", tmp_path / "l.csv"
    assert CliRunner().invoke(cli, ["timeline", str(NAN), "--csv", str(wide), "--wide"]).exit_code == 0
    rows = list(csv.DictReader(wide.open()))
    facts = json.loads((SAMPLES / "nan_masked.facts.json").read_text())
    at = {int(r["step"]): r for r in rows}
    assert at[facts["first_nonfinite_step"]]["grad_norm"] == "nan"  # logged as NaN
    assert at[facts["logged_steps"][0]]["train_loss"] == ""        # not logged at that step
    assert CliRunner().invoke(cli, ["timeline", str(NAN), "--csv", str(long)]).exit_code == 0
    sources = {r["source"] for r in csv.DictReader(long.open())}
    assert sources and all(not Path(s).is_absolute() and (NAN / s).exists() for s in sources)


def test_timeline_parquet_keeps_nan_and_null_apart(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")

    out = tmp_path / "t.parquet"
    assert CliRunner().invoke(cli, ["timeline", str(NAN), "--parquet", str(out), "--wide"]).exit_code == 0
    table = pq.read_table(out).to_pydict()  # Arrow itself: pandas would fold NaN into NA on the way in
    grad = dict(zip(table["step"], table["grad_norm"]))
    facts = json.loads((SAMPLES / "nan_masked.facts.json").read_text())
    value = grad[facts["first_nonfinite_step"]]
    assert value is not None and value != value  # NaN, a value
    assert table["train_loss"].count(None) == len(table["step"]) - 1  # null: not logged


def test_progress_estimates_time_left_from_n_of_m():
    started: dict = {}
    assert eta("checking checkpoint 1 of 10: a", started) == ""
    started[10] = (started[10][0] - 5.0, 1)  # 5 s for the first one
    assert eta("checking checkpoint 2 of 10: b", started).startswith(", about 40 s")
    assert eta("reading trainer_state.json", started) == ""
