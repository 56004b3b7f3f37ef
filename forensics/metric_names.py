"""The timeline's metric vocabulary: every logged key or TensorBoard tag mapped to one name.

`train/loss`, `loss`, Megatron's `lm loss`, NeMo's `reduced_train_loss`, OLMo's
`train/CrossEntropyLoss` -> `loss`; `eval/loss`, `eval_loss`, `val_loss` -> `eval_loss`;
`lr`, `learning_rate`, `learning-rate` -> `learning_rate`; and so on. Names not listed keep their
own spelling (after the `train/` / `eval/` / `val/` / `valid/` / `validation/` / `validation_` / `test/` prefix is
turned into ours: a held-out split's metric is `eval_<name>`).
"""
from __future__ import annotations

import re

_ALIASES = {
    "lr": "learning_rate",
    "learning-rate": "learning_rate",
    "train_lr": "learning_rate",
    # a script's own CSV column, read lower-cased (ChristianPE1_transformer-test: `Epoch,Loss,CurrentLR,BestLoss`)
    "current_lr": "learning_rate",
    "currentlr": "learning_rate",
    "grad_norm_total": "grad_norm",
    "gradient_norm": "grad_norm",
    "total_norm": "grad_norm",
    "current_loss": "loss",
    # OpenAI fine-tuning results as W&B's OpenAI integration logs them (per step; not HF's `train_loss` average)
    "training_loss": "loss",
    "validation_loss": "eval_loss",
    # Megatron TensorBoard tags and console keys (megatron/training/training.py training_log)
    "lm loss": "loss",
    "lm loss validation": "eval_loss",
    "lm loss validation ppl": "eval_ppl",
    "grad-norm": "grad_norm",
    "loss-scale": "loss_scale",
    "num-zeros": "num_zeros",
    "params-norm": "params_norm",
    "skipped-train-samples": "skipped_train_samples",
    "batch-size": "global_batch_size",
    "world-size": "world_size",
    "iteration-time": "iteration_time_s",
    # GPT-NeoX's held-out tags (megatron/training.py evaluate_and_print_results: `validation/<key>`); its training
    # loss, train/lm_loss, is read as the loss only where no loss is logged beside it (tensorboard.read)
    "validation/lm_loss": "eval_loss",
    "validation/lm_loss_ppl": "eval_ppl",
    "validation/val_loss": "eval_loss",  # NeMo-RL's TensorBoard tag (nemo_rl/algorithms/sft.py validate)
    # NeMo (Lightning self.log names)
    "reduced_train_loss": "loss",
    "val_loss": "eval_loss",
    "train_step_timing in s": "train_step_timing",
    # OLMo / OLMo-core console and W&B names
    "CrossEntropyLoss": "loss",
    "CE loss": "loss",
    "optim/total_grad_norm": "grad_norm",
    "optim/total grad norm": "grad_norm",
    "optim/learning_rate_group0": "learning_rate",
    "optim/LR (group 0)": "learning_rate",
    # verl's RL trainers (ray_trainer.py metrics): the actor's gradient norm and LR, and the mean score the
    # reward function gave (critic/rewards/mean is that score less the KL penalty, when one is applied)
    "actor/grad_norm": "grad_norm",
    "actor/lr": "learning_rate",
    "critic/score/mean": "reward",
    # OpenRLHF (openrlhf/trainer/sft_trainer.py: the SFT loss is `gpt_loss`; ppo_actor.py: `actor_grad_norm`,
    # `actor_lr`) and TRL's PPOTrainer, whose only policy loss is `loss/policy_avg` (it logs no `loss`)
    "gpt_loss": "loss",
    # fairseq (progress_bar.py: `gnorm`; a validation's keys are `valid_<name>` in its JSON log format)
    "gnorm": "grad_norm",
    # SetFit renames the Trainer's loss (setfit/trainer.py); the HF course's Accelerate loop logs loss/train, loss/eval
    "embedding_loss": "loss",
    "eval_embedding_loss": "eval_loss",
    "loss/train": "loss",
    "loss/eval": "eval_loss",
    # fairseq2's display names (its metrics/train.jsonl keys and console)
    "NLL Loss": "loss",
    "Gradient Norm": "grad_norm",
    "Learning Rate": "learning_rate",
    "valid_loss": "eval_loss",
    "valid_ppl": "eval_ppl",
    # OpenNMT-py's TensorBoard tags (onmt/utils/statistics.py log_tensorboard): `valid/xent` is the held-out
    # cross-entropy; its training twin `train/xent` is the loss where nothing else is (`tracker_metric_names`)
    "valid/xent": "eval_loss",
    "valid/ppl": "eval_ppl",
    "actor_grad_norm": "grad_norm",
    "actor_lr": "learning_rate",
    "loss/policy_avg": "loss",
    # slime's rollout reward (slime/ray/train_metric_utils.py) and ROLL's actor grad norm (roll/pipeline/rlvr)
    "rollout/raw_reward": "reward",
    "actor_train/grad_norm": "grad_norm",
}


# A mean negative log-likelihood of the targets a token IS the cross-entropy loss every LM trainer logs as `loss`: a
# script that names it `nll` (sundial-org_voice-edits' train_log.jsonl: `nll` each step, `val_nll` each epoch) logs
# its loss so. Read as the loss only where no key is named a loss (json_history.with_loss_names): beside a `loss` the
# nll is a part of it (a VAE's nll + kl, a label-smoothed loss). `nll_loss` is never one (fairseq's and DPO's part
# logged beside `loss`).
NLL_LOSS_NAMES = {"nll": "loss", "train_nll": "loss", "val_nll": "eval_loss", "valid_nll": "eval_loss",
                  "eval_nll": "eval_loss", "dev_nll": "eval_loss", "test_nll": "eval_loss"}


def canonical_metric(name: str) -> str:
    """Map a logged key or TensorBoard tag to the timeline's metric vocabulary.

    >>> [canonical_metric(t) for t in ("train/loss", "eval/loss", "val/loss", "lr", "train/train_loss")]
    ['loss', 'eval_loss', 'eval_loss', 'learning_rate', 'train_loss']
    >>> [canonical_metric(t) for t in ("validation_token_accuracy", "valid/acc", "validation/lm_loss")]
    ['eval_token_accuracy', 'eval_acc', 'eval_loss']
    """
    name = name.strip()
    if name in _ALIASES:  # a name listed whole (GPT-NeoX's `validation/lm_loss`) before its prefix is read
        return _ALIASES[name]
    if name.startswith("train/"):
        name = name[len("train/"):]
    elif name.startswith("test/"):
        name = "test_" + name[len("test/"):]
    else:
        held_out = next((p for p in _HELD_OUT_PREFIXES if name.startswith(p)), None)
        if held_out:
            name = "eval_" + name[len(held_out):]
    return _ALIASES.get(name, name)


# A held-out split's metric (`eval_<name>`): HF's `eval/`, `val/` (verl, nanoGPT forks, many W&B logs), `valid/`
# (OpenNMT-py, fairseq), `validation/` (GPT-NeoX, NeMo-RL) and `validation_` (W&B's OpenAI integration:
# `validation_token_accuracy` beside `validation_loss`). Keras' `val_` is read by `keras_metric_name` alone.
_HELD_OUT_PREFIXES = ("eval/", "val/", "valid/", "validation/", "validation_")


def keras_metric_name(name: str) -> str:
    """A Keras metric's name in the timeline's vocabulary (`model.fit`'s logs): its held-out ones are `val_<name>`.

    >>> [keras_metric_name(n) for n in ("loss", "val_loss", "val_accuracy", "learning_rate")]
    ['loss', 'eval_loss', 'eval_accuracy', 'learning_rate']
    """
    return canonical_metric(name) if not name.startswith("val_") or name == "val_loss" else "eval_" + name[4:]


# What tracker loggers name a step's loss and rate, beyond `canonical_metric`'s names: the torch.utils.tensorboard
# tutorial's `Loss/train` / `Loss/test` (copied into many scripts), Lightning's `self.log(..., on_step=True,
# on_epoch=True)` twins `train_loss_step` / `val_loss_step` and its LearningRateMonitor's `lr-AdamW`.
_SPLIT_LOSS = re.compile(r"^(?:loss/(?P<a>[a-z]+)|(?P<b>[a-z]+)/loss)$")
_TRAIN_SPLITS = ("train", "training")
_HELD_OUT_SPLITS = ("val", "valid", "validation", "validate", "eval", "evaluation", "test", "testing", "dev", "heldout",
                     "holdout")
STEP_LOSS_NAMES = {"train_loss_step": "loss", "val_loss_step": "eval_loss"}


def is_lr_monitor_rate(name: str) -> bool:
    """Lightning's LearningRateMonitor's rate (`lr-AdamW`), not its other groups (`lr-AdamW/pg1`) nor the momentum
    and weight decay it logs beside it (`lr-AdamW-momentum`, `lr-AdamW-weight_decay`)."""
    low = name.lower()
    return low.startswith("lr-") and "/" not in low and not low.endswith(("-momentum", "-weight_decay"))


def tracker_metric_names(tags: list[str]) -> list[str]:
    """The timeline's name of each of a tracker file's tags (TensorBoard, MLflow), read together: a tag that is the
    loss only where nothing else is (Lightning's per-step `self.log("train_loss", loss)`, GPT-NeoX's `train/lm_loss`,
    OpenNMT-py's `train/xent`, a run name's `<run>/loss`;
    HF's `train_loss` is the run's closing mean, logged beside `train/loss`).

    >>> tracker_metric_names(["Loss/train", "Loss/test", "lr-AdamW", "train_loss_step"])
    ['loss', 'eval_loss', 'learning_rate', 'loss']
    >>> tracker_metric_names(["train/loss", "train/train_loss"]), tracker_metric_names(["train_loss", "val_loss"])
    (['loss', 'train_loss'], ['loss', 'eval_loss'])
    >>> tracker_metric_names(["hard/accuracy", "hard/loss", "easy/loss", "critic/loss"])
    ['hard/accuracy', 'loss', 'easy/loss', 'critic/loss']
    >>> tracker_metric_names(["train/loss", "eval/loss", "test/loss"]), tracker_metric_names(["Loss/val", "Loss/test"])
    (['loss', 'eval_loss', 'test_loss'], ['eval_loss', 'test_loss'])
    """
    names = _test_split_apart([_tracker_name(tag) for tag in tags], tags)
    if "loss" in names:
        return names
    sole = next((name for name in _SOLE_LOSSES if name in names and not _closing_summary(name, names)), None)
    if sole is None:
        sole = next((name for name in names if _is_group_loss(name)), None)
    return ["loss" if name == sole else name for name in names]


_TEST_SPLITS = ("test", "testing")


# What the HF Trainer's closing summary logs beside `train_loss` (its mean over the run, `tr_loss / global_step`)
SUMMARY_BESIDE_TRAIN_LOSS = frozenset({"train_runtime", "train_samples_per_second", "train_steps_per_second",
                                       "total_flos"})


def _closing_summary(name: str, names: list[str]) -> bool:
    """Whether `train_loss` is the HF Trainer's closing summary (its runtime and throughput logged beside it), the
    mean over the whole run, not a per-step loss logged under that name (Lightning's `self.log("train_loss", loss)`)."""
    return name == "train_loss" and bool(SUMMARY_BESIDE_TRAIN_LOSS & set(names))


def _test_split_apart(names: list[str], tags: list[str]) -> list[str]:
    """A test split's loss (`test/loss`, `Loss/test`) kept as its own series, `test_loss`, where another held-out
    split's (`eval/loss`, `val/loss`) is the eval loss beside it: two splits in one series would read as one curve
    jumping between them. Alone, the test split's loss is the eval loss."""
    held = [i for i, name in enumerate(names) if name == "eval_loss"]
    tests = [i for i in held if _split_of(tags[i]) in _TEST_SPLITS]
    if not tests or len(tests) == len(held):
        return names
    return ["test_loss" if i in tests else name for i, name in enumerate(names)]


def _split_of(tag: str) -> str | None:
    """The split a loss tag names (`test/loss`, `Loss/test` -> test), or None."""
    split = _SPLIT_LOSS.match(tag.strip().lower())
    return (split.group("a") or split.group("b")) if split else None


# A run's own name over its scalars (a callback's `writer.add_scalar(f"{run}/loss", ...)`): `<group>/loss` is the
# loss where nothing else is, the first group's where several runs share one file; not the loss of a part the model
# trains beside itself (an RL critic or value head, a MoE router's balance loss, a GAN's discriminator), nor a held-out
# split's (`val_epoch/loss`, `test_set/loss`: an evaluation writer's own event file holds no training loss to stand
# beside it)
_GROUP_LOSS = re.compile(r"^(?P<group>[^/]+)/loss$", re.IGNORECASE)
_PART_GROUPS = frozenset({"critic", "value", "vf", "aux", "auxiliary", "router", "moe", "balance", "kl", "z",
                          "disc", "discriminator"})
_HELD_OUT_GROUP = re.compile(r"^(?:" + "|".join(sorted(_HELD_OUT_SPLITS, key=len, reverse=True))
                             + r")(?:_?set)?(?:[_\-. ]|$)")


def is_held_out(name: str) -> bool:
    """Whether a metric name is a held-out split's (eval_accuracy, val/acc, test_acc, evaluation_loss, dev_bleu).

    >>> [is_held_out(n) for n in ("eval_accuracy", "val/acc", "testing_acc", "accuracy", "train/acc", "devices")]
    [True, True, True, False, False, False]
    """
    return bool(_HELD_OUT_GROUP.match(name.strip().lower().replace("/", "_")))


def is_test_split(name: str) -> bool:
    """Whether a metric name is a test split's (test_acc, testing/accuracy, testset_loss), not a validation split's.

    >>> [is_test_split(n) for n in ("test_accuracy", "testing/acc", "eval_accuracy", "val_acc", "tests_passed")]
    [True, True, False, False, False]
    """
    low = name.strip().lower().replace("/", "_")
    return bool(_HELD_OUT_GROUP.match(low)) and low.startswith(_TEST_SPLITS)


def _is_group_loss(name: str) -> bool:
    found = _GROUP_LOSS.match(name.strip())
    group = found.group("group").strip().lower() if found else ""
    return bool(found) and group not in _PART_GROUPS and not _HELD_OUT_GROUP.match(group)


# The loss where no tag is named `loss`, in this order: Lightning's per-step `train_loss`, GPT-NeoX's `train/lm_loss`,
# OpenNMT-py's `train/xent` (its cross-entropy per target token), the total of a `losses/` group (TF object-detection
# style `losses/total_loss` beside `losses/lm_loss`, copied into LM scripts)
_SOLE_LOSSES = ("train_loss", "lm_loss", "xent", "losses/total_loss")


def loss_of_split(split: str) -> str | None:
    """The loss a split's name says (`train` -> loss, `val` / `valid` / `eval` / `test` ... -> eval_loss), or None.

    >>> loss_of_split("train"), loss_of_split("Val"), loss_of_split("curve")
    ('loss', 'eval_loss', None)
    """
    low = split.lower()
    return "loss" if low in _TRAIN_SPLITS else "eval_loss" if low in _HELD_OUT_SPLITS else None


def _tracker_name(tag: str) -> str:
    low = tag.strip().lower()
    if low == "loss":  # `writer.add_scalar("Loss", loss, step)`: the bare name in any case
        return "loss"
    split = _SPLIT_LOSS.match(low)
    named = loss_of_split(split.group("a") or split.group("b")) if split else None
    if named:
        return named
    if is_lr_monitor_rate(low):
        return "learning_rate"
    return STEP_LOSS_NAMES.get(low) or canonical_metric(tag)


# The optimizer's own step, where a console counts its lines by iteration (micro-batch) and prints it beside them
# (LitGPT's `iter 46 step 1 | loss train: X`): it tells whether the weights were updated between the lines.
OPTIMIZER_STEP = "optimizer_step"


# The keys that give a JSON-lines log's step (generic .jsonl logs, fairseq2's `Step`), and the one that gives it in a
# file where no line holds any of them: the epoch of the Meta research repositories' log.txt (DINO, DeiT, MAE,
# ConvNeXt: `{"train_loss": X, "train_lr": Y, "epoch": N}`, one line an epoch). Here, not in the reader, so that
# finding the files needs no reader.
JSON_LINE_STEP_KEYS = ("step", "global_step", "iteration", "iter", "_step", "current_steps", "Step")
JSON_LINE_EPOCH_KEY = "epoch"


# How a training loss was taken, as the word before `_loss` names it (`avg_loss`, `iters_average_Loss`), and the
# words that make such a name a held-out one (`val_avg_loss`, `eval_mean_loss`)
_TAKEN_LOSS_KINDS = frozenset({"train", "training", "lm", "avg", "average", "mean", "running", "batch"})
_HELD_OUT_WORDS = frozenset({"val", "valid", "validation", "eval", "evaluation", "test", "dev", "heldout"})


def is_taken_training_loss(name: str) -> bool:
    """Whether a name is a training loss named for how it was taken (`avg_loss`, `iters_average_Loss`, `running_loss`):
    the word before `_loss` says so and no word says a held-out split. A loss in another sense (`packet_loss`,
    `weight_loss_kg`) or another term of the objective (`aux_loss`) is none.

    >>> [is_taken_training_loss(n) for n in ("avg_loss", "iters_average_Loss", "val_avg_loss", "packet_loss")]
    [True, True, False, False]
    """
    return _taken(name, "_loss", _TAKEN_LOSS_KINDS)


# How an RL loop's reward was taken, by the same rule: the mean over its sampled completions (`avg_reward`,
# `mean_reward`). `train` is no such word here: a split names no average of samples
_TAKEN_REWARD_KINDS = frozenset({"avg", "average", "mean", "running", "batch"})


def is_taken_reward(name: str) -> bool:
    """Whether a name is a reward named for how it was taken (`avg_reward`, `mean_reward`): the word before `_reward`
    says so, no word says a held-out split and none before it names anything but training. The best of a group
    (`best_reward`), one term of the reward (`avg_format_reward`, `format_avg_reward`) or its spread (`avg_reward_std`)
    is none.

    >>> [is_taken_reward(n) for n in ("avg_reward", "train_avg_reward", "best_reward", "avg_format_reward",
    ...                               "format_avg_reward", "val_mean_reward")]
    [True, True, False, False, False, False]
    """
    before = name.lower().split("_")[:-2]  # the words before the taken-word: a term's name, or the training split
    return _taken(name, "_reward", _TAKEN_REWARD_KINDS) and set(before) <= {"train", "training"}


def _taken(name: str, suffix: str, kinds: frozenset) -> bool:
    low = name.lower()
    return (low.endswith(suffix) and low[:-len(suffix)].rsplit("_", 1)[-1] in kinds
            and not _HELD_OUT_WORDS.intersection(low.split("_")))


def series_names_a_loss(stem: str) -> bool:
    """Whether a one-metric file's name names the training or held-out loss, as a tracker's tag would.

    >>> [series_names_a_loss(s) for s in ("train_loss", "eval_loss", "Loss", "eval_acc", "prices")]
    [True, True, True, False, False]
    """
    return names_a_loss(tracker_metric_names([stem]))


def names_a_loss(names) -> bool:
    """Whether one of the timeline's names (as `tracker_metric_names` gives them) is the training or held-out loss."""
    return bool({"loss", "eval_loss"} & set(names))
