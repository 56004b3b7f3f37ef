"""Tests of the notebook reader's kernel sessions (ingest/notebook.py): cells placed out of order.

From the day-11 review, second batch."""
from __future__ import annotations

from support.notebook_sessions import (_FULL_LOAD, _SFT, _TRAINER, _UNSLOTH_LOAD, _BANNER, _analyzed,
                                      _losses, _unsloth_attempt)


_ENV = "import os\nos.environ['WANDB_DISABLED'] = 'true'\n"


def _profile(tmp_path, cells):
    profile = _analyzed(tmp_path, cells).run_profile.to_dict()
    return {key: profile[key] for key in ("method", "objective", "framework", "precision", "model_params")}


_UNSLOTH_QLORA = {"method": "qlora", "objective": "sft", "framework": "unsloth", "precision": "fp16",
                  "model_params": 8_000_000_000}


def test_an_environment_cell_run_first_after_a_restart_below_the_loader_keeps_the_loader_in_the_session(tmp_path):
    cells = [(2, _UNSLOTH_LOAD, _BANNER), (3, _SFT, ""), (1, _ENV, ""), (4, "trainer.train()\n", _losses())]
    assert _profile(tmp_path, cells) == _UNSLOTH_QLORA


def test_an_older_sessions_cell_above_the_count1_cell_counted_above_the_training_is_left_out(tmp_path):
    """Counts 7 (an older session's fp32 trainer, never re-run), then the session's 1, 2, 3 and the training at 4:
    the 7 is not this session's (it would have run after the training)."""
    older = ("from transformers import TrainingArguments\n"
             "args = TrainingArguments(output_dir='o', bf16=True)\n")
    cells = [(7, older, "")] + _unsloth_attempt((1, 2, 3)) + [(4, "trainer.train()\n", _losses())]
    assert _profile(tmp_path, cells)["precision"] == "fp16"


def test_an_older_sessions_cells_above_a_later_cell_stay_out_of_a_session_with_counts_missing(tmp_path):
    """The older session's Unsloth load and LoRA (counts 3, 4), its inference cell (9), then after a restart the
    full fine-tune's load (1) and training (5; counts 2-4 went to cells since deleted): the 9 above the count 1
    ends the walk, the 3 and 4 beyond it are not the fine-tune's."""
    cells = [(3, _UNSLOTH_LOAD, _BANNER), (4, _SFT, ""), (9, "model.generate(**inputs)\n", ""),
             (1, _FULL_LOAD, ""), (5, _TRAINER, _losses())]
    profile = _profile(tmp_path, cells)
    assert (profile["method"], profile["precision"]) == ("full", "fp32")


def test_a_session_run_from_the_top_keeps_its_profile(tmp_path):
    cells = [(1, _ENV, "")] + [(2, _UNSLOTH_LOAD, _BANNER), (3, _SFT, ""), (4, "trainer.train()\n", _losses())]
    assert _profile(tmp_path, cells) == _UNSLOTH_QLORA


def test_counts_no_kernel_gives_make_the_notebook_one_session(tmp_path):
    """true, -3 and 0 are no kernel's counts: every cell is kept, as in a notebook saved without counts."""
    cells = [(True, _UNSLOTH_LOAD, _BANNER), (-3, _SFT, ""), (0, "trainer.train()\n", _losses())]
    assert _profile(tmp_path, cells) == _UNSLOTH_QLORA
