"""A pairwise objective word (dpo, kto) in the run folder's name against the log's own numbers (session 30,
fx-as115): a repository named for its DPO stage may hold the log of its SFT stage
(hcygit1_lab2-math-reasoning-lora-dpo's outputs/loss_log.csv, written by src/train_sft.py). DPO's loss starts at
ln 2 (the policy is its reference, every margin 0); a log of a loss alone that starts well above that, with none of a
preference trainer's metrics, is not a DPO loss, whatever the folder that holds it is called.

Each rule has a guard where the answer before it stays."""
from __future__ import annotations

import math

import forensics
from support.trainer_state_files import _analyze, _trainer_state


def _loss_csv(folder, losses, name="outputs/loss_log.csv"):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("step,loss\n" + "".join(f"{i},{v:.6f}\n" for i, v in enumerate(losses)))
    return folder


def _falling(start: float, end: float, n: int = 300) -> list[float]:
    # a noisy fall, as one example a row logs it
    return [start + (end - start) * i / (n - 1) + 0.15 * math.sin(i * 1.7) for i in range(n)]


def test_a_dpo_folder_whose_loss_log_starts_far_above_ln2_is_not_profiled_preference(tmp_path):
    folder = _loss_csv(tmp_path / "lab2-math-reasoning-lora-dpo", _falling(1.095, 0.87))
    profile = forensics.analyze(folder).run_profile
    assert profile.objective != "preference"
    assert profile.algorithm is None


def test_a_dpo_folder_whose_loss_log_starts_at_ln2_stays_preference(tmp_path):
    # a hand-written DPO loop that logs its loss alone: the first loss at ln 2 is the log's own sign
    losses = [math.log(2) - 0.4 * i / 299 + 0.02 * math.sin(i * 1.7) for i in range(300)]
    profile = forensics.analyze(_loss_csv(tmp_path / "lab2-math-reasoning-lora-dpo", losses)).run_profile
    assert (profile.objective, profile.algorithm) == ("preference", "dpo")


def test_a_log_files_own_dpo_name_stays_preference_at_the_same_loss(tmp_path):
    # the log's own name is the run's, not the project's (the rule is about the folder's name alone)
    folder = _loss_csv(tmp_path / "lab2-math", _falling(1.095, 0.87), name="outputs/dpo_loss_log.csv")
    profile = forensics.analyze(folder).run_profile
    assert (profile.objective, profile.algorithm) == ("preference", "dpo")


def test_a_dpo_trainer_state_with_rewards_keeps_preference_whatever_its_first_loss(tmp_path):
    rows = [{"step": s, "epoch": s / 100, "loss": 1.2 - 0.004 * s, "rewards/chosen": 0.01 * s,
             "rewards/rejected": -0.01 * s, "rewards/margins": 0.02 * s, "logps/chosen": -80.0 + 0.1 * s,
             "logps/rejected": -90.0 - 0.1 * s, "learning_rate": 5e-7} for s in range(10, 110, 10)]
    profile = _analyze(_trainer_state(tmp_path / "lab2-math-reasoning-lora-dpo", rows)).run_profile
    assert (profile.objective, profile.algorithm) == ("preference", "dpo")


def test_a_dpo_folder_whose_loss_log_starts_well_under_ln2_is_not_profiled_preference(tmp_path):
    # an SFT log starting at 0.40 in `qwen-math-dpo`: a DPO loss that starts at ln 2 averages its first logging
    # interval under it, but not 0.29 under (nor does KTO's, which starts near 0.5)
    folder = _loss_csv(tmp_path / "qwen-math-dpo", [0.40 - 0.2 * i / 299 + 0.02 * math.sin(i * 1.7)
                                                    for i in range(300)])
    profile = forensics.analyze(folder).run_profile
    assert profile.objective != "preference"
    assert profile.algorithm is None


def test_a_kto_folder_whose_loss_starts_at_a_half_stays_preference(tmp_path):
    # KTO's loss starts near 0.5 (1 - sigmoid(0) per answer): inside the window under ln 2
    losses = [0.5 - 0.2 * i / 299 + 0.01 * math.sin(i * 1.7) for i in range(300)]
    profile = forensics.analyze(_loss_csv(tmp_path / "qwen-math-kto", losses)).run_profile
    assert (profile.objective, profile.algorithm) == ("preference", "kto")


def test_a_dpo_folder_whose_one_batch_loss_starts_a_little_above_ln2_stays_preference(tmp_path):
    # PhuocThuan246's mT5 DPO loop logs one batch's loss, its policy in train mode with dropout: 0.7443 at step 0,
    # a little above ln 2 (the dropout's noise in the margins), not an SFT loss's start
    losses = [0.7443, 0.7853, 0.8, 0.752, 0.7804, 0.6884] + [0.77 + 0.03 * math.sin(i) for i in range(20)]
    profile = forensics.analyze(_loss_csv(tmp_path / "mt5_dpo", losses)).run_profile
    assert (profile.objective, profile.algorithm) == ("preference", "dpo")
