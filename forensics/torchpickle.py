"""Read torch-pickled files (`training_args.bin`, `scaler.pt`, DeepSpeed `*_states.pt`) without running them.

Shared by `ingest` (training arguments, run config) and `checkpoints` (DeepSpeed counters): a
module of its own so that neither layer has to import the other for it.

`torch.load` would execute the pickle (and needs the writer's exact library versions), and
`weights_only=True` refuses a pickled `TrainingArguments`. So we read the pickle stream
ourselves (FORMATS.md section 5):

1. a zip file (torch >= 1.6): the member ending in `data.pkl`; a legacy file: skip the
   magic number, protocol and sys_info pickles, then read the object;
2. an `Unpickler` whose `find_class` never imports anything: every global becomes a fresh,
   inert stub class that only records what it was called with, except a short allow-list
   of harmless builtins (`set`, `frozenset`, `complex`, `slice`, `range`) and
   `OrderedDict` (read as `dict`);
3. `persistent_load` returns a placeholder, so tensor storages are never read;
4. the result is walked into plain Python values: a stub built from a state becomes a
   dict with a `__class__` name, an enum or `torch.device` becomes its first argument,
   a tensor becomes a `TensorPlaceholder` (dtype and shape, no data).

torch is not needed at all.
"""
from __future__ import annotations

import io
import os
import pickle
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from .errors import UnreadableFile

# torch's legacy format starts with this pickled int (torch/serialization.py MAGIC_NUMBER).
_TORCH_MAGIC = 0x1950A86A20F9469CFC6C
# A pickle stream this large is not a config file; refuse rather than build it in memory.
_MAX_PICKLE_BYTES = 256 << 20
_MAX_DEPTH = 200
DEEPSPEED_COUNTERS = ("skipped_steps", "global_steps", "global_samples", "dp_world_size", "mp_world_size")


@dataclass(frozen=True)
class StoragePlaceholder:
    """A tensor storage that was not read: its dtype name (from the storage class), key and size."""

    dtype: str
    key: str
    numel: int | None


@dataclass(frozen=True)
class TensorPlaceholder:
    """A tensor whose data was not read: dtype and shape only."""

    dtype: str
    shape: tuple


class _Stub:
    """Base of every stand-in class: records the call args, the pickled state and added items."""

    _stub_module = ""
    _stub_name = ""

    def __new__(cls, *args, **kwargs):
        obj = object.__new__(cls)
        obj._stub_args = args
        obj._stub_state = None
        obj._stub_items = []
        return obj

    def __init__(self, *args, **kwargs):  # REDUCE calls cls(*args); __new__ already kept them
        pass

    def __setstate__(self, state):  # BUILD
        self._stub_state = state

    # A stubbed list or dict subclass receives its items through these (APPENDS / SETITEMS).
    def append(self, item):
        self._stub_items.append(item)

    def extend(self, items):
        self._stub_items.extend(items)

    def __setitem__(self, key, value):
        self._stub_items.append((key, value))

    @classmethod
    def qualname(cls) -> str:
        return f"{cls._stub_module}.{cls._stub_name}"


def _make_stub(module: str, name: str) -> type:
    return type(name, (_Stub,), {"_stub_module": module, "_stub_name": name})


def _latin1_bytes(*args):
    """Stand-in for `_codecs.encode`, which protocol-2 pickles use for `bytes`; only latin-1 text."""
    if len(args) == 2 and isinstance(args[0], str) and args[1] in ("latin1", "latin-1"):
        return args[0].encode("latin-1")
    return None


def _bytearray(*args):
    if not args:
        return bytearray()
    data = _latin1_bytes(*args) if len(args) == 2 else args[0]
    # Only bytes: bytearray(<huge int>) would allocate that many bytes.
    return bytearray(data) if isinstance(data, bytes) else bytearray()


class _OrderedDict(dict):
    """OrderedDict read as a dict that also takes the attributes pickled with it (a state dict's `_metadata`)."""


# The only globals that are not stubbed. Each builds plain data from plain data and
# cannot reach the interpreter (no eval/exec/getattr/__import__/open).
_ALLOWED = {
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "complex"): complex,
    ("builtins", "slice"): slice,
    ("builtins", "range"): range,
    ("builtins", "bytearray"): _bytearray,
    ("__builtin__", "set"): set,
    ("collections", "OrderedDict"): _OrderedDict,
    ("_codecs", "encode"): _latin1_bytes,
}


class _InertUnpickler(pickle.Unpickler):
    """An Unpickler that imports nothing and reads no tensor storage."""

    def find_class(self, module, name):
        allowed = _ALLOWED.get((module, name))
        return allowed if allowed is not None else _make_stub(module, name)

    def persistent_load(self, pid):
        # torch zip format: ('storage', storage_type, key, location, numel)
        if isinstance(pid, tuple) and len(pid) >= 3:
            storage_type = pid[1]
            dtype = (storage_type.qualname() if isinstance(storage_type, type) and issubclass(storage_type, _Stub)
                     else str(storage_type))
            numel = pid[4] if len(pid) > 4 and isinstance(pid[4], int) else None
            return StoragePlaceholder(dtype, str(pid[2]), numel)
        return StoragePlaceholder("unknown", str(pid), None)


def safe_unpickle_torch_file(path) -> Any:
    """Read a torch-saved (or plain pickle) file into plain Python values, executing nothing.

    Returns dicts, lists, numbers, strings; custom objects become dicts with a `__class__`
    key, enums their value, tensors `TensorPlaceholder`s. Raises UnreadableFile when the file
    is not a pickle torch could have written.

    >>> import pickle, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.pt")
    >>> with open(p, "wb") as f: pickle.dump({"scale": 1024.0}, f)
    >>> safe_unpickle_torch_file(p)
    {'scale': 1024.0}
    """
    path = Path(path)
    with _pickle_errors(path):
        return to_plain(_load_object(path))


def inert_unpickle_bytes(raw: bytes, path) -> Any:
    """What a pickle stream builds with every global stubbed and no storage read (before `to_plain`).

    Raises UnreadableFile naming `path` when the stream is not a readable pickle.
    """
    with _pickle_errors(Path(path)):
        return _InertUnpickler(io.BytesIO(raw)).load()


@contextmanager
def _pickle_errors(path: Path):
    """Turn what a malformed pickle raises into one UnreadableFile naming `path`."""
    try:
        yield
    except UnreadableFile:
        raise
    except OSError:
        raise
    except zipfile.BadZipFile as err:
        raise UnreadableFile(path, f"damaged zip archive ({err}); the file may be truncated") from None
    except (pickle.UnpicklingError, EOFError) as err:
        raise UnreadableFile(path, f"not a readable pickle ({err or 'unexpected end of file'})") from None
    except RecursionError:
        raise UnreadableFile(path, "pickle nested too deeply to read") from None
    except MemoryError:
        raise UnreadableFile(path, "pickle too large to read") from None
    except Exception as err:  # any other error a malformed opcode stream raises (TypeError, ValueError, ...)
        raise UnreadableFile(path, f"malformed pickle ({type(err).__name__}: {err})") from None


def _load_object(path: Path) -> Any:
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            members = [i for i in archive.infolist() if i.filename.endswith("data.pkl")]
            if not members:
                raise UnreadableFile(path, "zip archive without a data.pkl member: not a torch file")
            member = min(members, key=lambda i: i.filename.count("/"))
            if member.file_size > _MAX_PICKLE_BYTES:
                raise UnreadableFile(path, f"data.pkl is {member.file_size} bytes; too large for a config pickle")
            return _InertUnpickler(io.BytesIO(archive.read(member))).load()
    with open(path, "rb") as fh:
        if fh.read(4) == b"PK\x03\x04":  # a zip without its end (central directory): cut while written
            raise zipfile.BadZipFile("no central directory")
        fh.seek(0)
        unpickler = _InertUnpickler(fh)
        first = unpickler.load()
        if not (isinstance(first, int) and first == _TORCH_MAGIC):
            return first  # a plain pickle: the first object is the content
        unpickler.load()  # protocol version
        unpickler.load()  # sys_info
        return unpickler.load()


def to_plain(obj: Any, _depth: int = 0, _active: set | None = None) -> Any:
    """Turn what the inert unpickler built into plain values (see the module docstring)."""
    if _depth > _MAX_DEPTH:
        raise RecursionError
    active = _active if _active is not None else set()
    if isinstance(obj, (str, bytes, int, float, bool, complex, type(None), StoragePlaceholder, TensorPlaceholder)):
        return obj
    if id(obj) in active:  # the memo can make cycles; cut them
        return "<cycle>"
    active.add(id(obj))
    try:
        return _plain_container(obj, _depth + 1, active)
    finally:
        active.discard(id(obj))


def _plain_container(obj: Any, depth: int, active: set) -> Any:
    if isinstance(obj, dict):
        return {_plain_key(to_plain(k, depth, active)): to_plain(v, depth, active) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v, depth, active) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted((to_plain(v, depth, active) for v in obj), key=repr)
    if isinstance(obj, type) and issubclass(obj, _Stub):
        return obj.qualname()
    if isinstance(obj, _Stub):
        return _plain_stub(obj, depth, active)
    return repr(obj)  # slice, range, bytearray and anything else: its text


def _plain_key(key: Any) -> Any:
    return key if isinstance(key, (str, int, float, bool, type(None))) else repr(key)


def _plain_stub(obj: _Stub, depth: int, active: set) -> Any:
    cls = type(obj)
    if cls._stub_name in ("_rebuild_tensor_v2", "_rebuild_tensor", "_rebuild_parameter"):
        return _tensor_placeholder(obj)
    if cls._stub_name == "_reconstructor" and obj._stub_args:
        # copyreg._reconstructor(cls, base, state): the object is an instance of args[0].
        inner = obj._stub_args[0]
        cls = inner if isinstance(inner, type) and issubclass(inner, _Stub) else cls
    if obj._stub_state is not None:
        out = _state_dict(obj._stub_state, depth, active)
        out["__class__"] = cls.qualname()
        return out
    if obj._stub_items:
        items = [to_plain(i, depth, active) for i in obj._stub_items]
        if all(isinstance(i, list) and len(i) == 2 for i in items):
            return {_plain_key(k): v for k, v in items}
        return items
    args = obj._stub_args
    if len(args) == 1:
        return to_plain(args[0], depth, active)  # an enum member or a one-argument value
    if args:
        return [to_plain(a, depth, active) for a in args]  # e.g. torch.device('cuda', 0)
    return {"__class__": cls.qualname()}


def _state_dict(state: Any, depth: int, active: set) -> dict:
    # BUILD state is a dict, or (dict, slots-dict) for classes with __slots__.
    if isinstance(state, tuple) and len(state) == 2 and all(isinstance(s, (dict, type(None))) for s in state):
        merged = dict(state[0] or {})
        merged.update(state[1] or {})
        state = merged
    plain = to_plain(state, depth, active)
    return plain if isinstance(plain, dict) else {"__state__": plain}


def _tensor_placeholder(obj: _Stub) -> TensorPlaceholder:
    args = obj._stub_args
    storage = args[0] if args else None
    if isinstance(storage, TensorPlaceholder):  # _rebuild_parameter(tensor, ...)
        return storage
    dtype = storage.dtype if isinstance(storage, StoragePlaceholder) else "unknown"
    shape = args[2] if len(args) > 2 and isinstance(args[2], (tuple, list)) else ()
    return TensorPlaceholder(dtype, tuple(shape))


def read_deepspeed_counters(path) -> dict[str, int]:
    """`skipped_steps`, `global_steps`, ... of a DeepSpeed `*model_states.pt`, read without executing it.

    Returns only the counters found. Raises UnreadableFile when the file cannot be read. The
    checkpoint check and the run configuration both ask for them: the file is unpickled once.
    """
    st = os.stat(path)
    return dict(_counters(str(path), st.st_mtime_ns, st.st_size))


@lru_cache(maxsize=64)
def _counters(path: str, mtime_ns: int, size: int) -> tuple[tuple[str, int], ...]:
    state = safe_unpickle_torch_file(path)
    if not isinstance(state, dict):
        return ()
    return tuple((key, state[key]) for key in DEEPSPEED_COUNTERS
                 if isinstance(state.get(key), int) and not isinstance(state.get(key), bool))
