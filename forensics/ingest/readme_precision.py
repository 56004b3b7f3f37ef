"""The training precision a README (a project's or a model card's) states in so many words: "BF16 mixed precision",
"mixed precision (fp16)", "bf16 autocast", `autocast(bfloat16)`, a table row "| Precision | bf16 |", "BF16 混合精度".

Prose is the weakest evidence a run has, so only such phrases count, never a word alone ("bf16 supported" says what a
GPU can do, not what ran), and a README that names the other half type anywhere ("AMP(FP16)" for one model, "BF16"
for another: yurihuruitao_CBS5502) or says it trained in fp32 says nothing: which run is the log's is not told. Nor
does a sentence that offers or advises a precision rather than tells what ran ("Use `--bf16` to enable BF16 mixed
precision", "Supports bf16 mixed precision", "If your GPU supports it, set bf16 mixed precision", "We compare BF16
mixed precision ..."). HTML comments are left out first: the model card PEFT and the Hub write lists every regime in
one (`<!--fp32, fp16 mixed precision, bf16 mixed precision, ...-->`) beside "[More Information Needed]".
"""
from __future__ import annotations

import re

from .readme_prose import hedged, without_comments

_HALF = r"(bf16|bfloat16|fp16|float16)"
_MARK = r"[*_`]{0,3}"  # markdown's emphasis or code marks around a word: "**bf16** autocast"; bounded, as an
# unbounded run backtracks quadratically over a long run of underscores (1 MiB of them: hours)
_STATED = (
    re.compile(rf"(?i){_MARK}\b{_HALF}\b{_MARK}[ \t-]+mixed[ \t-]precision\b"),
    re.compile(rf"(?i)\bmixed[ \t-]precision{_MARK}[ \t]*[(:（][ \t]*{_MARK}{_HALF}\b"),
    re.compile(rf"(?i){_MARK}\b{_HALF}\b{_MARK}[ \t]+autocast\b"),
    re.compile(r"(?i)\bautocast\([ \t]*(?:dtype[ \t]*=[ \t]*)?(?:torch\.)?(bfloat16|float16)\b"),
    re.compile(rf"(?im)^[ \t]*\|[ \t]*{_MARK}(?:training[ \t]+)?precision{_MARK}[ \t]*\|[ \t]*{_MARK}"
               r"(bf16|fp16|fp32)\b"),
    re.compile(r"(?i)\b(bf16|fp16)[ \t]*混合精度"),
)
_NAMES = {"bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "float16": "fp16", "fp32": "fp32"}
_FP32 = r"(?:fp32|float32|full[ -]precision)"
# fp32 said as a run's regime ("the released model was trained in fp32", "full precision training"), not as a bare
# word: every mixed-precision account names fp32 (jiazhe868_nanogpt-seis' "fp32 master weights" of a bf16 run)
_WORDS = {"bf16": re.compile(r"(?i)\b(?:bf16|bfloat16)\b"), "fp16": re.compile(r"(?i)\b(?:fp16|float16)\b"),
          "fp32": re.compile(rf"(?i)\b(?:trained|training|train|runs?|ran)\b[^.\n]{{0,20}}?\b(?:in|with|at|using|under)"
                             rf"[ \t]+{_FP32}\b|\b{_FP32}[ \t-]+(?:training|trained|only)\b")}


def precision_stated(text: str) -> tuple[str, str] | None:
    """("bf16" | "fp16" | "fp32", the phrase) where the README states one precision in so many words, in a sentence
    that does not offer, advise, compare or negate it (`readme_prose.hedged`), and names no other half type anywhere
    nor says anything trained in fp32 ("the released model was trained in fp32"); else None."""
    text = without_comments(text)
    found = [(_NAMES[m.group(1).lower()], m.group(0).strip()) for pattern in _STATED for m in pattern.finditer(text)
             if not hedged(text, m.start(), m.end())]
    said = {precision for precision, _ in found}
    if len(said) != 1:
        return None
    precision = said.pop()
    if any(word.search(text) for other, word in _WORDS.items() if other != precision):
        return None
    return precision, next(phrase for p, phrase in found if p == precision)
