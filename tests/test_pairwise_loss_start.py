"""A pairwise preference loss and its start (forensics/analyzers/pairwise_loss.py, pairwise_start.py,
ingest/notebook_code/pairwise.py).

A hand-written loop's pairwise preference loss (sarahxgh_RL-for-Finetunning-LLms-dpo's DPO.ipynb): the notebook's
own code computes `dpo_loss(chosen_logp, rejected_logp)` = -log sigmoid(beta x margin), so the printed loss is a
pairwise one whatever it starts at (27.44 at step 0, no reference model): the objective is preference / dpo, its
start is judged against ln 2 (not ln V), and its drop to ~0 is the sigmoid saturated (a warning), not an LM's
collapse (an error)."""
from __future__ import annotations

import json

import pandas as pd

import forensics
from forensics.analyzers.pairwise_loss import for_a_pairwise_loss
from forensics.analyzers.pairwise_start import detect_pairwise_start_above_chance
from forensics.findings import Finding
from forensics.ingest.notebook_code import code_values

DPO_LOSS = ("import torch\n"
            "def dpo_loss(chosen_logp, rejected_logp, beta=0.1):\n"
            "    return -torch.log(torch.sigmoid(beta * (chosen_logp - rejected_logp))).mean()\n")
LOOP = ("from transformers import AutoModelForCausalLM\n"
        "model = AutoModelForCausalLM.from_pretrained('TinyLlama/TinyLlama-1.1B-Chat-v1.0')\n"
        "for step, batch in enumerate(dataloader):\n"
        "    loss = dpo_loss(batch['chosen'], batch['rejected'], beta=0.1)\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
        "    print(f'[Epoch 1] Step {step} | Loss: {loss.item():.4f}')\n")
# the case's printed losses: 27.44 at step 0, the sigmoid saturated from step 5
SATURATING = [27.4415, 10.6306, 6.2412, 0.6982, 2.5309, -0.0, 0.0, 0.0, -0.0, 0.0]


def _cells(*sources: str) -> list[dict]:
    return [{"cell_type": "code", "source": s, "execution_count": i, "outputs": []} for i, s in enumerate(sources, 1)]


def _notebook(tmp_path, losses) -> str:
    cells = _cells(DPO_LOSS, LOOP)
    text = "".join(f"[Epoch 1] Step {i} | Loss: {v:.4f}\n" for i, v in enumerate(losses))
    cells[1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": text}]
    (tmp_path / "DPO.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                                     "nbformat_minor": 5}))
    return str(tmp_path)


def _metrics(loss) -> dict:
    return {"loss": pd.Series(loss, index=range(len(loss)), dtype="float64")}


def test_a_loop_that_computes_a_pairwise_logistic_loss_says_so():
    assert code_values(_cells(DPO_LOSS, LOOP), "").get("loss.pairwise_function") == "dpo_loss"


def test_a_sigmoid_over_other_arguments_or_a_pairwise_loss_never_called_says_nothing():
    bce = "import torch\ndef loss_fn(logits, labels):\n    return -torch.log(torch.sigmoid(logits * labels)).mean()\n"
    assert "loss.pairwise_function" not in code_values(_cells(bce, "loss = loss_fn(x, y)"), "")
    assert "loss.pairwise_function" not in code_values(_cells(DPO_LOSS), "")


def test_the_dpo_loops_start_far_above_ln_2_is_the_first_incident_and_its_saturation_a_warning(tmp_path):
    a = forensics.analyze(_notebook(tmp_path, SATURATING))
    assert (a.run_profile.objective, a.run_profile.algorithm) == ("preference", "dpo")
    assert a.status == "warning"
    assert (a.first_incident.kind, a.first_incident.step) == ("start_above_uniform_guess", 0)
    assert "ln 2" in a.first_incident.message
    assert not [f for f in a.findings if f.severity == "error"]


def test_a_pairwise_loss_that_starts_at_ln_2_is_no_start_above_chance():
    assert detect_pairwise_start_above_chance(_metrics([0.6931, 0.52, 0.31, 0.2])) == []
    found = detect_pairwise_start_above_chance(_metrics(SATURATING))
    assert [(f.kind, f.severity, f.step) for f in found] == [("start_above_uniform_guess", "warning", 0)]


def test_a_trainers_preference_log_is_judged_on_its_rewards_not_on_its_loss_start():
    # sugarandgugu_Simple-Trl-Training: a TRL DPO's first window at 2.45e9 beside NaN rewards, a run gone non-finite
    blown = {**_metrics([2.45e9, 0.0, 0.0]), "rewards/margins": pd.Series([float("nan")] * 3, dtype="float64")}
    assert detect_pairwise_start_above_chance(blown) == []


def test_a_pairwise_loss_collapse_is_its_saturation_and_other_findings_stay():
    collapse = Finding("loss_collapse", "error", 5, "early loss collapse", end_step=9, metric="loss",
                       evidence={"level_before": 6.24, "to_end": True, "sudden": True})
    spike = Finding("grad_norm_spike", "info", 3, "a spike", metric="grad_norm")
    out = for_a_pairwise_loss([collapse, spike], _metrics(SATURATING))
    assert [(f.kind, f.severity) for f in out] == [("loss_collapse", "warning"), ("grad_norm_spike", "info")]
    assert "sigmoid" in out[0].message and out[0].evidence["saturated_pairs"]


def test_the_corpus_case_is_judged_as_its_judgement_says():
    a = forensics.analyze("tests/realworld/sarahxgh_RL-for-Finetunning-LLms-dpo")
    assert a.status == "warning"
    assert (a.first_incident.kind, a.first_incident.step) == ("start_above_uniform_guess", 0)
    assert [(f.kind, f.severity, f.step) for f in a.findings if f.kind == "loss_collapse"] == [
        ("loss_collapse", "warning", 5)]
