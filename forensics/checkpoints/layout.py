"""Which checkpoints a run holds: weight files grouped into checkpoints, with their steps.

A checkpoint is a folder (`checkpoint-N`, `ckpt-N`, `global_stepN`, `step_N`, ..., or the
run root holding the final model) or a single file whose name carries a step. A DeepSpeed
`checkpoint-N/global_stepN/*model_states.pt` belongs to `checkpoint-N`; shards listed in a
`model.safetensors.index.json` are one checkpoint. The step comes from the name, else from
a `trainer_state.json` in the folder.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..errors import NoCheckpoints, NotARunDirectory, UnreadableFile, os_reason
from ..discover.run import discover
from ..discover.run_layout import RunLayout
from ..timeline import step_from_name
from .blocks import block_sort_key
from .readers import TORCH_SUFFIXES, open_weight_file
from .types import CheckpointRef
from .zero import ZERO_OPTIM_FILE

_DEEPSPEED_TAG = re.compile(r"^global_step\d+$")
_DEEPSPEED_STATES = re.compile(r"model_states\.pt$")


def find_checkpoints(root_or_layout) -> list[CheckpointRef]:
    """The checkpoints of a run folder (a path or a RunLayout from `discover`), sorted by step, None last.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for n in ("checkpoint-20", "checkpoint-10"):
    ...     (d / n).mkdir(); _ = (d / n / "model.safetensors").write_bytes(b"")
    >>> [(r.name, r.step) for r in find_checkpoints(d)]
    [('checkpoint-10', 10), ('checkpoint-20', 20)]
    """
    layout = root_or_layout if isinstance(root_or_layout, RunLayout) else discover(root_or_layout)
    groups: dict[Path, list[Path]] = {}
    zero_partitions = [p for p in layout.config_files if ZERO_OPTIM_FILE.search(p.name)]
    for path in layout.weight_files + zero_partitions:
        groups.setdefault(_home(path, layout.root), []).append(path)
    refs = [_ref_of(home, files) for home, files in groups.items()]
    return sorted((r for r in refs if r is not None), key=_order)


def _order(ref: CheckpointRef) -> tuple:
    return (ref.step is None, ref.step or 0, str(ref.path))


def _home(path: Path, root: Path) -> Path:
    """The checkpoint a weight file belongs to: a step-named folder, the file itself, or its folder."""
    folder = path.parent
    chain = [folder, *folder.parents]
    chain = chain[: chain.index(root) + 1] if root in chain else [folder]
    home = _step_folder(chain)
    if home is not None:
        return home
    return path if step_from_name(path.name) is not None else folder


def _step_folder(chain: list[Path]) -> Path | None:
    """The first step-named folder of `chain` (a folder, then its parents), or None."""
    for i, d in enumerate(chain):
        if step_from_name(d.name) is None:
            continue
        # a DeepSpeed tag folder inside checkpoint-N belongs to checkpoint-N
        if _DEEPSPEED_TAG.match(d.name) and i + 1 < len(chain) and step_from_name(chain[i + 1].name) is not None:
            return chain[i + 1]
        return d
    return None


def _ref_of(home: Path, files: list[Path]) -> CheckpointRef | None:
    if home in files:
        return CheckpointRef(home.name, step_from_name(home.name), home, (home,), _kind_of([home]))
    weights, aux = _choose_files(files)
    if not weights and not aux:
        return None
    step = step_from_name(home.name)
    if step is None:
        step = trainer_state_step(home)
    indexed = any(f.name.endswith(".index.json") for f in files)
    primary = [w for w in weights if not ZERO_OPTIM_FILE.search(w.name)] or weights
    kind = _kind_of(primary, indexed) if weights else "deepspeed"
    return CheckpointRef(home.name, step, home, tuple(weights or aux), kind, aux_files=tuple(aux) if weights else ())


def _choose_files(files: list[Path]) -> tuple[list[Path], list[Path]]:
    """(weight files to read, DeepSpeed model_states read for counters): safetensors over torch files (a
    bare ZeRO save: its model states), then every rank's ZeRO partition. The partitions are read
    beside the saved model too (HF Trainer + DeepSpeed): a resume loads the fp32 master copy and the
    moments from them, so a checkpoint whose model file is finite is safe only if they are."""
    deepspeed = sorted(f for f in files if _DEEPSPEED_STATES.search(f.name))
    partitions = sorted((f for f in files if ZERO_OPTIM_FILE.search(f.name)), key=lambda f: block_sort_key(str(f)))
    safetensors = _with_index_shards(files, ".safetensors") + sorted(f for f in files if f.name == ".metadata")
    torch_files = _with_index_shards([f for f in files if f not in deepspeed + partitions], TORCH_SUFFIXES)
    primary = safetensors or torch_files or (deepspeed if partitions else [])
    return (primary + partitions if primary or partitions else []), deepspeed


def _with_index_shards(files: list[Path], suffixes) -> list[Path]:
    """Files with these suffixes, plus every shard an index names (present or not: missing ones are reported)."""
    chosen = {f for f in files if f.name.lower().endswith(suffixes)}
    for index in (f for f in files if f.name.endswith(".index.json")):
        if index.name[: -len(".index.json")].lower().endswith(suffixes):
            chosen.update(index.parent / shard for shard in shards_of_index(index))
    return sorted(chosen)


def shards_of_index(index: Path) -> list[str]:
    """The shard file names a `*.index.json` maps tensors to (empty when the index is unreadable)."""
    try:
        weight_map = json.loads(index.read_text(encoding="utf-8-sig")).get("weight_map", {})
    except (OSError, ValueError, AttributeError):
        return []
    return sorted({v for v in weight_map.values() if isinstance(v, str) and "/" not in v and "\\" not in v})


def _kind_of(weights: list[Path], indexed: bool = False) -> str:
    names = [w.name for w in weights]
    if all(_DEEPSPEED_STATES.search(n) or ZERO_OPTIM_FILE.search(n) for n in names):
        return "deepspeed"
    if all(n == ".metadata" for n in names):
        return "dcp"
    if all(n.lower().endswith(TORCH_SUFFIXES) for n in names):
        return "torch"
    if all(n.startswith("adapter_model") for n in names):
        return "adapter"
    if any(n.startswith("adapter_model") for n in names):
        return "mixed"
    return "sharded" if indexed or len(names) > 1 else "safetensors"


def trainer_state_step(folder: Path) -> int | None:
    """`global_step` of `folder/trainer_state.json`, or None."""
    try:
        state = json.loads((folder / "trainer_state.json").read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None
    step = state.get("global_step") if isinstance(state, dict) else None
    return step if isinstance(step, int) and not isinstance(step, bool) else None


def open_checkpoint(path) -> CheckpointRef:
    """The checkpoint at `path`: a checkpoint folder, a weight file, or a `*.index.json` of shards.

    Raises NoCheckpoints when there is none there.
    """
    path = Path(path).expanduser()
    if not path.exists():
        raise NoCheckpoints(path, "no such file or folder")
    path = path.resolve()
    if path.is_file() and not path.name.endswith(".index.json"):
        return _file_ref(path)
    folder = path.parent if path.is_file() else path
    try:
        refs = find_checkpoints(folder)
    except NotARunDirectory as err:
        raise NoCheckpoints(path, err.reason) from None
    own = [r for r in refs if r.path == folder]
    if own:
        return own[0]
    raise NoCheckpoints(path, _no_checkpoint_here(refs, folder))


def _no_checkpoint_here(refs: list[CheckpointRef], folder: Path) -> str:
    """Why `folder`, holding no weights of its own, is no checkpoint: the checkpoints inside it to name instead,
    counting only those with a weight file the readers open (a random blob named .bin is no checkpoint)."""
    problems: list[str] = []
    inside = [r for r in refs if _opens(r, folder, problems)]
    if inside:
        names = ", ".join(r.name for r in inside[:5]) + (", ..." if len(inside) > 5 else "")
        many = "checkpoint" if len(inside) == 1 else "checkpoints"
        return f"holds no weights of its own but {len(inside)} {many} inside ({names}); name one of them"
    if problems:
        return f"no weight file that the checkpoint readers accept ({'; '.join(problems[:3])})"
    return "no weight files (.safetensors, .bin, .pt) found"


def _opens(ref: CheckpointRef, folder: Path, problems: list[str]) -> bool:
    """Whether a weight file of `ref` opens (its header or index only, no tensor read); why not goes to `problems`,
    each file named from `folder`."""
    for path in ref.files:
        try:
            open_weight_file(path).close()
            return True
        except UnreadableFile as err:
            problems.append(f"{os.path.relpath(path, folder)}: {err.reason}")
        except OSError as err:
            problems.append(f"{os.path.relpath(path, folder)}: {os_reason(err)}")
    return False


# What a file named as a checkpoint may be: weights, a shard index, a torch.distributed.checkpoint .metadata.
_CHECKPOINT_FILE_SUFFIXES = (".safetensors", ".index.json", ".metadata") + TORCH_SUFFIXES
# How far above a file or rank folder its checkpoint folder may lie (iter_N/mp_rank_00/model_optim_rng.pt).
_CHECKPOINT_DEPTH = 3


def checkpoint_of(path) -> CheckpointRef:
    """The whole checkpoint `path` names, for `bisect`: a checkpoint folder as it is, and a file or rank folder
    inside one (`iter_0000040/mp_rank_00`, `checkpoint-40/model.safetensors`) as the step-named checkpoint
    folder that holds it, so that its siblings are the run's other checkpoints.

    Raises NoCheckpoints for a file that holds no weights (a log, trainer_state.json) or where none is found.
    """
    path = Path(path).expanduser()
    if path.is_file() and not path.name.lower().endswith(_CHECKPOINT_FILE_SUFFIXES):
        raise NoCheckpoints(path, "is not a weight file: name a checkpoint folder (checkpoint-N) or its weights")
    if path.exists() and not (path.is_file() and step_from_name(path.name) is not None):
        start = path.resolve() if path.is_dir() else path.resolve().parent
        home = _step_folder([start, *start.parents][:_CHECKPOINT_DEPTH])
        if home is not None:
            return open_checkpoint(home)
    return open_checkpoint(path)


def same_run_folder(a: CheckpointRef, b: CheckpointRef) -> None:
    """Raise NoCheckpoints when `a` and `b` are checkpoints of different run folders (nothing lies between them)."""
    folder_a, folder_b = _sibling_folder(a), _sibling_folder(b)
    if folder_a != folder_b:
        raise NoCheckpoints(b.path, f"is a checkpoint of another run folder than {a.name} ({folder_b} and "
                                    f"{folder_a}): name two checkpoints of one run")


def _file_ref(path: Path) -> CheckpointRef:
    step = step_from_name(path.name)
    if step is not None:
        return CheckpointRef(path.name, step, path, (path,), _kind_of([path]))
    folder = path.parent
    step = step_from_name(folder.name)
    if step is None:
        step = trainer_state_step(folder)
    return CheckpointRef(f"{folder.name}/{path.name}", step, path, (path,), _kind_of([path]))


def siblings_between(a: CheckpointRef, b: CheckpointRef) -> list[CheckpointRef]:
    """Checkpoints of the same run folder whose step lies strictly between a's and b's, by step."""
    if a.step is None or b.step is None:
        return []
    lo, hi = sorted((a.step, b.step))
    seen: dict[Path, CheckpointRef] = {}
    for folder in dict.fromkeys((_sibling_folder(a), _sibling_folder(b))):
        try:
            refs = find_checkpoints(folder)
        except NotARunDirectory:
            continue
        for ref in refs:
            if ref.step is not None and lo < ref.step < hi and ref.path not in (a.path, b.path):
                seen.setdefault(ref.path, ref)
    return sorted(seen.values(), key=_order)


def _sibling_folder(ref: CheckpointRef) -> Path:
    """The folder that holds `ref` and its siblings."""
    path = Path(ref.path)
    if path.is_file() and step_from_name(path.name) is None:
        return path.parent.parent  # a file inside checkpoint-N: the siblings are folders
    return path.parent
