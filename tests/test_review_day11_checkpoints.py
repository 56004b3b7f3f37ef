"""Review day 11, checkpoints and bisect: bisect judges a checkpoint the way analyze does.

A checkpoint is a good place to resume from only if its weights and its saved optimizer state are finite
AND it was saved before the first incident of the run's own log that harms the weights (analyze's
`last_good_checkpoint`). Runs are built in tmp_path the way HF Trainer writes them: `checkpoint-N/`
with model.safetensors, a trainer_state.json holding the log up to N, and an optimizer.pt written by
torch.save from a real torch AdamW.
"""
from __future__ import annotations

import json
import math

import pytest

from support.checkpoint_files import qwen2_state, save_tensors
import forensics
from forensics.report.text import analysis_text

torch = pytest.importorskip("torch")

STEPS = (10, 20, 30, 40, 50, 60)


def _loss(step: int, diverge_from: int | None) -> float:
    """A falling loss with batch noise; from `diverge_from` on it rises many-fold and stays up."""
    loss = 3.0 * 0.99 ** step + 0.05 * math.sin(step * 1.7)
    if diverge_from is not None and step >= diverge_from:
        loss *= 3.0 + (step - diverge_from) * 0.4
    return loss


def _adamw_state(state: dict, nan_moment: bool) -> dict:
    """The state_dict of a real torch AdamW that took one step over these weights."""
    params = [torch.nn.Parameter(t.clone()) for t in state.values() if t.is_floating_point()]
    optimizer = torch.optim.AdamW(params, lr=1e-4)
    for p in params:
        p.grad = torch.full_like(p, 0.01)
    optimizer.step()
    saved = optimizer.state_dict()
    if nan_moment:
        saved["state"][0]["exp_avg_sq"].view(-1)[0] = float("nan")
    return saved


def trainer_run(root, diverge_from=None, optimizer_nan_from=None):
    """checkpoint-10 ... checkpoint-60 of one run, each with the log up to its step (every step logged)."""
    for i, step in enumerate(STEPS):
        folder = root / f"checkpoint-{step}"
        state = qwen2_state(seed=i)
        save_tensors(folder / "model.safetensors", state)
        history = [{"step": s, "epoch": s / 60, "loss": _loss(s, diverge_from), "grad_norm": 1.0 + 0.1 * (s % 3),
                    "learning_rate": 1e-4} for s in range(1, step + 1)]
        (folder / "trainer_state.json").write_text(json.dumps({"global_step": step, "log_history": history}))
        nan = optimizer_nan_from is not None and step >= optimizer_nan_from
        torch.save(_adamw_state(state, nan), folder / "optimizer.pt")
    return root


def _bisect(root):
    return forensics.bisect(root / "checkpoint-10", root / "checkpoint-60").to_dict()


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


class _Reduce:
    """Pickles as the call `fn(*args)`: what a malicious file holds (written here, never executed on read)."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def _groups() -> list:
    return _adamw_state(qwen2_state(), nan_moment=False)["param_groups"]


@pytest.mark.parametrize("state", ["empty", "refused"])
def test_an_optimizer_state_without_readable_moments_is_not_called_finite(tmp_path, state):
    run = trainer_run(tmp_path)
    held = {} if state == "empty" else {0: _Reduce(print, "never run")}
    torch.save({"state": held, "param_groups": _groups()}, run / "checkpoint-60" / "optimizer.pt")
    a = forensics.analyze(run, workers=1)
    last = a.checkpoints[-1]
    assert last.name == "checkpoint-60" and last.optimizer_finite is None
    assert any(s.path.endswith("checkpoint-60/optimizer.pt") and "not checked" in s.reason for s in a.skipped)
    assert "holds no moments" in " ".join(analysis_text(a).split())
    probe = _bisect(run)["probed"][0]
    assert probe["name"] == "checkpoint-60" and "optimizer state not checked" in probe["reason"]


def test_a_real_adamw_state_is_finite_and_nothing_is_said_of_it(tmp_path):
    a = forensics.analyze(trainer_run(tmp_path), workers=1)
    assert [c.optimizer_finite for c in a.checkpoints] == [True] * len(STEPS)
    assert not any("optimizer.pt" in s.path for s in a.skipped)


def test_a_training_args_pickle_that_is_no_trainingarguments_is_named_in_skipped(tmp_path):
    run = trainer_run(tmp_path)
    torch.save(_Reduce(print, "never run"), run / "training_args.bin")
    skipped = forensics.analyze(run, workers=1).skipped
    assert [s.path for s in skipped if s.path.endswith("training_args.bin")] == [str(run / "training_args.bin")]


def test_a_real_training_args_bin_adds_no_skipped_line(tmp_path):
    transformers = pytest.importorskip("transformers")
    run = trainer_run(tmp_path)
    torch.save(transformers.TrainingArguments(output_dir=str(run), report_to=[]), run / "training_args.bin")
    assert not [s for s in forensics.analyze(run, workers=1).skipped if s.path.endswith("training_args.bin")]


def _weights_bin(folder, writer: str):
    import pickle

    folder.mkdir(parents=True)
    state = {"model.layers.0.mlp.weight": torch.ones(4, 4)}
    if writer == "pickle.dump":
        with open(folder / "pytorch_model.bin", "wb") as fh:
            pickle.dump(state, fh, protocol=4)
    else:
        torch.save(state, folder / "pytorch_model.bin", _use_new_zipfile_serialization=False,
                   pickle_protocol=4 if writer == "legacy protocol 4" else 2)
    return folder


@pytest.mark.parametrize("writer", ["pickle.dump", "legacy protocol 4"])
def test_a_protocol_4_pickle_bin_is_refused_in_plain_words_without_torchs_warning(tmp_path, writer):
    import warnings

    from forensics.checkpoints.scan import quick_check

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        info = quick_check(_weights_bin(tmp_path / "checkpoint-10", writer))
    assert info.status == "unreadable"
    assert "it is a pickle of protocol 4 or later" in info.reason
    assert not [w for w in caught if "pickle protocol" in str(w.message)]


def test_a_legacy_torch_save_bin_of_protocol_2_reads_without_a_warning(tmp_path):
    import warnings

    from forensics.checkpoints.scan import quick_check

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        info = quick_check(_weights_bin(tmp_path / "checkpoint-10", "legacy protocol 2"))
    assert info.status == "ok" and not [w for w in caught if "pickle protocol" in str(w.message)]


def _bin_run(root):
    """A run whose checkpoints hold pytorch_model.bin (torch.save), with a falling loss logged."""
    for i, step in enumerate(STEPS):
        folder = root / f"checkpoint-{step}"
        folder.mkdir(parents=True)
        torch.save(qwen2_state(seed=i), folder / "pytorch_model.bin")
        history = [{"step": s, "loss": _loss(s, None), "learning_rate": 1e-4} for s in range(1, step + 1)]
        (folder / "trainer_state.json").write_text(json.dumps({"global_step": step, "log_history": history}))
    return root


def test_without_torch_a_healthy_verdict_says_the_bin_checkpoints_were_not_read(tmp_path, monkeypatch):
    import sys

    run = _bin_run(tmp_path)
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    text = " ".join(analysis_text(forensics.analyze(run, workers=1)).split())
    assert "(6 checkpoints not read: install torch)" in text
    assert "6 checkpoints not read: install torch to read .bin/.pt" in text
    assert "checkpoints checked, all finite" not in text


def test_with_torch_the_same_bin_checkpoints_are_checked_and_nothing_is_said_of_torch(tmp_path):
    text = " ".join(analysis_text(forensics.analyze(_bin_run(tmp_path), workers=1)).split())
    assert "6 checkpoints checked, all finite" in text and "install torch" not in text
