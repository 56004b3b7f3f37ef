"""Tests of the memorization rule: a DPO whose pair term saturated under an NLL term.

From the judging rules mended after the fifth day's corpus batches: each test stands for a real run of
tests/realworld named in its docstring."""
from __future__ import annotations

import json

import forensics


def test_a_dpo_whose_pair_term_saturated_under_an_nll_term_is_memorization(tmp_path):
    """zhl-2022's ms-swift DPO (tests/realworld): rpo_alpha 0.1 in args.json, 12 pairs over 10 epochs, every pair
    ranked right from step 3 with margins of 26-33; the logged loss is 0.1 x nll_loss (0.253 = 0.1 x 2.532), so it
    never showed the pair term at ~0 and the run was called healthy. Right: memorization from the second pass, judged
    on loss - rpo_alpha x nll_loss; without rpo_alpha in the run's arguments nothing is said (the weight is unknown)."""
    run = tmp_path / "run"
    run.mkdir()
    rows = []
    for s in range(1, 31):
        nll = 8.0 - 5.5 * s / 30
        pair = 0.6931 if s <= 3 else 1e-6
        rows.append({"loss": pair + 0.1 * nll, "nll_loss": nll, "rewards/margins": 0.0 if s <= 2 else 25.0,
                     "rewards/accuracies": 0.0 if s <= 2 else 1.0, "logps/chosen": -300.0, "logps/rejected": -150.0,
                     "grad_norm": 1.0, "learning_rate": 1e-5, "epoch": s / 3, "global_step/max_steps": f"{s}/30"})
    (run / "logging.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "args.json").write_text(json.dumps({"rlhf_type": "dpo", "rpo_alpha": 0.1, "task_type": "causal_lm"}))
    a = forensics.analyze(run, check_checkpoints=False)
    assert (a.first_incident.kind, a.first_incident.step) == ("memorization", 4), [f.message for f in a.findings]
    (run / "args.json").write_text(json.dumps({"rlhf_type": "dpo", "task_type": "causal_lm"}))
    assert forensics.analyze(run, check_checkpoints=False).status == "healthy"
