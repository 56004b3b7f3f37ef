"""The FP16-overflow cause where the NaN is one log's word against another's: with fp16 on and the loss NaN in one
log while another log of the same run holds finite values at those very steps, an overflow is only "possible" and the
evidence says the NaN is in one log only; where every log shows it, the overflow stays "likely".

The run is written as LLaMA-Factory leaves its output folder: trainer_state.json (the HF Trainer's), trainer_log.jsonl
(its own callback's, the loss rounded to 4 decimals) and training_args.yaml (the arguments it trained with).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from forensics.analysis import analyze

STEPS = range(5, 301, 5)
NAN_FROM = 250


def _loss(step: int) -> float:
    return 0.8 + 1.2 * math.exp(-step / 80) + 0.01 * math.sin(step * 1.7)


def _llamafactory_fp16_run(folder: Path, nan_in_trainer_state: bool) -> Path:
    """A LoRA SFT run in fp16 whose trainer_log.jsonl shows the loss NaN from NAN_FROM on; its trainer_state.json
    shows it too when `nan_in_trainer_state`, else finite values there."""
    def loss(step: int, nan: bool) -> float:
        return float("nan") if nan and step >= NAN_FROM else _loss(step)

    history = [{"epoch": round(s / 300, 4), "learning_rate": 5e-05, "loss": loss(s, nan_in_trainer_state), "step": s}
               for s in STEPS]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 300, "max_steps": 300, "logging_steps": 5,
                                                           "log_history": history}, indent=2))
    lines = [json.dumps({"current_steps": s, "total_steps": 300, "loss": round(loss(s, True), 4),
                         "learning_rate": 5e-05, "epoch": round(s / 300, 2)}) for s in STEPS]
    (folder / "trainer_log.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "training_args.yaml").write_text("stage: sft\nfinetuning_type: lora\nfp16: true\nlearning_rate: 5.0e-05\n")
    return folder


def _overflow(analysis):
    return next(c for c in analysis.causes if c.cause == "fp16_overflow")


def test_a_nan_in_one_log_only_makes_fp16_overflow_possible_not_likely(tmp_path):
    analysis = analyze(_llamafactory_fp16_run(tmp_path, nan_in_trainer_state=False))
    assert analysis.status == "broken" and analysis.first_incident.step == NAN_FROM
    cause = _overflow(analysis)
    assert cause.confidence == "possible"
    assert any("in one log only" in e and "trainer_state.json holds finite values" in e for e in cause.evidence)


def test_a_nan_every_log_shows_keeps_fp16_overflow_likely(tmp_path):
    analysis = analyze(_llamafactory_fp16_run(tmp_path, nan_in_trainer_state=True))
    assert analysis.status == "broken" and analysis.first_incident.step == NAN_FROM
    cause = _overflow(analysis)
    assert cause.confidence == "likely"
    assert not any("in one log only" in e for e in cause.evidence)
