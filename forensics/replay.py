"""Activation replay after the fact: `forensics replay CKPT`.

What transformers' DebugUnderflowOverflow does in a live run (SIGNALS.md #6, #14), done on a saved
checkpoint: load it with transformers (local files only, never remote code), run one probe batch
(random token ids with a fixed seed, or a text file through the folder's tokenizer) in the run's
dtype or the one asked, with a forward hook on every module recording the abs-max and the NaN/Inf
count of its input and output, in the order the modules ran. The first module whose output is
NaN/Inf or past the dtype's limit (fp16 65504) is named, with the frames before it: "it's the
previous frames that we need to look into".

Before anything is loaded the memory it needs (parameters from the weight files' headers, or from
config.json, in the replay dtype, plus the probe's activations) is set against what is free: the
GPU's when CUDA is there, else RAM; a model that will not fit is refused in one line. A PEFT adapter
folder is replayed on its base model when that base is on this machine (a folder, or the Hugging
Face cache), merged in memory. Needs torch and transformers (the `replay` extra; peft for
adapters); the checkpoint folder is only read.

The run's dtype ("auto"): the HF Trainer's training_args.bin (fp16=True / bf16=True: mixed
precision, whose checkpoints are saved in float32), else config.json's torch_dtype, else float32.
The replay runs the whole model in that dtype, which is stricter than autocast (autocast keeps
norms and softmax in float32): a module past the limit here is one to look at, not proof.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from .errors import BadOption, NoCheckpoints, UnreadableFile, os_reason

DTYPES = {"fp16": "float16", "float16": "float16", "half": "float16",
          "bf16": "bfloat16", "bfloat16": "bfloat16",
          "fp32": "float32", "float32": "float32", "float": "float32"}
LIMITS = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38}
BYTES = {"float16": 2, "bfloat16": 2, "float32": 4}
FRAMES = 8  # frames shown: the modules before the first bad one (and it), or the largest outputs
HEADROOM = 0.9  # share of the free memory a replay may plan to use
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json", "spiece.model")
_EXTRA = "pip install 'forensics[replay]'"


@dataclass(frozen=True)
class Frame:
    """One module call in the probe pass: abs-max over the finite values and NaN/Inf counts of its output
    (and of its input hidden states, where it had floating-point ones)."""

    module: str
    type: str
    absmax: float | None
    nan: int
    inf: int
    input_absmax: float | None = None
    input_nonfinite: int = 0

    @property
    def nonfinite(self) -> int:
        return self.nan + self.inf

    def to_dict(self) -> dict[str, Any]:
        return {"module": self.module, "type": self.type, "absmax": self.absmax, "nonfinite": self.nonfinite,
                "nan": self.nan, "inf": self.inf, "input_absmax": self.input_absmax,
                "input_nonfinite": self.input_nonfinite}

    def past(self, limit: float) -> bool:
        return self.nonfinite > 0 or (self.absmax is not None and self.absmax > limit)


@dataclass(frozen=True)
class ReplayResult:
    """The probe pass over one checkpoint.

    Fields:
        checkpoint: the folder replayed; base_model: the base an adapter was merged into (None for a full model).
        model_type: config.json's model_type.
        dtype: what it ran in ("float16"); dtype_source: where that came from ("--dtype", "training_args.bin
            fp16=True", "config.json torch_dtype", "default"); limit: the dtype's largest finite value.
        device: "cpu" or "cuda"; memory_gib: the memory the replay was estimated to need.
        tokens: probe length; probe: "random token ids (seed N)" or the text file.
        modules: how many module outputs were recorded.
        first_bad: the first module (in the order they ran) whose output is NaN/Inf or past `limit`; None when none.
        reason: "overflow" (Inf, or past the limit) or "nan"; None when nothing is.
        input_was_bad: the first bad module's input was already NaN/Inf: the bad values came from code that runs
            in its parent module between its children (attention's softmax, a residual add), not from it.
        origin: where the bad values most likely arose: first_bad, or its parent when input_was_bad.
        frames: the module calls before the first bad one, and it (empty when none is bad).
        largest: the module outputs with the largest finite abs-max, largest first.
        missing_weights: weights the checkpoint lacked, left at their random init (then the replay means little).
    """

    checkpoint: str
    base_model: str | None
    model_type: str
    dtype: str
    dtype_source: str
    limit: float
    device: str
    memory_gib: float
    tokens: int
    probe: str
    modules: int
    first_bad: str | None
    reason: str | None
    input_was_bad: bool
    origin: str | None
    frames: tuple[Frame, ...]
    largest: tuple[Frame, ...]
    missing_weights: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"checkpoint": self.checkpoint, "base_model": self.base_model, "model_type": self.model_type,
                "dtype": self.dtype, "dtype_source": self.dtype_source, "limit": self.limit,
                "device": self.device, "memory_gib": self.memory_gib, "tokens": self.tokens, "probe": self.probe,
                "modules": self.modules, "first_bad": self.first_bad, "reason": self.reason,
                "input_was_bad": self.input_was_bad, "origin": self.origin, "frames": [f.to_dict() for f in self.frames],
                "largest": [f.to_dict() for f in self.largest], "missing_weights": list(self.missing_weights)}

    def __str__(self) -> str:
        if self.first_bad is None:
            top = self.largest[0] if self.largest else None
            peak = f"; largest output {top.module} {top.absmax:.4g}" if top and top.absmax is not None else ""
            return (f"{self.checkpoint}: no module output past the {self.dtype} limit {self.limit:.6g} or NaN/Inf "
                    f"({self.modules} outputs, {self.probe}, {self.tokens} tokens){peak}")
        what = "is NaN" if self.reason == "nan" else f"overflows {self.dtype} (past {self.limit:.6g})"
        after = f" after {self.frames[-2].module}" if len(self.frames) > 1 else ""
        came = (f"; its input was already NaN/Inf, so it came from {self.origin}'s own code{after}"
                if self.input_was_bad else "")
        return f"{self.checkpoint}: {self.first_bad} is the first module whose output {what}{came}"


def replay(path, text: Path | str | None = None, dtype: str = "auto", tokens: int = 32, seed: int = 0,
           frames: int = FRAMES) -> ReplayResult:
    """Run one probe batch through the checkpoint at `path` and name the first module whose output overflows.

    Raises BadOption (a bad argument, torch/transformers missing), NoCheckpoints (no model folder, an
    adapter whose base is not here) or UnreadableFile (too big for this machine, transformers could not
    load it, the text unreadable), each with one line saying why.
    """
    folder = Path(path)
    asked = _dtype_asked(dtype)
    if tokens < 1:
        raise BadOption(f"--tokens {tokens}: the probe needs at least one token")
    adapter = _check_folder(folder)
    content = _read_text(Path(text)) if text is not None else None
    torch, transformers = _import()
    model_folder = _base_folder(folder) if adapter else folder
    with _quiet(transformers):
        config = _config(model_folder, transformers)
        name, source = (asked, "--dtype") if asked else _run_dtype(folder, config)
        device, need = _place(folder, model_folder, config, name, tokens, torch)
        model, missing = _load(folder, model_folder, adapter, name, device, torch, transformers)
        ids, probe = _probe(folder, model_folder, content, text, tokens, seed, config, torch, transformers)
    calls = _forward(folder, model, ids.to(device), torch)
    return _result(folder, model_folder if adapter else None, config, name, source, device, need,
                   int(ids.shape[1]), probe, calls, max(1, frames), missing)


def _dtype_asked(dtype: str) -> str | None:
    if dtype == "auto":
        return None
    if dtype not in DTYPES:
        raise BadOption(f"--dtype {dtype!r}: use auto, fp16, bf16 or fp32")
    return DTYPES[dtype]


def _weight_files(folder: Path) -> list[Path]:
    """The model's weight files: safetensors when there are any (a folder may hold both formats), else .bin."""
    files = [f for f in sorted(folder.iterdir()) if f.is_file() and f.suffix in WEIGHT_SUFFIXES
             and (f.name.startswith(("model", "pytorch_model")) or f.name.startswith("adapter_model"))]
    safetensors = [f for f in files if f.suffix == ".safetensors"]
    return safetensors or files


def _check_folder(folder: Path) -> bool:
    """True for a PEFT adapter folder (adapter_config.json and no full model weights), False for a model folder."""
    if not folder.is_dir():
        raise NoCheckpoints(folder, "no such checkpoint folder" if not folder.exists() else "not a folder")
    try:
        has_model = any(not f.name.startswith("adapter_model") for f in _weight_files(folder))
    except OSError as err:
        raise UnreadableFile(folder, os_reason(err)) from None
    if (folder / "adapter_config.json").is_file() and not has_model:
        return True
    if not (folder / "config.json").is_file():
        steps = [d for d in folder.iterdir() if d.is_dir() and (d / "config.json").is_file()]
        if steps:
            last = max(steps, key=lambda d: (int(re.search(r"(\d*)$", d.name).group(1) or -1), d.name))
            raise NoCheckpoints(folder, f"a run folder: replay one of its {len(steps)} checkpoints, e.g. {last}")
        raise NoCheckpoints(folder, "no config.json: not a transformers model folder")
    return False


def _base_folder(folder: Path) -> Path:
    """The local folder of an adapter's base model (its own path, relative to the adapter, or the HF cache)."""
    try:
        adapter = json.loads((folder / "adapter_config.json").read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UnreadableFile(folder / "adapter_config.json", f"not readable JSON ({err})") from None
    base = adapter.get("base_model_name_or_path") if isinstance(adapter, dict) else None
    if not base or not isinstance(base, str):
        raise NoCheckpoints(folder, "a PEFT adapter that does not name its base model: replay needs the base "
                                    "model (replay the merged model's folder instead)")
    for candidate in (Path(base).expanduser(), folder / base, folder.parent / base):
        if (candidate / "config.json").is_file():
            return candidate
    cached = _hub_cache(base)
    if cached is not None:
        return cached
    raise NoCheckpoints(folder, f"a PEFT adapter: replay needs its base model {base}, which is not on this "
                                "machine (no such folder, not in the Hugging Face cache); download it, or "
                                "replay the merged model's folder")


def _hub_cache(repo_id: str) -> Path | None:
    try:
        from huggingface_hub import snapshot_download

        path = Path(snapshot_download(repo_id, local_files_only=True))
    except Exception:  # not cached, not a repo id, no huggingface_hub: not here
        return None
    return path if (path / "config.json").is_file() else None


def _read_text(path: Path) -> str:
    try:
        content = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        reason = os_reason(err) if isinstance(err, OSError) else "not UTF-8 text"
        raise UnreadableFile(path, f"cannot read the probe text ({reason})") from None
    if not content.strip():
        raise UnreadableFile(path, "the probe text is empty")
    return content


def _import():
    try:
        import torch
        import transformers
    except ImportError:
        raise BadOption(f"forensics replay needs torch and transformers: {_EXTRA}") from None
    return torch, transformers


def _config(folder: Path, transformers):
    try:
        return transformers.AutoConfig.from_pretrained(str(folder), local_files_only=True)
    except Exception as err:  # unknown model_type, damaged JSON, remote code: one line
        raise UnreadableFile(folder / "config.json", f"transformers cannot read it ({_first_line(err)})") from None


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:240] if text else type(err).__name__


def _run_dtype(folder: Path, config) -> tuple[str, str]:
    """The dtype the run computed in: mixed precision from training_args.bin, else config.json's dtype."""
    args = folder / "training_args.bin"
    if args.is_file():
        from .ingest.training_args import read_training_args

        try:
            fields = read_training_args(args)
        except Exception:  # a damaged or foreign pickle: fall back to config.json
            fields = {}
        for flag, name in (("bf16", "bfloat16"), ("fp16", "float16")):
            if fields.get(flag) is True:
                return name, f"training_args.bin {flag}=True"
    saved = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
    saved = str(saved).removeprefix("torch.") if saved is not None else None
    if saved in LIMITS:
        return saved, "config.json torch_dtype"
    return "float32", "default"


def _place(folder: Path, model_folder: Path, config, dtype: str, tokens: int, torch) -> tuple[str, float]:
    """(device, GiB needed): CUDA when it is there and the model fits, else the CPU; refused when neither fits."""
    need = estimate_bytes(model_folder, config, dtype, tokens)
    if folder != model_folder:
        need += sum(f.stat().st_size for f in _weight_files(folder)) * 2
    gib = need / 2**30
    ram = _available_memory()
    if torch.cuda.is_available():
        try:
            free = torch.cuda.mem_get_info()[0]
        except Exception:
            free = 0
        if need <= HEADROOM * free and (ram is None or _host_need(model_folder) <= HEADROOM * ram):
            return "cuda", gib
    if ram is None or need <= HEADROOM * ram:
        return "cpu", gib
    where = "GPU memory or RAM" if torch.cuda.is_available() else "RAM"
    hint = " (--dtype bf16 or fp16 halves it)" if dtype == "float32" else ""
    raise UnreadableFile(folder, f"the replay needs about {gib:.1f} GiB in {dtype} and {ram / 2**30:.1f} GiB of "
                                 f"{where} is free: too big for this machine{hint}")


def _host_need(folder: Path) -> int:
    """RAM a load passes through on its way to the GPU: pickled .bin files are read whole."""
    return sum(f.stat().st_size for f in _weight_files(folder) if f.suffix != ".safetensors")


def estimate_bytes(folder: Path, config, dtype: str, tokens: int) -> int:
    """Bytes a replay of the model in `folder` needs: its parameters in `dtype`, a pickled file read whole, the probe.

    Parameters are counted from the safetensors headers; for .bin files from their size and the saved dtype;
    with no weight file from config.json's sizes.
    """
    files = _weight_files(folder)
    params = sum(_safetensors_params(f) for f in files if f.suffix == ".safetensors")
    pickled = sum(f.stat().st_size for f in files if f.suffix != ".safetensors")
    saved = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
    params += pickled // BYTES.get(str(saved).removeprefix("torch."), 4)
    if not params:
        params = _config_params(config)
    return params * BYTES[dtype] + pickled + _activation_bytes(config, tokens) + 256 * 2**20


def _safetensors_params(path: Path) -> int:
    """Elements in a safetensors file, from its header (its size / 2 when the header cannot be read)."""
    try:
        with path.open("rb") as fh:
            n = int.from_bytes(fh.read(8), "little")
            header = json.loads(fh.read(n)) if 0 < n < 100_000_000 else None
        return sum(math.prod(spec["shape"]) for key, spec in header.items() if key != "__metadata__")
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return path.stat().st_size // 2


def _text_config(config):
    return config.get_text_config() if hasattr(config, "get_text_config") else config


def _config_params(config) -> int:
    """Parameters of a decoder from config.json's sizes (embeddings, attention, MLP): the estimate's fallback."""
    c = _text_config(config)
    d, layers = int(getattr(c, "hidden_size", 0) or 0), int(getattr(c, "num_hidden_layers", 0) or 0)
    inner, vocab = int(getattr(c, "intermediate_size", 0) or 4 * d), int(getattr(c, "vocab_size", 0) or 0)
    heads = 1 if getattr(c, "tie_word_embeddings", False) else 2
    return heads * vocab * d + layers * (4 * d * d + 3 * d * inner)


def _activation_bytes(config, tokens: int) -> int:
    """The probe's largest live tensors in float32: logits, the MLP's inner width, attention scores."""
    c = _text_config(config)
    d = int(getattr(c, "hidden_size", 0) or 0)
    inner, vocab = int(getattr(c, "intermediate_size", 0) or 4 * d), int(getattr(c, "vocab_size", 0) or 0)
    heads = int(getattr(c, "num_attention_heads", 0) or 1)
    return 4 * tokens * (vocab + 4 * inner + 8 * d) + 4 * heads * tokens * tokens * 2


def _available_memory() -> int | None:
    """Bytes of RAM free for a new process (MemAvailable), or None where that cannot be read."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


@contextlib.contextmanager
def _quiet(transformers) -> Iterator[None]:
    """transformers' warnings and progress bars off while loading (what matters comes back as fields)."""
    logging = transformers.utils.logging
    verbosity, bars = logging.get_verbosity(), logging.is_progress_bar_enabled()
    logging.set_verbosity_error()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        logging.set_verbosity(verbosity)
        if bars:
            logging.enable_progress_bar()


def _dtype_kwarg(transformers) -> str:
    """from_pretrained's dtype argument: `dtype` since transformers 4.56, `torch_dtype` before."""
    try:
        major, minor = (int(p) for p in transformers.__version__.split(".")[:2])
    except ValueError:
        return "dtype"
    return "dtype" if (major, minor) >= (4, 56) else "torch_dtype"


def _load(folder: Path, model_folder: Path, adapter: bool, dtype: str, device: str, torch, transformers):
    """(model in eval mode on `device`, names of the weights the checkpoint lacked)."""
    kwargs = {_dtype_kwarg(transformers): getattr(torch, dtype), "local_files_only": True,
              "output_loading_info": True}
    try:
        model, info = transformers.AutoModelForCausalLM.from_pretrained(str(model_folder), **kwargs)
    except Exception as err:  # the model class, missing or damaged weights: one line, not a traceback
        raise UnreadableFile(model_folder, f"transformers could not load it ({_first_line(err)})") from None
    missing = tuple(sorted(info.get("missing_keys") or ()))
    if adapter:
        model = _with_adapter(model, folder)
    return model.to(device).eval(), missing


def _with_adapter(model, folder: Path):
    try:
        from peft import PeftModel
    except ImportError:
        raise BadOption(f"replaying a PEFT adapter needs peft: {_EXTRA}") from None
    try:
        peft_model = PeftModel.from_pretrained(model, str(folder), is_trainable=False)
    except Exception as err:
        raise UnreadableFile(folder, f"peft could not load the adapter ({_first_line(err)})") from None
    try:  # LoRA and kin merge into the base, so modules keep the base model's names
        return peft_model.merge_and_unload()
    except Exception:  # prompt learning and the like do not merge; replay them as they are
        return peft_model


def _probe(folder: Path, model_folder: Path, content: str | None, text, tokens: int, seed: int, config,
           torch, transformers):
    positions = getattr(_text_config(config), "max_position_embeddings", None)
    if content is None:
        if isinstance(positions, int) and tokens > positions:
            raise BadOption(f"--tokens {tokens}: the model takes at most {positions} positions")
        vocab = int(getattr(_text_config(config), "vocab_size", 0) or 0)
        if vocab < 1:
            raise UnreadableFile(folder / "config.json", "no vocab_size: cannot draw random token ids")
        generator = torch.Generator().manual_seed(seed)
        return torch.randint(0, vocab, (1, tokens), generator=generator), f"random token ids (seed {seed})"
    tokenizer = None
    for where in dict.fromkeys((folder, model_folder)):
        if not any((where / name).is_file() for name in TOKENIZER_FILES):
            continue
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(where), local_files_only=True)
            break
        except Exception:
            continue
    if tokenizer is None:
        raise BadOption(f"--text needs the tokenizer in the checkpoint folder ({TOKENIZER_FILES[0]} or "
                        f"{TOKENIZER_FILES[1]}), and {folder} has none that loads")
    limit = min(tokens, positions) if isinstance(positions, int) else tokens
    ids = tokenizer(content, return_tensors="pt", truncation=True, max_length=limit)["input_ids"]
    if ids.shape[1] == 0:
        raise UnreadableFile(text, "the folder's tokenizer makes no tokens of the probe text")
    vocab = int(getattr(_text_config(config), "vocab_size", 0) or 0)
    if vocab and int(ids.max()) >= vocab:
        raise BadOption(f"--text: the folder's tokenizer gives token id {int(ids.max())}, past the model's "
                        f"vocab_size {vocab}: not this model's tokenizer")
    return ids, str(text)


def _first_tensor(value, torch):
    """The first tensor in a module's output: the tensor itself, a tuple's first, a ModelOutput's first field."""
    if torch.is_tensor(value):
        return value
    if isinstance(value, dict):  # ModelOutput is an OrderedDict of its non-None fields
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        for item in value:
            found = _first_tensor(item, torch)
            if found is not None:
                return found
    return None


def _stats(tensor, torch) -> tuple[float | None, int, int] | None:
    """(abs-max over finite values or None, NaN count, Inf count) of a floating-point tensor, else None."""
    if tensor is None or not tensor.is_floating_point() or tensor.numel() == 0:
        return None
    t = tensor.detach()
    finite = torch.isfinite(t)
    nan = int(torch.isnan(t).sum())
    inf = int(t.numel() - int(finite.sum())) - nan
    absmax = t.abs().masked_fill(~finite, 0) if nan or inf else t.abs()
    finite_count = t.numel() - nan - inf
    return (float(absmax.max()) if finite_count else None), nan, inf


def _forward(folder: Path, model, ids, torch) -> list[Frame]:
    """One forward pass with a hook on every module; the frames in the order the modules returned."""
    calls: list[Frame] = []
    names = {module: name or "(model)" for name, module in model.named_modules()}

    def record(module, args, kwargs, output):
        out = _stats(_first_tensor(output, torch), torch)
        if out is None:
            return
        hidden = kwargs.get("hidden_states") if "hidden_states" in kwargs else (args[0] if args else None)
        seen = _stats(hidden if torch.is_tensor(hidden) else None, torch)
        calls.append(Frame(names[module], type(module).__name__, *out,
                           input_absmax=seen[0] if seen else None, input_nonfinite=(seen[1] + seen[2]) if seen else 0))

    hooks = [module.register_forward_hook(record, with_kwargs=True) for module in names]
    try:
        with torch.no_grad():
            model(input_ids=ids, use_cache=False)
    except Exception as err:  # a model that cannot run this probe: one line
        raise UnreadableFile(folder, f"the probe pass failed ({_first_line(err)})") from None
    finally:
        for hook in hooks:
            hook.remove()
    return calls


def _result(folder: Path, base: Path | None, config, dtype: str, source: str, device: str, need: float,
            tokens: int, probe: str, calls: list[Frame], shown: int, missing: tuple[str, ...]) -> ReplayResult:
    limit = LIMITS[dtype]
    largest = tuple(sorted((c for c in calls if c.absmax is not None), key=lambda c: -c.absmax)[:shown])
    common = dict(checkpoint=str(folder), base_model=str(base) if base else None,
                  model_type=str(getattr(config, "model_type", "") or ""), dtype=dtype, dtype_source=source,
                  limit=limit, device=device, memory_gib=round(need, 3), tokens=tokens, probe=probe,
                  modules=len(calls), largest=largest, missing_weights=missing)
    for i, call in enumerate(calls):
        if call.past(limit):
            reason = "overflow" if call.inf or not call.nan else "nan"
            parent = call.module.rpartition(".")[0] or "(model)"
            return ReplayResult(**common, first_bad=call.module, reason=reason,
                                input_was_bad=call.input_nonfinite > 0,
                                origin=parent if call.input_nonfinite else call.module,
                                frames=tuple(calls[max(0, i - shown + 1): i + 1]))
    return ReplayResult(**common, first_bad=None, reason=None, input_was_bad=False, origin=None, frames=())
