"""The run profile of a plain falling trainer_state loss under a RunConfig holding given values: what those values
alone make of the profile."""
from __future__ import annotations

import pandas as pd

from forensics.config import RunConfig
from forensics.profile import run_profile
from forensics.timeline import LogRecords, build_timeline


def profile_with(**values):
    """`values` {key: (value, source)} added to a RunConfig; the profile of ten falling losses under it."""
    timeline = build_timeline([LogRecords(source="trainer_state.json", format="trainer_state", frame=pd.DataFrame(
        {"step": list(range(1, 11)), "metric": "loss", "value": [2.0 - s / 100 for s in range(1, 11)],
         "wall_time": float("nan")}))])
    config = RunConfig()
    for key, (value, source) in values.items():
        config.add(key, value, source)
    return run_profile(None, config, timeline, [])
