"""The launch script a W&B run records (forensics/ingest/command_line.py) and the objective it gives the run profile.

Run-profile readings of branch fx-profile7."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import forensics
from forensics.ingest.command_line import read_wandb_metadata


CORPUS = Path(__file__).parent / "realworld"


@pytest.mark.parametrize("program, script", [
    ("/workspace/ColossalAI/applications/Chat/examples/train_sft.py", "train_sft.py"),  # 480284856_RLHF_Training
    ("kaggle.ipynb", None), ("<python with no main file>", None), ("/usr/local/bin/openai", None),
])
def test_the_program_wandb_records_is_the_runs_launch_script(tmp_path: Path, program: str, script):
    path = tmp_path / "wandb-metadata.json"
    path.write_text(json.dumps({"program": program, "args": ["--model", "gpt2", "--lr", "2e-5"]}))
    assert read_wandb_metadata(path).get("launch.script") == script


def test_a_wandb_run_of_colossalai_s_train_sft_script_is_supervised_fine_tuning():
    profile = forensics.analyze(CORPUS / "480284856_RLHF_Training").run_profile
    assert profile.objective == "sft" and "train_sft.py" in profile.evidence["objective"]
