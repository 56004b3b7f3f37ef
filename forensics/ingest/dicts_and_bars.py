"""The printed dicts and tqdm progress-bar readings of one piece of a console, the events `console_scan` takes from it:

* ('dict', step|None, pairs): a printed dict (HF Trainer 4.x/5.x, ms-swift, OpenRLHF's `Global step N: {...}`), its
  pairs through float(), the step its prefix names (a `TrainOutput(global_step=N, ..., metrics={...})`'s N); only a
  training log's dict (one of `_LOG_KEYS`, no script's printed arguments);
* ('bar', n, total): a tqdm progress bar's reading, with its `|...|` block or as Colab keeps it without.

`with_taken_losses` renames a hand-written loop's loss named for how it was taken, once the console's dict flavour is
told (stdout).
"""
from __future__ import annotations

import re

from ..metric_names import SUMMARY_BESIDE_TRAIN_LOSS
from ..timeline import canonical_metric
from .console_lines.fairseq import fairseq_dict_in_nats
from .console_lines.key_values import averaged_as_loss
from .printed_configs import is_hyperparameter_dict

# a dict line, with the step a prefix may give: `Step: 12 {...}`, OpenRLHF's `✨ Global step 12: {...}`, slime's
# `step 12: {...}` and `rollout 12: {...}`
_DICT = re.compile(r"(?:(?:Step:|Global step|\bstep|\brollout)\s*(?P<step>\d{1,18}):?\s*)?\{(?P<body>[^{}]*)\}")
# A key is a whole Python string literal at the start of the body or after a comma (a key printed as `'acc("x")'`
# or `"it's"` holds the other quote: cutting at any quote would make a bogus metric of its tail).
_PAIR = re.compile(r"""(?:^|,)\s*(?:'(?P<key>[^'\\]*(?:\\.[^'\\]*)*)'|"(?P<key2>[^"\\]*(?:\\.[^"\\]*)*)")\s*:\s*"""
                   r"""(?P<val>'[^']*'|"[^"]*"|[^,}\s]+)""")
_BAR = re.compile(r"\|\s*(?P<n>\d{1,18})/(?P<total>\d{1,18})\s*\[[^\]]*?(?:it/s|s/it)\]")
# The same bar without its `|...|` block, as Colab keeps a `!python` cell's tqdm: ` 33% 12/36 [00:41<01:23,  3.45s/it]`.
# Unlabelled only (the Trainer's bars have no description; `Map: 100% 500/500`, `Loading checkpoint shards: 100% 2/2`
# are someone else's): at the start of the piece or right after an earlier redraw or a dict.
_PLAIN_BAR = re.compile(r"(?:^|(?<=[\]}]))\s*(?P<pct>\d{1,3})%\s+(?P<n>\d{1,18})/(?P<total>\d{1,18})\s*"
                        r"\[[^\]]*?(?:it/s|s/it)\]")

_LOG_KEYS = {"loss", "grad_norm", "learning_rate", "epoch", "train_runtime", "train_loss", "policy_loss", "gpt_loss",
             "embedding_loss", "loss/train", "loss/eval",
             "global_step/max_steps", "global_step", "iteration"}
# ‘ ’ “ ” read as the ' and " of a printed dict (`{‘loss’: 1.45, ...}` pasted through an editor that
# curls quotes)
_TYPOGRAPHIC_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
EXPLICIT_STEP_KEYS = ("global_step/max_steps", "iteration", "global_step", "step",
                       "steps",  # steps: see console_steps.explicit_step
                       "system/global_step")  # ROLL's


def dicts_and_bars(piece: str) -> list[tuple]:
    """The printed dicts and progress-bar readings of one piece of text, in the order they stand in it. A capture whose
    carriage returns were deleted holds on one line every bar redraw since the last dict, then the dict: the reading
    just before a dict is the step it was logged at (the Trainer moves its bar on before it logs)."""
    if "\u2018" in piece or "\u201c" in piece:  # typographic quotes, as an editor or a web page pasted them
        piece = piece.translate(_TYPOGRAPHIC_QUOTES)
    found: list[tuple[int, tuple]] = []
    if "{" in piece:
        for m in _DICT.finditer(piece):
            pairs = _pairs(m.group("body"))
            if pairs is not None:
                found.append((m.start(), ("dict", _prefix_step(m, piece), pairs)))
    if "/" in piece and "[" in piece:
        for m in _BAR.finditer(piece):
            found.append((m.start(), ("bar", int(m.group("n")), int(m.group("total")))))
        if "%" in piece:
            found.extend((m.start(), ("bar", int(m.group("n")), int(m.group("total"))))
                         for m in _PLAIN_BAR.finditer(piece) if _percentage_fits(m))
    return [event for _, event in sorted(found, key=lambda f: f[0])]


def _percentage_fits(m: re.Match) -> bool:
    """Whether a plain bar's percentage is its n/total (tqdm rounds it), as a progress bar's is and a line that only
    looks like one (`5% 3/4 [note]`) need not be."""
    total = int(m.group("total"))
    return total > 0 and abs(int(m.group("pct")) - 100 * int(m.group("n")) / total) <= 1


# train()'s return value as a notebook cell shows it,
# `TrainOutput(global_step=2, training_loss=3.28..., metrics={...})`: its metrics are the closing summary, written at
# that global step
_TRAIN_OUTPUT = re.compile(r"\bTrainOutput\(global_step=(\d{1,18}),[^{}]*\bmetrics=\s*\Z")


def _prefix_step(m: re.Match, line: str) -> int | None:
    """The step a dict line's prefix names (a TrainOutput's global_step for its metrics); not a lowercase `step N:` on
    a line that names an epoch too (a loop's `epoch 2 step 10: {...}` counts within the epoch)."""
    if not m.group("step"):
        output = _TRAIN_OUTPUT.search(line, 0, m.start()) if "TrainOutput(" in line else None
        return int(output.group(1)) if output else None
    counts_within = m.group(0).startswith(("step", "rollout")) and "epoch" in line[:m.start()].lower()
    return None if counts_within else int(m.group("step"))


def _pairs(body: str) -> dict | None:
    """The numeric pairs of a dict body, or None when it is not a training log dict."""
    # ROLL tags a metric with its reduction (`actor/pg_loss@sum`); slime prefixes `train/`
    found = {(m.group("key") if m.group("key") is not None else m.group("key2")).split("@")[0]: m.group("val")
             for m in _PAIR.finditer(body)}
    if not any(k in _LOG_KEYS or k.startswith("eval_") or canonical_metric(k) in _LOG_KEYS for k in found):
        return None
    if is_hyperparameter_dict(list(found)):  # a script's printed arguments dict: its learning_rate is no record
        return None
    pairs = {}
    for key, val in found.items():
        if key in EXPLICIT_STEP_KEYS:
            pairs[key] = val.strip("'\"")
            continue
        try:
            pairs[key] = float(_WRAPPED.sub(lambda m: m.group(1) or m.group(2), val.strip("'\"")))
        except ValueError:  # '0:09:01', 'True', a list: not a scalar
            continue
    for theirs, ours in _OWN_LOSS_KEYS:  # the step rules below tell a training dict by its `loss`
        if theirs in pairs and ours not in pairs:
            pairs[ours] = pairs.pop(theirs)
    return fairseq_dict_in_nats(pairs)


def with_taken_losses(events: list[tuple], flavour: str | None = None) -> list[tuple]:
    """The events, each dict's through `_taken_loss_as_loss`. Applied once the console's dict `flavour` is told
    (stdout): such a dict is a hand-written loop's, which no rule may take for the Trainer's by its new `loss`. Not
    where the console is the Trainer's or any of its dicts has a plain `loss`: a callback's `{'mean_loss': x}` beside
    the logged loss is another series, no second training loss (review 29b)."""
    if flavour == "hf_trainer" or any(e[0] == "dict" and "loss" in e[2] for e in events):
        return events
    return [("dict", e[1], _taken_loss_as_loss(e[2])) if e[0] == "dict" else e for e in events]


def _taken_loss_as_loss(pairs: dict) -> dict:
    """A hand-written loop's dict whose training loss is named for how it was taken and has no plain `loss`
    (minhchuxuan_GloVe_TextSumm's `{'epoch': '12', 'checkpoint_loss': X, 'average_training_loss': X, ...}`), with that
    one renamed `loss` (`key_values.averaged_as_loss`): a training record, dated as one. The Trainer's closing summary
    keeps its `train_loss` (the mean over the run, beside `train_runtime`: not one more logged step), and an
    evaluation's dict (its `eval_` keys) any other average a script added to it (Jinyeop3110_Post_Training_Protein_LLM's
    `{'eval_loss': 3.39, ..., 'token_avg_loss': 3.59, ...}`)."""
    if "loss" in pairs or SUMMARY_BESIDE_TRAIN_LOSS.intersection(pairs) or any(k.startswith("eval_") for k in pairs):
        return pairs
    return dict(averaged_as_loss(list(pairs.items())))


# Trainers that print the loss under a name of their own: SetFit's `embedding_loss`, the HF course's Accelerate loop's
# `loss/train` (and `loss/eval`), OpenRLHF's `gpt_loss`
_OWN_LOSS_KEYS = (("embedding_loss", "loss"), ("eval_embedding_loss", "eval_loss"), ("loss/train", "loss"),
                  ("loss/eval", "eval_loss"), ("gpt_loss", "loss"))


# A scalar printed inside its wrapper: numpy 2's repr (`np.float64(0.25)`) or a torch tensor's (`tensor(2.31,
# device='cuda:0')`, cut at its first comma by `_PAIR`).
_WRAPPED = re.compile(r"^(?:np|numpy)\.(?:float|int)\d*\(([^()]*)\)$|^tensor\(([^(),]*)\)?$")
