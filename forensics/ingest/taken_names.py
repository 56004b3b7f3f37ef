"""A JSON-lines log's loss and reward named for how they were taken, read as the timeline's `loss` and `reward`.

The same rule as a CSV table's and a console's (metric_names.is_taken_training_loss): where no key is the loss, one
named for how the loss was taken (`avg_loss`, `running_loss`) is. A reward so named (`avg_reward`, `mean_reward`:
metric_names.is_taken_reward) is the RL reward only where the records carry the group it averages - the completions
the loop sampled and a reward for each (`"completions": [...], "rewards": [...]`, AS119: WFJKK_vlm-spatial-bottleneck's
hand-written GRPO loop): a reward model's trainer also logs a mean reward (TRL's RewardTrainer: `mean_reward`, its
model's mean score), but it samples nothing.
"""
from __future__ import annotations

from ..metric_names import is_taken_reward, is_taken_training_loss
from ..timeline import canonical_metric
from ._config_keys import is_number

# What a loop names the group of answers it sampled for one prompt, and the rewards it gave them
_GROUP_TEXTS = ("completions", "responses", "generations", "samples")
_GROUP_REWARDS = "rewards"


def with_taken_names(entries: list[dict]) -> list[dict]:
    """The entries, a taken loss renamed `loss` and a taken reward `reward` (module docstring), where no key is that
    already."""
    keys = list(dict.fromkeys(k for e in entries for k in e))  # in the order first logged
    names = {canonical_metric(k) for k in keys}
    rename = {}
    if "loss" not in names:
        rename[_first(keys, is_taken_training_loss)] = "loss"
    if "reward" not in names and any(_sampled_group(e) for e in entries):
        rename[_first(keys, is_taken_reward)] = "reward"
    rename.pop(None, None)
    if not rename:
        return entries
    return [{rename.get(k, k): v for k, v in e.items()} for e in entries]


def _first(keys: list[str], taken) -> str | None:
    return next((k for k in keys if taken(k)), None)


def _sampled_group(entry: dict) -> bool:
    """Whether a record carries the answers a loop sampled and a reward for each: a list of texts and a list of as
    many numbers."""
    rewards = entry.get(_GROUP_REWARDS)
    if not isinstance(rewards, list) or not rewards or not all(is_number(r) for r in rewards):
        return False
    return any(isinstance(texts := entry.get(k), list) and len(texts) == len(rewards)
               and all(isinstance(t, str) for t in texts) for k in _GROUP_TEXTS)
