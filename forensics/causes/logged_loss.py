"""Cause rules about how the training loss was logged or what it counts, not how training went.

Each rule is `rule(facts) -> Cause | None`.
"""
from __future__ import annotations

from ..analyzers.metrics import format_number
from ..analyzers.padded_labels import masking_advice
from ..analyzers.train_eval_gap import ACCUMULATION_BAND
from ..config import CONSOLE_ACCUMULATION
from ..findings import Cause
from .evidence import Facts, said

# Causes about how the loss was logged or what it counts, not about what went wrong in training, and the first
# incident each explains: the cause of a first incident of another kind they are not (a report says them as a note
# on the log there).
EXPLAINS = {"accumulation_scaled_loss": "train_eval_mismatch", "labels_count_padding": "labels_include_padding"}
LOGGING_CAUSES = tuple(EXPLAINS)

# The transformers releases whose Trainer logged the training loss summed over the gradient-accumulation
# micro-batches instead of averaged (huggingface/transformers#35204; fixed by #35207 in 4.48).
_SUMMING_RELEASES = ("4.46", "4.47")
_VERSION_KEYS = ("transformers_version", "model.transformers_version")


def summed_loss_factor(config, release_unknown_counts: bool = False) -> int:
    """gradient_accumulation_steps where the run's transformers release logged the loss summed over them
    (4.46, 4.47), else 1: what the logged training loss is divided by to be a per-token mean. With
    `release_unknown_counts`, a run whose release is not known gets the benefit of the doubt too (for a
    warning that a summed loss would set off wrongly), unless a message its console shows dates it later."""
    accumulation = config.get("gradient_accumulation_steps")
    release = _release(config)
    maybe = release.startswith(_SUMMING_RELEASES) or (
        release_unknown_counts and not release and not _after_the_summing_releases(config)
        and _fields_allow_a_summing_release(config))
    return accumulation if maybe and isinstance(accumulation, int) and accumulation >= 2 else 1


def stated_accumulation(config):
    """The gradient accumulation a config file states, else the one a console's banner states (its own key,
    `console.gradient_accumulation_steps`): for the tests that see a loss at that many times the eval loss, never
    for dividing a loss on the doubt of an unknown release (every HF console prints the banner)."""
    said_in_config = config.get("gradient_accumulation_steps")
    return said_in_config if said_in_config is not None else config.get(CONSOLE_ACCUMULATION)


def summed_over_unknown_accumulation(config) -> bool:
    """Whether the run's transformers release logged the loss summed over the accumulation steps (4.46, 4.47) while
    no source records how many there were: the logged loss may be that many micro-batch means added up, a number
    nothing here can divide out."""
    return _release(config).startswith(_SUMMING_RELEASES) \
        and not isinstance(config.get("gradient_accumulation_steps"), int)


def _release(config) -> str:
    return next((str(config.get(k)) for k in _VERSION_KEYS if isinstance(config.get(k), str)), "")


def _after_the_summing_releases(config) -> bool:
    """Whether the console's own messages date the release after the summing ones (`transformers_at_least`: 4.56's
    `torch_dtype` deprecation): its Trainer logs the mean, whatever release it is."""
    at_least = config.get("transformers_at_least")
    return isinstance(at_least, str) and tuple(int(p) for p in at_least.split(".")[:2]) >= _FIRST_MEAN_RELEASE


_FIRST_MEAN_RELEASE = (4, 48)  # the fix of huggingface/transformers#35204


# TrainingArguments fields by release (the dataclass in each wheel): `include_for_metrics` came in 4.46,
# `tp_size` in 4.50 (gone in 4.52), and the deprecated `evaluation_strategy` went in 4.51. A release that logged the
# loss summed has the first two of them and not `tp_size`; 4.48 and 4.49 have the same fields, so they stay in doubt.
_SUMMING_RELEASE_FIELDS = ("include_for_metrics", "evaluation_strategy")
_LATER_RELEASE_FIELDS = ("tp_size",)


def _fields_allow_a_summing_release(config) -> bool:
    """Whether the run's TrainingArguments, where one source holds all of them (training_args.bin, the TensorBoard
    `args` text, a tracker's config), has the fields of a release that logged the loss summed; True where no
    source holds them all (nothing rules it out)."""
    dumps = config.whole_training_args()
    return not dumps or any(all(f in keys for f in _SUMMING_RELEASE_FIELDS)
                            and not any(f in keys for f in _LATER_RELEASE_FIELDS) for keys in dumps)


def _accumulation_key(config) -> str:
    return "gradient_accumulation_steps" if config.get("gradient_accumulation_steps") is not None \
        else CONSOLE_ACCUMULATION


def accumulation_scaled_loss(facts: Facts) -> Cause | None:
    """The training loss sits at about gradient_accumulation_steps x the eval loss (a train_eval_mismatch):
    it was summed over the micro-batches, not averaged."""
    # (a training loss summed over micro-batches sits above the eval loss, never under it)
    found = [f for f in facts.of_kind("train_eval_mismatch") if not f.evidence.get("eval_above_train")]
    accumulation = stated_accumulation(facts.config)
    if not found or not isinstance(accumulation, (int, float)) or accumulation < 2:
        return None
    ratio = float(found[0].evidence.get("median_ratio", 0.0))
    if not ACCUMULATION_BAND[0] * accumulation <= ratio <= ACCUMULATION_BAND[1] * accumulation:
        return None
    evidence = [f"the training loss is a median {format_number(ratio)}x the eval loss (from step {found[0].step})",
                said(facts.config, _accumulation_key(facts.config))]
    version_key = next((k for k in _VERSION_KEYS if isinstance(facts.config.get(k), str)), None)
    release = str(facts.config.get(version_key)) if version_key else ""
    if release.startswith(_SUMMING_RELEASES):
        evidence.append(f"{said(facts.config, version_key)}: a release whose Trainer logged the loss summed over "
                        "the accumulation steps (huggingface/transformers#35204)")
    return Cause(
        cause="accumulation_scaled_loss", confidence="likely", evidence=evidence,
        suggestion=(f"Divide the logged training loss by {int(accumulation)} before reading it (or upgrade "
                    "transformers to 4.48 or later, which logs the mean); judge the run by its eval loss. The "
                    "loss curve's shape is still right: only its scale is off."),
        title=f"The training loss was logged summed over {int(accumulation)} accumulation steps, not averaged",
    )


def labels_count_padding(facts: Facts) -> Cause | None:
    """The run's code puts padded input_ids in the labels with nothing masking the pad ids (a
    labels_include_padding finding): the loss counts the padding."""
    found = facts.of_kind("labels_include_padding")
    if not found:
        return None
    return Cause(
        cause="labels_count_padding", confidence="likely", evidence=[found[0].evidence["code"]],
        suggestion=(f"{masking_advice(bool(found[0].evidence.get('encoder_decoder')))}, then read the loss again: "
                    "only the text's tokens count."),
        title="The labels count the padding, so the loss measures padding as well as the task",
    )
