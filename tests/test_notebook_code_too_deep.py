"""A notebook cell nested deeper than the code readers can walk (`total = x + x + ... ` of 1,500 terms: a BinOp
1,500 deep) is read as a cell that does not parse - every reader already passes over those - and the rest of the
notebook is read as before: no RecursionError out of `analyze` (the reviewer of session 28 found one in
label_flow after cells.py and subword_corpus were guarded one by one)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import forensics
from forensics.ingest.notebook_code.cells import parse_quietly

CORPUS = Path(__file__).resolve().parent / "realworld"
_DEEP = "total = " + "+".join(["x"] * 1500) + "\n"


def test_code_nested_too_deep_to_walk_is_refused_as_a_cell_that_does_not_parse():
    with pytest.raises(RecursionError):
        parse_quietly(_DEEP)


def test_ordinary_code_still_parses():
    assert parse_quietly("total = " + "+".join(["x"] * 60) + "\nif a:\n    b = 1\n").body


def test_a_notebook_with_a_cell_too_deep_to_walk_is_judged_as_without_it(tmp_path):
    case = CORPUS / "070705gavrilovaanna_text_generation"
    before = forensics.analyze(case)
    run = tmp_path / "run"
    shutil.copytree(case, run)
    notebook = run / "text_generation.ipynb"
    data = json.loads(notebook.read_text(encoding="utf-8"))
    data["cells"].insert(1, {"cell_type": "code", "execution_count": 99, "metadata": {}, "outputs": [],
                             "source": _DEEP})
    notebook.write_text(json.dumps(data), encoding="utf-8")
    after = forensics.analyze(run)
    assert (after.status, after.first_incident and after.first_incident.kind) == (
        before.status, before.first_incident and before.first_incident.kind)
    assert after.timeline.series("loss").equals(before.timeline.series("loss"))  # read as before, not dropped
    assert len(before.timeline.series("loss")) > 0
