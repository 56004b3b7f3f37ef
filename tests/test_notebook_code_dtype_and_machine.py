"""Tests of notebook-code readings (ingest.notebook_code): a dtype or comment that says nothing of lower precision,
and a printed `loaded on: cuda` machine.

Batch AS60's notebook-code misses (tests/realworld/PROVENANCE.md): a long-int dtype, a comment naming a TPU, a model
`loaded on: cuda` (the batch's judging misses: tests/test_first_points_and_zero_train_loss.py).
"""
from __future__ import annotations

from forensics.ingest.notebook_code.machine import printed_machine
from forensics.ingest.notebook_code.precision import LOWER_PRECISION_WORDS, trains_in_default_float32
from forensics.ingest.notebook_code.cells import parse_quietly


def test_a_long_int_dtype_with_spaces_says_nothing_of_precision_and_a_half_dtype_still_does():
    assert not LOWER_PRECISION_WORDS.search("ids = data['source_ids'].to(device, dtype = torch.long)")
    assert not LOWER_PRECISION_WORDS.search("y = x.to(dtype = logits.dtype)")
    assert LOWER_PRECISION_WORDS.search("model = model.to(dtype = torch.float16)")
    assert LOWER_PRECISION_WORDS.search("a = torch.zeros(3, dtype = some_dtype)")


def test_a_comment_naming_a_tpu_is_no_lower_precision_but_code_on_xla_is():
    loop = ("ids = batch.to(device, dtype = torch.long)\n{}\nloss = model(ids).loss\nloss.backward()\n")
    commented = loop.format("# the model is sent to device (GPU/TPU) for using the hardware")
    assert trains_in_default_float32([parse_quietly(commented)], commented)
    on_xla = loop.format("import torch_xla.core.xla_model as xm  # TPU")
    assert not trains_in_default_float32([parse_quietly(on_xla)], on_xla)


def test_a_model_loaded_on_cuda_is_a_cuda_machine_and_on_the_cpu_is_not():
    assert printed_machine("Model loaded on: cuda\n").cuda is True
    assert printed_machine("Model loaded on: cpu\n").cuda is not True
    assert printed_machine("carry on cudagraphs\n").cuda is None
