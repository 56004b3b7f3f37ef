"""Makes small training runs with the REAL `transformers.Trainer`, for tests and `sample_runs/`.

Each run trains a tiny model built from a config (no downloads) on a seeded synthetic token pattern,
on CPU in a few seconds, and leaves on disk exactly what the Trainer writes: `checkpoint-N/` folders,
TensorBoard event files under `runs/`, and (when the script would call it) the root `trainer_state.json`.
Incidents are injected INSIDE the Trainer loop (callbacks and a `compute_loss` override), so every
logged number passes through HF's own code: the NaN filter, the grad-norm computation, the scheduler.

`make_run(out_dir, spec)` returns `RunFacts`: how the run was made (injection steps, poisoned blocks,
which checkpoints were saved before and after, the training arguments), taken from the spec and from
the Trainer's own in-memory state, never from reading the files back. Tests compare tools against them.

    PYTHONPATH=tests python -c "from support.runmaker import *; print(make_run('/tmp/r', RunSpec(incidents=(NanInjection(31),))))"
"""
from __future__ import annotations

import json
import math
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from . import runmaker_loop as loop


# ---------------------------------------------------------------- what to inject, and when

class _Incident:
    """Hooks the Trainer loop asks at every step (1-based, the step being computed); no-ops here."""

    confines_nan = False

    def before_step(self, step: int, model, optimizer, lr_scheduler) -> None:
        """Called just before the forward pass of `step`."""

    def loss_factor(self, step: int) -> float:
        return 1.0

    def masks_labels(self, step: int) -> bool:
        return False

    def first_visible_step(self) -> int:
        """The first step whose own loss or grad_norm shows the incident."""
        raise NotImplementedError


@dataclass(frozen=True)
class NanInjection(_Incident):
    """Poison the trainable weights of some blocks with NaN just before the forward pass of `step`.

    So `step` is the first step whose loss and grad_norm are NaN (HF's filter then logs loss 0.0 for a
    window of NaN steps). With `confine=True` an optimizer update with non-finite gradients is dropped
    (what an fp16 GradScaler does with an overflow), so only the poisoned blocks hold NaN, as in case 4
    of INCIDENTS.md; with `confine=False` AdamW carries the NaN into every trainable tensor, as an
    unguarded full fine-tune does (clipping scales all gradients by a NaN coefficient).
    """

    step: int
    blocks: tuple[int, ...] = (-1,)  # block indices; negative counts from the last block
    confine: bool = True

    @property
    def confines_nan(self) -> bool:  # type: ignore[override]
        return self.confine

    def before_step(self, step, model, optimizer, lr_scheduler) -> None:
        if step == self.step:
            loop.poison_blocks(model, self.blocks)

    def first_visible_step(self) -> int:
        return self.step


@dataclass(frozen=True)
class LossSpike(_Incident):
    """Multiply the loss of `step` by `factor` (one bad batch): the logged grad_norm of that step jumps
    by the factor, clipping (max_grad_norm) keeps the update small, and the run goes on normally.
    `step` must be a logging step: HF logs the grad_norm of the last step of each window only."""

    step: int
    factor: float = 1e3

    def loss_factor(self, step: int) -> float:
        return self.factor if step == self.step else 1.0

    def first_visible_step(self) -> int:
        return self.step


@dataclass(frozen=True)
class LrBlowup(_Incident):
    """From `step` on the optimizer runs at `lr` (the scheduler's base LR is changed too, so its
    schedule goes on from the new value), as a wrong LR or a broken scheduler does: the loss diverges,
    and with weight decay past its stability edge it goes non-finite on any machine.

    Why certain: AdamW bounds each Adam update by about the LR, so whether a tiny fp32 model overflows
    from a high LR alone is chaotic (CPU float kernels, transformers version). Its decoupled weight
    decay is not bounded: every step multiplies each decayed weight by (1 - lr * weight_decay). Past
    lr * weight_decay = 2 that factor's size exceeds 1, so the weights grow geometrically whatever the
    gradients do, and leave fp32 within `overflow_steps` steps; `_check_spec` refuses a spec whose
    factor is too small, or whose run too short, for that to be certain.
    """

    step: int
    lr: float = 5.0

    def before_step(self, step, model, optimizer, lr_scheduler) -> None:
        if step == self.step:
            loop.set_lr(optimizer, lr_scheduler, self.lr)

    def first_visible_step(self) -> int:
        return self.step + 1  # the loss of `step` was computed with the weights from before the change

    def growth(self, weight_decay: float) -> float:
        """The factor every decayed weight is multiplied by each step once the change acts: |1 - lr*wd|
        (the Adam update, about the LR, is small beside it once the weights have grown past the LR)."""
        return abs(1.0 - self.lr * weight_decay)

    def overflow_steps(self, weight_decay: float) -> int:
        """Steps after `step` by which the decayed weights have left the fp32 range (3.4e38) by construction;
        in practice the forward pass overflows well before the weights do."""
        return math.ceil(math.log(_FP32_MAX) / math.log(self.growth(weight_decay)))


_FP32_MAX = 3.4028234663852886e38


@dataclass(frozen=True)
class EarlyCollapse(_Incident):
    """Case 5 of INCIDENTS.md: loss scaled by `factor` for steps `first`..`last`, then no learning signal.

    The scaled loss gives grad_norm in the thousands (a loss/gradient scale that is never undone);
    from step last+1 every label is masked to -100, and the real Trainer then logs loss 0.0 with
    grad_norm 0.0 (checked on 5.23: no NaN, HF divides a zero sum by the batch's token count).
    The DeepSpeed communication-dtype bug of the real incident cannot run on CPU; this reproduces
    its signature in the logs, not its cause.
    """

    first: int = 2
    last: int = 4
    factor: float = 1e4

    def loss_factor(self, step: int) -> float:
        return self.factor if self.first <= step <= self.last else 1.0

    def masks_labels(self, step: int) -> bool:
        return step > self.last

    def first_visible_step(self) -> int:
        return self.first


@dataclass(frozen=True)
class Resume:
    """Two attempts: attempt 1 (with the incidents) stops after step `stop_at`; attempt 2 resumes from
    `checkpoint-{from_checkpoint}` in the same output_dir, without the incidents, and runs to the end."""

    stop_at: int
    from_checkpoint: int


@dataclass(frozen=True)
class RunSpec:
    """How to make one run. Defaults: a healthy 60-step Qwen2-style run, logging every 5, saving every 20."""

    arch: str = "qwen2"  # "qwen2", "llama" or "gpt2" (GPT-2 gives transformer.h.N names)
    num_layers: int = 2
    max_steps: int = 60
    batch_size: int = 8
    seq_len: int = 16
    learning_rate: float = 3e-3
    warmup_steps: int = 0
    lr_scheduler_type: str = "linear"
    max_grad_norm: float = 1.0
    optim: str = "adamw_torch"
    weight_decay: float = 0.0  # AdamW's decoupled decay; a LrBlowup needs lr * weight_decay well past 2
    logging_steps: int = 5
    save_steps: int = 20
    seed: int = 0
    weights_dtype: str = "float32"  # "bfloat16": model.to(bf16) and bf16=True, checkpoints hold BF16
    save_only_model: bool = False  # True: no optimizer.pt / scheduler.pt / rng_state.pth
    save_state: bool = True  # False: no root trainer_state.json, as after a crash
    incidents: tuple[Any, ...] = ()
    resume: Resume | None = None
    shard_size: str | None = None  # e.g. "20KB": every checkpoint re-saved as shards + index
    checkpoint_prefix: str = "checkpoint"  # "ckpt": folders renamed ckpt-N after training
    lora: bool = False  # real peft LoRA (r=4) on the attention projections; adapter checkpoints
    report_to: tuple[str, ...] = ("tensorboard",)  # HF's trackers; "wandb"/"mlflow" need their env (see trackers.py)
    # the Trainer's own progress display (tqdm bars; in a Jupyter kernel its notebook table) in place of dict lines
    progress_bars: bool = False


@dataclass(frozen=True)
class RunFacts:
    """How a run was made, for tests to compare against.

    Fields:
        path: the run folder.
        spec: the RunSpec as a dict.
        training_args: the TrainingArguments values that matter for diagnosis.
        block_prefix: "model.layers" or "transformer.h"; blocks: every block name of the model.
        final_step: global_step at the end of the last attempt.
        logged_steps: steps with a train log entry, per the final history (attempt 2 for a resumed run).
        injected: one dict per incident (kind, its fields, and `log_step`: the first logged step of the
            attempt it ran in whose entry shows it), in spec order.
        poisoned_blocks: block names NaN-poisoned by a NanInjection.
        first_nonfinite_step: first logged step whose loss or grad_norm is NaN/Inf, in any attempt.
        first_masked_loss_step: first logged step whose loss is exactly 0.0 next to a non-finite grad_norm.
        spike_steps: logged steps where a LossSpike was injected.
        lr_change_step: the step a LrBlowup took effect.
        checkpoints: name -> {"step", "attempt", "nonfinite_blocks", "nonfinite_outside_blocks"} for the
            folders on disk at the end: the blocks (and the in-memory names of tensors outside blocks,
            e.g. `lm_head.weight`) holding NaN/Inf in the model when that folder was last written.
        last_good_checkpoint / first_bad_checkpoint: by step among `checkpoints`, None if there is none.
        overwritten_checkpoints: folders written by attempt 1 and written again by attempt 2.
        attempts: per attempt: first_step, last_step, resumed_from, abandoned, checkpoints_saved.
        has_root_trainer_state: whether save_state() wrote the root trainer_state.json.
        expected_status: the verdict the run was built to earn ("healthy", "warning", "broken").
        log_history: the Trainer's own `state.log_history` at the end (in memory, not read back), one
            dict per log call, NaN kept.
    """

    path: str
    spec: dict[str, Any]
    training_args: dict[str, Any]
    block_prefix: str
    blocks: tuple[str, ...]
    final_step: int
    logged_steps: tuple[int, ...]
    injected: tuple[dict[str, Any], ...]
    poisoned_blocks: tuple[str, ...]
    first_nonfinite_step: int | None
    first_masked_loss_step: int | None
    spike_steps: tuple[int, ...]
    lr_change_step: int | None
    checkpoints: dict[str, dict[str, Any]]
    last_good_checkpoint: str | None
    first_bad_checkpoint: str | None
    overwritten_checkpoints: tuple[str, ...]
    attempts: tuple[dict[str, Any], ...]
    has_root_trainer_state: bool
    expected_status: str
    log_history: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The facts as plain JSON-able values (a NaN/Inf of the log history as the string "nan"/"inf")."""
        facts = asdict(self)
        facts["log_history"] = [{k: v if not isinstance(v, float) or math.isfinite(v) else str(v) for k, v in e.items()}
                                for e in facts["log_history"]]
        return json.loads(json.dumps(facts, default=str))

    def write_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n")


# ---------------------------------------------------------------- making a run

def make_run(out_dir: str | Path, spec: RunSpec) -> RunFacts:
    """Train a run into `out_dir` (created; must not exist yet) and return how it was made.

    Raises ValueError for a spec whose incident could not show in the log as described.

    Example:
        >>> facts = make_run(tmp / "nan", RunSpec(incidents=(NanInjection(step=31),)))  # doctest: +SKIP
        >>> facts.first_masked_loss_step, facts.last_good_checkpoint, facts.first_bad_checkpoint  # doctest: +SKIP
        (35, 'checkpoint-20', 'checkpoint-40')
    """
    _check_spec(spec)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=False)
    plan = [(spec.incidents, spec.resume.stop_at if spec.resume else None, None)]
    if spec.resume:
        plan.append(((), None, spec.resume.from_checkpoint))
    attempts, histories, saved_by_attempt = [], [], []
    for number, (incidents, stop_at, resume_from) in enumerate(plan, start=1):
        if number > 1:
            _wait_for_next_second()  # a new runs/<%b%d_%H-%M-%S>_<host>/ folder, as a real relaunch makes
        trainer, saved = loop.run_attempt(out_dir, spec, incidents, stop_at, resume_from)
        histories.append(list(trainer.state.log_history))
        saved_by_attempt.append(saved)
        attempts.append({"attempt": number, "resumed_from": resume_from, "first_step": (resume_from or 0) + 1,
                         "last_step": trainer.state.global_step, "abandoned": number < len(plan),
                         "checkpoints_saved": sorted(saved, key=loop.natural_key)})
    if spec.save_state:
        trainer.save_state()  # what a training script does after train(); a crashed run never gets here
    if spec.checkpoint_prefix != "checkpoint":
        _rename_checkpoints(out_dir, spec.checkpoint_prefix)
    return _facts(out_dir, spec, trainer, attempts, histories, saved_by_attempt)


def _check_spec(spec: RunSpec) -> None:
    for incident in spec.incidents:
        if isinstance(incident, LossSpike) and incident.step % spec.logging_steps:
            raise ValueError(f"LossSpike step {incident.step} is not a logging step (every {spec.logging_steps}): "
                             "HF logs the grad_norm of the last step of a window only, so the spike would not show")
        if isinstance(incident, LrBlowup) and not any(isinstance(i, NanInjection) for i in spec.incidents):
            _check_blowup(incident, spec)  # with an injected NaN the non-finite log is certain anyway
    if spec.resume and spec.resume.from_checkpoint % spec.save_steps:
        raise ValueError(f"no checkpoint-{spec.resume.from_checkpoint} to resume from (save_steps={spec.save_steps})")


def _check_blowup(blowup: LrBlowup, spec: RunSpec) -> None:
    """Refuse a blow-up that might stay finite: decay too weak to grow the weights, or too few steps."""
    if blowup.growth(spec.weight_decay) < 4.0:
        raise ValueError(f"LrBlowup lr={blowup.lr} with weight_decay={spec.weight_decay}: lr * weight_decay "
                         "must be at least 5 for the weights to grow geometrically past fp32")
    last = blowup.step + blowup.overflow_steps(spec.weight_decay) + spec.logging_steps
    if last > spec.max_steps:
        raise ValueError(f"LrBlowup at step {blowup.step} overflows by step {last} at the latest; "
                         f"max_steps={spec.max_steps} is too short for the non-finite log to be certain")


def _wait_for_next_second() -> None:
    start = int(time.time())
    while int(time.time()) == start:
        time.sleep(0.05)


def _rename_checkpoints(out_dir: Path, prefix: str) -> None:
    """Rename checkpoint-N to {prefix}-N, as users and other frameworks name their folders."""
    for folder in sorted(out_dir.glob("checkpoint-*")):
        shutil.move(str(folder), str(out_dir / _renamed(folder.name, prefix)))


# ---------------------------------------------------------------- the facts

_ARG_NAMES = ("learning_rate", "warmup_steps", "lr_scheduler_type", "max_grad_norm", "optim", "fp16", "bf16",
              "weight_decay", "per_device_train_batch_size", "gradient_accumulation_steps", "max_steps",
              "logging_steps", "save_steps", "save_only_model", "seed", "logging_nan_inf_filter")


def _facts(out_dir: Path, spec: RunSpec, trainer, attempts: list, histories: list, saved_by_attempt: list) -> RunFacts:
    checkpoints = _checkpoint_facts(saved_by_attempt, spec.checkpoint_prefix)
    last_good, first_bad = _good_and_bad(checkpoints)
    blocks = loop.block_names(spec)
    train_entries = [e for history in histories for e in history if "loss" in e]
    first_logs = [e["step"] for e in histories[0] if "loss" in e]  # the attempt the incidents ran in
    return RunFacts(
        path=str(out_dir), spec={**asdict(spec), "incidents": [_incident_facts(i, []) for i in spec.incidents]},
        training_args=_args_dict(trainer.args),
        block_prefix=blocks[0].rsplit(".", 1)[0], blocks=blocks, final_step=trainer.state.global_step,
        logged_steps=tuple(e["step"] for e in histories[-1] if "loss" in e),
        injected=tuple(_incident_facts(i, first_logs) for i in spec.incidents),
        poisoned_blocks=tuple(sorted({blocks[b] for i in spec.incidents if isinstance(i, NanInjection)
                                      for b in i.blocks}, key=loop.natural_key)),
        first_nonfinite_step=_first_step(train_entries, lambda e: not _finite(e["loss"], e.get("grad_norm", 0.0))),
        first_masked_loss_step=_first_step(
            train_entries, lambda e: e["loss"] == 0.0 and not _finite(e.get("grad_norm", 0.0))),
        spike_steps=tuple(i.step for i in spec.incidents if isinstance(i, LossSpike)),
        lr_change_step=next((i.step for i in spec.incidents if isinstance(i, LrBlowup)), None),
        checkpoints=checkpoints, last_good_checkpoint=last_good, first_bad_checkpoint=first_bad,
        overwritten_checkpoints=_overwritten(saved_by_attempt, spec.checkpoint_prefix),
        attempts=tuple(attempts), has_root_trainer_state=spec.save_state,
        expected_status=_expected_status(spec), log_history=tuple(dict(e) for e in histories[-1]),
    )


def _incident_facts(incident: _Incident, logged_steps: list[int]) -> dict[str, Any]:
    """The incident's fields, its kind, and `log_step`: the first logged step whose entry shows it."""
    visible = incident.first_visible_step()
    log_step = next((s for s in logged_steps if s >= visible), None)
    return {"kind": type(incident).__name__, **asdict(incident), "log_step": log_step}


def _args_dict(args) -> dict[str, Any]:
    values = {name: getattr(args, name, None) for name in _ARG_NAMES}
    return {k: getattr(v, "value", v) for k, v in values.items()}  # enums (scheduler, optim) as strings


def _finite(*values: float) -> bool:
    return all(math.isfinite(v) for v in values)


def _first_step(entries: list[dict], predicate) -> int | None:
    steps = [e["step"] for e in entries if predicate(e)]
    return min(steps) if steps else None


def _renamed(name: str, prefix: str) -> str:
    return name.replace("checkpoint", prefix, 1)


def _checkpoint_facts(saved_by_attempt: list[dict], prefix: str) -> dict[str, dict[str, Any]]:
    """Every folder on disk at the end, by step; a later attempt's write replaces an earlier one's."""
    merged: dict[str, dict[str, Any]] = {}
    for attempt, saved in enumerate(saved_by_attempt, start=1):
        for name, info in saved.items():
            merged[_renamed(name, prefix)] = {**info, "attempt": attempt}
    return dict(sorted(merged.items(), key=lambda item: item[1]["step"]))


def _good_and_bad(checkpoints: dict[str, dict[str, Any]]) -> tuple[str | None, str | None]:
    """The newest finite checkpoint before the first non-finite one, and that first non-finite one."""
    last_good = first_bad = None
    for name, info in checkpoints.items():  # sorted by step
        if info["nonfinite_blocks"] or info["nonfinite_outside_blocks"]:
            first_bad = name
            break
        last_good = name
    return last_good, first_bad


def _overwritten(saved_by_attempt: list[dict], prefix: str) -> tuple[str, ...]:
    seen: set[str] = set()
    again: set[str] = set()
    for saved in saved_by_attempt:
        again |= seen & set(saved)
        seen |= set(saved)
    return tuple(sorted((_renamed(n, prefix) for n in again), key=loop.natural_key))


def _expected_status(spec: RunSpec) -> str:
    """The verdict of issue 2 the run was built for: an incident only in an abandoned attempt warns."""
    kinds = {type(i) for i in spec.incidents}
    if not kinds:
        return "healthy"
    if spec.resume is not None or kinds == {LossSpike}:
        return "warning"
    return "broken"
