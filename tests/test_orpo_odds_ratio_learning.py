"""Tests of the learning evidence of ORPO: an odds ratio that never leaves ln 2.

From the rules the lead mended from the day-6 corpus batches, each with the real case it came from
(tests/realworld)."""
from __future__ import annotations

import json

import forensics


def _orpo_state(folder, odds):
    folder.mkdir()
    history = [{"step": 10 * (i + 1), "loss": round(2.06 - 0.0006 * i, 4), "nll_loss": round(1.99 - 0.0006 * i, 4),
                "log_odds_ratio": o, "rewards/margins": 0.0002, "rewards/accuracies": 0.6 + 0.4 * i / len(odds),
                "rewards/chosen": -0.2, "rewards/rejected": -0.2002, "learning_rate": 5e-7}
               for i, o in enumerate(odds)]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 10 * len(odds), "log_history": history}))
    return folder


def test_an_orpo_odds_ratio_that_never_leaves_ln_2_is_no_evidence_of_preference_learning(tmp_path):
    """chtmp223's Mistral-7B ORPO at LR 5e-7: log_odds_ratio -0.6935 -> -0.6912 over 2,307 steps with margins of
    1e-4 (accuracies 0.8-1.0: the sign of tiny margins); only the NLL part fell. It was called healthy."""
    a = forensics.analyze(_orpo_state(tmp_path / "run", [round(-0.6935 + 0.00001 * i, 5) for i in range(230)]))
    assert a.status == "warning" and a.first_incident.kind == "no_learning_evidence", a.findings
    assert "odds-ratio term stayed at -ln 2" in a.first_incident.message


def test_an_orpo_odds_ratio_that_rises_off_ln_2_is_learning(tmp_path):
    a = forensics.analyze(_orpo_state(tmp_path / "run", [round(-0.6935 + 0.0015 * i, 4) for i in range(230)]))
    assert not any(f.kind == "no_learning_evidence" for f in a.findings), a.findings
