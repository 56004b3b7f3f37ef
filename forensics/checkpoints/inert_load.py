"""torch.load for checkpoints that pickle foreign classes (DeepSpeed, Megatron), with nothing executed.

`torch.load(weights_only=True)` refuses a DeepSpeed `optim_states.pt` (it pickles
`ZeroStageEnum`, the loss scaler and `fragment_address`) and a Megatron checkpoint (an
`argparse.Namespace`, numpy RNG state). We list the globals the file names
(`torch.serialization.get_unsafe_globals_in_checkpoint`, which only reads the pickle's
opcodes), make one inert `Record` class per name, and let torch's own weights-only
unpickler build those records instead of the real classes: a record only keeps the
arguments and state it was given. Tensors come back memory-mapped (zip files), so a
partition's bytes are read only when its elements are.
"""
from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

from ..errors import UnreadableFile, os_reason


class Record:
    """What a foreign object became: its class name, call args and pickled state; nothing else runs."""

    qualname = "?"

    def __init__(self, *args, **kwargs):
        self.args = args
        self.state: Any = None

    def __new__(cls, *args, **kwargs):
        obj = object.__new__(cls)
        obj.args, obj.state = args, None
        return obj

    def __setstate__(self, state):
        self.state = state

    def field(self, name: str, default=None):
        """A field of the pickled state (dataclass, Namespace, plain object), or `default`."""
        state = self.state[0] if isinstance(self.state, tuple) and self.state else self.state
        return state.get(name, default) if isinstance(state, dict) else default

    @property
    def value(self):
        """The first call argument (an enum's value), or None."""
        return self.args[0] if self.args else None

    def __repr__(self) -> str:
        return f"Record({self.qualname}, args={self.args!r})"


def _record_class(qualname: str) -> type:
    return type(qualname.rsplit(".", 1)[-1], (Record,), {"qualname": qualname})


def inert_torch_load(path) -> Any:
    """What `torch.save` wrote to `path`, foreign classes as Records; raises UnreadableFile.

    Example (needs torch, so not a doctest; tests/test_megatron_checkpoints.py runs the same)::

        torch.save({"args": argparse.Namespace(lr=0.1), "w": torch.ones(2)}, p)
        obj = inert_torch_load(p)
        obj["args"].qualname, obj["args"].field("lr"), obj["w"].tolist()
        # ('argparse.Namespace', 0.1, [1.0, 1.0])
    """
    from .torch_file import import_torch, load_weights_only, quiet_protocol_warning

    path = Path(path)
    torch = import_torch(path)
    try:
        names = torch.serialization.get_unsafe_globals_in_checkpoint(path)
    except Exception:  # a legacy (pre-zip) or plain pickle: only the weights-only load is left
        return load_weights_only(torch, path)
    try:
        stand_ins = [(_record_class(n), n) for n in names]
        with torch.serialization.safe_globals(stand_ins), quiet_protocol_warning():
            return torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except OSError as err:
        raise UnreadableFile(path, os_reason(err)) from None
    except pickle.UnpicklingError as err:
        raise UnreadableFile(path, f"cannot be read without executing it ({str(err).splitlines()[0][:160]})") from None
    except Exception as err:  # zip/pickle damage surfaces as RuntimeError, EOFError, ValueError, ...
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UnreadableFile(path, f"damaged or truncated torch file ({first[:160]})") from None
