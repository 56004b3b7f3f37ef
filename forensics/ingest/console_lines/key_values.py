"""Console step lines of hand-written training loops made of `key: value` fields:
* `N | loss X | lr Y | Tms`, the step alone before `|`-separated fields (kind "key_value").
* Plain logging lines made only of comma-separated `key: value` pairs with a loss and a counter,
  as Barber0/LLM-pretrain pretrain.py logs `ep: %d, batch: %d, time: %.2f, ntokens: %.2f/%d, loss: %f`
  (kind "key_value"), from the counter on (a custom loop's `time:2024-01-05, 10:00:00, iters:500,
  iters_average_Loss:2.31, ...`: the date before it is passed over). Such a line has no step of its own: its step is
  the counter as printed (step, iter(s), iteration, else batch), so a counter restarted by a new attempt or epoch reads
  like a restart. A loss named for how it was taken (`avg_loss`, `iters_average_Loss`) is the loss where no plain
  `loss` is printed.
  A line with any part that is not a numeric pair (prose, `batch: 3, tensorboard error: ...`) is not read. A line of
  several `*_loss` terms and no plain `loss` takes its `total_loss` / `combined_loss` as the loss.
* A line of `key: value` pairs from a `loss: X` on with no counter, a grad_norm or learning rate among them (kind
  "uncounted"): step 0 until `step_numbering.uncounted_lines_numbered` numbers such lines by their order.
The other shapes of hand-written loops (a step counter and a loss in any punctuation, tqdm postfixes, MiniMind's
`Epoch:[E/N](n/M)`, printed tensors) are `hand_written`'s.
"""
from __future__ import annotations

import ast
import math
import re

from ...metric_names import is_taken_training_loss
from .fields import StepLine, _fields, _record
from .hand_written import HELD_OUT

# A plain logging line made only of `key: value` pairs, one of them a counter (Barber0/LLM-pretrain).
KEY_VALUE_START = re.compile(r"(?<![\w/])(?:ep|epoch|batch|step|iters?|iteration):\s*\d")
_KEY_VALUE_COUNTERS = ("step", "iter", "iters", "iteration", "batch")
# `loss: 2.86, orth_loss: 0.0018, total_loss: 2.86, grad_norm: 21.1` (OddFunction0205/clora-): a step's print with no
# counter; read only with a gradient or rate among its fields (a training step's, not an evaluation summary's). The
# loss may be named for its objective (a hand-written GRPO loop's `rl_loss: -0.0027, time: 109.1, l2_norm: 0.14,
# token_entropy: 0.82, reward_data: {'total_num': 256, 'total_reward': 144.0, ...}`).
_UNCOUNTED_START = re.compile(r"(?<![\w/])(?:[a-z][a-z\d]*_)*loss:[ \t]*[-+]?(?:\d|\.\d|nan|inf)", re.IGNORECASE)
_UNCOUNTED_NEEDS = ("grad_norm", "learning_rate")
_UNCOUNTED_GRAD_NORM = "l2_norm"  # the norm `clip_grad_norm_` returns, printed under its own name
_GLOBAL_STEP_FIELD = "global_step"  # a trainer's own step count printed among such fields: the line's step
# The last field of such a line may be a dict of the step's counts (`reward_data: {...}`): `_RECORD_FIELD` before it
_RECORD_FIELD = re.compile(r"^[ \t]*[A-Za-z][\w]*[ \t]*:[ \t]*$")
_RECORD_MAX = 2000  # characters of such a dict: a longer one is a dump, not a step's counts


def _key_values(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """A line of `key: value` pairs and nothing else (`ep: 0, batch: 20, time: 9.17, ntokens: 485.20/513,
    loss: 10.98`): read when every comma-separated part is such a pair, a loss among them, and a
    counter gives the step (step, iter, iteration, else batch: the printed counter as it is, so a
    counter that restarts reads like a restarted attempt)."""
    parts = [part for part in line[m.start():].split(",") if part.strip()]  # a trailing `, ` leaves an empty part
    metrics, cut = _fields(parts, last_line)
    metrics = averaged_as_loss(_total_as_loss(metrics))
    found = dict(metrics)
    counter = next((key for key in _KEY_VALUE_COUNTERS if key in found), None)
    if len(metrics) + cut < len(parts) or "loss" not in found or counter is None:
        return None
    step = found[counter]
    if not math.isfinite(step) or step < 0 or step != int(step):
        return None
    return _record("key_value", int(step), None, [(n, v) for n, v in metrics if n != counter], cut)


_TOTAL_LOSSES = ("total_loss", "combined_loss")  # the sum a multi-term objective trains on, where no `loss` is printed


def _total_as_loss(metrics: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """A line of several `*_loss` terms and no plain `loss`: its total (`combined_loss: X`) is the loss trained on
    (franciscoliu/SKU: `GD_loss, RD_loss, reversed_kl_loss, combined_loss`)."""
    names = [name for name, _ in metrics]
    total = next((name for name in _TOTAL_LOSSES if name in names), None)
    if "loss" in names or total is None:
        return metrics
    return [("loss" if name == total else name, value) for name, value in metrics]


def averaged_as_loss(metrics: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """A line with no plain `loss` whose loss is named for how it was taken (a custom loop's `iters:500,
    iters_average_Loss:2.31, iters_average_logprobability_for_Positive:-2.31, ...`, the mean over the iterations since
    the line before; `running_loss`, `train_loss`): the first such field is the loss. Another loss term (`aux_loss`,
    `kl_loss`) or a held-out one (`val_loss`) is not."""
    names = [name for name, _ in metrics]
    taken = next((name for name in names if is_taken_training_loss(name)), None)
    if "loss" in names or taken is None:
        return metrics
    return [("loss" if name == taken else name, value) for name, value in metrics]


def bare_pipe_step(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """`40 | loss 6.6875 | lr 3.000000e-04 | 13808.97ms` (nwyin/modded-llama2): the step alone, then `|`-separated
    `name value` fields, a loss among them (a part with no name, the step's time, is passed over)."""
    metrics, cut = _fields(line[m.end():].split("|"), last_line)
    return _record("key_value", int(m.group(1)), None, metrics, cut) if "loss" in dict(metrics) else None


def uncounted_key_values(line: str, last_line: bool) -> StepLine | None:
    """A line of `key: value` pairs from a `loss: X` (or `<objective>_loss: X`) on, with a grad_norm (or an `l2_norm`)
    or learning rate among them and no counter: kind "uncounted", step 0 until
    `step_numbering.uncounted_lines_numbered` numbers such lines by their order. A loss named for its objective
    (`rl_loss`, `policy_loss`) is the loss where no plain one is printed; a last field that is a dict of the step's
    counts (`reward_data: {'total_num': 256, 'total_reward': 144.0}`) gives the mean reward where it holds a
    reward's total over a count (`_mean_reward`), and nothing else."""
    m = _UNCOUNTED_START.search(line) if "loss:" in line else None
    if m is None:
        return None
    text, record = line[m.start():], None
    if "{" in text:
        head, _, name = text[:text.find("{")].rpartition(",")
        record = _literal_dict(text[text.find("{"):])
        if record is None or not _RECORD_FIELD.match(name):
            return None
        text = head
    parts = text.split(",")
    metrics, cut = _fields(parts, last_line and record is None)
    names = {name for name, _ in metrics}
    if len(metrics) + cut < len(parts) or names & set(_KEY_VALUE_COUNTERS):
        return None
    metrics = _objective_loss(_total_as_loss(metrics))
    if "grad_norm" not in names:
        metrics = [("grad_norm" if name == _UNCOUNTED_GRAD_NORM else name, value) for name, value in metrics]
    names = {name for name, _ in metrics}
    if len(metrics) < 2 or not names & set(_UNCOUNTED_NEEDS) or "loss" not in names:
        return None
    reward = _mean_reward(record) if record is not None and "reward" not in names else None
    metrics += [("reward", reward)] if reward is not None else []
    step = dict(metrics).get(_GLOBAL_STEP_FIELD)
    if step is not None and math.isfinite(step) and step >= 0 and step == int(step):
        # the trainer's own count among the fields (PaddleNLP's Trainer: `loss: 5.06, learning_rate: 1e-05,
        # global_step: 1, ...`): the step as printed
        return _record("key_value", int(step), None, [(n, v) for n, v in metrics if n != _GLOBAL_STEP_FIELD], cut)
    return _record("uncounted", 0, None, metrics, cut)


def _objective_loss(metrics: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """A line whose first field is a training loss named for its objective (`rl_loss`, `policy_loss`) and that prints
    no plain `loss`: that field is the loss (a held-out split's, `val_loss`, is not)."""
    if not metrics or any(name == "loss" for name, _ in metrics):
        return metrics
    first = metrics[0][0]
    if not first.endswith("loss") or HELD_OUT.search(first):
        return metrics
    return [("loss", metrics[0][1])] + metrics[1:]


def _literal_dict(text: str) -> dict | None:
    """The dict a Python print wrote (`{'total_num': 256, 'total_reward': 144.0}`), whole to the line's end, else
    None."""
    if len(text) > _RECORD_MAX or not text.rstrip().endswith("}"):
        return None
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
        return None
    return value if isinstance(value, dict) else None


def _mean_reward(record: dict) -> float | None:
    """The mean reward of a step's counts: its `total_reward` over its `total_num` (the sum of the rewards of that many
    rollouts); None where the dict holds no such pair (a reward it names otherwise is left unread)."""
    total, count = record.get("total_reward"), record.get("total_num")
    if type(total) not in (int, float) or type(count) not in (int, float) or not count > 0:
        return None
    return float(total) / float(count)
