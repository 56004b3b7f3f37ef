"""The cause for isolated batches without gradient says "no loss scaler in the run" only where the run's precision
rules one out (bf16 or fp32); where the precision is not known the log's silence is all there is, and a DeepSpeed fp16
scaler logs a skipped step's grad_norm as 0.

Audit of the causes against the runs' own data (session 30): ashish1932_Chatbot and wstern1234_wee_model (precision
unknown: wstern1234's training_args.bin is a Git LFS pointer) were told "no loss scaler in the run to skip them"."""
from __future__ import annotations

from forensics.causes import infer_causes
from forensics.config import RunConfig, Thresholds
from forensics.findings import Finding
from forensics.profile import RunProfile
from tests.test_causes import by_id, timeline

STEPS = range(10, 210, 10)
ZERO_AT = (110, 190)


def _run():
    tl = timeline(loss={s: 1.5 for s in STEPS}, grad_norm={s: 0.0 if s in ZERO_AT else 3.0 for s in STEPS},
                  learning_rate={s: 5e-5 for s in STEPS})
    found = Finding("no_learning_signal", "warning", ZERO_AT[0], "grad_norm is exactly 0 at 2 isolated steps",
                    end_step=ZERO_AT[-1], metric="grad_norm",
                    evidence={"steps": list(ZERO_AT), "count": len(ZERO_AT), "zero_steps": list(ZERO_AT),
                              "vanishing_steps": [], "no_gradient_batches": True})
    return tl, [found]


def _evidence(precision: str) -> str:
    tl, findings = _run()
    profile = RunProfile(method="full", objective="sft", precision=precision)
    cause = by_id(infer_causes(RunConfig(), tl, findings, [], Thresholds(), profile))["zero_loss_zero_grad"]
    return " ".join(cause.evidence)


def test_an_unknown_precision_is_not_said_to_have_had_no_loss_scaler():
    said = _evidence("unknown")
    assert "no loss scaler in the run" not in said, said
    assert "not known" in said, said


def test_an_fp32_run_is_still_said_to_have_had_no_loss_scaler():
    """Guard: Arun-vEDU's fp32 DPO and sogmgm's bf16 SFT have no scaler to skip a step."""
    for precision in ("fp32", "bf16"):
        said = _evidence(precision)
        assert "no loss scaler in the run" in said, said


def test_an_fp16_run_is_told_its_scaler_may_have_skipped_them():
    said = _evidence("fp16")
    assert "no loss scaler in the run" not in said and "fp16" in said and "not known" not in said, said
