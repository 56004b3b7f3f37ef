"""Console step lines of fairseq, whose losses are in bits (base 2, ppl = 2^loss): each kind here gives them in
nats, as every other reader does (x ln 2).
* fairseq's validation line `valid | epoch 001 | valid on 'valid' subset | loss X | ppl Y | ... | num_updates N`
  (eval_loss at update N); its `train_inner` progress lines since 2020 (`epoch 001:   2800 / 160368 loss=9.255,
  ..., num_updates=2800, lr=..., gnorm=3.23`), at num_updates.
* fairseq-py's legacy (2017-18) progress lines `| epoch 010  2000 / 8223 loss=1.27 (1.50), wps=962, ..., lr=0.001,
  clip=100%, gnorm=2.1427` (`| epoch 010:  2000 / 8223 ...` from November 2017; kind "fairseq_legacy"): batch N of M
  in epoch E, numbered on by `step_numbering` ((E - the first epoch) x M + N); the batch's loss and, in brackets, the
  epoch's running mean (loss_avg), gnorm -> grad_norm. Its epoch summaries `| epoch 010 | train loss 1.44 | train
  ppl 2.72 | ...` and `| epoch 010 | valid on 'valid' subset | valid loss 1.94 | valid ppl 3.83` (kind
  "fairseq_epoch", placed by `step_numbering`); the validation's own progress line (`valid on 'valid' subset  1000 /
  1311 loss=1.60`, its running mean over part of the set) is no record.
* fairseq's epoch summary since 2020 (`| train | epoch 001 | loss 2.077 | ... | num_updates 10 | ...`).
fairseq2's lines (nats) are `toolkits`'.
"""
from __future__ import annotations

import math
import re

from .fields import StepLine, FLOAT, number


# fairseq's end-of-epoch validation (progress_bar.py SimpleProgressBar.print, fairseq_cli/train.py validate):
# `valid | epoch 001 | valid on 'valid' subset | loss 2.1 | ppl 4.29 | ... | num_updates 10 | best_loss 2.1`
FAIRSEQ_VALID = re.compile(r"\bvalid on '[^']*' subset \| (.*)$")


_FAIRSEQ_NAMES = {"loss": "eval_loss", "ppl": "eval_ppl", "nll_loss": "eval_nll_loss", "accuracy": "eval_accuracy"}


def _fairseq_valid(fields: str, line: str) -> StepLine | None:
    """The validation line's eval_ metrics at update N, its losses in nats (fairseq prints bits: ppl = 2^loss)."""
    pairs = dict(part.strip().split(" ", 1) for part in fields.split("|") if part.strip().count(" ") == 1)
    if not pairs and FAIRSEQ_LEGACY_EPOCH.match(line):  # `| valid loss 1.94 | valid ppl 3.83`: the legacy summary's
        return fairseq_epoch_summary(line)
    step = pairs.get("num_updates", "")
    metrics = [(_FAIRSEQ_NAMES[k], _in_nats(_FAIRSEQ_NAMES[k], value)) for k, raw in pairs.items()
               if k in _FAIRSEQ_NAMES and (value := number(raw)) is not None]
    whole = re.fullmatch(r"[0-9]{1,18}", step) is not None
    return StepLine("fairseq_valid", int(step), None, tuple(metrics)) if whole and metrics else None


# fairseq-py's legacy console (fairseq/progress_bar.py simple_progress_bar and train.py, facebookresearch/fairseq
# e734b0fa 2017-09-14 to 50fdf591 2018-02): the epoch's prefix `| epoch {:03d}` (`| epoch {:03d} | valid on '{}'
# subset` for a validation), then `{} {:5d} / {:d} {}` (`{}:  {:5d} / {:d} {}` from c6d6256b, 2017-11) with the
# tqdm-style postfix `loss={:.2f} ({:.2f}), wps=..., lr=..., clip={:3.0f}%, gnorm={:.4f}`; at the epoch's end
# `| epoch {:03d} | train loss {:2.2f} | train ppl {:3.2f} | ...` and `... subset | valid loss {:2.2f} | valid ppl
# {:3.2f}`. Its criterions divide the summed loss by math.log(2): bits a token.
FAIRSEQ_LEGACY = re.compile(r"^\| epoch (\d{1,6})(?P<valid> \| valid on '[^']*' subset)?:? +(\d{1,18}) / (\d{1,18}) "
                             r"(?=.*\bloss=)(.*)$")


FAIRSEQ_LEGACY_EPOCH = re.compile(r"^\| epoch (\d{1,6})(?: \| valid on '[^']*' subset)? \| (?:train|valid) loss ")


_FAIRSEQ_LEGACY_PAIR = re.compile(r"(?:^|, )(loss|lr|gnorm)=(" + FLOAT + r")(?: \((" + FLOAT + r")\))?",
                                  re.IGNORECASE)


_FAIRSEQ_LEGACY_NAMES = {"lr": "learning_rate", "gnorm": "grad_norm"}


_FAIRSEQ_SUMMARY_NAMES = {"train loss": "loss", "train ppl": "ppl", "valid loss": "eval_loss", "valid ppl": "eval_ppl"}


_BITS = {"loss", "loss_avg", "nll_loss", "eval_loss", "eval_nll_loss"}  # fairseq's losses in bits: x ln 2 gives nats


def _in_nats(name: str, value: float) -> float:
    return value * math.log(2) if name in _BITS else value


def _fairseq_legacy(m: re.Match) -> StepLine | None:
    """A legacy progress line: batch N of M (`total`) in epoch E (kept as a metric for `step_numbering`); the loss,
    its running mean in brackets (loss_avg), lr and gnorm, in nats. A validation's progress line is its running mean
    over part of the set (its summary line holds the whole): None, no record."""
    if m.group("valid"):
        return None
    metrics = []
    for name, value, mean in _FAIRSEQ_LEGACY_PAIR.findall(m.group(5)):
        name = _FAIRSEQ_LEGACY_NAMES.get(name.lower(), name.lower())
        metrics.append((name, _in_nats(name, float(value))))
        if mean:
            metrics.append(("loss_avg", _in_nats("loss_avg", float(mean))))
    if not any(name == "loss" for name, _ in metrics):
        return None
    return StepLine("fairseq_legacy", int(m.group(3)), int(m.group(4)),
                    tuple(metrics) + (("epoch", float(m.group(1))),))


# fairseq's progress line since 2020 (fairseq/logging/progress_bar.py SimpleProgressBar.log under the `train_inner`
# logger): `... | INFO | train_inner | epoch 001:   2800 / 160368 loss=9.255, nll_loss=8.9, ppl=611.12, wps=57.3, ...,
# num_updates=2800, lr=2.8e-05, gnorm=3.23, loss_scale=128, train_wall=13, wall=1236` (facebookresearch/fairseq
# issue 2338). ppl is 2^nll_loss: the losses are bits, as in the legacy line; a label-smoothed `loss` sits above
# nll_loss by the smoothing term. The step is num_updates, the run's own update count across epochs.
FAIRSEQ_INNER = re.compile(r"(?:^|\| )epoch \d{1,6}: +\d{1,18} / \d{1,18} (?=.*\bnum_updates=\d)(.*)$")


_FAIRSEQ_INNER_PAIR = re.compile(r"(?:^|, )([a-z_]+)=(" + FLOAT + r")(?=,|$)", re.IGNORECASE)


_FAIRSEQ_INNER_NAMES = {"loss": "loss", "nll_loss": "nll_loss", "ppl": "perplexity", "lr": "learning_rate",
                        "gnorm": "grad_norm", "loss_scale": "loss_scale"}


def _fairseq_inner(m: re.Match) -> StepLine | None:
    """A `train_inner` progress line (kind "fairseq_inner") at update num_updates, its losses in nats."""
    pairs = dict(_FAIRSEQ_INNER_PAIR.findall(m.group(1).strip()))
    metrics = [(own, _in_nats(own, float(pairs[name]))) for name, own in _FAIRSEQ_INNER_NAMES.items() if name in pairs]
    updates = pairs.get("num_updates", "")
    if not any(name == "loss" for name, _ in metrics) or not re.fullmatch(r"\d{1,18}", updates):
        return None
    return StepLine("fairseq_inner", int(updates), None, tuple(metrics))


# fairseq's epoch summary since 2020 (progress_bar.py SimpleProgressBar.print under the `train` logger): `... | INFO |
# train | epoch 001 | loss 2.077 | nll_loss 1.9 | ppl 4.22 | wps 20000 | ... | num_updates 10 | lr ... | gnorm 1.3`
FAIRSEQ_TRAIN = re.compile(r"\| train \| epoch (\d{1,6}) \| (.*)$")


def fairseq_train_summary(m: re.Match) -> StepLine | None:
    """An epoch summary (kind "fairseq_epoch" as the legacy one, placed by `step_numbering`), its losses in nats."""
    pairs = dict(part.strip().split(" ", 1) for part in m.group(2).split("|") if part.strip().count(" ") == 1)
    metrics = [(own, _in_nats(own, value)) for name, own in _FAIRSEQ_INNER_NAMES.items()
               if name in pairs and (value := number(pairs[name])) is not None]
    if not any(name == "loss" for name, _ in metrics):
        return None
    return StepLine("fairseq_epoch", int(m.group(1)), None, tuple(metrics) + (("epoch", float(m.group(1))),))


def fairseq_dict_in_nats(pairs: dict) -> dict:
    """A printed dict of fairseq's JSON progress bar (--log-format json) with its losses in nats: a training dict by
    its own fields (`num_updates` and words a batch, `wpb`), a validation dict by `valid_num_updates` or by a
    perplexity that is 2^valid_nll_loss (issue 233's 2018 dicts: valid_nll_loss 1.3199, valid_ppl 2.50); any other
    dict as it is."""
    if "num_updates" in pairs and "wpb" in pairs:
        return {k: _in_nats(k, v) if k in ("loss", "nll_loss") else v for k, v in pairs.items()}
    if "valid_num_updates" in pairs or _perplexity_of_bits(pairs.get("valid_nll_loss"), pairs.get("valid_ppl")):
        return {k: v * math.log(2) if k in ("valid_loss", "valid_nll_loss") else v for k, v in pairs.items()}
    return pairs


def _perplexity_of_bits(loss, ppl) -> bool:
    """Whether a printed perplexity is 2^loss (to its two decimals), not e^loss: the loss is in bits."""
    if not isinstance(loss, float) or not isinstance(ppl, float) or not 0.5 < loss < 30 or ppl <= 1:
        return False
    return abs(math.log2(ppl) - loss) < 0.01 and abs(math.log(ppl) - loss) > 0.1


def fairseq_epoch_summary(line: str) -> StepLine | None:
    """A legacy epoch summary: train loss / ppl or valid loss / ppl (eval_), losses in nats, at epoch E until
    `step_numbering` places it."""
    epoch = int(FAIRSEQ_LEGACY_EPOCH.match(line).group(1))
    metrics = []
    for part in line.split("|")[2:]:
        name, _, raw = part.strip().rpartition(" ")
        own = _FAIRSEQ_SUMMARY_NAMES.get(name)
        value = number(raw) if own else None
        if value is not None:
            metrics.append((own, _in_nats(own, value)))
    return StepLine("fairseq_epoch", epoch, None, tuple(metrics) + (("epoch", float(epoch)),)) if metrics else None
