"""Tests of `bisect` (checkpoints/bisection.py, cli.py): a checkpoint judged the way analyze
judges it.

From review day 11, checkpoints and bisect. A checkpoint is a good place to resume from only if its weights and its
saved optimizer state are finite AND it was saved before the first incident of the run's own log that harms the
weights (analyze's `last_good_checkpoint`)."""
from __future__ import annotations

import pytest
import forensics

from support.bisect_runs import _bisect, trainer_run


def test_bisect_calls_a_finite_checkpoint_saved_after_the_divergence_bad(tmp_path):
    run = trainer_run(tmp_path, diverge_from=35)
    result = _bisect(run)
    assert result["last_good"]["name"] == "checkpoint-30"
    assert result["first_bad"]["name"] == "checkpoint-40"
    assert result["first_bad"]["nonfinite_tensors"] == []
    assert "divergence at step 35" in result["first_bad"]["reason"]
    assert result["incident"] == {"kind": "divergence", "step": 35}
    assert forensics.analyze(run, workers=1).last_good_checkpoint.name == "checkpoint-30"  # the same rule


def test_bisect_calls_a_checkpoint_with_nan_optimizer_moments_bad(tmp_path):
    result = _bisect(trainer_run(tmp_path, optimizer_nan_from=50))
    assert (result["last_good"]["name"], result["first_bad"]["name"]) == ("checkpoint-40", "checkpoint-50")
    assert result["first_bad"]["optimizer_finite"] is False
    assert "optimizer state" in result["first_bad"]["reason"]


def test_bisect_of_a_healthy_run_of_the_same_shape_finds_no_bad_checkpoint(tmp_path):
    result = _bisect(trainer_run(tmp_path))
    assert result["first_bad"] is None and result["incident"] is None
    assert result["last_good"]["name"] == "checkpoint-60"


def test_bisect_refuses_endpoints_of_two_different_runs(tmp_path):
    trainer_run(tmp_path / "run_a")
    trainer_run(tmp_path / "run_b", diverge_from=35)
    with pytest.raises(forensics.errors.NoCheckpoints, match="another run folder"):
        forensics.bisect(tmp_path / "run_a" / "checkpoint-10", tmp_path / "run_b" / "checkpoint-60")


def test_bisect_refuses_a_log_file_as_an_endpoint(tmp_path):
    run = trainer_run(tmp_path)
    with pytest.raises(forensics.errors.NoCheckpoints, match="not a weight file"):
        forensics.bisect(run / "checkpoint-10", run / "checkpoint-60" / "trainer_state.json")


@pytest.mark.parametrize("inside", ["mp_rank_00", "mp_rank_00/model_optim_rng.pt"])
def test_bisect_from_megatron_rank_folders_probes_the_iterations_between(tmp_path, inside):
    from test_megatron_checkpoints import write_megatron_run

    run = write_megatron_run(tmp_path, iterations=(100, 200, 300, 400), nan_from=300, nan_tp=0)
    result = forensics.bisect(run / "iter_0000100" / inside, run / "iter_0000400" / inside)
    assert (result.last_good.name, result.first_bad.name) == ("iter_0000200", "iter_0000300")
    assert [c.name for c in result.candidates] == ["iter_0000100", "iter_0000200", "iter_0000300", "iter_0000400"]


def test_bisect_of_healthy_megatron_rank_folders_finds_no_bad_iteration(tmp_path):
    from test_megatron_checkpoints import write_megatron_run

    run = write_megatron_run(tmp_path, iterations=(100, 200, 300, 400), nan_from=10**6)
    result = forensics.bisect(run / "iter_0000100" / "mp_rank_00", run / "iter_0000400" / "mp_rank_00")
    assert result.first_bad is None and result.last_good.name == "iter_0000400"
    assert len(result.candidates) == 4


def test_bisect_says_why_a_truncated_endpoint_cannot_be_bisected_to(tmp_path):
    run = trainer_run(tmp_path)
    (run / "checkpoint-60" / "model.safetensors").write_bytes(b"")  # killed while writing
    with pytest.raises(forensics.errors.UnreadableFile, match="model.safetensors: truncated") as err:
        _bisect(run)  # an end that cannot be read leaves nothing to answer (review 13): a usage error naming it
    assert err.value.path.endswith("checkpoint-60")


def test_bisect_of_readable_checkpoints_leaves_nothing_out(tmp_path):
    from forensics.report.text import bisect_text

    assert "left out" not in bisect_text(_bisect(trainer_run(tmp_path)))
