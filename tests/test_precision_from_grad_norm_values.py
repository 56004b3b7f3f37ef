"""The precision a run trained in, read from its logged grad_norm values where the arguments do not say it: the norm
of bfloat16 gradients is itself a bfloat16 number (8 significant bits), which no float32 value is by chance."""
from __future__ import annotations

import json

import numpy as np
import pytest

import forensics


def _run(tmp_path, grad_norms, args=None):
    log = [{"step": 10 * (i + 1), "epoch": 0.1 * (i + 1), "loss": 2.0 - 0.1 * i, "grad_norm": g,
            "learning_rate": 2e-4} for i, g in enumerate(grad_norms)]
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 10 * len(log), "log_history": log}))
    if args is not None:
        (tmp_path / "args.json").write_text(json.dumps(args))  # (ms-swift's arguments file)
    return forensics.analyze(tmp_path)


def _bf16(values):
    """The bfloat16 numbers nearest the values (the top 16 bits of their float32)."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32) & 0xFFFF0000
    return [float(v) for v in bits.view(np.float32)]


_NORMS = [1.2345, 1.0781, 0.7852, 0.9123, 0.6611, 0.5433, 0.6021, 0.5117, 0.4987, 0.5521]


@pytest.mark.parametrize("args", [None, {"fp16": False, "bf16": False}])
def test_bf16_grad_norms_give_bf16_whatever_flags_are_off(tmp_path, args):
    """isharpals-06 (AS38): a model loaded in bfloat16, SFTConfig with fp16 and bf16 both off, 20 grad_norms such as
    1.234375 and 0.78515625: trained in bf16, not fp32 as the flags alone say."""
    a = _run(tmp_path, _bf16(_NORMS), args)
    assert a.run_profile.precision == "bf16", a.run_profile.evidence
    assert "bfloat16" in a.run_profile.evidence["precision"]


def test_float32_grad_norms_leave_the_flags_to_say_it(tmp_path):
    a = _run(tmp_path, [float(np.float32(v)) for v in _NORMS], {"fp16": False, "bf16": False})
    assert a.run_profile.precision == "fp32"


def test_a_log_rounding_its_grad_norms_is_no_bf16_evidence(tmp_path):
    """0.5, 1.25, 0.75 ... are bfloat16 numbers too: a log that keeps two decimals says nothing of the dtype."""
    a = _run(tmp_path, [0.5, 1.25, 0.75, 1.5, 0.25, 1.0, 0.5, 0.75, 1.25, 0.5])
    assert a.run_profile.precision == "unknown"


def test_a_few_bf16_grad_norms_are_not_enough(tmp_path):
    a = _run(tmp_path, _bf16(_NORMS[:5]))
    assert a.run_profile.precision == "unknown"
