"""Tests of the notebook code reader's method: requires_grad and a forward that stops the gradient.

From the review of day 6's code changes (4385ad5..a6d3009): each test failed on the code before its fix."""
from __future__ import annotations

import pytest

import forensics
from support.review_runs import ran_notebook


_LOSSES = "\n".join(str({"loss": round(3.0 - 0.05 * s, 3), "epoch": s / 40}) for s in range(1, 41))
_LOAD = "import torch\nfrom transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained('gpt2')\n"
_OPTIMIZER = "optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)\n"


def _method(tmp_path, code):
    run = ran_notebook(tmp_path / "run", "train.ipynb", [(code, ""), ("for step in range(40):\n    pass\n", _LOSSES)])
    return forensics.analyze(run).run_profile


@pytest.mark.parametrize("freeze", [
    "for n, p in model.named_parameters():\n    p.requires_grad = 'lm_head' in n\n",  # only the head trains
    "FREEZE_EMBEDDINGS = False\nfor p in model.transformer.wte.parameters():\n    p.requires_grad = FREEZE_EMBEDDINGS\n",
    "def set_trainable(m, flag):\n    for p in m.transformer.wte.parameters():\n        p.requires_grad = flag\n"
    "set_trainable(model, False)\n",
    "model.transformer.requires_grad_(train_backbone)\n",
], ids=["expression", "variable", "helper-flag", "requires_grad_-flag"])
def test_requires_grad_set_to_a_computed_value_is_not_a_full_fine_tune(tmp_path, freeze):
    """`requires_grad = <expression>` sets weights aside as surely as `= False` where the expression is False: a
    notebook that computes it (a name test, a flag, a helper's argument) may train part of the model only."""
    profile = _method(tmp_path, _LOAD + freeze + _OPTIMIZER)
    assert profile.method != "full", profile.evidence


@pytest.mark.parametrize("stop", [
    "        with torch.no_grad():\n            h = self.encoder(**x).last_hidden_state[:, 0]\n",
    "        h = self.encoder(**x).last_hidden_state[:, 0].detach()\n",
], ids=["no_grad", "detach"])
def test_a_model_whose_forward_stops_the_gradient_is_not_a_full_fine_tune(tmp_path, stop):
    """A probe over a pre-trained encoder: the notebook's own model class runs the encoder under `torch.no_grad()`
    (or detaches its output) in `forward`, so an optimizer over `model.parameters()` trains the head alone."""
    code = ("import torch, torch.nn as nn\nfrom transformers import AutoModel\n"
            "class Probe(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.encoder = AutoModel.from_pretrained('bert-base-uncased')\n        self.head = nn.Linear(768, 2)\n"
            "    def forward(self, x):\n" + stop + "        return self.head(h)\n"
            "model = Probe().to('cuda')\n" + _OPTIMIZER)
    profile = _method(tmp_path, code)
    assert profile.method != "full", profile.evidence


def test_requires_grad_true_and_a_generate_under_no_grad_leave_it_full(tmp_path):
    """What stays full: `requires_grad = True` (or `requires_grad_()`) sets nothing aside, and a model class whose
    `generate` (not its `forward`) runs under `torch.no_grad()` trains every weight."""
    code = ("import torch, torch.nn as nn\n"
            "class GPT(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.lm = nn.Linear(8, 8)\n"
            "    def forward(self, x):\n        return self.lm(x)\n"
            "    @torch.no_grad()\n    def generate(self, x):\n        with torch.no_grad():\n            return self.lm(x).detach()\n"
            "model = GPT().to('cuda')\nfor p in model.parameters():\n    p.requires_grad = True\nmodel.requires_grad_()\n"
            + _OPTIMIZER)
    profile = _method(tmp_path, code)
    assert profile.method == "full", profile.evidence
