"""Tests of the notebook reader's kernel sessions (ingest/notebook.py) for the run profile.

A notebook's run profile comes from the kernel session that ran its judged training: the execution counts start
again at 1 when the kernel restarts, and an Unsloth 4-bit attempt of an earlier session configured nothing of a
full fp32 Trainer run after the restart. One session, out-of-order cells within it, and a notebook saved without
counts keep every cell that ran. Real case: user074's PRM notebook (tests/realworld)."""
from __future__ import annotations

import pytest

from support.notebook_sessions import (_BANNER, _SFT, _UNSLOTH_LOAD, _UNSLOTH_LORA, _analyzed, _full_training,
                                      _losses, _unsloth_attempt)


def test_a_restart_leaves_the_earlier_sessions_unsloth_4bit_load_out_of_a_full_fp32_trainer_profile(tmp_path):
    analysis = _analyzed(tmp_path, _unsloth_attempt((1, 2, 3)) + _full_training((1, 2)))
    profile = analysis.run_profile
    assert (profile.method, profile.precision, profile.framework) == ("full", "fp32", "hf_trainer"), profile.evidence


# Notebooks where every cell that ran configured the training: the Unsloth 4-bit LoRA stands
_ONE_SESSION = _unsloth_attempt((1, 2, 3)) + [(4, "trainer.train()\n", _losses())]
# the LoRA cell ran after the arguments cell below it (count 3 before count 2): no restart, same kernel
_OUT_OF_ORDER = [(1, _UNSLOTH_LOAD, _BANNER), (3, _UNSLOTH_LORA, ""), (2, _SFT, ""), (4, "trainer.train()\n", _losses())]
# the load cell shows count 5, the training 4: it ran again after the training, and (above it) before it too
_RUN_AGAIN_ABOVE = [(5, _UNSLOTH_LOAD, _BANNER), (2, _UNSLOTH_LORA, ""), (3, _SFT, ""), (4, "trainer.train()\n", _losses())]
_NO_COUNTS = _unsloth_attempt((None, None, None)) + _full_training((None, None))
# every cell showing count 1: no kernel's record (one kernel gives each count once), so no sessions to tell apart
_ONE_COUNT_EVERYWHERE = _unsloth_attempt((1, 1, 1)) + [(1, "trainer.train()\n", _losses())]


@pytest.mark.parametrize("cells", [_ONE_SESSION, _OUT_OF_ORDER, _RUN_AGAIN_ABOVE, _ONE_COUNT_EVERYWHERE],
                         ids=["one_session", "a_cell_run_again_out_of_order", "a_cell_above_run_again_after",
                              "one_count_on_every_cell_is_one_session"])
def test_cells_of_one_session_all_configure_the_training(tmp_path, cells):
    profile = _analyzed(tmp_path, cells).run_profile
    assert (profile.method, profile.framework) == ("qlora", "unsloth"), profile.evidence


def test_a_notebook_saved_without_counts_is_one_session(tmp_path):
    # every cell is read (Unsloth's banner, the SFTTrainer's code: framework unsloth, objective sft), while the method
    # is the last trainer's model's: gpt2 loaded whole, not the Unsloth model's 4-bit LoRA (fx-profwrong)
    profile = _analyzed(tmp_path, _NO_COUNTS).run_profile
    assert (profile.framework, profile.objective) == ("unsloth", "sft"), profile.evidence
    assert profile.method != "qlora", profile.evidence


def test_a_4bit_reload_after_the_training_in_the_same_session_configured_nothing_of_it(tmp_path):
    cells = _full_training((1, 2)) + [(3, _UNSLOTH_LOAD.replace("model, tokenizer", "infer_model, _"), "")]
    profile = _analyzed(tmp_path, cells).run_profile
    assert (profile.method, profile.precision) == ("full", "fp32"), profile.evidence
