"""fairseq's printed configuration (fairseq_cli.train, since its 2021 Hydra config): one line holding the cfg as a
dict, `{'_name': None, 'common': {..., 'bf16': False, 'memory_efficient_bf16': False, 'fp16': False,
'memory_efficient_fp16': False, ..., 'amp': False, ...}, ...}`. Its 'common' group says the precision: every flag off
is fp32 (fairseq trains in float32 unless told), fp16 / memory_efficient_fp16 / amp on is fp16 (amp is autocast to
float16), bf16 / memory_efficient_bf16 on is bf16. Read with ast.literal_eval on the 'common' group alone (the dict
also holds Namespace(...) reprs, which are not literals); nothing runs. Older fairseq prints an argparse
`Namespace(...)` line, which `namespace_args` reads."""
from __future__ import annotations

import ast
import re

TEXT_KEY = "fairseq_cfg"  # LogRecords.texts key: the precision flags as JSON
_COMMON = re.compile(r"\{'_name': None, 'common': (\{'_name': None, [^{}]*\})")
_FP16 = ("fp16", "memory_efficient_fp16", "amp")
_BF16 = ("bf16", "memory_efficient_bf16")


def parse(text: str) -> dict:
    """{"fp16": bool, "bf16": bool} from the first fairseq cfg line in `text`, else {}."""
    if "'common': {" not in text:
        return {}
    m = _COMMON.search(text)
    if m is None:
        return {}
    try:
        common = ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError):
        return {}
    if not all(isinstance(common.get(flag), bool) for flag in _FP16 + _BF16):
        return {}
    return {"fp16": any(common[flag] for flag in _FP16), "bf16": any(common[flag] for flag in _BF16)}
