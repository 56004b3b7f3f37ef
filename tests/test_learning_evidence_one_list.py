"""The healthy evidence (`learning_shown`) and the `no_learning_evidence` warning read one list of checks: on a log of
`learning_min_points` or more loss points (no reward, not pairwise, above the memorization level) the warning fires
exactly where no evidence is found. Each log below is shown learning by a different check of the list, and one flat
log by none."""
import pandas as pd
import pytest

from forensics.analyzers.learning_evidence import detect_no_learning_evidence, learning_shown
from forensics.config import Thresholds


def _series(values: dict) -> pd.Series:
    return pd.Series(list(values.values()), index=list(values), dtype="float64")


STEPS = range(25, 275, 25)
RUNS = {
    "the loss fell": {"loss": _series(dict(zip(STEPS, [2.0, 1.8, 1.7, 1.6, 1.55, 1.5, 1.45, 1.42, 1.4, 1.38])))},
    "lower at every evaluation": {"loss": _series({625: 3.0024, 1250: 2.9369, 1875: 2.9628}),
                                  "eval_loss": _series({625: 2.75918, 1250: 2.73026, 1875: 2.72422})},
    "the unlogged last window": {"loss": _series({100: 0.3723, 200: 0.4232, 300: 0.3327}),
                                 "train_loss": _series({380: 0.3511})},
    "a turn fell at every point": {"loss": _series(dict(zip(STEPS, [1.4081, 1.6626, 1.2143, 1.4444, 1.1765, 1.3656,
                                                                    1.1735, 1.4677, 1.1583, 1.5418])))},
    "nothing": {"loss": _series(dict(zip(STEPS, [1.40, 1.66, 1.42, 1.64, 1.39, 1.67, 1.41, 1.65, 1.40, 1.66])))},
}


@pytest.mark.parametrize("seen", RUNS)
def test_the_warning_fires_exactly_where_no_evidence_is_shown(seen):
    run = RUNS[seen]
    shown = learning_shown(run, Thresholds())
    warned = [f.kind for f in detect_no_learning_evidence(run, Thresholds())]
    assert (shown is None) == (seen == "nothing")
    assert warned == ([] if shown is not None else ["no_learning_evidence"])
