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
the top level), read whole with json.loads (`_MAX_CHARS` at most: a longer block is left unread); the objects are found
before the lines are fed, so an opening brace of anything else (a notebook's output) takes no line from the other
readers (titi-devv_mistral7b-finetuned). It is a step's record
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
from dataclasses import dataclass

from ...timeline import canonical_metric
from .._config_keys import is_number
from .fields import LINE_BREAK, StepLine

# the text prints such an object: a line that is only `{`, then an indented `"key":`
NEEDLE = re.compile(r'(?m)^\{[ \t]*\r?\n[ \t]+"[^"\n]{1,80}"[ \t]*:')
_STEP_KEYS = ("batch_number", "global_step", "step", "iteration", "iter")
_NAMES = {"mean_reward": "reward", "reward_mean": "reward", "kl": "kl"}
_MAX_CHARS = 8 << 20


def json_block_reader(text: str) -> JsonBlocks | None:
    """A reader of the console's pretty-printed JSON objects (module docstring) where it prints one; else None."""
    if "{" not in text or not NEEDLE.search(text):
        return None
    return JsonBlocks(_objects(LINE_BREAK.split(text)))


def _objects(lines: list[str]) -> list[tuple[int, StepLine | None] | None]:
    """For each line that is only `{`, in order: (the object's length in lines, its step's record or None) where the
    lines from it to the next line that is only `}` are one JSON object, else None (an opening brace of anything else:
    a notebook's output, a C block; its lines are left to the other readers)."""
    found, i = [], 0
    while i < len(lines):
        if lines[i].rstrip() != "{":
            i += 1
            continue
        end, size = i + 1, len(lines[i])
        while end < len(lines) and lines[end].rstrip() != "}" and size <= _MAX_CHARS:
            size += len(lines[end]) + 1
            end += 1
        record = _parsed("\n".join(lines[i:end + 1])) if end < len(lines) and size <= _MAX_CHARS else None
        found.append(None if record is None else (end + 1 - i, step_record(record)))
        i = end + 1 if record is not None else i + 1
    return found


@dataclass
class JsonBlocks:
    """`owns(line)`: a line of a top-level JSON object (its opening `{` line, the lines inside, its closing `}`), the
    objects found beforehand (`_objects`, in order); `feed(line)` returns the step the closing line completes."""

    objects: list
    next_object: int = 0
    left: int = 0  # lines of the object being read still to come
    record: StepLine | None = None

    def owns(self, line: str) -> bool:
        if self.left or line.rstrip() != "{":
            return bool(self.left)
        found = self.objects[self.next_object] if self.next_object < len(self.objects) else None
        self.next_object += 1
        if found is not None:
            self.left, self.record = found
        return found is not None

    def feed(self, line: str) -> StepLine | None:
        self.left -= 1
        return self.record if self.left == 0 else None

    def close(self) -> None:
        return None


def _parsed(block: str):
    try:
        return json.loads(block)
    except (ValueError, RecursionError):
        return None


def step_record(record) -> StepLine | None:
    """The step's record of a JSON object naming its step, else None."""
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
        if key != step_key and is_number(value):
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
