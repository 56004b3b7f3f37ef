"""The last good checkpoint is the last one saved before the first incident that harms the weights.

A checkpoint saved after a divergence began is finite, but resuming from it resumes the
divergence: it is listed as "finite, but after the incident at step N", never as safe.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import forensics

SAMPLES = Path(__file__).resolve().parents[1] / "sample_runs"


@pytest.fixture
def diverging_run(tmp_path):
    from safetensors.numpy import save_file

    losses = [3.0, 2.6, 2.3, 2.1, 2.0, 2.4, 3.5, 5.0, 7.2, 9.9, 12.5, 15.0]  # leaves its low after step 50
    history = [{"step": 10 * (i + 1), "loss": v, "grad_norm": 1.0, "learning_rate": 1e-4} for i, v in enumerate(losses)]
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 120, "log_history": history}))
    for step in (20, 40, 80, 120):
        folder = tmp_path / f"checkpoint-{step}"
        folder.mkdir()
        save_file({"model.layers.0.w": np.ones(4, np.float32)}, str(folder / "model.safetensors"))
    return tmp_path


def test_a_finite_checkpoint_after_the_divergence_is_not_the_last_good_one(diverging_run):
    a = forensics.analyze(diverging_run, workers=1)
    (div,) = [f for f in a.findings if f.kind == "divergence"]
    assert 50 <= div.step <= 70
    assert a.last_good_checkpoint.name == "checkpoint-40"
    after = {c["name"]: c["after_incident_step"] for c in a.to_dict()["checkpoints"]}
    assert after == {"checkpoint-20": None, "checkpoint-40": None, "checkpoint-80": div.step,
                     "checkpoint-120": div.step}


def test_damaged_weights_are_caused_by_the_nonfinite_gradients_not_by_the_logging_filter():
    a = forensics.analyze(SAMPLES / "nan_masked", workers=1)
    by_kind = {f.kind: f for f in a.findings}
    root = by_kind["nonfinite_metric"]
    assert root.metric == "grad_norm"
    assert by_kind["masked_nan_loss"].caused_by == root.key   # the filter hid the NaN ...
    assert by_kind["nonfinite_weights"].caused_by == root.key  # ... the gradients did the damage
