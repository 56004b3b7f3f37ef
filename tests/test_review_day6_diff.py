"""Review of day 6's code changes (4385ad5..a6d3009): inputs a user's run writes where a new rule answered wrong,
each built as the library writes it, each test failing on the code before its fix."""
from __future__ import annotations

import numpy as np
import pytest

import forensics
from support.review_runs import ran_notebook
from test_running_means import _dvclive_folder, _running_means
from forensics.ingest.running_means import per_step_values


def test_a_running_mean_over_batches_near_zero_implies_no_negative_loss(tmp_path):
    """Keras' `batch_loss` (float32 in the event file) over a model that memorizes: batches at ~1e-6 nats inside an
    epoch whose running mean is still ~0.1. Undoing the mean multiplies the float32 rounding by n, so a batch at
    1e-6 reads as -3e-5: a value the loss cannot take, made by the reading, not by the run. The implied values are
    held to the metric's bounds; the run is a memorization warning, not an impossible loss."""
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    rng = np.random.default_rng(0)
    batches = np.abs((3 * np.exp(-np.arange(4000) / 150) + 1e-6 * rng.random(4000))
                     * (1 + 0.2 * rng.standard_normal(4000)))
    writer = SummaryWriter(str(tmp_path / "logs" / "train"), filename_suffix="")
    for step, value in enumerate(_running_means(batches, 2000), start=1):
        writer.add_scalar("batch_loss", float(value), step, new_style=True)
        if step % 2000 == 0:
            writer.add_scalar("epoch_loss", float(value), step // 2000 - 1, new_style=True)
    writer.close()
    a = forensics.analyze(tmp_path / "logs")
    assert a.timeline.series("loss").min() >= 0.0
    assert not [f for f in a.findings if f.kind == "impossible_loss"], a.findings
    assert a.first_incident is not None and a.first_incident.kind == "memorization", a.findings


def test_a_per_step_loss_rounded_to_four_decimals_is_not_a_running_mean(tmp_path):
    """A smooth per-step loss written to 4 decimals (HF's rounding of `loss`, DVCLive's callback at each log): its
    values hold still over several steps and then move by 0.0001. Read as a running mean, each 0.0001 is n times
    that in one batch: dips of 0.3 nats a few thousand steps in that the run never had. A log rounded that coarsely
    cannot be undone; it is read as it was written."""
    rng = np.random.default_rng(0)
    steps = np.arange(3000)
    values = np.round(2.0 + 0.5 * np.exp(-steps / 3000) + 1e-5 * rng.standard_normal(3000), 4)
    assert per_step_values(steps, values) is None
    a = forensics.analyze(_dvclive_folder(tmp_path, values).parent)
    assert np.allclose(a.timeline.series("loss").to_numpy(), values)
    assert not a.skipped, a.skipped


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


@pytest.mark.parametrize("group", ["evaluation", "testing", "heldout", "val_epoch", "test_set"])
def test_a_held_out_groups_loss_in_its_own_event_file_is_not_the_training_loss(tmp_path, group):
    """A script with one SummaryWriter for training (`train/loss`) and another, its own event file in the same
    folder, for evaluation (`evaluation/loss`, `testing/loss`, `val_epoch/loss`): the evaluation file has no tag
    named loss, and a run name's `<group>/loss` rule took the held-out loss for the training loss. The training
    loss fell from 3.8 to 0.9 while the held-out one rose 1.3 -> 4.0: read as one loss it was a divergence
    (broken); it is overfitting, or at least not the training loss."""
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    train = SummaryWriter(str(tmp_path / "runs"), filename_suffix=".train")
    for step in range(1, 201):
        train.add_scalar("train/loss", 3.0 * np.exp(-step / 50) + 0.8, step)
    train.close()
    held_out = SummaryWriter(str(tmp_path / "runs"), filename_suffix=".eval")
    for step in range(20, 201, 20):
        held_out.add_scalar(f"{group}/loss", 1.0 + 0.015 * step, step)
    held_out.close()
    a = forensics.analyze(tmp_path / "runs")
    assert len(a.timeline.series("loss")) == 200
    assert a.status != "broken", a.findings
