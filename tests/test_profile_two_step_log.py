"""The run profile of a two-step log (forensics/profile): at ln 50257 a fresh model, at a fine-tune's level no start.

From batch AS64 (tests/realworld/PROVENANCE.md: amjadmajid_llm_toaster)."""
from __future__ import annotations


import forensics


def _short_log(tmp_path, losses: list[float]):
    (tmp_path / "metrics.csv").write_text("step,max_iter,loss,lr\n" + "".join(
        f"{i},{len(losses)},{v},0.0006\n" for i, v in enumerate(losses, 1)))
    return forensics.analyze(tmp_path).run_profile


def test_a_two_step_log_at_the_gpt2_guess_is_a_fresh_model(tmp_path):
    """amjadmajid_llm_toaster: 10.818 and 10.800, ln 50257 = 10.825."""
    profile = _short_log(tmp_path, [10.818359375, 10.7998046875])
    assert (profile.method, profile.objective) == ("full", "pretrain")


def test_a_two_step_log_at_a_fine_tunes_level_says_nothing_of_the_start(tmp_path):
    profile = _short_log(tmp_path, [2.31, 2.25])
    assert (profile.method, profile.objective) == ("unknown", "unknown")
