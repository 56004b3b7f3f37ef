"""Tests of `analyze STORE --json` (cli.py): a store's output carries a single run's fields.

`analyze STORE --json` on a tracker store of several runs carries every top-level field of a single run's output.

The store is built from two real W&B runs of the corpus (tests/realworld, copied byte for byte): one judged
healthy, one judged a warning (a loss value a loss cannot take). What each field must hold comes from forensics/store.py's
contract: lists gather every run's records with a "run" key, single records are the worst run's.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from forensics.cli import cli


REAL = Path(__file__).parent / "realworld"
HEALTHY = REAL / "Candice1995_LLM-QO-VLDB2025" / "wandb" / "run-20250105_190710-pbiuqido"
WARNING = REAL / "1BIMU_UASFT" / "wandb" / "offline-run-20251015_162001-sv7hxi9x"


def _analyze_json(path: Path) -> dict:
    result = CliRunner().invoke(cli, ["analyze", str(path), "--json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.output)


def _store_of(tmp_path: Path, *runs: Path) -> Path:
    store = tmp_path / "wandb"
    for run in runs:
        shutil.copytree(run, store / run.name)
    return store


def test_a_store_of_several_runs_has_every_top_level_field_of_a_single_run(tmp_path):
    alone = _analyze_json(_store_of(tmp_path / "one", WARNING))
    store = _analyze_json(_store_of(tmp_path / "two", HEALTHY, WARNING))
    assert set(alone) <= set(store), set(alone) - set(store)
    assert len(store["runs"]) == 2 and {r["analysis"]["status"] for r in store["runs"]} == {"healthy", "warning"}


def test_the_store_first_incident_is_the_worst_runs_and_names_it(tmp_path):
    store = _analyze_json(_store_of(tmp_path, HEALTHY, WARNING))
    (worst,) = [r for r in store["runs"] if r["analysis"]["status"] == "warning"]
    assert store["status"] == "warning" and store["lead_run"] == worst["run"]["run_id"]
    assert store["first_incident"] == {**worst["analysis"]["first_incident"], "run": worst["run"]["run_id"]}
    assert store["run_profile"] == {**worst["analysis"]["run_profile"], "run": worst["run"]["run_id"]}


def test_the_store_findings_and_segments_are_every_runs_each_naming_its_run(tmp_path):
    store = _analyze_json(_store_of(tmp_path, HEALTHY, WARNING))
    for key in ("findings", "segments", "causes", "tracker_runs"):
        expected = sorted(json.dumps({**rec, "run": r["run"]["run_id"]}, sort_keys=True)
                          for r in store["runs"] for rec in r["analysis"][key])
        assert sorted(json.dumps(rec, sort_keys=True) for rec in store[key]) == expected, key
    steps = [f["step"] for f in store["findings"]]
    assert steps == sorted(steps)
    likely_first = [c["confidence"] != "likely" for c in store["causes"]]
    assert likely_first == sorted(likely_first)
    assert store["checkpoints"] == [] and store["last_good_checkpoint"] is None


def test_a_folder_of_one_run_keeps_the_single_run_output(tmp_path):
    alone = _analyze_json(_store_of(tmp_path, HEALTHY))
    assert "runs" not in alone and "lead_run" not in alone
    assert alone["status"] == "healthy" and all("run" not in f for f in alone["findings"])
