"""Tests of analyzers/learning_evidence.py: a loss swinging by turns.

From the session-8 judging rules, each from a real run the corpus holds (tests/realworld/PROVENANCE.md)."""
from __future__ import annotations

import pandas as pd
from forensics.config import Thresholds


def _by_turns(first: float, high: float, low: float, n: int = 20) -> dict:
    losses = [first] + [high if i % 2 else low for i in range(1, n)]
    return {"loss": pd.Series(losses, index=range(25, 25 * n + 1, 25), dtype="float64")}


def test_a_loss_swinging_by_turns_after_a_high_start_learned():
    """AhmedNabil03/llama2-7b-finetune-dolly (group_by_length): 2.43 at the first point, then about 1.27 and 0.85 by
    turns: the swing's steps read as noise so large that the fall from 2.43 was called noise."""
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence
    assert detect_no_learning_evidence(_by_turns(2.4265, 1.136, 0.93), Thresholds()) == []


def test_a_loss_swinging_by_turns_around_one_level_has_no_evidence_of_learning():
    """MuQlanyu/2025-Project-178's SFT: 1.30, 1.24, 1.30, 1.25 ... by turns over three epochs, its pairs flat."""
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence
    (found,) = detect_no_learning_evidence(_by_turns(1.305, 1.244, 1.30), Thresholds())
    assert found.kind == "no_learning_evidence"
