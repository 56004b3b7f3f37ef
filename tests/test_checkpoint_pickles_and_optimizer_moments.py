"""Tests of the checkpoint readers (checkpoints/): optimizer moments, training_args.bin and
.bin pickles, with and without torch.

From review day 11, checkpoints and bisect. Runs are built in tmp_path the way HF Trainer writes them:
`checkpoint-N/` with model.safetensors, a trainer_state.json holding the log up to N, and an optimizer.pt written
by torch.save from a real torch AdamW."""
from __future__ import annotations

import json

import pytest

from support.checkpoint_files import qwen2_state
import forensics
from forensics.report.text import analysis_text

from support.bisect_runs import STEPS, _adamw_state, _bisect, _loss, torch, trainer_run


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
