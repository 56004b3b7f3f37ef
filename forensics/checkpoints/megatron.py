"""Megatron-LM legacy checkpoints: `iter_XXXXXXX/mp_rank_XX[_PPP]/model_optim_rng.pt`, read without megatron.

megatron/training/checkpointing.py `get_checkpoint_name` writes one file per tensor-parallel
(and pipeline-parallel) rank; `generate_state_dict` puts the model's state dict under `model`
(`model0`, `model1`, ... with virtual pipeline stages) beside `args` (an argparse.Namespace),
`optimizer`, `rng_state` (numpy state) and counters. weights_only refuses the Namespace and the
numpy state, so the file is read by `inert_torch_load` (they become Records). Each rank's tensors
are that rank's shards: the scan lists them per file, whose folder (`mp_rank_01_002`) names the
tensor- and pipeline-parallel rank.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..errors import UnreadableFile
from .inert_load import Record, inert_torch_load
from .torch_file import TorchFile, import_torch

MEGATRON_FILE = "model_optim_rng.pt"
_RANK_FOLDER = re.compile(r"^mp_rank_(?P<tp>\d+)(?:_(?P<pp>\d+))?(?:_(?P<ep>\d+))?$")
_MODEL_KEY = re.compile(r"^model\d*$")


def parallel_rank(path) -> dict[str, int]:
    """{"tp": .., "pp": .., "ep": ..} of a Megatron rank file, from its folder name (present parts only).

    >>> parallel_rank("iter_0000100/mp_rank_01_002/model_optim_rng.pt")
    {'tp': 1, 'pp': 2}
    """
    m = _RANK_FOLDER.match(Path(path).parent.name)
    return {k: int(v) for k, v in m.groupdict().items() if v is not None} if m else {}


class MegatronFile(TorchFile):
    """One rank's `model_optim_rng.pt`: its model shards (`model`, or `model0`.. per virtual stage)."""

    def __init__(self, path):
        path = Path(path)
        state = inert_torch_load(path)
        if not isinstance(state, dict):
            raise UnreadableFile(path, f"holds a {type(state).__name__}, not Megatron's checkpoint dict")
        torch = import_torch(path)
        models = [k for k in state if isinstance(k, str) and _MODEL_KEY.match(k) and isinstance(state[k], dict)]
        if not models:
            raise UnreadableFile(path, "no `model` state dict in it")
        tensors = {}
        for key in sorted(models):
            prefix = "" if key == "model" else f"{key}."
            tensors.update({prefix + k: v for k, v in state[key].items() if isinstance(v, torch.Tensor)})
        super().__init__(path, tensors)
        args = state.get("args")
        self.metadata = {"iteration": state.get("iteration"), **parallel_rank(path),
                         "args": dict(args.state) if isinstance(args, Record) and isinstance(args.state, dict) else {}}
