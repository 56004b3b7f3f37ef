"""Which of a run's files hold its configuration, of which kind, in which order (`config_files_by_kind`).

For `run_config.read_run_config`: the run root's own file first (the final save), then checkpoints from the newest
step down; of the counters saved beside checkpoints (scaler, model states, optimizer states, Megatron's args) only the
newest file counts.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..discover.json_hints import is_llamafactory_args
from ..discover.run_layout import RunLayout
from ..timeline import step_from_name
from . import config_files as cf


def config_files_by_kind(layout: RunLayout) -> dict[str, list[Path]]:
    kinds: dict[str, list[Path]] = {k: [] for k in ("training_args", "finetuning_args", "llamafactory", "swift",
                                                    "optim_states", "deepspeed",
                                                    "model_config", "adapter", "model_card", "scaler", "model_states",
                                                    "megatron", "yaml", "command", "launch", "autotrain", "ludwig",
                                                    "model_metadata")}
    for path in layout.config_files:
        kind = _kind_of(path.name)
        if kind == "deepspeed" and _holds_llamafactory_args(path):  # (discovery took it in for what it holds)
            kind = "llamafactory"
        if kind:
            kinds[kind].append(path)
    kinds["model_states"] = [p for p in layout.weight_files if p.name.endswith("model_states.pt")]
    # Megatron's args: every rank's file repeats them, so the newest one is enough
    kinds["megatron"] = [p for p in layout.weight_files if p.name in ("model_optim_rng.pt", "common.pt")]
    for kind in kinds:
        kinds[kind].sort(key=_newest_first)
    # Counters describe the end of the run: only the newest file of each kind counts.
    for kind in ("scaler", "model_states", "optim_states", "megatron"):
        kinds[kind] = kinds[kind][:1]
    return kinds


def _kind_of(name: str) -> str | None:
    lowered = name.lower()
    if name == "training_args.bin":
        return "training_args"
    if name in ("finetuning_args.bin", "finetuning_args.json"):
        return "finetuning_args"
    if lowered in ("training_args.yaml", "training_args.yml"):
        return "llamafactory"
    if lowered.endswith((".yaml", ".yml")):
        return "yaml"
    if name in ("args.json", "sft_args.json"):  # ms-swift 3+ and 2.x
        return "swift"
    if name == "training_params.json":
        return "autotrain"
    if name == "model_hyperparameters.json":
        return "ludwig"
    if name == "model_metadata.json":
        return "model_metadata"
    if name == "wandb-metadata.json":
        return "command"
    if lowered.endswith((".txt", ".sh")) or "." not in name:  # (the layout keeps such a file only if it is one
        return "launch"  # launch command: launch_command.holds_one_launch)
    if name == "config.json":
        return "model_config"
    if name == "adapter_config.json":
        return "adapter"
    if lowered == "readme.md":
        return "model_card"
    if name == "scaler.pt":
        return "scaler"
    if name.endswith("optim_states.pt"):
        return "optim_states"
    return "deepspeed" if lowered.endswith(".json") else None


def _holds_llamafactory_args(path: Path) -> bool:
    """A JSON file of LLaMA-Factory's arguments under a name of its owner's (`json_hints.is_llamafactory_args`)."""
    try:
        with open(path, "rb") as fh:
            return is_llamafactory_args(fh.read(1 << 16))
    except OSError:
        return False  # (discovery, which opened it first, has said why)


def _step_of(path: Path) -> int | None:
    for part in reversed(path.parts[:-1]):
        step = step_from_name(part)
        if step is not None:
            return step
    return None


def _newest_first(path: Path) -> tuple:
    """The run root's own file first (the final save), then checkpoints from the newest step down."""
    step = _step_of(path)
    return (0, 0, str(path)) if step is None else (1, -step, str(path))


def checkpoint_reader(path: Path) -> Callable[[Path], dict]:
    return cf.read_scaler if path.name == "scaler.pt" else cf.read_model_states
