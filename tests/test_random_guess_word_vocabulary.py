"""The random-guess range of a first loss (forensics/profile/losses.py) reaches a word-level softmax larger than any
tokenizer's.

From corpus batch AS70 (eric-haibin-lin_lm)."""
from __future__ import annotations

import math
from pathlib import Path


import forensics
from forensics.profile.losses import random_guess_range


CORPUS = Path(__file__).parent / "realworld"


# --- a word-level softmax's guess ------------------------------------------------------------------------------------

def test_the_random_guess_range_reaches_a_million_word_softmax():
    low, high = random_guess_range(None)
    assert low == 9.0 and math.log(793_470) < high < 14.0


def test_a_first_loss_at_ln_of_the_one_billion_word_vocabulary_is_a_model_from_scratch():
    a = forensics.analyze(CORPUS / "eric-haibin-lin_lm")
    assert (a.run_profile.method, a.run_profile.objective) == ("full", "pretrain")
