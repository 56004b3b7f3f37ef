"""GRPO with no learning signal: every completion of a prompt got the same reward.

GRPO's advantage is each completion's reward minus its group's mean, over the group's std. When
all completions of every prompt score the same (TRL logs `frac_reward_zero_std` = 1.0, or
`reward_std` = 0; verl's `critic/advantages/max` and `/min` are both 0), every advantage is 0 and so is
the gradient: the policy cannot learn, whatever the loss shows (it is ~0 by construction). SIGNALS.md #20: the
alarm is `frac_reward_zero_std` at 1 (with grad_norm ~0), not a loss near 0. An error (VERDICTS.md: a run that never
learned) when that holds at `DEAD_SHARE` of the logged steps, or from some step to the end (over at least half the log)
with the reward stuck at one level from there (`_stuck`), and the reward does not rise from that step on; a log
shorter than learning_min_points is enough where every step it holds had no spread and a grad_norm of exactly 0
(`_no_update_at_every_step`: each step is a whole batch of groups, and none of them moved the policy). Where
TRL's `frac_reward_zero_std` tells how many groups of each step had a spread, the groups that did must be fewer than
`LIVE_SHARE` of all groups from that step on: a tenth or more of the groups scoring their completions apart (one
prompt of eight solved now and then, the rest all wrong) is a weak signal, not none, and the run may yet learn from it
(`no_learning_evidence` says whether the reward rose).
A reward that first rose clearly and then sits at the highest level the run reached is saturation, not a
dead signal: a `reward_saturated` warning (the policy earns that score on every completion; later steps
teach it nothing).

A GRPO log that keeps no reward of its training steps (a notebook's table of the loss alone) can still say it: its
loss exactly 0 at every logged step and an evaluation (`trainer.evaluate()`) where no group's completions scored
apart (`eval_frac_reward_zero_std` 1, or `eval_reward_std` 0) is the same dead signal (`detect_zero_loss_no_spread`).
"""
from __future__ import annotations

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .metrics import GRAD_NORM, LOSS, Metrics, finite, first_settled, format_number

ZERO_STD = "frac_reward_zero_std"
REWARD_STD = "reward_std"
ADVANTAGES_MAX, ADVANTAGES_MIN = "critic/advantages/max", "critic/advantages/min"  # verl's, over the batch
# a hand-written loop's printed list of a step's rewards, its spread over all the step's completions (0: no group had
# one; above 0 it may be between groups): ingest.console_lines.bare_epochs, karanravindra_omni
STEP_REWARD_STD = "step_reward_std"
DEAD_SHARE = 0.8  # at least this share of the logged steps without any reward spread
LIVE_SHARE = 0.1  # ... and, where frac_reward_zero_std counts them, fewer than this share of the groups with one
FEW_DEAD_STEPS = 2  # fewer logged steps than learning_min_points are enough where every one had grad_norm exactly 0


def detect_dead_reward_signal(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `no_learning_signal` error for a GRPO log whose reward groups (nearly) never differ, or []."""
    dead = no_spread_points(metrics)
    if dead is None:
        return []
    needed = FEW_DEAD_STEPS if _no_update_at_every_step(metrics, dead) else thresholds.learning_min_points
    if len(dead) < needed:
        return []
    begin = 0 if dead.mean() >= DEAD_SHARE else first_settled(dead.to_numpy(), DEAD_SHARE)
    if begin is None or len(dead) - begin < max(needed, len(dead) / 2):
        return []
    steps = dead.index[begin:][dead.to_numpy()[begin:]]
    first = int(steps[0])
    reward = finite(metrics["reward"]) if "reward" in metrics else None
    stuck = begin == 0 or _stuck(metrics, int(dead.index[begin]))
    saturated = reward is not None and (_saturated(metrics, reward, first, 2.0) if stuck
                                        else _saturated(metrics, reward, first, 1.0) and _at_top(reward, steps))
    if not stuck and not saturated:
        return []  # dead groups after a live start, with the reward still moving between prompts: not stuck
    during = reward[reward.index >= first] if reward is not None else None  # the rise before it does not count
    if during is not None and len(during) >= 4:
        k = max(1, len(during) // 4)
        start, end = float(during.iloc[:k].median()), float(during.iloc[-k:].median())
        if end > start + 0.1 * max(abs(start), 1e-3) and end > start:
            return []  # the reward rose anyway: some signal got through
    grad = finite(metrics[GRAD_NORM]).reindex(steps).dropna() if GRAD_NORM in metrics else None
    grad_note = (f"; grad_norm there is about {format_number(float(np.median(grad)))}"
                 if grad is not None and len(grad) else "")
    if saturated:
        return [_saturated_finding(reward, steps, dead, begin, grad_note)]
    live = live_group_share(metrics, int(dead.index[begin]))
    penalised = live is not None and live >= LIVE_SHARE and only_penalised_apart(reward, dead, begin)
    if live is not None and live >= LIVE_SHARE and not penalised:
        return []  # a tenth of the groups or more still scored their completions apart: a weak signal, not none
    reward_note = (f"; the reward stays at about {format_number(float(during.median()))}"
                   if during is not None and len(during) else "")
    if penalised:
        reward_note += (", and the other steps' groups scored apart only under it (a completion penalised), never "
                        "above: no completion earned more than that")
    message = (f"every completion of a prompt got the same reward at {len(steps)} of {len(dead) - begin} logged steps "
               f"(from step {first}): with no spread in a group, GRPO's advantages are 0 and so is the gradient"
               f"{grad_note}{reward_note}. The run had no learning signal. Make the reward tell completions apart "
               "(partial credit), sample more or more varied completions (per prompt: TRL's num_generations, verl's "
               "actor_rollout_ref.rollout.n; temperature), or use "
               "prompts the model sometimes solves.")
    return [Finding("no_learning_signal", "error", first, message, end_step=int(dead.index[-1]),
                    metric=str(dead.name),
                    evidence={"dead_steps": int(len(steps)), "logged_steps": int(len(dead) - begin),
                              "share": float(len(steps) / (len(dead) - begin))})]


def _no_update_at_every_step(metrics: Metrics, dead) -> bool:
    """Whether every logged step had no reward group with a spread and a grad_norm logged as exactly 0: each step is
    a whole batch of groups, and a GRPO step with no advantage makes no update, so even a log of `FEW_DEAD_STEPS`
    says the policy did not move (a KL term or some group's spread would show as a grad_norm above 0). Where no
    grad_norm is logged, a loss of exactly 0 at every such step says it as well: with every advantage 0 the policy term
    is 0, and a KL term of 0 is a policy still at its reference, whose gradient is 0 too (karanravindra_omni's loop:
    `loss: -0.0000` beside four equal rewards at both of its steps)."""
    if not dead.all():
        return False
    name = GRAD_NORM if GRAD_NORM in metrics else LOSS if LOSS in metrics else None
    if name is None:
        return False
    values = finite(metrics[name]).reindex(dead.index)
    return not values.isna().any() and bool(np.all(values.to_numpy() == 0.0))


def _saturated(metrics: Metrics, reward, first: int, stds: float) -> bool:
    """Whether the reward rose clearly before `first` (by `stds` of its early within-group std, or to twice its
    start when no std is logged) and sits, from there, at the highest level the run reached: the groups stop
    differing because every completion earns that top score. A reward that settles a little above where it
    started, within the early spread, is the stuck run this detector is for; so is one stuck at a steady level
    short of a rise of two stds (prompts that always pass beside prompts that always fail: a mean as steady)."""
    before, during = reward[reward.index < first], reward[reward.index >= first]
    if len(before) < 3 or len(during) < 2:
        return False
    k = max(1, len(before) // 4)
    start, level = float(before.iloc[:k].median()), float(during.median())
    spread = finite(metrics[REWARD_STD]) if REWARD_STD in metrics else None
    spread = spread[spread.index < first] if spread is not None else None
    needed = stds * float(spread.iloc[:k].median()) if spread is not None and len(spread) else abs(start)
    at_top = level >= float(before.max()) - _STUCK * max(abs(level), 1e-9)
    return needed > 0 and level - start >= needed and at_top


def _saturated_finding(reward, steps, dead, begin: int, grad_note: str) -> Finding:
    """A warning, not the no-signal error: the run learned until it earned the top reward on everything."""
    first = int(steps[0])
    before, during = reward[reward.index < first], reward[reward.index >= first]
    message = (f"the reward rose from about {format_number(float(before.iloc[:max(1, len(before) // 4)].median()))} "
               f"to about {format_number(float(during.median()))} by step {first} and stays at that top level: every "
               f"completion of a prompt got the same (top) reward at {len(steps)} of {len(dead) - begin} logged steps "
               f"from there{grad_note}. The policy learned to earn this reward; with no spread left in the groups the "
               "steps after that taught it nothing (every advantage is 0). Check a few completions (one answer for "
               "every prompt would also score alike); to keep learning, add harder prompts or a reward with "
               "partial credit; the checkpoint from where it levelled off is as good as later ones.")
    return Finding("reward_saturated", "warning", first, message, end_step=int(dead.index[-1]), metric="reward",
                   evidence={"dead_steps": int(len(steps)), "logged_steps": int(len(dead) - begin),
                             "share": float(len(steps) / (len(dead) - begin)), "saturated": True,
                             "reward_level": float(during.median())})


def _at_top(reward, steps) -> bool:
    """Whether the reward at half or more of the no-spread `steps` is exactly the run's highest: every completion
    of every prompt earned the top score there (ps-research's GRPO: 10.5, its four rewards' sum, at 209 of the
    last 260 steps, with a within-group std of 5.5 before), which a mean over prompts that always pass and
    prompts that always fail is not."""
    at = reward.reindex(steps).dropna()
    return len(at) > 0 and float(np.mean(at.to_numpy() == float(reward.max()))) >= 0.5


_STUCK = 0.1  # a reward whose whole range from some step on is within this share of its level is stuck there


def _stuck(metrics: Metrics, first: int) -> bool:
    """Whether the logged reward stays within `_STUCK` of one level at every step from `first` on (all groups
    alike and alike from one step to the next; groups that all pass or all fail move the mean about)."""
    reward = finite(metrics["reward"]) if "reward" in metrics else None
    if reward is None:
        return False
    after = reward[reward.index >= first].to_numpy()
    return len(after) >= 2 and float(np.ptp(after)) <= _STUCK * max(float(np.abs(np.median(after))), 1e-9)


def live_group_share(metrics: Metrics, first: int) -> float | None:
    """The share of reward groups that had a spread (1 - TRL's `frac_reward_zero_std`, averaged over the logged steps
    from `first` on), or None for a log without it."""
    frac = finite(metrics[ZERO_STD]) if ZERO_STD in metrics else None
    frac = frac[frac.index >= first] if frac is not None else None
    return float(np.mean(1.0 - np.clip(frac.to_numpy(), 0.0, 1.0))) if frac is not None and len(frac) else None


def only_penalised_apart(reward, dead, begin: int) -> bool:
    """Whether the steps whose groups scored apart (from `begin` on) did so only under the level every other step
    sits at: the reward at the no-spread steps one value, and at no logged step above it. No completion ever earned
    more than the run's stuck score; the spread is a completion penalised now and then, which teaches the policy what
    to avoid, not how to earn a reward (aryan-gupta7's GRPO level 3: reward 0.0 at 62 of 72 steps, -0.125 or -0.25 at
    the other ten, each one or two of eight completions at -1, never above 0). A live tenth of the groups is no
    signal toward the task there."""
    if reward is None:
        return False
    after = dead.iloc[begin:]
    at_dead = reward.reindex(after.index[after.to_numpy()]).dropna()
    at_live = reward.reindex(after.index[~after.to_numpy()]).dropna()
    if len(at_dead) < 2 or not len(at_live) or float(np.ptp(at_dead.to_numpy())) > 0.0:
        return False
    level = float(at_dead.iloc[0])
    return bool(np.all(reward[reward.index >= int(after.index[0])].to_numpy() <= level)) \
        and bool(np.all(at_live.to_numpy() < level))


def no_spread_points(metrics: Metrics):
    """Boolean Series named by the metric that tells it: logged steps where no reward group had any spread; None for
    a log without the keys."""
    if ZERO_STD in metrics:
        frac = finite(metrics[ZERO_STD])
        return (frac >= 0.999).rename(ZERO_STD) if len(frac) else None
    if REWARD_STD in metrics and "reward" in metrics:
        std = finite(metrics[REWARD_STD])
        return (std <= 0.0).rename(REWARD_STD) if len(std) else None
    if STEP_REWARD_STD in metrics:
        std = finite(metrics[STEP_REWARD_STD])
        return (std <= 0.0).rename(STEP_REWARD_STD) if len(std) else None
    if ADVANTAGES_MAX in metrics and ADVANTAGES_MIN in metrics:
        # verl's advantages over the whole batch: 0 at both ends where no group's completions scored apart
        top, bottom = finite(metrics[ADVANTAGES_MAX]), finite(metrics[ADVANTAGES_MIN])
        both = top.index.intersection(bottom.index)
        zero = (top.loc[both].abs() <= 1e-9) & (bottom.loc[both].abs() <= 1e-9)
        return zero.rename(ADVANTAGES_MAX) if len(zero) else None
    return None


EVAL_ZERO_STD = "eval_frac_reward_zero_std"
EVAL_REWARD_STD = "eval_reward_std"


def detect_zero_loss_no_spread(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `no_learning_signal` error for a GRPO log without the training steps' reward spread whose loss is exactly 0
    at every one of `learning_min_points` or more logged steps while every evaluation logged found no group with a
    spread, or []. With every advantage 0 the policy-gradient loss is exactly 0 and no update moves the policy; the
    evaluation, on prompts of the same task, says the groups scored alike there too (a reward that can only give one
    value). A loss of 0 alone is not enough: GRPO's loss can print as 0 with advantages that sum to 0 in each group."""
    if no_spread_points(metrics) is not None or LOSS not in metrics:
        return []  # the training steps' own spread is logged: `detect_dead_reward_signal` reads it
    loss = finite(metrics[LOSS])
    if len(loss) < thresholds.learning_min_points or np.any(loss.to_numpy() != 0.0):
        return []
    evals = next((finite(metrics[k]) for k in (EVAL_ZERO_STD, EVAL_REWARD_STD) if k in metrics
                  and len(finite(metrics[k]))), None)
    if evals is None:
        return []
    name = evals.name
    dead = evals.to_numpy() >= 0.999 if name == EVAL_ZERO_STD else evals.to_numpy() <= 0.0
    if not dead.all():
        return []
    reward = finite(metrics["eval_reward"]) if "eval_reward" in metrics else None
    reward_note = (f", the eval reward {format_number(float(reward.iloc[-1]))}" if reward is not None and len(reward)
                   else "")
    first, last = int(loss.index[0]), int(loss.index[-1])
    message = (f"the loss is exactly 0 at every one of the {len(loss)} logged steps ({first} to {last}) and the "
               f"evaluation found no reward spread in any group ({name} {format_number(float(evals.iloc[-1]))}"
               f"{reward_note}): every completion of a prompt got the same reward, so GRPO's advantages, its loss and "
               "its gradient are 0 and no update moved the policy. The run had no learning signal. Check that the "
               "reward functions can score a completion above the others (the arguments they need are passed, the "
               "format they look for is reachable), or give partial credit.")
    return [Finding("no_learning_signal", "error", first, message, end_step=last, metric=LOSS,
                    evidence={"points": int(len(loss)), "loss_zero": True, "eval_metric": name,
                              "eval_no_spread": float(evals.iloc[-1])})]
