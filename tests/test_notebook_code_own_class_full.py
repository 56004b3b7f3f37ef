"""A model built from a class the code imports from a module of its own, given sizes and no model name, with an
optimizer over all its parameters and nothing loading trained weights, is trained whole: method full
(AananthV_Pytorch-Transformer's `Transformer(src_vocab_length, tgt_vocab_length, max_sequence_length)`,
AugustinCombes_icu_MLM's `BERT_MLM(d_model, 2 * d_model, tokenizer_path=...)`, parisainthestars_adaptive-sparse-
language-model's `CSLLM(model_cfg)`). A load of weights the run did not save, a model name handed to the class, a
freeze or an adapter anywhere says nothing: the class may wrap a trained model, frozen."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from forensics.ingest.notebook_code import code_values

REALWORLD = Path(__file__).parent / "realworld"
_IMPORTS = "import torch\nfrom models.transformer import Transformer\n"
_BUILD = "model = Transformer(src_vocab, tgt_vocab, 256).to(device)\n"
_TRAIN = ("optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)\n"
          "for src, tgt in loader:\n    loss = model(src, tgt)\n    loss.backward()\n    optimizer.step()\n")


def _method(*sources: str):
    cells = [{"cell_type": "code", "source": s, "execution_count": i, "outputs": []} for i, s in enumerate(sources, 1)]
    return code_values(cells, "").get("method")


def test_an_own_class_built_from_sizes_and_trained_whole_is_full():
    assert _method(_IMPORTS, _BUILD, _TRAIN) == "full"


def test_a_resume_from_the_runs_own_save_is_still_full():
    resume = ("checkpoint = torch.load('saved/best.pt', map_location=device)\n"
              "model.load_state_dict(checkpoint['model_state_dict'])\n")
    save = "torch.save({'model_state_dict': model.state_dict()}, 'saved/best.pt')\n"
    assert _method(_IMPORTS, _BUILD, resume, _TRAIN, save) == "full"


@pytest.mark.parametrize("why, sources", [
    ("a trained encoder loaded into it", (_IMPORTS, _BUILD, "model.encoder.load_state_dict(torch.load('enc.pt'))\n",
                                          _TRAIN)),
    ("a model name handed to the class", (_IMPORTS, "model = Transformer('bert-base-uncased', 3).to(device)\n",
                                          _TRAIN)),
    ("part of it frozen", (_IMPORTS, _BUILD, "for p in model.encoder.parameters():\n    p.requires_grad = False\n",
                           _TRAIN)),
    ("an adapter named", (_IMPORTS + "from lora_layers import add_lora\n", _BUILD, "add_lora(model, r=8)\n", _TRAIN)),
    ("a star import names no class", ("import torch\nfrom model import *\n", _BUILD, _TRAIN)),
])
def test_no_full_where_the_class_may_wrap_a_trained_or_frozen_model(why, sources):
    assert _method(*sources) is None, why


@pytest.mark.parametrize("case", ["AananthV_Pytorch-Transformer", "AugustinCombes_icu_MLM",
                                  "parisainthestars_adaptive-sparse-language-model"])
def test_real_runs(case):
    assert forensics.analyze(REALWORLD / case).run_profile.method == "full"
