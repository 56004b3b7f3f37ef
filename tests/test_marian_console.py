"""Marian NMT's console (forensics/ingest/console_lines/marian.py): update and validation lines, and the run judged
and profiled on them.

From corpus batch AS70 (evilc3_marian_mt_train)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import forensics
from forensics.ingest.pretrain_lines import parse_line


CORPUS = Path(__file__).parent / "realworld"


def _falling(n: int, start: float, end: float, scale: float) -> list[float]:
    return [end + (start - end) * math.exp(-i / scale) for i in range(n)]


# --- Marian NMT ------------------------------------------------------------------------------------------------------

_MARIAN_UPDATE = ("[2022-12-02 09:48:30] Ep. 31 : Up. 14100 : Sen. 70,339 : Cost 0.63000858 : Time 49.71s : "
                  "10546.62 words/s : gNorm 1.3260")


def test_marian_update_and_validation_lines_are_read_at_their_update():
    update = parse_line(_MARIAN_UPDATE)
    assert (update.kind, update.step) == ("marian", 14100)
    assert dict(update.metrics) == pytest.approx({"loss": 0.63000858, "grad_norm": 1.326, "epoch": 31.0})
    valid = parse_line("[2022-12-02 10:01:48] [valid] Ep. 35 : Up. 16000 : ce-mean-words : 1.62407 : new best")
    assert (valid.kind, valid.step, valid.metrics) == ("marian_valid", 16000, (("eval_loss", 1.62407),))
    bleu = parse_line("[2022-12-02 10:47:25] [valid] Ep. 48 : Up. 22000 : bleu : 48.8603 : new best")
    assert bleu.metrics == (("eval_bleu", 48.8603),)
    ppl = parse_line("[2022-12-02 10:47:27] [valid] Ep. 48 : Up. 22000 : perplexity : 4.85349 : stalled 1 times "
                     "(last best: 4.78607)")
    assert ppl.metrics == (("eval_ppl", 4.85349),)


def _marian_log(folder: Path, valid: list[float]) -> forensics.Analysis:
    lines = ["[2022-12-02 09:46:22] [marian] Marian v1.11.0 f00d0621 2022-02-08 08:39:24 -0800",
             "[2022-12-02 09:46:22] [config] cost-type: ce-mean-words",
             "[2022-12-02 09:47:50] Parameter type float32, optimization type float32, casting types false"]
    for i, cost in enumerate(_falling(200, 4.0, 0.3, 70)):
        up = 100 * (i + 1)
        lines.append(f"[2022-12-02 10:00:00] Ep. {1 + up // 1000} : Up. {up} : Sen. {up * 50:,} : Cost {cost:.8f} : "
                     f"Time 40.00s : 12000.00 words/s : gNorm {1.2:.4f}")
        if up % 2000 == 0:
            lines.append(f"[2022-12-02 10:00:10] [valid] Ep. {1 + up // 1000} : Up. {up} : ce-mean-words : "
                         f"{valid[up // 2000 - 1]:.5f} : new best")
    (folder / "train.log").write_text("\n".join(lines) + "\n")
    return forensics.analyze(folder)


def test_a_marian_run_whose_valid_cross_entropy_rises_is_overfitting_with_its_profile(tmp_path):
    a = _marian_log(tmp_path, [3.0, 2.4, 2.0, 1.8, 1.7, 1.75, 1.8, 1.85, 1.9, 1.95])
    assert a.status == "warning" and (a.first_incident.kind, a.first_incident.step) == ("overfitting", 12000)
    profile = a.run_profile
    assert (profile.framework, profile.method, profile.precision) == ("marian", "full", "fp32")


def test_a_marian_run_whose_valid_cross_entropy_falls_is_healthy(tmp_path):
    assert _marian_log(tmp_path, [3.0, 2.4, 2.0, 1.8, 1.7, 1.65, 1.62, 1.6, 1.59, 1.58]).status == "healthy"


def test_the_real_marian_log_is_overfitting_at_22000():
    a = forensics.analyze(CORPUS / "evilc3_marian_mt_train")
    assert (a.first_incident.kind, a.first_incident.step) == ("overfitting", 22000)
    assert (a.run_profile.framework, a.run_profile.precision) == ("marian", "fp32")
