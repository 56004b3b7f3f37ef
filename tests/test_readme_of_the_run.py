"""Which README speaks of the run (ingest/run_config._readme_of_the_run): the one in the folder analyzed, a checkpoint's
model card, a project's README above its outputs - never a README of a library vendored beside the code (review 32a:
third_party/mingpt/README.md's "predict the next token" made a GPT-2 fine-tune's objective pre-training)."""
from __future__ import annotations

import json
from pathlib import Path

import forensics

_NEXT_TOKEN = "# minGPT\n\nThe model is trained to predict the next token of a sequence.\n"


def _run(root: Path, readme_at: str) -> str:
    state = {"global_step": 30, "log_history": [{"step": s, "loss": 3.0 - s / 20, "learning_rate": 5e-5}
                                                for s in (10, 20, 30)]}
    (root / "output").mkdir(parents=True)
    (root / "output" / "trainer_state.json").write_text(json.dumps(state))
    (root / "output" / "config.json").write_text(json.dumps({"architectures": ["GPT2LMHeadModel"],
                                                             "model_type": "gpt2"}))
    readme = root / readme_at
    readme.parent.mkdir(parents=True, exist_ok=True)
    readme.write_text(_NEXT_TOKEN)
    return forensics.analyze(root).run_profile.objective


def test_a_vendored_librarys_readme_does_not_set_the_runs_objective(tmp_path: Path):
    assert _run(tmp_path, "third_party/mingpt/README.md") == "unknown"


def test_the_projects_own_readme_above_its_outputs_still_does(tmp_path: Path):
    assert _run(tmp_path, "README.md") == "pretrain"


def test_a_saved_models_card_beside_its_config_still_speaks_of_the_run(tmp_path: Path):
    """The run's output folder kept with its config.json and card, its weights git-ignored and its log at the root:
    the card is the run's (review 32d: 'trained ... from scratch' there no longer read)."""
    (tmp_path / "train.log").write_text("".join(str({"loss": 3.0 - s / 20, "learning_rate": 5e-5, "epoch": s / 30})
                                                + "\n" for s in (10, 20, 30)))
    (tmp_path / "output").mkdir()
    (tmp_path / "output" / "config.json").write_text(json.dumps({"architectures": ["GPT2LMHeadModel"],
                                                                 "model_type": "gpt2"}))
    (tmp_path / "output" / "README.md").write_text(_NEXT_TOKEN)
    assert forensics.analyze(tmp_path).run_profile.objective == "pretrain"
