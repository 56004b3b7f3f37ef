"""DeepSpeed-Chat's console lines (microsoft/DeepSpeedExamples, applications/DeepSpeed-Chat/training/*/main.py).

* Step 1, supervised fine-tuning: `***** Evaluating perplexity, Epoch 1/16 *****`, then `ppl: 2.0179`: eval_ppl, and
  eval_loss = ln(ppl) where the line gives no loss, the mean cross-entropy the perplexity is the exponential of (kind
  "dschat_sft").
* Step 2, reward model: `Epoch 1/1 with loss 0.5754` (the epoch's mean training loss: loss), and
  `***** Evaluating reward, Epoch 1/1 *****`, then `chosen_last_scores (higher is better) : 2.24, acc (higher is
  better) : 0.6995` (eval_chosen_score, eval_accuracy: the share of pairs scored the right way; kind "dschat_rm").
* Step 3, PPO: `epoch: 0|step: 12|ppo_ep: 1|act_loss: 0.21|cri_loss: 0.12|unsuper_loss: 0.0`, then
  `average reward score: -0.679` (actor_loss, critic_loss, unsuper_loss, reward), at the printed step (a paste from
  the middle of a run starts at its own step, not at 0). The script's step counts within an epoch: a line whose step
  goes back (the next epoch, or another attempt) is numbered on from the last one (kind "dschat_ppo").
* DPO (step2_dpo_finetuning): `***** Evaluating rewards, Epoch 1/1 *****`, then `chosen: -31.94, rejected: -33.97, loss:
  0.6651` (eval_rewards/chosen, eval_rewards/rejected, eval_loss; kind "dschat_dpo").
An evaluation or an epoch's loss is put at the optimizer step DeepSpeed printed last (`step=10, skipped=6`), 0 before
the first: the evaluation before training is the model as it started. Where DeepSpeed printed no step, the step of the
script's last step line (`saw_step`) stands in. Step 1 prints `ppl: X, loss: Y` since Oct 2023: Y is the eval_loss.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .console_lines.fields import StepLine, perplexity_loss

# Cheap test before feeding a text's lines
# (its `Epoch 1/1 with loss X` alone is no mark: hand-written loops print the same words)
MARKERS = ("***** Evaluating ", "|act_loss: ")
_NUM = r"([-+.\deE]+|nan|inf)"  # a printed float
_HEADER = re.compile(r"\*{5} Evaluating (perplexity|reward|rewards), Epoch \d+/\d+ \*{5}")
_DS_STEP = re.compile(r"\bstep=(\d{1,18}), skipped=\d+")
_EPOCH_LOSS = re.compile(r"^Epoch (\d+)/(\d+) with loss " + _NUM + r"\s*$")
_PPL = re.compile(r"^ppl: " + _NUM + r"(?:, loss: " + _NUM + r")?\s*$")  # step 1 prints its loss too since Oct 2023
_REWARD_EVAL = re.compile(r"^chosen_last_scores \(higher is better\) : " + _NUM + r", acc \(higher is better\) : "
                          + _NUM + r"\s*$")
_DPO_EVAL = re.compile(r"^chosen: " + _NUM + ", rejected: " + _NUM + ", loss: " + _NUM + r"\s*$")
_PPO = re.compile(
    r"^epoch: \d+\|step: (\d{1,18})\|ppo_ep: \d+\|act_loss: (\S+)\|cri_loss: (\S+)\|unsuper_loss: (\S+)\s*$")
_REWARD = re.compile(r"^average reward score: " + _NUM + r"\s*$")
_KINDS = {"perplexity": "dschat_sft", "reward": "dschat_rm", "rewards": "dschat_dpo"}


@dataclass
class DeepSpeedChat:
    """DeepSpeed-Chat's lines fed one by one: `feed(line)` returns the StepLine a line completes, else None."""

    step: int = 0  # the optimizer step DeepSpeed printed last
    evaluating: str | None = None  # the evaluation whose header came last
    ppo_steps: int = 0  # PPO lines read
    ppo_step: int = 0  # the step of the last PPO line
    ppo_offset: int = 0  # what is added to a printed step: the steps of the epochs (or attempts) before
    deepspeed_steps: bool = False  # whether DeepSpeed's own `step=N, skipped=M` lines give the steps

    def feed(self, line: str) -> StepLine | None:
        if "skipped=" in line and (m := _DS_STEP.search(line)):
            self.step, self.deepspeed_steps = int(m.group(1)), True
            return None
        if "***** Evaluating" in line and (m := _HEADER.search(line)):
            self.evaluating = m.group(1)
            return None
        text = line.strip()
        if self.evaluating is not None and (record := self._evaluation(text)) is not None:
            self.evaluating = None
            return record
        if text.startswith("Epoch ") and (m := _EPOCH_LOSS.match(text)):
            return StepLine("dschat_rm", self.step, None, (("loss", float(m.group(3))),))
        if text.startswith("epoch: ") and (m := _PPO.match(text)):
            try:
                values = [float(v) for v in m.groups()[1:]]
            except ValueError:  # `act_loss: None`
                return None
            printed = int(m.group(1))
            if self.ppo_steps and printed + self.ppo_offset < self.ppo_step:  # counted from 0 again
                self.ppo_offset = self.ppo_step + 1 - printed
            self.ppo_steps += 1
            self.ppo_step = printed + self.ppo_offset
            return StepLine("dschat_ppo", self.ppo_step, None, tuple(zip(("actor_loss", "critic_loss",
                                                                           "unsuper_loss"), values)))
        if text.startswith("average reward score") and (m := _REWARD.match(text)) and self.ppo_steps:
            return StepLine("dschat_ppo", self.ppo_step, None, (("reward", float(m.group(1))),))
        return None

    def saw_step(self, step: int) -> None:
        """Another reader's step line (step 1's `Epoch: 0, Step: 29, Rank: 0, loss = 1.23`): where DeepSpeed printed
        no step of its own, an evaluation after it is at that step."""
        if not self.deepspeed_steps:
            self.step = max(self.step, step)

    def _evaluation(self, text: str) -> StepLine | None:
        kind = _KINDS[self.evaluating]
        if self.evaluating == "perplexity" and (m := _PPL.match(text)):
            ppl = float(m.group(1))
            loss = float(m.group(2)) if m.group(2) else perplexity_loss(ppl)
            return StepLine(kind, self.step, None, (("eval_ppl", ppl), ("eval_loss", loss)))
        if self.evaluating == "reward" and (m := _REWARD_EVAL.match(text)):
            return StepLine(kind, self.step, None, (("eval_chosen_score", float(m.group(1))),
                                                    ("eval_accuracy", float(m.group(2)))))
        if self.evaluating == "rewards" and (m := _DPO_EVAL.match(text)):
            chosen, rejected, loss = (float(g) for g in m.groups())
            return StepLine(kind, self.step, None, (("eval_rewards/chosen", chosen),
                                                    ("eval_rewards/rejected", rejected), ("eval_loss", loss)))
        return None
