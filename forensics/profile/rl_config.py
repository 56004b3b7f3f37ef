"""The profile's objective from a run config that sets a policy-gradient recipe: a hand-written GRPO / PPO loop (or a
framework whose arguments class is not named) saves its group size, its ratio clip and its KL weight, keys no
supervised or pairwise trainer has.

A group of sampled completions per prompt (`group_size`, TRL's `num_generations`, OpenRLHF's
`n_samples_per_prompt`, verl's `rollout.n`) is what GRPO normalises its advantages over; with it, a PPO-style ratio
clip (`clip_eps`, TRL's `epsilon`, OpenRLHF's `eps_clip`, verl's `clip_ratio`, TRL PPO's `cliprange`) or a KL weight
to the reference (`kl_coef`, TRL's `beta`, OpenRLHF's `init_kl_coef`, verl's `kl_loss_coef`) is GRPO's recipe. A
value-loss setting (`vf_coef`, `cliprange_value`, OpenRLHF's `value_clip`) beside the clip is PPO's critic. Each key
set must come from one file: a group size alone is many things (a quantization's, a data grouping's).
"""
from __future__ import annotations

from ..config import RunConfig
from ..timeline import Timeline

_GROUP_KEYS = ("group_size", "num_generations", "n_samples_per_prompt", "num_samples_per_prompt", "rollout.n")
_CLIP_KEYS = ("clip_eps", "clip_epsilon", "epsilon", "eps_clip", "clip_ratio", "cliprange", "clip_range")
_KL_KEYS = ("kl_coef", "beta", "init_kl_coef", "kl_loss_coef", "kl_beta")
_VALUE_KEYS = ("vf_coef", "cliprange_value", "value_clip", "vf_clip")
# sections whose keys are no training loop's: a model's quantization, an adapter, DeepSpeed, a checkpoint's counters
_OTHER_SECTIONS = ("quant.", "adapter.", "ds.", "state.")


def from_rl_config(config: RunConfig, timeline: Timeline, names, evidence: dict, adapter: bool,
                   metrics: set) -> tuple[str, str | None] | None:
    """("rl", "grpo" or "ppo") where one of the run's config files sets a policy-gradient recipe, else None."""
    found = rl_recipe(config)
    if found is None:
        return None
    evidence["objective"] = f"{found[1]}: RL fine-tuning"
    return "rl", found[0]


def rl_recipe(config: RunConfig) -> tuple[str, str] | None:
    """(algorithm, what says it) where one of the run's config files sets a policy-gradient recipe, else None."""
    for source, keys in _keys_by_source(config).items():
        found = _recipe(keys)
        if found is not None:
            algorithm, used = found
            said = ", ".join(f"{_name_of(key)} {keys[key]}" for key in used)
            what = ", ".join(_WHAT[_kind_of(key)] for key in used)
            return algorithm, f"{said} ({source}): a policy-gradient loop's {what}: {algorithm.upper()}'s recipe"
    return None


_WHAT = {"group": "completions sampled in groups", "clip": "ratio clip", "kl": "KL weight to a reference",
         "value": "value loss"}


def _keys_by_source(config: RunConfig) -> dict[str, dict[str, object]]:
    """{source: {full key: value}} of the numeric keys of `_GROUP_KEYS`, `_CLIP_KEYS`, `_KL_KEYS`, `_VALUE_KEYS`,
    each read from every file that set it (a key's first value may be another file's)."""
    out: dict[str, dict[str, object]] = {}
    # ms-swift's RLHFArguments hold every recipe's defaults (num_generations 8, vf_coef, cliprange) whatever its
    # rlhf_type: such a file says its stage by name (objective._STAGES), not by these keys
    every_recipe = {value.source for value in config.values.get("rlhf_type", [])}
    for key, seen in config.values.items():
        if key.startswith(_OTHER_SECTIONS) or _kind_of(key) is None:
            continue
        for value in seen:
            if isinstance(value.value, (int, float)) and not isinstance(value.value, bool) \
                    and value.source not in every_recipe:
                out.setdefault(value.source, {}).setdefault(key, value.value)
    return out


def _kind_of(key: str) -> str | None:
    """Which of the recipe's settings a config key is, by its last dotted part (`rollout.n` by its last two)."""
    for kind, names in _KINDS:
        if any(key == name or key.endswith("." + name) for name in names):
            return kind
    return None


def _name_of(key: str) -> str:
    """The recipe's name a config key ends in (`model.group_size` -> `group_size`), as the evidence says it."""
    return next(name for _, names in _KINDS for name in names if key == name or key.endswith("." + name))


_KINDS = (("group", _GROUP_KEYS), ("clip", _CLIP_KEYS), ("kl", _KL_KEYS), ("value", _VALUE_KEYS))


def _recipe(keys: dict[str, object]) -> tuple[str, list[str]] | None:
    """(algorithm, the keys that tell it) for one file's keys, or None."""
    by_kind: dict[str, list[str]] = {}
    for key in keys:
        by_kind.setdefault(_kind_of(key), []).append(key)
    groups = [key for key in by_kind.get("group", []) if isinstance(keys[key], int) and keys[key] >= 2]
    clips, kls, values = by_kind.get("clip", []), by_kind.get("kl", []), by_kind.get("value", [])
    if values and clips:
        return "ppo", clips[:1] + values[:1] + kls[:1]
    if groups and (clips or kls):  # (a group of one has nothing to be relative to)
        return "grpo", groups[:1] + clips[:1] + kls[:1]
    return None
