"""Tests of the judgement of a DPO stage: an SFT stage beside a DPO trainer, eval-only pair metrics.

From the review of the day's changes 8776af3..HEAD: inputs real runs plausibly produce that the new rules must not
misread. A failing test was a misfire; the passing ones record shapes that held."""
from __future__ import annotations

import json

from support.notebook_and_findings import _analyze, _kinds, _notebook


# ---- never_learned.detect_dpo_loss_never_under_chance ----------------------------------------------------------------


def test_the_sft_stage_of_a_notebook_that_also_builds_a_dpo_trainer_is_no_dpo_that_never_learned(tmp_path):
    """A notebook that imports SFTTrainer and DPOTrainer, runs the SFT cell (its output: forty Trainer dicts, 1.70 ->
    1.35 -> about 1.16 and flat, an SFT loss that converged) and holds a DPO cell that printed nothing (not run, or
    it ran out of memory). The profile says DPO (the DPOConfig in the code), so the new rule reads the SFT loss as a
    DPO loss never under ln 2: broken / never_learned at step 1 (before: healthy). A sigmoid DPO loss starts at ln 2
    by construction (the policy is the reference at step 0); one that starts at 1.7 is no DPO loss. Fix belongs in
    forensics/analyzers/never_learned.py:detect_dpo_loss_never_under_chance (require the first logged points near
    ln 2, e.g. within 0.1 of it)."""
    n = 40
    v = [1.15 + 0.02 * (-1) ** i + 0.01 * ((i * 7) % 3) for i in range(n)]
    v[0], v[1] = 1.7, 1.35
    dicts = "".join(f"{{'loss': {x:.4f}, 'grad_norm': 1.2, 'learning_rate': 2e-05, 'epoch': {(s + 1) / n:.2f}}}\n"
                    for s, x in enumerate(v))
    folder = _notebook(tmp_path / "nb", [
        ("from trl import SFTTrainer, DPOTrainer, DPOConfig\nfrom transformers import TrainingArguments", ""),
        ("trainer = SFTTrainer(model=model, args=TrainingArguments(output_dir='out', learning_rate=2e-5), "
         "train_dataset=ds)\ntrainer.train()", dicts),
        ("dpo_trainer = DPOTrainer(model=model, ref_model=None, args=DPOConfig(output_dir='dpo', beta=0.1), "
         "train_dataset=pairs)\ndpo_trainer.train()", "")])
    a = _analyze(folder)
    assert not any(f.kind == "never_learned" for f in a.findings), _kinds(a)
    assert a.status == "healthy", _kinds(a)


# ---- metrics._PREFERENCE_PREFIXES (eval_rewards/) -------------------------------------------------------------------


def test_a_dpo_loss_that_blows_up_beside_eval_only_pair_metrics_is_still_broken(tmp_path):
    """A DPO trainer_state whose training rows hold the loss alone and whose evaluations hold eval_rewards/*: the loss
    falls 0.69 -> 0.29, then jumps to 2.5 (far over ln 2: the policy now prefers the rejected answers) for the 25
    logged points left, eval_rewards/margins -3. Before 8776af3..HEAD: broken / divergence at 160. Now only
    `overfitting` (warning): the eval_rewards/ prefix makes it a preference log, which skips divergence and loss
    spikes, and no preference detector takes a loss that rose far over ln 2 and stayed. Fix belongs in
    forensics/analyzers/divergence.py:detect_divergence (on a preference log, a loss that left a low under ln 2 for
    well over ln 2 and stayed is still a divergence), or a preference-aware check beside it."""
    n = 40
    train = [round(0.69 - 0.4 * k / 15, 4) for k in range(15)] + [round(2.5 + 0.05 * (k % 3), 4) for k in range(25)]
    marg = [0.1 * k for k in range(15)] + [-3.0] * 25
    hist = []
    for k, (loss, m) in enumerate(zip(train, marg), 1):
        hist.append({"loss": loss, "grad_norm": 3.0, "learning_rate": 5e-7, "epoch": k / n, "step": 10 * k})
        if k % 2 == 0:
            hist.append({"eval_loss": loss + 0.02, "eval_rewards/accuracies": 0.5 + min(m, 4) / 10,
                         "eval_rewards/margins": m, "eval_rewards/chosen": m / 2, "eval_rewards/rejected": -m / 2,
                         "epoch": k / n, "step": 10 * k})
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 400, "max_steps": 400,
                                                             "log_history": hist}))
    a = _analyze(tmp_path)
    assert a.status == "broken", _kinds(a)
