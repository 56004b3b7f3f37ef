"""Tests of the pair-term rule on an ms-swift ORPO run whose args.json lists rpo_alpha.

From the adversarial review of the rules added on 2026-11-26 (after 14:00): every test FAILS on the code it was
written against (15cf9c0); its docstring names the change it targets."""
from __future__ import annotations

import json
import math

from support.trainer_state_files import _analyze


# ---- change 5 (pair_term_memorized) with change 3 (args.json's rpo_alpha) -------------------------------------------


def test_an_ms_swift_orpo_run_is_not_judged_on_the_dpo_rpo_alpha_its_args_json_lists(tmp_path):
    """Changes 3 and 5. ms-swift 3.x's RLHFArguments declares `rpo_alpha: float = 1.` for every rlhf_type, and
    args.json dumps every argument, so an ORPO run's args.json says rpo_alpha 1.0 though ORPO never uses it. TRL's
    ORPO logs nll_loss and loss = nll_loss + beta x (-log sigmoid(log_odds)): `loss - rpo_alpha x nll_loss` is the
    odds-ratio term already scaled by beta 0.1 (0.069 at chance). Input: 60 steps over 3 epochs, log-odds rising 0 -> 4,
    nll 1.6 -> 1.1, no eval. The tool says warning, memorization from step 41 ("the pair term ... is under 0.01 over
    every pass"), and healthy once rpo_alpha is taken out of args.json. Wrong: the pairs are ranked by a log-odds of
    about 3, far from separated; the check reads a beta-scaled term against a DPO threshold, on a weight the run did
    not use. Right: healthy (the rule only for a DPO, rlhf_type dpo)."""
    run = tmp_path / "run"
    run.mkdir()
    rows = []
    for s in range(1, 61):
        odds, nll = 4.0 * s / 60, 1.6 - 0.5 * s / 60
        rows.append({"loss": nll + 0.1 * math.log1p(math.exp(-odds)), "nll_loss": nll,
                     "log_odds_ratio": -math.log1p(math.exp(-odds)), "log_odds_chosen": odds,
                     "rewards/chosen": -0.1 + 0.0125 * odds, "rewards/rejected": -0.1 - 0.05 * odds,
                     "rewards/accuracies": min(1.0, 0.5 + s / 60), "rewards/margins": 0.06 * odds,
                     "logps/chosen": -100 + 5 * s / 60, "logps/rejected": -110 - 20 * s / 60,
                     "grad_norm": 3.0 - s / 60, "learning_rate": 5e-6, "epoch": round(3 * s / 60, 4),
                     "global_step/max_steps": f"{s}/60"})
    (run / "logging.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "args.json").write_text(json.dumps({"rlhf_type": "orpo", "beta": 0.1, "rpo_alpha": 1.0, "cpo_alpha": 1.0,
                                               "task_type": "causal_lm", "train_type": "lora"}))
    a = _analyze(run)
    assert a.status == "healthy", [(f.kind, f.step, f.message[:160]) for f in a.findings]
