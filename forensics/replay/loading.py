"""What `forensics replay` loads, and how: the checkpoint folder (a model, or a PEFT adapter on its base model found
on this machine), its config, the dtype the run computed in, and the model itself through transformers.

Local files only, never remote code; transformers' own warnings and progress bars are kept quiet while loading,
and every failure is one line (UnreadableFile, NoCheckpoints, BadOption) rather than a traceback.
"""
from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Iterator

from ..errors import BadOption, NoCheckpoints, UnreadableFile, os_reason

LIMITS = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38}
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
EXTRA = "pip install 'forensics[replay]'"


def weight_files(folder: Path) -> list[Path]:
    """The model's weight files: safetensors when there are any (a folder may hold both formats), else .bin."""
    files = [f for f in sorted(folder.iterdir()) if f.is_file() and f.suffix in WEIGHT_SUFFIXES
             and (f.name.startswith(("model", "pytorch_model")) or f.name.startswith("adapter_model"))]
    safetensors = [f for f in files if f.suffix == ".safetensors"]
    return safetensors or files


def check_folder(folder: Path) -> bool:
    """True for a PEFT adapter folder (adapter_config.json and no full model weights), False for a model folder."""
    if not folder.is_dir():
        raise NoCheckpoints(folder, "no such checkpoint folder" if not folder.exists() else "not a folder")
    try:
        has_model = any(not f.name.startswith("adapter_model") for f in weight_files(folder))
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


def base_folder(folder: Path) -> Path:
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


def import_libraries():
    try:
        import torch
        import transformers
    except ImportError:
        raise BadOption(f"forensics replay needs torch and transformers: {EXTRA}") from None
    return torch, transformers


def read_config(folder: Path, transformers):
    try:
        return transformers.AutoConfig.from_pretrained(str(folder), local_files_only=True)
    except Exception as err:  # unknown model_type, damaged JSON, remote code: one line
        raise UnreadableFile(folder / "config.json", f"transformers cannot read it ({first_line(err)})") from None


def first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:240] if text else type(err).__name__


def run_dtype(folder: Path, config) -> tuple[str, str]:
    """The dtype the run computed in: mixed precision from training_args.bin, else config.json's dtype."""
    args = folder / "training_args.bin"
    if args.is_file():
        from ..ingest.training_args import read_training_args

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


def text_config(config):
    return config.get_text_config() if hasattr(config, "get_text_config") else config


@contextlib.contextmanager
def quiet(transformers) -> Iterator[None]:
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


def load_model(folder: Path, model_folder: Path, adapter: bool, dtype: str, device: str, torch, transformers):
    """(model in eval mode on `device`, names of the weights the checkpoint lacked)."""
    kwargs = {_dtype_kwarg(transformers): getattr(torch, dtype), "local_files_only": True,
              "output_loading_info": True}
    try:
        model, info = transformers.AutoModelForCausalLM.from_pretrained(str(model_folder), **kwargs)
    except Exception as err:  # the model class, missing or damaged weights: one line, not a traceback
        raise UnreadableFile(model_folder, f"transformers could not load it ({first_line(err)})") from None
    missing = tuple(sorted(info.get("missing_keys") or ()))
    if adapter:
        model = _with_adapter(model, folder)
    return model.to(device).eval(), missing


def _with_adapter(model, folder: Path):
    try:
        from peft import PeftModel
    except ImportError:
        raise BadOption(f"replaying a PEFT adapter needs peft: {EXTRA}") from None
    try:
        peft_model = PeftModel.from_pretrained(model, str(folder), is_trainable=False)
    except Exception as err:
        raise UnreadableFile(folder, f"peft could not load the adapter ({first_line(err)})") from None
    try:  # LoRA and kin merge into the base, so modules keep the base model's names
        return peft_model.merge_and_unload()
    except Exception:  # prompt learning and the like do not merge; replay them as they are
        return peft_model
