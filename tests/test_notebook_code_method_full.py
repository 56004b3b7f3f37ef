"""Tests of the notebook code reader (ingest/notebook_code.py): `full` from a hand-written loop.

The run profile's method from a notebook's hand-written training loop: an optimizer built over every parameter of
the model the notebook loads or builds (`AdamW(model.parameters(), ...)`) trains every weight, `full`, as a Trainer
around that model does; a freeze on that model, or one the code does not tie to a model, leaves it unknown. Real
cases: Samin-Sadaf7's distilgpt2 loop, matyasosvath's and PhuocThuan246's DPO loops whose reference copy is frozen
(tests/realworld)."""
from __future__ import annotations

import forensics
from support.review_runs import ran_notebook


_LOSSES = "\n".join(str({"loss": round(3.0 - 0.05 * s, 3), "epoch": s / 40}) for s in range(1, 41))
_LOAD = "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained('gpt2').to('cuda')\n"


def _method(tmp_path, *cells):
    run = ran_notebook(tmp_path / "run", "train.ipynb", [*cells, ("for step in range(40):\n    pass\n", _LOSSES)])
    return forensics.analyze(run).run_profile


def test_an_optimizer_over_every_parameter_of_a_loaded_model_is_a_full_fine_tune(tmp_path):
    profile = _method(tmp_path, (_LOAD, ""), ("import torch\noptimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)\n", ""))
    assert profile.method == "full", profile.evidence


def test_freezing_the_dpo_reference_leaves_the_policy_whole(tmp_path):
    profile = _method(tmp_path, (_LOAD + "import copy\nref_model = copy.deepcopy(model)\n"
                                 "for p in ref_model.parameters():\n    p.requires_grad = False\n", ""),
                      ("from torch.optim import AdamW\noptimizer = AdamW(params=model.parameters(), lr=1e-6)\n", ""))
    assert profile.method == "full", profile.evidence


def test_freezing_part_of_the_trained_model_is_not_full(tmp_path):
    profile = _method(tmp_path, (_LOAD + "for p in model.transformer.h[:6].parameters():\n    p.requires_grad = False\n", ""),
                      ("import torch\noptimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)\n", ""))
    assert profile.method != "full", profile.evidence


def test_a_freeze_the_code_does_not_tie_to_a_model_is_not_full(tmp_path):
    profile = _method(tmp_path, (_LOAD + "for layer in model.transformer.h[:6]:\n    for p in layer.parameters():\n"
                                 "        p.requires_grad = False\n", ""),
                      ("import torch\noptimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)\n", ""))
    assert profile.method != "full", profile.evidence


def test_an_optimizer_over_the_trainable_parameters_only_is_not_full(tmp_path):
    profile = _method(tmp_path, (_LOAD, ""), ("import torch\noptimizer = torch.optim.AdamW(filter(lambda p: "
                                              "p.requires_grad, model.parameters()), lr=5e-5)\n", ""))
    assert profile.method != "full", profile.evidence
