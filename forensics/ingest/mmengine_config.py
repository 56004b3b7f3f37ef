"""The config an mmengine runner prints at start-up (XTuner's consoles): `mmengine - INFO - Config:` and then the
config file's text, `name = value` lines of Python (`model = dict(type='xtuner.model.SupervisedFinetune', ...)`).

`parse(text)` reads the first such block line by line (never evaluated) and gives the RunConfig keys the run profile
reads, where the block says them:
* `_framework` "xtuner" where a component's type is XTuner's (`type='xtuner.engine.runner.TrainLoop'`, ...);
* `adapter.peft_type` "LORA" for a `lora=dict(...)` / `llm_lora=dict(...)` of `type='peft.LoraConfig'`;
* `quant.load_in_4bit` for XTuner's `quantization_llm=True` or a bitsandbytes `load_in_4bit=True`;
* `bf16` / `fp16` from the DeepSpeed strategy's `bf16=dict(enabled=True)` / `fp16=dict(enabled=True)`;
* `stage` "sft" where XTuner's dataset applies a chat prompt template (`template=` / `template_map_fn=dict(`), the
  LLM is trained (an adapter on it, or no `freeze_llm=True`: LLaVA's pre-training stage trains the projector alone,
  templated too) and the model is none of XTuner's preference or reward models (DPO, ORPO, RewardModel); its
  pre-training configs map the data with `pretrain_map_fn` and no template.
"""
from __future__ import annotations

import re
from typing import Any

TEXT_KEY = "mmengine_config"  # LogRecords.texts key: the keys found, as JSON
_START = re.compile(r"^.*? - mmengine - INFO - Config:[ \t]*\r?$", re.MULTILINE)
_NEXT_LOG_LINE = re.compile(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d - ", re.MULTILINE)  # the runner's next line ends it
_MAX_BLOCK = 200_000  # characters: a config is a few hundred lines
_XTUNER = re.compile(r"\btype='xtuner\.")
_LORA = re.compile(r"^[ \t]*(?:llm_)?lora=dict\((?:[^()]|\([^()]*\))*?type='peft\.LoraConfig'", re.MULTILINE)
_FOUR_BIT = re.compile(r"^[ \t]*(?:quantization_llm|load_in_4bit)=True\b", re.MULTILINE)
_PRECISION = re.compile(r"^[ \t]*(bf16|fp16)=dict\(enabled=True\b", re.MULTILINE)
_TEMPLATE = re.compile(
    r"^[ \t]*(?:template='xtuner\.utils\.PROMPT_TEMPLATE\.\w+'|template_map_fn=dict\()", re.MULTILINE)
_FROZEN_LLM = re.compile(r"^[ \t]*freeze_llm=True\b", re.MULTILINE)
_NOT_SFT = re.compile(r"type='xtuner\.model\.[\w.]*(?:DPO|ORPO|Reward)", re.IGNORECASE)


def parse(text: str) -> dict[str, Any]:
    """RunConfig keys the first printed mmengine config says (module docstring), or {} where the log has none."""
    if "mmengine - INFO - Config:" not in text:
        return {}
    start = _START.search(text)
    if start is None:
        return {}
    end = _NEXT_LOG_LINE.search(text, start.end(), start.end() + _MAX_BLOCK)
    block = text[start.end():end.start() if end else start.end() + _MAX_BLOCK]
    if not _XTUNER.search(block):
        return {}  # another mmengine project's config: its keys mean other things
    out: dict[str, Any] = {"_framework": "xtuner"}
    lora = _LORA.search(block)
    if lora:
        out["adapter.peft_type"] = "LORA"
    if _FOUR_BIT.search(block):
        out["quant.load_in_4bit"] = True
    for m in _PRECISION.finditer(block):
        out[m.group(1)] = True
    trains_llm = lora is not None or not _FROZEN_LLM.search(block)  # (LLaVA's pre-training stage trains the projector)
    if _TEMPLATE.search(block) and trains_llm and not _NOT_SFT.search(block):
        out["stage"] = "sft"
    return out
