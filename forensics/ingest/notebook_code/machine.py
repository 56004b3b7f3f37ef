"""What a notebook's outputs say of the machine its cells ran on: whether CUDA was there, whether its GPU has
bfloat16. Notebooks pass the Trainer's precision as a test of that machine (`fp16=torch.cuda.is_available()`,
`bf16=torch.cuda.is_bf16_supported()`, Unsloth's `fp16 = not is_bfloat16_supported()`); the code alone cannot say
what the test gave, the outputs can: a CUDA device printed (Yiwen543: 'DEVICE = cuda', 'loaded on cuda:0';
BDH-teacher: 'device: cuda'), a GPU named (nvidia-smi, Unsloth's banner), Unsloth's `Bfloat16 = TRUE / FALSE`
(amitons13: a T4, FALSE), the Trainer's note that the model sits on several devices (Alvarofp537: Kaggle's two
GPUs). Without such a line the test stays unknown: pip's `nvidia-cuda-runtime-cu12` downloads, bitsandbytes'
`libbitsandbytes_cuda124` and TensorFlow's 'Unable to register cuFFT factory' show up on machines without a GPU."""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class PrintedMachine:
    """cuda: torch.cuda.is_available() as the outputs answer it (None: they do not); bf16: whether the GPU runs
    bfloat16 (torch.cuda.is_bf16_supported(), Unsloth's is_bfloat16_supported()), None where they do not say."""
    cuda: bool | None = None
    bf16: bool | None = None


_UNSLOTH_BF16 = re.compile(r"Bfloat16 = (TRUE|FALSE)")
# A CUDA device the run printed: `device: cuda`, `DEVICE = cuda`, `Using device: cuda`, `device='cuda:0'`, a tensor or
# model `on cuda:0` or `loaded on: cuda` (hyeonggeonkim-berkeley's t5-small), a CUDA out-of-memory error (only a GPU
# runs out of CUDA memory)
_CUDA_DEVICE = re.compile(
    r"(?i)\bdevice\b['\"]?\s*(?:[:=]|is)?\s*(?:type=)?['\"]?cuda\b|\bcuda:\d\b|\bon:?[ \t]+cuda\b|"
    r"CUDA out of memory|torch\.cuda\.OutOfMemoryError")
# The Trainer's note where the model's device map spans more than one device other than the CPU and the disk: GPUs
_ON_SEVERAL_DEVICES = re.compile(r"The model is already on multiple devices")
# The CPU as the only device the run printed (`device: cpu`, `Using device: cpu`)
_CPU_DEVICE = re.compile(r"(?i)\bdevice\b['\"]?\s*(?:[:=]|is)?\s*['\"]?cpu\b")
# A GPU named by nvidia-smi, torch.cuda.get_device_name or Unsloth's banner ('NVIDIA A100-SXM4-40GB', 'Tesla T4',
# 'NVIDIA GeForce RTX 4090', 'NVIDIA L4')
_GPU_NAME = re.compile(r"\b(?:NVIDIA(?: GeForce| RTX)?|Tesla) (?P<model>(?:RTX |GTX )?[A-Z]{1,2}\d{1,4}[A-Za-z]?)\b")
# GPUs of compute capability 8.0 and above (Ampere, Ada, Hopper, Blackwell), where torch.cuda.is_bf16_supported()
# is True; below (T4, V100, P100, K80, GTX, RTX 20xx) it is False
_BF16_GPU = re.compile(r"^(?:A\d{1,3}|H\d{2,3}|L4|L40|GH200|B\d{3}|RTX [345]\d{3}|RTX A\d{3,4})[A-Za-z]?$")
_NO_BF16_GPU = re.compile(r"^(?:T4|V100|P100|P40|P4|K80|M60|GTX \d{3,4}|RTX 20\d{2})$")


def printed_machine(outputs: str) -> PrintedMachine:
    """What the outputs say of CUDA and bfloat16 (module docstring); a later Unsloth banner or GPU name beats
    nothing, and the banner's Bfloat16 line beats a name."""
    banner = _UNSLOTH_BF16.search(outputs)
    names = [m.group("model") for m in _GPU_NAME.finditer(outputs)]
    cuda = True if banner or names or _CUDA_DEVICE.search(outputs) or _ON_SEVERAL_DEVICES.search(outputs) \
        else False if _CPU_DEVICE.search(outputs) else None
    if banner:
        return PrintedMachine(cuda=True, bf16=banner.group(1) == "TRUE")
    return PrintedMachine(cuda=cuda, bf16=False if cuda is False else _bf16_of(names))


def _bf16_of(names: list[str]) -> bool | None:
    """Whether the GPUs named run bfloat16: a known generation, all the same way; else None."""
    known = {True if _BF16_GPU.match(n) else False if _NO_BF16_GPU.match(n) else None for n in names}
    return known.pop() if len(known) == 1 else None
