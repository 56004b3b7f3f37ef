"""Tests of `bisect --json` / `diff --json` (cli.py): changes that are not finite, strict JSON.

`bisect --json` and `diff --json`: a change that is not finite is null with a field saying why, never the string
"inf"; and no `--json` output over the sample runs holds a bare NaN/Infinity (strict JSON).

Checkpoints are written with the real safetensors writer; expected values come from how they were made.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from support.checkpoint_files import save_tensors, torch
from forensics.cli import cli


SAMPLE_RUNS = Path(__file__).resolve().parents[1] / "sample_runs"


def _strict(text: str):
    """The JSON of `text`, refusing the NaN/Infinity/-Infinity constants that strict JSON does not have."""
    def refuse(constant):
        raise ValueError(f"bare {constant} in the JSON")
    return json.loads(text, parse_constant=refuse)


def _invoke_json(*args) -> object:
    result = CliRunner().invoke(cli, [*map(str, args), "--json"])
    assert result.exit_code in (0, 1), result.output
    return _strict(result.stdout)


def _checkpoints(tmp_path: Path, a: dict, b: dict) -> tuple[Path, Path]:
    save_tensors(tmp_path / "checkpoint-10" / "model.safetensors", a)
    save_tensors(tmp_path / "checkpoint-20" / "model.safetensors", b)
    return tmp_path / "checkpoint-10", tmp_path / "checkpoint-20"


def _by_tensor(rows) -> dict:
    return {r["tensor"]: r for r in rows}


def test_a_tensor_of_zeros_that_moved_has_a_null_change_that_says_it_grew_from_zero(tmp_path):
    a, b = _checkpoints(tmp_path, {"model.layers.0.lora_B.weight": torch.zeros(8, 4)},
                        {"model.layers.0.lora_B.weight": torch.full((8, 4), 0.01)})
    row = _by_tensor(_invoke_json("diff", a, b))["model.layers.0.lora_B.weight"]
    assert row["rel_change"] is None and row["rel_change_finite"] is None
    assert row["grew_from_zero"] is True and row["n_new_nonfinite"] == 0


def test_a_tensor_that_went_nan_in_bisect_has_a_null_change_that_counts_the_new_nan(tmp_path):
    poisoned = torch.ones(8, 4)
    poisoned[1, 2] = float("nan")
    a, b = _checkpoints(tmp_path, {"model.layers.0.w": torch.ones(8, 4), "model.layers.1.w": torch.ones(8, 4)},
                        {"model.layers.0.w": poisoned, "model.layers.1.w": torch.ones(8, 4) * 1.5})
    rows = _by_tensor(_invoke_json("bisect", a, b)["changes"])
    assert rows["model.layers.0.w"]["rel_change"] is None and rows["model.layers.0.w"]["n_new_nonfinite"] == 1
    assert rows["model.layers.0.w"]["became_nonfinite"] is True


def test_a_finite_change_stays_a_number_and_says_nothing_grew(tmp_path):
    a, b = _checkpoints(tmp_path, {"model.layers.0.w": torch.ones(8, 4)}, {"model.layers.0.w": torch.ones(8, 4) * 1.5})
    row = _by_tensor(_invoke_json("diff", a, b))["model.layers.0.w"]
    assert row["rel_change"] == pytest.approx(0.5) and row["grew_from_zero"] is False and row["n_new_nonfinite"] == 0


def test_no_changes_row_of_the_sample_runs_holds_a_string_where_a_number_goes():
    run = SAMPLE_RUNS / "qwen1_names"
    rows = _invoke_json("bisect", run / "ckpt-15", run / "ckpt-30")["changes"]
    numeric = ("rel_change", "rel_change_finite", "absmax_a", "absmax_b", "l2_a", "l2_b", "l2_diff")
    assert rows and all(r[k] is None or isinstance(r[k], (int, float)) for r in rows for k in numeric)
    assert all(r["n_new_nonfinite"] or r["grew_from_zero"] for r in rows if r["rel_change"] is None)


@pytest.mark.parametrize("run", sorted(p.name for p in SAMPLE_RUNS.iterdir() if p.is_dir()))
def test_every_json_output_of_a_sample_run_is_strict_json(run):
    folder = SAMPLE_RUNS / run
    _invoke_json("analyze", folder)
    checkpoints = sorted((p for p in folder.iterdir() if p.is_dir() and p.name != "runs"),
                         key=lambda p: int(p.name.rsplit("-", 1)[1]))
    _invoke_json("bisect", checkpoints[0], checkpoints[-1])
    _invoke_json("diff", checkpoints[0], checkpoints[-1])
    _invoke_json("scan", checkpoints[-1])
