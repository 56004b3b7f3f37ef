"""Console step lines of hand-written training loops: the shapes no framework owns, told by a step counter and a
loss (or a loss alone) with their numbers:
* lucidrains' scripts (x-transformers train_enwik8.py, train_belief_state.py:112,121): `training loss: 2.48` alone on
  its line once a batch (or behind the tqdm bar it was printed after), `validation loss: 2.51` every few batches
  (kind "loss_print"): no step; `step_numbering.uncounted_lines_numbered` numbers the n-th training print batch n and
  puts a validation print at the batch before it.
* Any other short line of a hand-written training loop that names a step counter and a loss, each with its number:
  `Epoch 1/3, Step 100/1000, Loss: 2.3456, LR: 1e-4`, `Step 100: loss = 2.3456`, `[Epoch 1][Step 100] loss: 2.3`,
  `step 100 | loss 2.3456 | lr 1e-4`, `2024-01-01 12:00:00 - INFO - Step 100 - loss: 2.3456`, a loguru line of the
  loop's `name=value` locals `... - [0.06%] batch_index=64 loss=11.0210` (`batch_index`, `batch_idx`, `batch`, `it`
  count only as such a pair), a bracketed iteration with the share done (`[1000 - 20.0%] loss = 1.3149`, a seq2seq
  lab's print) (kind "generic"). Only
  the names it knows are read (loss, train / training loss, val / validation / eval loss, lr / learning rate, grad
  norm, epoch, perplexity, accuracy); the step is the counter as printed, the epoch (`Epoch 2`, or a bracketed tag:
  `[E2] step 0 loss X`) as a metric (the stdout reader numbers steps that start over each epoch on). A line counted
  by its iteration that prints the optimizer step beside it (LitGPT's `iter 46 step 1`) keeps that step as
  `optimizer_step`. A line holding a dict (`{`) is the dict reader's. A line printed
  once an epoch with no step counter (`Epoch 1/10 | Train Loss: 2.3 | Val Loss: 2.5`, LitGPT's `loss train:`) is
  kind "generic_epoch": epoch E is its step.
* A loop's once-an-epoch logger line of its two losses by split name and a perplexity: `Epoch 007: train=1.9021,
  val=1.9530, ppl=7.05 [BEST]` (kind "generic_epoch"): read only where the ppl is exp of one of them, which says
  they are losses (bare `train=` and `val=` may be accuracies).
* A loss printed as a torch tensor (or TensorFlow's `tf.Tensor(8.88, shape=(), dtype=float32)`), one a line, as a
  hand-written loop's `print(loss)` writes it: after a loss label (`loss: tensor(2.31, ...)`, `Loss = tensor(...)`;
  a notebook cell whose code prints its loss bare gets the label: `notebook_code.loss_prints`) or with its
  `grad_fn=<NllLossBackward0>`; a scalar only (kind "printed_tensor"). A bare `tensor(3.2207, device='cuda:0')` may
  be anything the loop printed (an accuracy): metric `printed_tensor`, which is judged for NaN/Inf but not as a loss.
  No step: step 0 until `bar_dated_prints` dates them at the progress bar's count before each (one print a pass of an
  epoch bar) or `step_numbering.uncounted_lines_numbered` numbers such lines by their order (none where the file logs
  its loss another way: a custom loss's print beside the Trainer's own lines).
Lines made only of `key: value` fields (`N | loss X | ...`, `ep: 0, batch: 20, ..., loss: X`, and such fields with
no counter) are `key_values`'; a loop's tqdm bar that shows its loss is `tqdm_loss_bars`', MiniMind's `Epoch:[E/N](n/M)`
lines are `epoch_bracket`'s.
"""
from __future__ import annotations

import re

from ...metric_names import OPTIMIZER_STEP
from .fields import StepLine, FLOAT, _record, perplexity_loss

# A hand-written loop's line: a step counter and a loss, each with its number, in any order and punctuation.
# Separators between a name and its number: spaces or tabs, one of `:=#` or a doubled `::` (the CS224N default project's
# classifier.py: `Epoch 0: train loss :: 1.540, train acc :: 0.427, dev acc :: 0.375`), never a run across lines
# (`\s*[:=]?\s*` is quadratic on a long run of blanks).
_SEP = r"[ \t]*(?:(?:::?|[=#])[ \t]*)?"
# `batch` counts where it is out of a total (`batch 200/2983`) or a logger's `name=value` pair naming an index
# (`batch_index=64 loss=11.02`, a loop's f-string of its locals); so does `it=` (the loop variable), never `it` in
# prose. A bare `batch=32` is as often the batch size printed beside the loss as a counter: not one.
_COUNTER_PAIR = r"(?:batch_(?:index|idx)|it)(?=[ \t]*=[ \t]*\d)"
# The step word may be plural (CasEE's `Epoch id: 1, Training steps: 5, ... Avg loss: 8395.2`, JiaweiSheng_CasEE).
GENERIC_STEP = re.compile(r"(?<![\w/])(?:global[_ ]step|steps?|iter(?:ation)?|batch(?=" + _SEP + r"\[?\d+[ \t]*/)|"
                          + _COUNTER_PAIR + ")"
                          + _SEP + r"\[?(\d{1,12})(?:[ \t]*/[ \t]*(\d{1,12}))?\]?(?![\w.]|/)", re.IGNORECASE)
# The iteration with the share of the run done, bracketed before the loss (DeepLearningZeroToAll's PyTorch seq2seq lab
# and its copies, 1-sang_data: `[1000 - 20.0%] loss = 1.3149`, `print("[%d - %.1f%%] loss = %.4f" % ...)`): the count
# is the step; the percent, rounded, is no total.
_PERCENT_DONE = re.compile(r"(?<![\w/])\[[ \t]*(\d{1,12})[ \t]+-[ \t]+\d{1,3}(?:\.\d+)?%[ \t]*\]()")
GLOBAL_STEP = re.compile(r"(?<![\w/])global[_ ]step" + _SEP + r"(\d{1,12})()(?![\w.]|/)", re.IGNORECASE)
# The loss named for its criterion, PyTorch's class name as a loop prints it (styxjedi/ada-self-attn-defseq: `Epoch
# [1/100], Step [10/734], CrossEntropyLoss: 10.6802, Perplexity: 43486.9354`): the loss where no plain one is beside it.
_CROSS_ENTROPY = r"cross[_ ]?entropy[_ ]?loss"
_CROSS_ENTROPY_NAME = re.compile(_CROSS_ENTROPY)
_CRITERION_LOSS = "criterion_loss"
# A loss named with its split or kind before it (`Train Loss`, `val_loss`, `total loss`) or its split after it
# (LitGPT's `loss train:`, `Loss Val:`); any other word before it (`aux loss`, `kl loss`, `scaled loss`) is another
# loss, passed over. A number may end its logger message's sentence (ThAIKeras/char-rnn-text-generation's `epoch: 0,
# duration: 368s, loss: 3.12742.`): a full stop after it is no part of it, a dot before a digit or letter is.
_SPLIT = r"(?:train(?:ing)?|val(?:id|idation)?|eval|test|dev)"
# A bare counter opening the line before a named split's loss (Ideami's small-LLM course: `5300: train loss: 3.49 / val
# loss: 3.62`, Hari-Krishna-QmFuZGk_llm_mastery): the step, as `step 5300: train loss ...` is.
_LEADING_COUNTER = re.compile(r"[ \t]*(\d{1,12})()[ \t]*:[ \t]*(?=" + _SPLIT + r"[_ ]loss\b)", re.IGNORECASE)
# A loss per unit of text (the nn4nlp course's `iter 0: train loss/word=6.2583, ppl=522.3457`, 6ma6X_nn4nlp-code): the
# loss, its split word before it as any loss's.
_PER_UNIT = r"/(?:word|token|char(?:acter)?|byte)s?"
_GENERIC_PAIR = re.compile(r"(?<![\w/.-])(loss[_ ]scale|" + _CROSS_ENTROPY
                           + r"|(?:([a-z]+)[_ .-]{1,2})?loss(?:[_ ]" + _SPLIT + r"|" + _PER_UNIT + r")?|(?:[a-z]+_)?lr|"
                           r"learning[_ ]rate|grad(?:ient)?[_ ]norm|gnorm|epoch|"
                           r"(?:(?:" + _SPLIT + r"[_ ])?(?:chosen|rejected)[_ ])?reward|"
                           r"(?:" + _SPLIT + r"[_ ])?(?:ppl|perplexity|"
                           r"acc(?:uracy)?)|" + _SPLIT + r"[_ ](?:em|f1))" + _SEP.replace("#", "") + r"(?:tensor\()?"
                           r"([-+]?(?:nan|inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?))(%?)(?!\w|\.\w|,\d)", re.IGNORECASE)
_LOSS_KINDS = frozenset({"train", "training", "total", "lm", "avg", "average", "mean", "running", "batch",
                         "val", "valid", "validation", "eval", "test", "dev"})  # held-out ones: `HELD_OUT`
# A line about the best or last value so far, not a step's own (`Best loss 0.123 at step 500`, early stopping).
_NOT_A_STEP = re.compile(r"\bbest\b|early[ _-]?stop", re.IGNORECASE)
_GENERIC_NAMES = {"lr": "learning_rate", "learning rate": "learning_rate", "grad norm": "grad_norm",
                  "gnorm": "grad_norm",
                  "gradient norm": "grad_norm", "epoch": "epoch", "ppl": "perplexity", "perplexity": "perplexity",
                  "acc": "accuracy", "accuracy": "accuracy", "reward": "reward",
                  # an extractive-QA evaluation's exact match and token F1 (SQuAD's `val_em=78.49% val_f1=85.87%`,
                  # gkrls_straggle-ml-experiments), named only after a split: `em` alone is any abbreviation
                  "em": "exact_match", "f1": "f1"}
HELD_OUT = re.compile(r"val|eval|test|dev", re.IGNORECASE)
# A generic line is read for its loss, or for a held-out accuracy printed alone (Tianshi-Xu's CS336 SFT loop:
# `Step 15 eval_acc: 0.278` between its `Step N loss: L` lines).
_GENERIC_NEEDS = {"loss", "eval_loss", "eval_accuracy"}
HELD_OUT_ACCURACY = re.compile(r"(?<![a-z])" + _SPLIT + r"[_ ]acc", re.IGNORECASE)
LOSS_WORD = re.compile(r"loss", re.IGNORECASE)
# A loop that prints once an epoch, with the epoch as its only counter: `Epoch 1/10 | Train Loss: 2.3 | Val Loss: 2.5`;
# the epoch may be a bracketed tag (`[E2] step 0 loss 0.49`, `[ep 3/5]`) or `Ep N` before the step in parentheses
# (the loops of Raschka's "LLMs from scratch" and their copies: `Ep 1 (Step 000005): Train loss 0.687, Val loss ...`).
# The word may be the loop author's own language's (070705gavrilovaanna_text_generation:
# `эпоха 1: train_loss = 6.427, val_loss = 5.959`); only the nominative, so
# `сохранена лучшая модель на эпохе 1 с val_loss = 5.959` counts nothing.
_EPOCH_WORDS = ("epoch", "эпоха", "epoche", "época", "epoca", "époque", "epoka")
# The epoch's number may be named as an index after the word (CasEE's `Epoch id: 1, Training steps: 5, ...`,
# `epoch_idx: 3`, `Epoch no. 2`): still the epoch.
_EPOCH_INDEX = r"(?:[ \t_](?:id|idx|index|no\.?|num))?"
_GENERIC_EPOCH = re.compile(r"(?<![\w/])(?:(?:" + "|".join(_EPOCH_WORDS) + ")" + _EPOCH_INDEX + _SEP
                            + r"\[?|\[ep?[ \t]*(?=\d{1,6}(?:[ \t]*/[ \t]*\d{1,6})?\])"
                           r"|ep[ \t]+(?=\d{1,6}[ \t]+\(step\b))"
                           r"(\d{1,6})(?:[ \t]*/[ \t]*(\d{1,6}))?\]?(?![\w.]|/)", re.IGNORECASE)
# A batch counted within the epoch printed right after it, as TensorFlow 2's Transformer tutorial and its copies print
# `Epoch 1 Batch 0 Loss 2.0991 Accuracy 0.0000` (Gregorgeous/ula-transformer-tensorflow2.0): the batch is the counter
# (a bare `batch 32` elsewhere may be the batch size); the tutorial's `Epoch 1 Loss 2.0357 Accuracy 0.0000` after them
# is the epoch's summary, no step of its own. Only that print's spaced words: a loop's `Epoch: 0, Batch: 100, Loss: X`
# pairs stay epoch-only lines numbered in file order, as the SummaryWriter beside such a log counts them
# (shresthakamal_dialogpt2-finetune: steps 0, 1, 2 in its event file for batches 0, 100, 200).
_BATCH_AFTER_EPOCH = re.compile(r"(?<![\w/])epoch[ \t]+\d{1,6}[ \t]+batch[ \t]+(\d{1,12})()[ \t]+(?=loss\b)",
                                re.IGNORECASE)
_BARE_COUNT = re.compile(r"(?<![\w./:-])(\d{1,12})[ \t]*/[ \t]*(\d{1,12})(?![\w.:]|/)")
# a line's leading date before a time is no count: mmengine's year-less `10/30 22:18:02 - mmengine - INFO - ...`
_LEADING_DATE = re.compile(r"^\s*\d{1,2}/\d{1,2}[ \t]+\d\d:\d\d")
# mmengine's epoch-based loop (XTuner before its Iter(train) lines): `Epoch(train) [1][200/735]`, the iteration counted
# within the epoch from 1 to its length
_MMENGINE_EPOCH = re.compile(r"\bEpoch\(train\)\s*\[(\d{1,6})\]\s*\[\s*(\d{1,12})/(\d{1,12})\]")
_AFTER_EPOCH = re.compile(r"epoch\W{0,3}$", re.IGNORECASE)
_GENERIC_REACH = 160  # characters before a `loss` that its line's step counter may stand in
_GENERIC_MAX_LINE = 400  # a longer line is prose, a table or a dump, not one training loop's print


# A scalar torch tensor alone on a line (a loss label before it at most): `tensor(nan, device='cuda:0')`; or a scalar
# TensorFlow tensor as eager mode prints it, `tf.Tensor(8.88289, shape=(), dtype=float32)` (a GradientTape loop's
# `print(loss)`: AaronBarbosa12_transformer_model), its `shape=()` saying it is one number.
PRINTED_TENSOR = re.compile(r"^\s*((?:train(?:ing)?[ _])?loss\s*[:=]?\s*)?(?:tf\.Tensor|tensor)\(\s*"
                            r"([-+]?(?:nan|inf|\d+\.?\d*(?:e[-+]?\d+)?))\s*"
                            r"(?:,\s*(?:shape=\(\)|(?:device|dtype|grad_fn|requires_grad)=[^()]*?(?:<[\w]+>)?))*\)\s*$",
                            re.IGNORECASE)


# lucidrains' training scripts (x-transformers train_enwik8.py, train_belief_state.py:112,121 and their kin):
# `training loss: 2.48` once a batch and `validation loss: 2.51` every VALIDATE_EVERY batches, the whole line, or after
# the tqdm bar it was printed behind (`training:   1%|...| 1/100000 [00:10<...]training loss: 2.48`); no step
LOSS_PRINT = re.compile(r"^(?:[^\n]*\|\s*\d{1,18}/\d{1,18} \[[^\]]*\])?(training|validation) loss: (" + FLOAT
                         + r")\s*$")


def has_generic_line(text: str) -> bool:
    """Whether a log holds a line with a step counter before a loss (kind "generic"): looked for before each `loss`
    in the text (case aside), in what precedes it on its line outside a dict; one regex over a whole console with
    a case-blind counter at every position takes a second."""
    low = text.lower()  # `Iter 25: Train loss`, `Step 10 | Loss:`: the words in any case
    at = low.find("loss")
    while at >= 0:
        before = low[max(0, at - _GENERIC_REACH):at]
        before = before[max(before.rfind("\n"), before.rfind("\r"), before.rfind("{")) + 1:]
        if ("step" in before or "iter" in before or "=" in before) and GENERIC_STEP.search(before) or (
                any(w in before for w in _EPOCH_WORDS) and _GENERIC_EPOCH.search(before)) \
                or ("/" in before and bare_count(before)) \
                or ("%]" in before and _PERCENT_DONE.search(before)) or _opens_with_a_counter(low, at - len(before)):
            return True
        at = low.find("loss", at + 4)
    return False


def _opens_with_a_counter(text: str, start: int) -> bool:
    """Whether the line starting at `start` opens with a bare counter before a split's loss (`_LEADING_COUNTER`)."""
    return (start == 0 or text[start - 1] in "\r\n") and _LEADING_COUNTER.match(text, start) is not None


def hand_written_line(_: re.Match, line: str, last_line: bool) -> StepLine | None:
    """A short line of a hand-written loop with a loss among the names it knows (module docstring), counted by the
    first of: a step word (`Step 100`, `iter 25:`; kind "generic"), a bare `n/M` count that is not the epoch's
    (`| epoch 1 | 200/ 2983 batches |`, `Training [===] 8.5% 5000/58874 |`; "generic" too), a batch right after the
    epoch (`Epoch 1 Batch 0 Loss 2.09`; "generic"), the epoch alone (`Epoch 1/10 | Train Loss: 2.3`; kind
    "generic_epoch"). On a file's last line the last pair may be cut: left
    out."""
    if len(line) > _GENERIC_MAX_LINE or "{" in line or _NOT_A_STEP.search(line):
        return None
    metrics, cut = generic_pairs(line, last_line)
    if not metrics:
        return None
    mm = _MMENGINE_EPOCH.search(line)
    if mm is not None:  # the run's own count of iterations: the epochs before this one, whole, and this one's
        epoch, i, length = (int(g) for g in mm.groups())
        return _record("generic", (epoch - 1) * length + i, None, metrics + [("epoch", epoch - 1 + i / length)], cut)
    m = GLOBAL_STEP.search(line) or GENERIC_STEP.search(line) or bare_count(line) \
        or _BATCH_AFTER_EPOCH.search(line) \
        or _PERCENT_DONE.search(line) or _LEADING_COUNTER.match(line)
    if m is not None:
        epoch = _GENERIC_EPOCH.search(line) if not any(k == "epoch" for k, _ in metrics) else None
        if epoch is not None:  # `Epoch [2/10], Step [100/600]`: the bracketed epoch the pairs do not take
            metrics = metrics + [("epoch", float(epoch.group(1)))]
        return _record("generic", int(m.group(1)), m.group(2) or None, metrics + _optimizer_step(m, line), cut)
    m = _GENERIC_EPOCH.search(line)
    if m is None:
        return None
    metrics = [(k, v) for k, v in metrics if k != "epoch"] + [("epoch", float(m.group(1)))]
    return _record("generic_epoch", int(m.group(1)), m.group(2), metrics, cut)


def stepless_pairs(line: str, last_line: bool) -> tuple[list[tuple[str, float]], bool]:
    """The known pairs of a short line with a loss that names no counter and no epoch (what `hand_written_line` leaves
    unread: `Loss: 8.6529, BLEU: 0.00`), and whether its last pair was cut; ([], False) for any other line."""
    if len(line) > _GENERIC_MAX_LINE or "{" in line or _NOT_A_STEP.search(line) or _MMENGINE_EPOCH.search(line) \
            or GLOBAL_STEP.search(line) or GENERIC_STEP.search(line) or bare_count(line) \
            or _GENERIC_EPOCH.search(line) \
            or _PERCENT_DONE.search(line):
        return [], False
    metrics, cut = generic_pairs(line, last_line)
    return (metrics, cut) if any(name in ("loss", "eval_loss") for name, _ in metrics) else ([], False)


def _optimizer_step(counter: re.Match, line: str) -> list[tuple[str, float]]:
    """A line counted by its iteration (micro-batch) that also prints the optimizer's step after it (LitGPT's
    `iter 46 step 1 | loss train: 3.724`): that step as the metric OPTIMIZER_STEP (whether the weights were updated
    between lines), else []."""
    if not counter.group(0).lower().startswith("iter"):
        return []
    step = next((m for m in GENERIC_STEP.finditer(line, counter.end()) if m.group(0).lower().startswith("step")), None)
    return [(OPTIMIZER_STEP, float(step.group(1)))] if step is not None else []


def bare_count(line: str) -> re.Match | None:
    """The first `n/M` on the line with n <= M that is not an epoch's (`Epoch 1/3`) or part of a date or rate."""
    dated = _LEADING_DATE.match(line)
    for m in _BARE_COUNT.finditer(line, dated.end() if dated else 0):
        if int(m.group(1)) <= int(m.group(2)) and not _AFTER_EPOCH.search(line, 0, m.start()):
            return m
    return None


def generic_pairs(line: str, last_line: bool) -> tuple[list[tuple[str, float]], bool]:
    """The known (name, value) pairs of a generic line, first of each name; none unless a loss is among them."""
    pairs = _GENERIC_PAIR.findall(line)
    # a cut number reads as a smaller one; a cut `nan` cannot be told from a whole one and is kept (a NaN hidden
    # by dropping the last line would hide a broken run)
    cut = last_line and bool(pairs) and line.rstrip().endswith(pairs[-1][2] + pairs[-1][3]) \
        and pairs[-1][2].lower().lstrip("+-") not in ("nan", "inf")
    found: dict[str, float] = {}
    for key, before, raw, percent in pairs[:-1] if cut else pairs:
        name = _pair_name(key.lower(), before.lower())
        # the pattern only takes what float() reads (nan, inf, 1e-4, 2.); `85.2%` is 0.852
        if name is not None and name not in found:
            found[name] = float(raw) / 100 if percent else float(raw)
    criterion = found.pop(_CRITERION_LOSS, None)
    if criterion is not None and "loss" not in found:
        found = {"loss": criterion, **found}
    found = _split_perplexities_as_losses(line, pairs[:-1] if cut else pairs, found)
    if "loss" in found and "eval_loss" not in found and _tagged_held_out(line):
        found = {"eval_loss" if name == "loss" else name: value for name, value in found.items()}
    if "eval_loss" in found and "loss" not in found:  # a held-out report: its bare `Acc` is the held-out one
        found = {HELD_OUT_BESIDE.get(name, name): value for name, value in found.items()}
    return (list(found.items()) if found.keys() & _GENERIC_NEEDS else []), cut


def _pair_name(lowered: str, kind: str) -> str | None:
    """The metric a generic line's key names (`lowered`: the key in lower case; `kind`: the word before a loss, if
    any), None for a loss that is not the training loss."""
    if lowered.replace("_", " ") == "loss scale":  # a dynamic loss scale (CPM-2's `| loss scale 1024.0 |`)
        return "loss_scale"
    if _CROSS_ENTROPY_NAME.fullmatch(lowered):
        return _CRITERION_LOSS  # the loss only where no plain one is printed beside it (`generic_pairs`)
    if "loss" in lowered:
        if kind and kind not in _LOSS_KINDS:
            return None  # `aux loss`, `kl loss`, `scaled loss`: not the training loss
        return "eval_loss" if HELD_OUT.search(lowered) else "loss"
    if lowered.endswith("reward") and ("chosen" in lowered or "rejected" in lowered):
        # a preference trainer's implicit reward of each side of its pairs (mlx-lm's DPO `Chosen reward -8.05`),
        # TRL's rewards/chosen: no RL reward to rise
        side = "rewards/chosen" if "chosen" in lowered else "rewards/rejected"
        return "eval_" + side if HELD_OUT.match(lowered) else side
    if lowered.endswith("lr"):  # `lr`, or the first of several groups' (`backbone_lr 9.67e-06  proj_lr ...`)
        return "learning_rate"
    # a held-out split's perplexity or accuracy is an eval metric (`valid ppl`)
    split, _, base = lowered.replace("_", " ").rpartition(" ")
    name = _GENERIC_NAMES.get(lowered.replace("_", " ")) or _GENERIC_NAMES[base]
    return "eval_" + name if HELD_OUT.search(split) else name


# A perplexity named by its split (`Train perplexity: 1439.57`, `Validation perplexity: 1005.25`: the KU Leuven RNN-LM
# tutorial's run_lm, Yanhan-ss_speech-recognition, whose lines print no loss): exp of that split's mean loss
# (letters, not word characters, around it: `train_epoch_loss` names a loss, `glossary` and `lossless` do not)
_NAMES_A_LOSS = re.compile(r"(?<![a-z])loss(?:es)?(?![a-z])", re.IGNORECASE)
_SPLIT_PERPLEXITY = re.compile(r"^(" + _SPLIT + r")[_ ](?:ppl|perplexity)$", re.IGNORECASE)


def _split_perplexities_as_losses(line: str, pairs: list[tuple], found: dict[str, float]) -> dict[str, float]:
    """`found` with the loss of each split-named perplexity (its natural log: `Train perplexity` -> loss, a held-out
    split's -> eval_loss; inf stays inf) where the line prints no loss of its own; a bare `ppl` names no split and is
    no loss, and a value not above 0 is no perplexity. A line that names a loss this reader could not take (PEFT's
    `train_epoch_loss=tensor(1.6026, ...)`) is left to the readers that can: a perplexity there is checked against its
    loss (tests/test_peft_epoch_lines_eval_bars_lone_loss_t5_vocab.py), never put in its place."""
    if found.keys() & {"loss", "eval_loss"} or _NAMES_A_LOSS.search(line):
        return found
    losses: dict[str, float] = {}
    for key, _, raw, percent in pairs:
        split = _SPLIT_PERPLEXITY.match(key)
        value = float(raw)
        if split and not percent and not value <= 0:
            losses.setdefault("eval_loss" if HELD_OUT.search(split.group(1)) else "loss", perplexity_loss(value))
    return {**losses, **found}


# A held-out split's tag before a bare loss (`Epoch 1: valid: loss 3.12; accuracy 0.41` after `Epoch 1: train: loss
# 3.86; ...`, AugustinCombes_icu_MLM): the line reports that split's evaluation, not a training point.
_HELD_OUT_TAG = re.compile(r"(?<![\w/.-])(?:val(?:id|idation)?|eval(?:uation)?|test|dev)[ \t]*:[ \t]*loss\b",
                           re.IGNORECASE)


def _tagged_held_out(line: str) -> bool:
    """Whether the line's first loss is the one a held-out split's tag names (`_HELD_OUT_TAG`), not a `train loss`
    before a `val: loss`."""
    tag = _HELD_OUT_TAG.search(line)
    return tag is not None and tag.end() - len("loss") == line.lower().find("loss")


# A line whose only loss is a held-out one reports an evaluation: the accuracy or perplexity it prints with no split
# name beside it is that evaluation's (shambhavikris_Reward_Alignment: `Epoch: 1, Test Loss: 0.6713, Acc: 0.5772`)
HELD_OUT_BESIDE = {"accuracy": "eval_accuracy", "perplexity": "eval_perplexity"}
