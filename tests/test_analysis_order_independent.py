"""A run's answer does not depend on what the same process analyzed before it: a user in Jupyter calls
`forensics.analyze` on several runs in turn, and each must get the answer it gets alone in a fresh process.

huggingface_alignment-handbook_issue46 (a notebook Trainer table, `Step<TAB>Training Loss`, saved as train.log) was
reported with framework hf_trainer in the pooled corpus snapshot and unknown alone. That snapshot came from the code
before fx-as64 (a0653083), which read the file as a console holding the Trainer's results table; since
`table_headers.table_column` it is a metrics table (Step, Training Loss) with no framework named, pooled or alone, as
its judgement says. No state was found to leak; these tests keep it so: each case analyzed, then others, then again.
"""
from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import forensics

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "realworld"
ISSUE46 = CORPUS / "huggingface_alignment-handbook_issue46"
# one run a reader: the Trainer's table as a model card (README) and as a loss file, a trainer_state.json, a
# notebook, a run with checkpoints
OTHERS = [CORPUS / "garima-mahato_MuMoLLM", CORPUS / "hussien_MedQA", CORPUS / "Lucky3495_Lakhes",
          CORPUS / "yangoos57_Bert_For_Domain_Adaptation", ROOT / "sample_runs" / "nan_masked"]


def _answer(folder: Path) -> dict:
    """`analyze(folder).to_dict()` less its timestamp."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        answer = forensics.analyze(folder).to_dict()
    answer.pop("created")
    return answer


@pytest.mark.parametrize("other", OTHERS, ids=lambda p: p.name)
def test_an_analysis_between_two_of_a_run_leaves_its_answer_alone(other):
    first = _answer(ISSUE46)
    between = _answer(other)
    assert _answer(ISSUE46) == first
    assert _answer(other) == between


def test_issue46_in_one_process_after_others_answers_as_alone_in_a_fresh_process():
    for other in OTHERS:
        _answer(other)
    pooled = _answer(ISSUE46)
    alone = subprocess.run([sys.executable, "-m", "forensics", "analyze", str(ISSUE46), "--json"], cwd=ROOT,
                           capture_output=True, text=True, check=False)
    fresh = json.loads(alone.stdout)
    fresh.pop("created")
    assert pooled == fresh
    assert pooled["run_profile"]["framework"] == "unknown"  # its judgement: the bare table names no framework
