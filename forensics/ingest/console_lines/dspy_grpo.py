"""DSPy's GRPO optimizer (dspy.teleprompt.grpo.GRPO, with an Arbor server training the model), fed line by line:
its logger says where each training step begins and ends, and the step's rollouts are scored by DSPy's Evaluate in
between (langwatch_cookbooks' query rewriter on Qwen3-1.7B):

    2025/05/07 15:56:17 INFO dspy.teleprompt.grpo: GRPO training step 1/50...
    2025/05/07 15:56:17 INFO dspy.teleprompt.grpo: Bootstrapping data...
    2025/05/07 15:56:23 INFO dspy.evaluate.evaluate: Average Metric: 0.0 / 4 (0.0%)
    2025/05/07 15:56:23 INFO dspy.teleprompt.grpo: GRPO training step 1/50 completed.

The first `Average Metric: X / N` inside a step is the step's rollouts scored (X the sum of N scores): the step's
mean reward, X / N. Where X is 0 every rollout scored 0 (DSPy's metric is a score, a bool most often; never below 0
in these programs): no group of the step had a spread, `step_reward_std` 0 (analyzers.dead_reward). Where X is above 0
the scores of its groups are not said, so no spread is given. The validation DSPy runs between steps (after a step's
`completed` line) and before the loop is not a step's reward. A step a crash cut before its `completed` line keeps the
reward its rollouts got.

Each step becomes a `StepLine` of kind "dspy_grpo" at the step printed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .fields import StepLine

MARKER = "dspy.teleprompt.grpo: GRPO training step "
_STEP = re.compile(r"\bdspy\.teleprompt\.grpo: GRPO training step (\d{1,9})/(\d{1,9})(\.\.\.| completed\.)\s*$")
_SCORED = re.compile(r"\bdspy\.evaluate\.evaluate: Average Metric: (\d+(?:\.\d*)?) / (\d{1,9}) \(")


@dataclass
class DspyGrpoSteps:
    """The steps of DSPy's GRPO log: `owns(line)` says a line is one's (a step's start or end, or the scoring inside
    a step); `feed(line)` returns the step a line completes, `close()` the last one."""

    step: tuple[int, int] | None = None  # (N, total) of the step begun and not yet ended
    reward: tuple[float, int] | None = None  # (sum of the scores, rollouts) of its rollouts

    def owns(self, line: str) -> bool:
        if "dspy." not in line:
            return False
        return _STEP.search(line) is not None or (self.step is not None and self.reward is None
                                                  and _SCORED.search(line) is not None)

    def feed(self, line: str) -> StepLine | None:
        m = _STEP.search(line)
        if m is None:
            scored = _SCORED.search(line)
            self.reward = (float(scored.group(1)), int(scored.group(2)))
            return None
        done = self.close()
        if m.group(3) == "...":
            self.step = (int(m.group(1)), int(m.group(2)))
        return done

    def close(self) -> StepLine | None:
        done = None
        if self.step is not None and self.reward is not None and self.reward[1] > 0:
            total, rollouts = self.reward
            metrics = (("reward", total / rollouts),) + ((("step_reward_std", 0.0),) if total == 0 else ())
            done = StepLine("dspy_grpo", self.step[0], self.step[1], metrics)
        self.step, self.reward = None, None
        return done
