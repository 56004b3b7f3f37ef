"""Banners a console log prints about the run itself: PEFT's trainable-parameter line and
Unsloth's `==((====))==` blocks. They say the method (an adapter: few trainable parameters),
the framework (Unsloth) and the model size, which the run profile reads (`Banner`).

* PEFT `PeftModel.print_trainable_parameters()`:
  `trainable params: 3,784,704 || all params: 467,772,416 || trainable%: 0.8091`.
* text-generation-webui's Training_PRO: `Trainable params: X (p %), All params: Y (Model: Z)`; Z is the model.
* ms-swift's closing summary in logging.jsonl: `model_info` (`InternVLChatModel: 2205.7544M Params (2205.7544M
  Trainable [100.0000%]), ...`), read by the swift reader through `swift_banner`.
* A parameter summary, as torchinfo / torchsummary / Keras and many training scripts print it: `Total params:
  124,475,904` and `Trainable params: 124,475,904` (or `... Parameters: N`), each a line of its own, within three
  lines of each other (dhairyag/ShakespeareGPT-Forge log.md). All of it trainable is a full training run.
* A script's own `Enhanced model has 9,854,851 trainable parameters.` with `Total parameters: 9,854,851` anywhere in
  the same log (kind "param_counts"), and Joey NMT's `Total params: N` (the weights that require grad) followed by
  `Trainable parameters: [names]` that list the embedding tables and no adapter's weights (kind "param_names"): N
  trainable of N, a full training run.
* A script's own count line after `get_peft_model`, naming the adapter on the same line: `LoRA model initialized.
  Trainable parameters: 11796480, All parameters: 4034264576, trainable ratio: 0.29%` (kind "adapter_counts"); the
  same counts without LoRA / PEFT / adapter on the line are left to the parameter-summary readers.
* The Gemma fine-tuning recipe's own f-string of PEFT's `get_nb_trainable_parameters()`: `Trainable: 78446592 |
  total: 2584619008 | Percentage: 3.0351%` (kind "trainable_total"): the whole model's count, adapter included, as
  print_trainable_parameters says it.
* ParlAI's TorchAgent, on building or loading its model: `Total parameters: 16,824,320 (16,824,320 trainable)` (through
  its logger `21:19:59 | Total parameters: ...`), the model's count and the trainable part of it (kind "parlai").
* The HF Trainer's `***** Running training *****` block: `  Number of trainable parameters = 124,439,808`, the
  count alone (the model's size is the config's, when the log prints it).
* MLX's `mlx_lm.lora` (LoRA, DoRA or, with `--fine-tune-type full`, every weight): `Trainable parameters: 0.085%
  (6.816M/8030.261M)`, in millions with three decimals.
* mlx-examples' lora/lora.py (December 2023 to early 2024, before mlx_lm.lora), which trains LoRA adapters only:
  `Total parameters 7411.242M` then `Trainable parameters 2.229M` (kind "mlx_lora"). Its total counts the arrays as
  stored, so a quantized model's packed weights (a 4-bit Mixtral-8x7B prints 7411M of its 46.7B): the trainable
  count is kept, the total is no model size.
* mlx-lm's trainer (`mlx_lm.lora`, and the preference trainers built on it), by its own lines: `Starting training...,
  iters: 600` (`Starting ORPO training..., iters: 500`: the objective it trains) and its step lines, `Iter 10: Train
  loss 2.416, Learning Rate 1.000e-05, It/sec 3.374, Tokens/sec 875.431, ...` and `Iter 1: Val loss 2.247, Val took
  4.935s` (kind "mlx_trainer", once a log: the start line where there is one).
* MiniMind's `init_model` (trainer/trainer_utils.py), as it builds the model: `Model Params: 63.91M` then `Trainable
  Params: 63.912M`, in millions to two and three decimals (kind "minimind"); equal within that rounding, every weight
  is trainable. Its train_lora.py counts before applying LoRA and then again: `LLM 总参数量: 7.356 M` (the whole)
  and `LoRA 参数量: 0.262 M` (the adapter, the only weights it trains).
* LLaMA-Factory's own loggers (`llmtuner.*` before v0.6, then `llamafactory.*`), named on each of their lines.
* Unsloth, on loading the model: `==((====))==  Unsloth 2024.8: Fast Llama patching. ...` and
  four more lines (GPU, Pytorch, `Bfloat16 = FALSE`, licence); on training:
  `==((====))==  Unsloth - 2x faster free finetuning | Num GPUs = 1` and four more lines, the
  last `"-____-"     Number of trainable parameters = 41,943,040` (newer releases: `Trainable parameters =
  17,596,416 of 511,629,184 (3.44% trained)`, the model's count beside it; early 2025 releases print it as
  `6,522,880/1,006,408,832`).
"""
from __future__ import annotations

import re

from ..timeline import Banner

# fairseq_cli.train: `num. model params: 176,834,560 (num. trained: 176,834,560)` (`num. shared model params` since
# its mixture-of-experts support, which prints the experts' count on a line of its own, not read here)
_FAIRSEQ = re.compile(r"\bnum\. (?:shared )?model params: ([\d,]+) \(num\. trained: ([\d,]+)\)")
_PEFT = re.compile(r"trainable params:\s*([\d,]+)\s*\|\|\s*all params:\s*([\d,]+)")
# A script's own count after get_peft_model, the adapter named on the same line (`LoRA model initialized. Trainable
# parameters: 11796480, All parameters: 4034264576, trainable ratio: 0.29%`); without the adapter's name such a line
# is a count, not a method
_ADAPTER_COUNTS = re.compile(r"Trainable param(?:eter)?s\s*[:=]\s*([\d,]+)\s*[,;|]+\s*(?:All|Total) "
                             r"param(?:eter)?s\s*[:=]\s*([\d,]+)", re.IGNORECASE)
# `Trainable: N | total: M` (akarshan-kumar_LLM_FineTunning, avijit2005in_finetune_LLM: the owner's f-string)
_TRAINABLE_TOTAL = re.compile(r"^\s*Trainable:\s*([\d,]+)\s*\|\s*total:\s*([\d,]+)\s*(?:\||$)", re.IGNORECASE)
_ADAPTER_NAMED = re.compile(r"(?i)(?<![a-z])(?:q?lora|peft|adapters?)(?![a-z])")
_UNSLOTH_HEAD = "==((====))==  Unsloth"
# the training banner's first line with its art gone (a notebook's output pasted as text: hussien_MedQA), read where
# the block's trainable-parameters line is there too
_UNSLOTH_TRAINER = "Unsloth - 2x faster free finetuning"
_UNSLOTH_LINES = 5
# `Number of trainable parameters = 41,943,040`, or (2025 and later) `Trainable parameters = 17,596,416 of
# 511,629,184 (3.44% trained)`, or (early 2025, e.g. 2025.3) `Trainable parameters = 6,522,880/1,006,408,832 (0.65%
# trained)`: the model's count after `of` or `/`
_UNSLOTH_TRAINABLE = re.compile(r"(?:Number of trainable|Trainable) parameters\s*=\s*([\d,]+)"
                                r"(?:\s+of\s+([\d,]+)|\s*/\s*([\d,]+))?")
_LLAMAFACTORY = re.compile(
    r"^\[\w+\|[\d\- :]+\] (?:llamafactory\.\S+:\d+|parser\.py:\d+) >> Process rank: \d+.*compute dtype"
    # any line of its own loggers, named by its package (llmtuner before v0.6): the default
    # format `03/12/2024 11:24:33 - INFO - llmtuner.extras.callbacks - {...}`, or v0.9's
    # `[INFO|2024-11-02 10:00:01] llamafactory.data.loader:157 >> ...`
    r"|^\d\d/\d\d/\d{4} \d\d:\d\d:\d\d - [A-Z]+ - (?:llmtuner|llamafactory)\.[\w.]+ - "
    r"|^\[[A-Z]+\|[\d\- :,]+\] (?:llmtuner|llamafactory)\.[\w.]+:\d+ >> ")
_WEBUI = re.compile(
    r"LoRA training run is completed|text-generation-webui/extensions/Training_PRO|Training_PRO/script\.py")
# Training_PRO's count line: `Trainable params: 13,631,488 (1.0910 %), All params: 1,249,445,888 (Model: 1,235,814,400)`
_WEBUI_COUNTS = re.compile(r"Trainable params:\s*([\d,]+).*?All params:\s*[\d,]+\s*\(Model:\s*([\d,]+)\)")
# ms-swift's summary: `PeftModelForCausalLM: 8212.5588M Params (21.8235M Trainable [0.2657%]), 0.0001M Buffers.`
_SWIFT_INFO = re.compile(r"^(\w+): ([\d.]+)M Params \(([\d.]+)M Trainable")
# Keras 3's summary gives each count's size after it: ` Total params: 227,085 (887.05 KB)` (sotetsuk_LectureColab,
# Hareeshma01_generative-ai-lstm-textgen); `Non-trainable params: 0 (0.00 B)`
KERAS_COUNT_SIZE = r"(?:[ \t]+\(\d+(?:\.\d+)?[ \t]?[KMGT]?B\))?"
_SUMMARY_TRAINABLE = re.compile(r"^\s*Trainable param(?:eter)?s\s*[:=]\s*([\d,]+)" + KERAS_COUNT_SIZE + r"\s*$",
                                re.IGNORECASE)
_SUMMARY_TOTAL = re.compile(r"^\s*(?:Total|All) param(?:eter)?s\s*[:=]\s*([\d,]+)" + KERAS_COUNT_SIZE + r"\s*$",
                            re.IGNORECASE)
_SUMMARY_REACH = 3  # lines between the total and the trainable count of one summary
_PARLAI_COUNTS = re.compile(r"(?:^|\| )Total parameters: ([\d,]+) \(([\d,]+) trainable\)\s*$")
_HF_TRAINABLE = re.compile(r"(?:^|>>)\s+Number of trainable parameters = ([\d,]+)\s*$")
# A script's own count of its trainable weights, the number before the words (`Enhanced model has 9,854,851 trainable
# parameters.`), and a total count on a line of its own anywhere in the same log (`Total parameters: 9,854,851`)
_TRAINABLE_SAID = re.compile(r"(?<![\w.,])([\d,]{4,}) trainable param(?:eter)?s\b")
_TOTAL_SAID = re.compile(r"\b[Tt]otal param(?:eter)?s\s*[:=]\s*([\d,]{4,})\s*$")
# Joey NMT's `Trainable parameters: ['decoder.layer_norm.bias', ...]` after its `Total params: N`
_NAMED_TRAINABLE = re.compile(r"Trainable parameters: \[([^\]]*)\]\s*$")
_ADAPTER_WEIGHT = re.compile(r"(?i)lora_|adapter|prefix_|prompt_|ia3_")
_MLX = re.compile(r"^Trainable parameters: [\d.]+% \(([\d.]+)M/([\d.]+)M\)\s*$")
_MLX_LORA_TRAINABLE = re.compile(r"^Trainable parameters (\d+\.\d{3})M\s*$")
_MLX_LORA_TOTAL = re.compile(r"^Total parameters \d+\.\d{3}M\s*$")
_MLX_START = re.compile(r"^Starting (?:(DPO|ORPO|CPO|KTO|GRPO|PPO|Online DPO|XPO|RLHF) )?training\.\.\., "
                        r"iters: \d+\s*$")
# MiniMind's counts (module docstring); a MoE prints its total and active counts, `Model Params: 198.3M-A63.9M`
_MINIMIND_TOTAL = re.compile(r"^Model Params: (\d+(?:\.\d+)?)M(?:-A\d+(?:\.\d+)?M)?\s*$")
_MINIMIND_TRAINABLE = re.compile(r"^Trainable Params: (\d+(?:\.\d+)?)M\s*$")
_MINIMIND_LORA_TOTAL = re.compile(r"^LLM 总参数量: (\d+(?:\.\d+)?) M\s*$")
_MINIMIND_LORA = re.compile(r"^LoRA 参数量: (\d+(?:\.\d+)?) M\s*$")
_MINIMIND_ROUNDING = 5500  # parameters: the total is printed to 0.01M, the trainable count to 0.001M
_MLX_STEP = re.compile(r"^Iter \d+: (?:Train loss \S+, .*\bIt/sec [\d.]+|Val loss \S+, .*\bVal took [\d.]+s)")


def find_banners(lines: list[str], source: str = "") -> tuple[Banner, ...]:
    """Every PEFT and Unsloth banner in `lines` (a log split into lines), in order."""
    found = []
    for i, line in enumerate(lines):
        if "num. trained: " in line and (m := _FAIRSEQ.search(line)):
            found.append(Banner("fairseq", line.strip()[:300], _count(m.group(2)), _count(m.group(1)), source))
        elif "trainable params" in line and (m := _PEFT.search(line)):
            found.append(Banner("peft", line.strip(), _count(m.group(1)), _count(m.group(2)), source))
        elif _UNSLOTH_HEAD in line or line.lstrip().startswith(_UNSLOTH_TRAINER):
            banner = _unsloth_block(lines, i, source)
            if banner is not None:
                found.append(banner)
        elif line.startswith(("Model Params: ", "LLM 总参数量: ")) and (m := _MINIMIND_TOTAL.match(line)
                                                                       or _MINIMIND_LORA_TOTAL.match(line)):
            counts = _minimind_counts(lines, i, m, source)
            if counts is not None:
                found.append(counts)
        elif _LLAMAFACTORY.search(line) and not any(b.kind == "llamafactory" for b in found):
            found.append(Banner("llamafactory", line.strip()[:300], None, None, source))
        elif _WEBUI.search(line) and not any(b.kind == "webui" for b in found):
            found.append(Banner("webui", line.strip()[:300], None, None, source))
        elif "rainable param" in line and _ADAPTER_NAMED.search(line) and (m := _ADAPTER_COUNTS.search(line)):
            found.append(Banner("adapter_counts", line.strip()[:300], _count(m.group(1)), _count(m.group(2)), source))
        elif "rainable:" in line and (m := _TRAINABLE_TOTAL.match(line)):
            found.append(Banner("trainable_total", line.strip()[:300], _count(m.group(1)), _count(m.group(2)), source))
        elif "Trainable params:" in line and (m := _WEBUI_COUNTS.search(line)):
            # the model's own count, named apart from the adapter's by the log itself
            found.append(Banner("webui", line.strip(), _count(m.group(1)), _count(m.group(2)), source))
        elif " trainable)" in line and (m := _PARLAI_COUNTS.search(line)):
            found.append(Banner("parlai", line.strip()[:300], _count(m.group(2)), _count(m.group(1)), source))
        elif "Number of trainable parameters =" in line and (m := _HF_TRAINABLE.search(line)):
            # (Unsloth's own line, inside its block, starts with "-____-" and is read with the block)
            found.append(Banner("hf_trainer", line.strip()[:300], _count(m.group(1)), None, source))
        elif line.startswith("Trainable parameters: ") and (m := _MLX.match(line)):
            trainable, total = (round(float(g) * 1e6) for g in m.groups())
            # the two are rounded to a thousand apiece: the same printed count is every weight
            found.append(Banner("mlx", line.strip(), total if m.group(1) == m.group(2) else trainable, total, source))
        elif line.startswith("Trainable parameters ") and (m := _MLX_LORA_TRAINABLE.match(line)) and i > 0 \
                and _MLX_LORA_TOTAL.match(lines[i - 1]):
            text = lines[i - 1].strip() + "\n" + line.strip()
            found.append(Banner("mlx_lora", text, round(float(m.group(1)) * 1e6), None, source))
        elif line.startswith(("Starting ", "Iter ")) and (_MLX_START.match(line) or _MLX_STEP.match(line)):
            _add_mlx_trainer(found, line.strip(), source)
        elif "rainable" in line and (m := _SUMMARY_TRAINABLE.match(line)):
            summary = _parameter_summary(lines, i, m, source)
            if summary is not None:
                found.append(summary)
        elif " trainable param" in line and (m := _TRAINABLE_SAID.search(line)):
            whole = _total_said_alike(lines, _count(m.group(1)))
            if whole is not None:
                found.append(Banner("param_counts", f"{line.strip()}\n{whole}", _count(m.group(1)),
                                    _count(m.group(1)), source))
        elif "Trainable parameters: [" in line and i > 0 and (m := _NAMED_TRAINABLE.search(line)):
            listed = _trained_whole_by_names(lines[i - 1], m.group(1), source)
            if listed is not None:
                found.append(listed)
    return tuple(found)


def _unsloth_block(lines: list[str], i: int, source: str) -> Banner | None:
    """Unsloth's block from its first line `lines[i]`, with the trainable and total counts where it prints them; None
    for a training banner whose art is gone (`_UNSLOTH_TRAINER`) and that shows no trainable-parameters line."""
    # (a capture may put a blank line between the block's lines: its five lines are the non-blank ones)
    block = [x.rstrip() for x in lines[i:i + 2 * _UNSLOTH_LINES] if x.strip()][:_UNSLOTH_LINES]
    m = next((m for x in block if (m := _UNSLOTH_TRAINABLE.search(x))), None)
    if m is None and _UNSLOTH_HEAD not in lines[i]:
        return None
    total = m and (m.group(2) or m.group(3))
    return Banner("unsloth", "\n".join(block), _count(m.group(1)) if m else None, _count(total) if total else None,
                  source)


def _add_mlx_trainer(found: list, line: str, source: str) -> None:
    """One "mlx_trainer" banner a log: its start line, which names what it trains, before any step line."""
    have = next((i for i, b in enumerate(found) if b.kind == "mlx_trainer"), None)
    if have is None:
        found.append(Banner("mlx_trainer", line[:300], None, None, source))
    elif line.startswith("Starting ") and not found[have].text.startswith("Starting "):
        found[have] = Banner("mlx_trainer", line[:300], None, None, source)


def mlx_objective(banner: Banner) -> str | None:
    """The algorithm an mlx trainer's start line names (`Starting ORPO training...` -> "orpo"), else None."""
    m = _MLX_START.match(banner.text) if banner.kind == "mlx_trainer" else None
    return m.group(1).lower().replace(" ", "_") if m and m.group(1) else None


def _minimind_counts(lines: list[str], i: int, total: re.Match, source: str) -> Banner | None:
    """MiniMind's whole-model count with its trainable (or LoRA) count on the next line, as a banner; or None. The
    trainable count `init_model` prints is every weight, within the rounding of the two prints (both counts are then
    the trainable one: jingyaogong_minimind_issue634, 7.28M and 7.279M); where the log names an adapter after it,
    train_lora.py froze all but its LoRA after that count, and its own pair says what was trained."""
    following = next((x.strip() for x in lines[i + 1:i + 3] if x.strip()), "")
    lora = total.re is _MINIMIND_LORA_TOTAL
    m = (_MINIMIND_LORA if lora else _MINIMIND_TRAINABLE).match(following)
    if m is None or not lora and any(_ADAPTER_NAMED.search(x) for x in lines[i + 2:]):
        return None
    whole, trainable = (round(float(g) * 1e6) for g in (total.group(1), m.group(1)))
    if not lora and abs(whole - trainable) <= _MINIMIND_ROUNDING:
        whole = trainable
    return Banner("minimind", f"{total.string.strip()}\n{following}", trainable, whole, source)


def _parameter_summary(lines: list[str], i: int, trainable: re.Match, source: str) -> Banner | None:
    """A `Trainable params: N` line with its summary's `Total params: M` within `_SUMMARY_REACH` lines."""
    near = lines[max(0, i - _SUMMARY_REACH):i + _SUMMARY_REACH + 1]
    total = next((m for x in near if (m := _SUMMARY_TOTAL.match(x))), None)
    if total is None:
        return None
    text = "\n".join(x.strip() for x in (total.string, trainable.string))
    return Banner("param_summary", text, _count(trainable.group(1)), _count(total.group(1)), source)


def _total_said_alike(lines: list[str], trainable: int) -> str | None:
    """The line of the log that gives the model's total count (`Total parameters: N`) as `trainable`, or None: a
    script's own `N trainable parameters` beside a total of the same N says that every weight was trained."""
    return next((line.strip() for line in lines if "otal param" in line and (m := _TOTAL_SAID.search(line))
                 and _count(m.group(1)) == trainable), None)


def _trained_whole_by_names(before: str, names: str, source: str) -> Banner | None:
    """Joey NMT's pair (`_log_parameters_list`): `Total params: N`, the count of the weights that require grad, then
    `Trainable parameters: [names]`. A list that holds the embedding tables and no adapter's weights trains the
    whole model (an adapter method freezes the embeddings; one that trains them lists its own weights beside them),
    so N is every weight: a banner of N trainable of N. Else None."""
    total = _TOTAL_SAID.search(before)
    listed = re.findall(r"'([^']+)'", names)
    if total is None or not any("embed" in n for n in listed) or any(_ADAPTER_WEIGHT.search(n) for n in listed):
        return None
    embeddings = ", ".join(n for n in listed if "embed" in n)
    return Banner("param_names",
                  f"{before.strip()}\nTrainable parameters: {len(listed)} names, {embeddings} among them",
                  _count(total.group(1)), _count(total.group(1)), source)


def swift_banner(info: str, source: str) -> Banner | None:
    """ms-swift's `model_info` / `model_parameter_info` summary as a banner, or None when it is not that."""
    m = _SWIFT_INFO.match(info.strip())
    if m is None:
        return None
    return Banner("swift", info.strip()[:300], round(float(m.group(3)) * 1e6), round(float(m.group(2)) * 1e6), source)


def may_hold_banners(text: str) -> bool:
    """A cheap test before splitting a log into lines to look for banners."""
    return any(mark in text for mark in ("trainable", "Trainable", "Unsloth", "LoRA training run", "Training_PRO",
                                         "compute dtype", "llmtuner.", "llamafactory.", "It/sec", "Val took",
                                         "training..., iters", "参数量", "num. trained: "))


def _count(text: str) -> int:
    return int(text.replace(",", ""))
