"""The fine-tuning method a run's files and configuration show: "qlora" (an adapter on a 4-bit base), "lora" (adapter
files or config), "peft" (an adapter that is not low-rank: prompt or prefix tuning, IA3) or "full" (whole-model
weights). `derive_method` records it in the `RunConfig` as `method`, with the evidence as its source.
"""
from __future__ import annotations

import re

from ..config import RunConfig
from ..discover.run_layout import RunLayout

# a base saved in 4 bits: bitsandbytes' (`-bnb-4bit`, nf4), GPTQ's and AWQ's (`Qwen2-7B-Instruct-GPTQ-Int4`, `-AWQ`)
_FOUR_BIT_BASE = re.compile(r"bnb-4bit|(?<![a-z0-9])(?:4bit|int4|awq)(?![a-z0-9])|nf4", re.IGNORECASE)


# a run's name that sets 4 bits against something else (`lora_not_4bit`, `fp16_baseline_vs_4bit`): no base said
_NOT_4BIT = re.compile(r"(?i)(?<![a-z])(?:no|not|non|without|vs|versus|baseline)(?![a-z])")
# a run's own name that says QLoRA (`output/yi-6b-sft-qlora`, `./models/qlora-phi2`; `loraqlora-compare` says neither),
# taken with the optimizer QLoRA brought (bitsandbytes' paged AdamW: `paged_adamw_8bit`, `paged_adamw_32bit`): its
# adapter sat on a quantized base, which no adapter_config.json records. The name alone is not enough: a script named
# for QLoRA may load its base in 8 bits, or in full precision.
_QLORA_WORD = re.compile(r"(?i)(?<![a-z])qlora(?![a-z])")
_PAGED_OPTIMIZER = re.compile(r"(?i)^paged_")


_LORA_KINDS = ("LORA", "ADALORA", "LOHA", "LOKR", "OFT", "BOFT", "VERA", "DORA")  # low-rank (or kin) weight deltas


def derive_method(config: RunConfig, layout: RunLayout) -> None:
    """`method`: "qlora" (4-bit base + adapter), "lora" (adapter files or config), "full" (whole-model weights)."""
    names = [p.name for p in layout.weight_files]
    adapter_files = [n for n in names if n.startswith("adapter_model")]
    full_files = [n for n in names if n.startswith(("model", "pytorch_model")) or n.endswith("model_states.pt")]
    base = str(config.get("adapter.base_model_name_or_path") or config.get("model.name_or_path") or "")
    own = " ".join(dict.fromkeys(  # (run_name is output_dir where the Trainer's default stands)
        re.split(r"[\\/]", str(config.get(k) or "").rstrip("\\/"))[-1] for k in ("output_dir", "run_name")))
    quant4 = (config.get("quant.load_in_4bit") is True or config.get("quant.bits") == 4
              or bool(_FOUR_BIT_BASE.search(base))  # unsloth/...-bnb-4bit: the base was saved 4-bit
              or bool(_FOUR_BIT_BASE.search(own)) and not _NOT_4BIT.search(own))  # named for its 4-bit base
    peft_type = str(config.get("adapter.peft_type") or "").upper()
    if peft_type and peft_type not in _LORA_KINDS:  # prompt / prefix tuning, IA3: an adapter, not a low-rank one
        method, source = "peft", f"derived: peft_type {peft_type} ({config.source_of('adapter.peft_type')})"
    elif adapter_files or peft_type or config.get("adapter.r"):
        why = adapter_files[0] if adapter_files else (config.source_of("adapter.peft_type") or "adapter_config.json")
        method, source = _adapter_method(config, why, quant4, base, own)
    elif quant4:
        where = config.source_of("quant.load_in_4bit") or config.source_of("quant.bits") or "quantization_config"
        method, source = "qlora", f"derived: a base loaded in 4 bits ({where}; it cannot be trained in full)"
    elif full_files:
        method, source = "full", f"derived: whole-model weights ({full_files[0]}) and no adapter"
    elif saved_model_config := _trainer_saved_model_config(layout):
        method, source = "full", (f"derived: the model's {saved_model_config} saved by the Trainer (weights not "
                                  "here) and no adapter_config.json: a PEFT save writes the adapter's config instead")
    else:
        return
    if config.get("method") == "lora" and method == "qlora":
        # a framework's "lora" names the adapter (LLaMA-Factory's finetuning_type); the 4-bit base is a fact beside it
        config.put_first("method", method, f"{source}; {config.source_of('method')} says lora")
    elif config.get("method") != method:  # a second value shows as a conflict: the framework said otherwise
        config.add("method", method, source)


def _adapter_method(config: RunConfig, why: str, quant4: bool, base: str, own: str) -> tuple[str, str]:
    """(method, source) of a run that trained a low-rank adapter: "qlora" where its base was 4-bit (`quant4`) or its
    own name says QLoRA beside a paged optimizer (`_QLORA_WORD`), else "lora"."""
    if quant4:
        four = (config.source_of("quant.load_in_4bit") or config.source_of("quant.bits")
                or (f"the base's name {base}" if _FOUR_BIT_BASE.search(base) else f"the run's own name {own.strip()}"))
        return "qlora", f"derived: {why} with a 4-bit quantized base ({four})"
    optimizer = str(config.get("optim") or "")
    if _QLORA_WORD.search(own) and not _NOT_4BIT.search(own) and _PAGED_OPTIMIZER.match(optimizer):
        return "qlora", (f"derived: {why}, in a run whose own name says QLoRA ({own.strip()}) and whose optimizer is "
                         f"QLoRA's paged one ({optimizer}, {config.source_of('optim')})")
    return "lora", f"derived: {why}"


def _trainer_saved_model_config(layout: RunLayout) -> str | None:
    """A model `config.json` in a Trainer's save folder (beside trainer_state.json or training_args.bin, or above
    its checkpoint-N/ folders) of a run with no adapter_config.json anywhere, as a path relative to the run; else
    None."""
    names = {p.name for p in layout.config_files}
    if "adapter_config.json" in names:
        return None
    for path in layout.config_files:
        if path.name == "config.json" and _a_trainer_save_folder(path.parent):
            return str(path.relative_to(layout.root)) if path.is_relative_to(layout.root) else str(path)
    return None


def _a_trainer_save_folder(folder) -> bool:
    """A folder the Trainer saved into: its trainer_state.json or training_args.bin, or, as an output_dir whose state
    is only in its checkpoints (trainer.save_state() not called), a checkpoint-N/trainer_state.json in it."""
    return ((folder / "trainer_state.json").is_file() or (folder / "training_args.bin").is_file()
            or any((sub / "trainer_state.json").is_file() for sub in folder.glob("checkpoint-*")))
