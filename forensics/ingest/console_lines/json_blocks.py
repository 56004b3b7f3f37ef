"""A loop's step metrics printed as pretty-printed JSON objects, spread over indented lines (`json.dumps(record,
indent="\t")`), between the console's other prints. BuonHobo_fake-gpt's TRL PPOTrainer loop prints each generated
sample as such an object with its `"reward"`, and after each PPO step one for the step:

    {
    	"reward_type": "RangeReward",
    	"batch_number": 1,
    	"attempt": "lora",
    	"Kl": 48.67081069946289,
    	"policy_loss": -0.0644167885184288,
    	...
    	"mean_reward": 0.05435210093855858,
    	"instances": [
    		{
    			"id": 60,
    			...
    			"reward": -0.1388153038775379,
    		},
    		...
    	]
    }

An object opens with a line that is only `{` and ends at the next line that is only `}` (what json.dumps writes at
the top level), read whole with json.loads (`_MAX_CHARS` at most: a longer block is left unread). It is a step's record
where it names its step (`_STEP_KEYS`: its batch number) and holds a number beside it; a sample's object names none
and is left out (its reward is read again in the step's list). The step's numbers are its metrics (`mean_reward` ->
reward, `Kl` -> kl); a list of the step's samples, each with a `reward`, gives their mean where the step names none,
and their spread, `step_reward_std` (as `bare_epochs` reads a printed list of rewards). Each step becomes a `StepLine`
of kind "json_block" at its step.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

from ...timeline import canonical_metric
from .fields import StepLine

# the text prints such an object: a line that is only `{`, then an indented `"key":`
NEEDLE = re.compile(r'(?m)^\{[ \t]*\r?\n[ \t]+"[^"\n]{1,80}"[ \t]*:')
_STEP_KEYS = ("batch_number", "global_step", "step", "iteration", "iter")
_NAMES = {"mean_reward": "reward", "reward_mean": "reward", "kl": "kl"}
_MAX_CHARS = 8 << 20


def json_block_reader(text: str) -> JsonBlocks | None:
    """A reader of the console's pretty-printed JSON objects (module docstring) where it prints one; else None."""
    return JsonBlocks() if "{" in text and NEEDLE.search(text) else None


@dataclass
class JsonBlocks:
    """`owns(line)`: a line of a top-level JSON object (its opening `{` line, the lines inside, its closing `}`);
    `feed(line)` returns the step the closing line completes."""

    lines: list = field(default_factory=list)  # the object being read, from its `{` line
    chars: int = 0

    def owns(self, line: str) -> bool:
        return bool(self.lines) or line.rstrip() == "{"

    def feed(self, line: str) -> StepLine | None:
        self.lines.append(line)
        self.chars += len(line) + 1
        if line.rstrip() != "}" and self.chars <= _MAX_CHARS:
            return None
        block, self.lines, self.chars = "\n".join(self.lines), [], 0
        return _step_record(block) if len(block) <= _MAX_CHARS else None

    def close(self) -> None:
        return None


def _step_record(block: str) -> StepLine | None:
    try:
        record = json.loads(block)
    except (ValueError, RecursionError):
        return None
    step_key = next((k for k in _STEP_KEYS if isinstance(record, dict) and _is_count(record.get(k))), None)
    if step_key is None:
        return None
    metrics = dict(_numbers(record, step_key))
    metrics.update(_sample_rewards(record, has_mean="reward" in metrics))
    return StepLine("json_block", record[step_key], None, tuple(metrics.items())) if metrics else None


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _numbers(record: dict, step_key: str):
    for key, value in record.items():
        if key != step_key and isinstance(value, (int, float)) and not isinstance(value, bool):
            yield _NAMES.get(key.lower(), canonical_metric(key)), float(value)


def _sample_rewards(record: dict, has_mean: bool) -> dict[str, float]:
    """The step's samples' rewards (a list of objects, each with a number `reward`): their mean as `reward` where the
    step names none, and their spread as `step_reward_std` (two or more)."""
    samples = next((v for v in record.values() if isinstance(v, list) and v and all(
        isinstance(s, dict) and isinstance(s.get("reward"), (int, float)) for s in v)), None)
    if samples is None:
        return {}
    rewards = [float(s["reward"]) for s in samples]
    mean = math.fsum(rewards) / len(rewards)
    found = {} if has_mean else {"reward": mean}
    if len(rewards) >= 2:
        found["step_reward_std"] = math.sqrt(math.fsum((r - mean) ** 2 for r in rewards) / (len(rewards) - 1))
    return found
