"""The profile's precision: bf16, fp16 or fp32 from the training arguments, the DeepSpeed config or what a console
prints of them, the half precision its logged values are held in (`held_dtype`), else fp16 where a loss scaler shows
in the log."""
from __future__ import annotations

import re

from ..analyzers.metrics import format_number
from ..config import RunConfig
from ..timeline import Timeline
from .held_dtype import eval_losses_held_in_fp16, grad_norms_held_in_bf16, losses_held_in_bf16
from .record import UNKNOWN


def _precision(config: RunConfig, findings, evidence: dict, timeline: Timeline) -> str:
    """The first step that finds a precision: what the run states, then what its logged values are held in, flags
    both off, a loss scaler's signs, train losses on the bfloat16 grid, what the code's own defaults give, then what a
    configuration file no framework reads names by key (the code that ran outranks it), what a report the run wrote
    beside its log names in a field, and last what a README states
    in so many words (prose: the weakest evidence, below anything the run's files show)."""
    for step in (_stated, _held_in_values, _flags_off, _loss_scaler_signs, _losses_in_bf16, _code_defaults,
                 _config_file_keys, _report_states, _readme_states):
        found = step(config, findings, timeline, evidence)
        if found is not None:
            return found
    return UNKNOWN


def _stated(config: RunConfig, findings, timeline: Timeline, evidence: dict) -> str | None:
    """A mixed-precision flag, the mixed precision Unsloth's trainer or the code turns on, the weights' load dtype."""
    for key, name in (("bf16", "bf16"), ("ds.bf16.enabled", "bf16"), ("fp16", "fp16"), ("ds.fp16.enabled", "fp16")):
        if config.get(key) is True:
            return _said(evidence, name, f"{key}=True ({config.source_of(key)})")
    unsloth = config.get("precision.unsloth_mixed")
    if unsloth in ("fp16", "bf16"):
        return _said(evidence, unsloth, f"Unsloth's trainer turns on {unsloth} mixed precision where neither flag is "
                                        f"set, from the model's dtype ({config.source_of('precision.unsloth_mixed')})")
    autocast = config.get("precision.autocast")
    if autocast in ("fp16", "bf16"):
        return _said(evidence, autocast, f"the training loop runs its forward pass under torch's autocast in "
                                         f"{autocast} ({config.source_of('precision.autocast')})")
    policy = config.get("precision.keras_policy")
    if policy in ("fp16", "bf16"):
        return _said(evidence, policy, f"Keras' global policy mixed_{'float16' if policy == 'fp16' else 'bfloat16'} "
                                       f"({config.source_of('precision.keras_policy')})")
    loaded = config.get("model.load_dtype")
    if loaded in _HALF_LOADS:  # the weights themselves in half precision, no mixed-precision flag set: trained so
        return _said(evidence, _HALF_LOADS[loaded], f"the model's weights loaded in {loaded} "
                                                    f"({config.source_of('model.load_dtype')}) and no mixed-precision "
                                                    "flag set")
    return None


def _held_in_values(config: RunConfig, findings, timeline: Timeline, evidence: dict) -> str | None:
    """Unsloth's banner of a bfloat16 GPU, or logged values that are bfloat16 / float16 numbers: before flags both
    off, which a model loaded in half precision and trained without mixed precision has too."""
    for precision, why in (("bf16", _unsloth_console_bf16(timeline)), ("bf16", grad_norms_held_in_bf16(timeline)),
                           ("fp16", eval_losses_held_in_fp16(timeline))):
        if why is not None:
            return _said(evidence, precision, why)
    return None


def _losses_in_bf16(config: RunConfig, findings, timeline: Timeline, evidence: dict) -> str | None:
    """Train losses that are bfloat16 numbers: after a loss scaler's signs, which only fp16 shows (a loss that is no
    cross-entropy, RWKV's reward margin, can be coarse under an fp16 engine too)."""
    why = losses_held_in_bf16(timeline)
    return None if why is None else _said(evidence, "bf16", why)


def _flags_off(config: RunConfig, findings, timeline: Timeline, evidence: dict) -> str | None:
    if config.get("fp16") is False and config.get("bf16") is False:
        return _said(evidence, "fp32", f"fp16 and bf16 both off ({config.source_of('fp16')})")
    if config.get("fp16") is False and any("bf16" not in keys for keys in config.whole_training_args()):
        # TrainingArguments has had a bf16 field since transformers 4.13: a release before it ran fp16 or fp32
        return _said(evidence, "fp32", f"fp16 off, and no bf16 field in its release's TrainingArguments "
                                       f"({config.source_of('fp16')})")
    return None


def _loss_scaler_signs(config: RunConfig, findings, timeline: Timeline, evidence: dict) -> str | None:
    """A GradScaler's saved state, its skipped steps, overflows or dynamic scale: only fp16 training scales its loss."""
    saved = _grad_scaler_file(config)
    if saved is not None:
        return _said(evidence, "fp16", f"the Trainer saved a GradScaler's state ({saved}) under transformers "
                                       f"{_release_said(config)}, which keeps one for fp16 only: bf16 and fp32 scale "
                                       "no loss")
    scaler = next((f for f in findings if f.kind == "skipped_steps" and not f.evidence.get("grad_norm_zero")
                   and not _rate_went_on(f)), None)
    if scaler is not None:
        return _said(evidence, "fp16", f"a loss scaler skipped updates from step {scaler.step} (only fp16 has one; "
                                       "bf16 and fp32 runs apply or break on a non-finite gradient)")
    overflows = timeline.series("overflow").dropna()
    if len(overflows) and float(overflows.max()) > 0:
        return _said(evidence, "fp16", f"a loss scaler reported overflowing gradients and lowered its scale (step "
                                       f"{int(overflows.index[0])}): only fp16 training scales its loss")
    scale = timeline.series("loss_scale").dropna()
    if len(scale) and float(scale.max()) > 1.0:  # (Megatron prints 1.0 for bf16 and fp32 runs)
        return _said(evidence, "fp16", f"a dynamic loss scale is logged ({format_number(float(scale.iloc[0]))} at "
                                       f"step {int(scale.index[0])}): only fp16 training scales its loss")
    return None


def _code_defaults(config: RunConfig, findings, timeline: Timeline, evidence: dict) -> str | None:
    """The precision the code gives its Lightning Trainer, or the float32 a loop or Trainer that asks for nothing
    lower runs in."""
    lightning = config.get("precision.lightning")
    if lightning in ("fp32", "fp16", "bf16"):
        return _said(evidence, lightning, f"the precision the code gives its Lightning Trainer, {lightning} "
                                          f"({config.source_of('precision.lightning')})")
    if config.get("precision.default_fp32") is True:
        return _said(evidence, "fp32", f"the training loop in {config.source_of('precision.default_fp32')} asks for "
                                       "nothing below float32 (no autocast, half, bfloat16 or float16, no quantized "
                                       "load): the default, fp32")
    if config.get("precision.trainer_fp32"):
        return _said(evidence, "fp32", f"the {config.get('precision.trainer_fp32')} the code builds in "
                                       f"{config.source_of('precision.trainer_fp32')} set neither fp16 nor bf16, and "
                                       "nothing else in it asks for mixed precision (no autocast, accelerate or "
                                       "DeepSpeed mixed_precision, Unsloth): the Trainer's default, fp32")
    return None


def _config_file_keys(config: RunConfig, findings, timeline: Timeline, evidence: dict) -> str | None:
    """The precision a YAML configuration of the run's own names by key (`ingest.config_precision`)."""
    keyed = _one_said(config, "precision.config_file")
    if keyed not in ("bf16", "fp16", "fp32") or _flag_set_off(config, keyed):
        return None
    return _said(evidence, keyed, f"the run's configuration file names it: "
                                  f"{config.get('precision.config_file_words')} "
                                  f"({config.source_of('precision.config_file')})")


def _report_states(config: RunConfig, findings, timeline: Timeline, evidence: dict) -> str | None:
    """The precision a report written beside the run's log names in a field (`ingest.report_precision`)."""
    return _words_name_one(config, evidence, "precision.report", "the report written beside the run's log names it")


def _readme_states(config: RunConfig, findings, timeline: Timeline, evidence: dict) -> str | None:
    """The precision a README of the run states in so many words (`ingest.readme_precision`)."""
    return _words_name_one(config, evidence, "precision.readme", "the README states it in so many words")


def _words_name_one(config: RunConfig, evidence: dict, key: str, said_how: str) -> str | None:
    """The one precision every file that gives `key` gives (its words under `key`_words), unless the run's own flag
    for it is set false."""
    named = _one_said(config, key)
    if named not in ("bf16", "fp16", "fp32") or _flag_set_off(config, named):
        return None
    return _said(evidence, named, f"{said_how}: '{config.get(key + '_words')}' ({config.source_of(key)})")


def _one_said(config: RunConfig, key: str):
    """The value every file that gives `key` gives, else None: two stages' configurations (a_pretrain.yaml in bf16,
    b_sft.yaml in fp16) or two READMEs that disagree do not tell which is the log's run, and the first file by name
    is no answer."""
    said = {seen.value for seen in config.values.get(key, [])}
    return said.pop() if len(said) == 1 else None


def _flag_set_off(config: RunConfig, precision: str) -> bool:
    """Whether the run's own configuration sets the precision's flag false (TrainingArguments' `bf16=False`, or a
    YAML's `bf16: false`): no weaker reading (a YAML's key elsewhere, a README's words) may give that precision."""
    return config.get(precision) is False or precision in str(config.get("precision.flags_off") or "").split(",")


def _rate_went_on(skipped) -> bool:
    """Whether the learning rate advanced in full at most of the non-finite grad_norms where it can be told: the
    Trainer steps its scheduler only where the optimizer ran, so a GradScaler's skip holds the rate back; a rate that
    went on says those updates were not skipped by a scaler (kuotunyu_tw-med-llm-qlora, a QLoRA run its manifest says
    BF16: 15 of its 18 NaN norms under a rate that went on). One reading alone is not enough: a warm-up's end or a
    schedule's turn misreads a step (kuotunyu's first three)."""
    told = [stalled for stalled in skipped.evidence.get("lr_stalled") or () if stalled is not None]
    went_on = sum(not stalled for stalled in told)
    return went_on >= _RATE_READINGS and went_on > len(told) / 2


_RATE_READINGS = 3  # skips at which the rate was seen to go on, at the least, to say a scaler skipped none of them


def _said(evidence: dict, precision: str, why: str) -> str:
    evidence["precision"] = why
    return precision


_HALF_LOADS = {"bfloat16": "bf16", "float16": "fp16"}
_UNSLOTH_BF16_GPU = re.compile(r"Bfloat16 = TRUE")


def _unsloth_console_bf16(timeline: Timeline) -> str | None:
    """Why the run trained in bf16, where a console (not a notebook: its code is read for the flags) shows Unsloth's
    training banner (its trainer ran) and its loading banner's `Bfloat16 = TRUE`: Unsloth loads the model in bfloat16 on
    such a GPU and its patched trainer runs the mixed precision of the model's dtype, refusing fp16 on a bfloat16 model
    (hussien_MedQA: a pasted notebook output, an A100). `Bfloat16 = FALSE` is not read: on such a GPU Unsloth may
    switch a model to float32. Else None."""
    banners = [b for b in timeline.banners if b.kind == "unsloth" and not str(b.source).endswith(".ipynb")]
    trained = any(b.trainable_params is not None for b in banners)
    loaded = next((b for b in banners if _UNSLOTH_BF16_GPU.search(b.text)), None)
    if not trained or loaded is None:
        return None
    return (f"Unsloth's banner says the GPU runs bfloat16 (`Bfloat16 = TRUE`, {loaded.source}) and its trainer ran: "
            "the model loaded in bfloat16, trained in bf16 mixed precision")
# transformers' Trainer saves `scaler.pt` where it holds a GradScaler. From bf16's arrival (4.10 at the earliest) to its
# move onto Accelerate a bf16 run held one too (4.19's trainer.py: `self.do_grad_scaling = True` for fp16 or bf16 under
# native amp); under Accelerate only fp16 does (`Accelerator.scaler` is made for fp16 alone), and the Trainer saves it
# (5.x `Trainer._save_scaler`) or, in between (4.46), saves none. Releases in [first, last) are left unsaid: their
# scaler.pt may be a bf16 run's.
_BF16_SCALER_RELEASES = ((4, 10), (4, 30))
_RELEASE = re.compile(r"^(\d+)\.(\d+)")


def _grad_scaler_file(config: RunConfig) -> str | None:
    """The `scaler.pt` a Trainer checkpoint holds (its GradScaler's state: fp16 mixed precision), where the run's
    transformers release is known and is not one whose GradScaler served bf16 too; else None."""
    source = str(config.source_of("state.loss_scale") or "")
    if not source.endswith("scaler.pt"):  # (DeepSpeed's optimizer states carry a loss scale of their own)
        return None
    m = _RELEASE.match(_release_said(config))
    if m is None or _BF16_SCALER_RELEASES[0] <= (int(m.group(1)), int(m.group(2))) < _BF16_SCALER_RELEASES[1]:
        return None
    return source


def _release_said(config: RunConfig) -> str:
    """The transformers release the run's saved model config (or its arguments) name, or ""."""
    return next((str(config.get(k)) for k in ("model.transformers_version", "transformers_version")
                 if isinstance(config.get(k), str)), "")
