"""A hand-written GRPO loop's policy loss is not judged as a cross-entropy.

Prem01-cyber_AxiomForgeAI (tests/realworld) logs per iteration `loss` (0.0006 at iteration 1, of either sign later),
`mean_reward` and `std_reward` to logs/metrics.jsonl, and keeps its run config (group_size 10, clip_eps 0.2,
kl_coef 0.06) in logs/grpo/<run>/config.json. A GRPO loss is an advantage-weighted ratio term over group-normalised
advantages (mean about 0): near 0 and of either sign by construction. The tool read it as a cross-entropy
(memorization at step 1, impossible_loss at its negative values) and named no objective. Right: the run's own config
and its reward spread say RL, the loss is left alone, and the reward (flat) is the learning evidence.

Guards: TRL's RewardTrainer logs `mean_reward` too (the reward model's score, no RL reward), a quantization or
grouping `group_size` alone says no RL, an ms-swift DPO args.json holds the GRPO defaults beside `rlhf_type dpo`,
and an SFT log whose loss falls near 0 is still a memorization.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import forensics
from forensics.config import RunConfig
from forensics.profile.rl_config import rl_recipe

REALWORLD = Path(__file__).parent / "realworld"

# Prem01-cyber_AxiomForgeAI's logs/metrics.jsonl, iterations 1-30: (loss, mean_reward, std_reward), rounded
_PREM01 = [(0.00061034, 0.91431, 0.16361), (-3.433e-05, 0.84789, 0.21602), (0.0003659, 0.89639, 0.1707),
           (0.00094153, 0.86543, 0.21876), (8.118e-05, 0.85687, 0.23949), (-6.272e-05, 0.87925, 0.21532),
           (0.00107081, 0.83789, 0.22336), (-0.00025667, 0.87554, 0.20011), (5.952e-05, 0.90651, 0.17691),
           (0.00042526, 0.88077, 0.1755), (-0.00055664, 0.96981, 0.09832), (7.271e-05, 0.84927, 0.21286),
           (0.00026773, 0.89882, 0.18599), (0.00049617, 0.85583, 0.2085), (2.326e-05, 0.92797, 0.16719),
           (0.00032962, 0.9146, 0.17273), (-0.00013719, 0.88812, 0.195), (7.917e-05, 0.8664, 0.17801),
           (0.00015087, 0.89128, 0.17266), (0.00024373, 0.89629, 0.17784), (0.00019168, 0.84173, 0.18798),
           (0.00057873, 0.91752, 0.12424), (0.00061374, 0.9207, 0.14742), (-0.00021296, 0.87959, 0.17331),
           (0.00034415, 0.84453, 0.20866), (0.000421, 0.86665, 0.17964), (-0.00022698, 0.87793, 0.16287),
           (4.199e-05, 0.8696, 0.15915), (0.00037651, 0.86744, 0.17083), (-0.00012, 0.87001, 0.17502)]
# its copied config.json, the keys that say how it trains (the rest are data paths and self-play knobs)
_PREM01_CONFIG = {"base_model": "checkpoints/dual_task_v1", "output_dir": "checkpoints/grpo", "num_iterations": 60,
                  "group_size": 10, "questions_per_iter": 20, "learning_rate": 5e-06, "temperature": 0.8,
                  "use_prm": True, "prm_model": "Qwen/Qwen2.5-Math-PRM-7B", "max_grad_norm": 0.5, "kl_coef": 0.06,
                  "clip_eps": 0.2, "warmup_iters": 8}


def _write_loop(tmp_path: Path, keys: tuple[str, ...], config: dict | None = None) -> Path:
    """A run folder `run` (pytest's folder is named for the test, `grpo` and all) with logs/metrics.jsonl of
    Prem01's iterations, the given keys of (loss, mean_reward, std_reward), and the config at logs/run/config.json
    where given (a folder name that says nothing of the objective)."""
    run = tmp_path / "run"
    names = ("loss", "mean_reward", "std_reward")
    rows = [{"iteration": i, **{k: v for k, v in zip(names, values) if k in keys}, "batch_accuracy": 0.93}
            for i, values in enumerate(_PREM01, start=1)]
    (run / "logs").mkdir(parents=True)
    (run / "logs" / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if config is not None:
        (run / "logs" / "run").mkdir()
        (run / "logs" / "run" / "config.json").write_text(json.dumps(config, indent=2))
    return run


def _kinds(analysis) -> set[str]:
    return {f.kind for f in analysis.findings}


def test_a_hand_loops_grpo_config_makes_the_run_rl_and_its_loss_no_cross_entropy(tmp_path):
    a = forensics.analyze(_write_loop(tmp_path, ("loss", "mean_reward"), _PREM01_CONFIG))
    assert (a.run_profile.objective, a.run_profile.algorithm) == ("rl", "grpo")
    said = a.run_profile.evidence["objective"]
    assert "group_size" in said and "clip_eps" in said and "kl_coef" in said and "config.json" in said, said
    assert not _kinds(a) & {"memorization", "impossible_loss", "loss_collapse"}, [f.message for f in a.findings]


def test_a_hand_loops_reward_spread_makes_the_run_rl(tmp_path):
    # no config at all: the mean and the spread of the sampled rewards, logged beside the loss, are an RL loop's
    a = forensics.analyze(_write_loop(tmp_path, ("loss", "mean_reward", "std_reward")))
    assert a.run_profile.objective == "rl"
    assert "std_reward" in a.run_profile.evidence["objective"]
    assert not _kinds(a) & {"memorization", "impossible_loss", "loss_collapse"}, [f.message for f in a.findings]


def test_a_hand_loops_flat_mean_reward_is_no_learning_evidence_over_the_run(tmp_path):
    # Prem01's numbers: mean_reward 0.87 over the first eight iterations, 0.88 over the last eight
    a = forensics.analyze(_write_loop(tmp_path, ("loss", "mean_reward", "std_reward"), _PREM01_CONFIG))
    assert a.status == "warning"
    assert (a.first_incident.kind, a.first_incident.step) == ("no_learning_evidence", 1), a.first_incident
    assert a.first_incident.metric == "mean_reward"


def test_a_log_in_a_grpo_folder_is_rl_and_its_mean_reward_the_judged_reward(tmp_path):
    # the folder that holds the run's log names its algorithm (the profile's names); with no reward name of a
    # trainer's, the loop's mean_reward is the reward judged, not the loss
    run = tmp_path / "run"
    (run / "logs" / "grpo").mkdir(parents=True)
    rows = [{"iteration": i, "loss": loss, "mean_reward": reward} for i, (loss, reward, _) in enumerate(_PREM01, 1)]
    (run / "logs" / "grpo" / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    a = forensics.analyze(run)
    assert (a.run_profile.objective, a.run_profile.algorithm) == ("rl", "grpo")
    assert (a.first_incident.kind, a.first_incident.step, a.first_incident.metric) == ("no_learning_evidence", 1,
                                                                                         "mean_reward")


def test_a_group_size_without_clip_or_kl_is_no_rl(tmp_path):
    # a grouping `group_size` (a wandb config's own field, 1azybug_ReCMLLM's 68) with no clip or KL key: not RL
    run = _write_loop(tmp_path, ("loss", "mean_reward"), {"group_size": 68, "learning_rate": 5e-06, "max_grad_norm": 1})
    assert forensics.analyze(run).run_profile.objective != "rl"


def test_a_quantized_models_group_size_is_no_rl(tmp_path):
    config = {"model_type": "llama", "quantization_config": {"group_size": 128, "bits": 4, "kl_coef": 0.1}}
    assert forensics.analyze(_write_loop(tmp_path, ("loss",), config)).run_profile.objective != "rl"


def test_an_sft_loss_near_zero_in_a_jsonl_is_still_a_memorization(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    rows = [{"step": s, "loss": max(2.0 * 0.8 ** s, 1e-4)} for s in range(1, 81)]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    a = forensics.analyze(run)
    assert a.run_profile.objective != "rl"
    assert "memorization" in _kinds(a), [f.message for f in a.findings]


@pytest.mark.parametrize("case, objective, status, first", [
    # TRL's RewardTrainer logs mean_reward, min_reward, max_reward, margin: the reward model's score
    ("AimeeAyat_ATML-PA5", "reward", "warning", ("memorization", 3300)),
    ("taehyun-me_NLP-2025-project", "reward", "healthy", None),
    # ms-swift's args.json holds num_generations, kl_coef and cliprange beside rlhf_type dpo
    ("zhl-2022_x-algorithm-dpo", "preference", "warning", ("memorization", 4)),
    # TRL GRPO trainer_state.json runs, read as RL by their own names
    ("IMJONEZZ_UnslothGRPO", "rl", "healthy", None),
    ("alexchilton_CAS_NLP_MODULE4_GRPO-wordle", "rl", "warning", ("no_learning_evidence", 1)),
    ("1azybug_ReCMLLM", "unknown", "warning", ("no_learning_evidence", 0)),
])
def test_real_runs_with_reward_or_group_names_keep_their_judgement(case, objective, status, first):
    a = forensics.analyze(REALWORLD / case)
    assert a.run_profile.objective == objective
    assert a.status == status
    assert (None if a.first_incident is None else (a.first_incident.kind, a.first_incident.step)) == first


def test_prem01_is_rl_with_its_flat_reward_judged():
    a = forensics.analyze(REALWORLD / "Prem01-cyber_AxiomForgeAI")
    assert a.run_profile.objective == "rl"
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("warning", "no_learning_evidence", 1)
    assert not _kinds(a) & {"memorization", "impossible_loss"}


def _config(*files: dict) -> RunConfig:
    config = RunConfig()
    for i, keys in enumerate(files):
        for key, value in keys.items():
            config.add(key, value, f"file{i}.json")
    return config


@pytest.mark.parametrize("keys, algorithm", [
    ({"model.group_size": 10, "model.clip_eps": 0.2, "model.kl_coef": 0.06}, "grpo"),  # Prem01's loop
    ({"num_generations": 8, "beta": 0.04, "epsilon": 0.2}, "grpo"),  # TRL's GRPOConfig fields
    ({"actor_rollout_ref.rollout.n": 5, "actor_rollout_ref.actor.clip_ratio": 0.2}, "grpo"),  # verl's
    ({"n_samples_per_prompt": 4, "init_kl_coef": 0.01}, "grpo"),  # OpenRLHF's
    ({"cliprange": 0.2, "cliprange_value": 0.2, "vf_coef": 0.1, "init_kl_coef": 0.2}, "ppo"),  # TRL's PPOConfig
    ({"group_size": 1, "clip_eps": 0.2}, None),  # a group of one is nothing to be relative to
    ({"quant.group_size": 128, "quant.beta": 0.9}, None),  # a quantization's group, and no loop's
    ({"group_size": 8, "clip_eps": True}, None),  # a flag, no clip value
])
def test_a_config_files_policy_gradient_recipe(keys, algorithm):
    found = rl_recipe(_config(keys))
    assert (found[0] if found else None) == algorithm, found


def test_a_recipe_is_read_from_one_file():
    # a group size in one file and a KL weight in another (a data config, a DPO config) make no recipe
    assert rl_recipe(_config({"group_size": 8}, {"kl_coef": 0.1})) is None


# ms-swift prints its RLHFArguments whole, every recipe's defaults in it (num_generations 8, epsilon, vf_coef,
# cliprange, beta) whatever its rlhf_type: such a file names its stage, its RL keys say nothing (review probes p4, p11,
# session 29)
_SWIFT_DEFAULTS = {"beta": 0.1, "cliprange": 0.2, "cliprange_value": 0.2, "epsilon": 0.2, "kl_coef": 0.05,
                   "num_generations": 8, "vf_coef": 0.1}


@pytest.mark.parametrize("rlhf_type", ["cpo", "gkd", "grpo"])
def test_a_file_that_names_its_rlhf_type_holds_no_recipe_in_its_defaults(rlhf_type):
    assert rl_recipe(_config({"rlhf_type": rlhf_type, **_SWIFT_DEFAULTS})) is None


@pytest.mark.parametrize("rlhf_type, objective", [("cpo", ("preference", "cpo")), ("grpo", ("rl", "grpo"))])
def test_an_ms_swift_console_is_profiled_by_its_rlhf_type_not_by_its_ppo_defaults(tmp_path, rlhf_type, objective):
    # (the grpo run is the guard: its stage still says RL)
    args = {**_SWIFT_DEFAULTS, "cpo_alpha": 1.0, "learning_rate": 1e-05, "model": "'Qwen/Qwen2.5-1.5B-Instruct'",
            "rlhf_type": f"'{rlhf_type}'", "train_type": "'lora'"}
    lines = ["[INFO:swift] args: RLHFArguments(" + ", ".join(f"{k}={v}" for k, v in sorted(args.items())) + ")"]
    lines += [str({"loss": f"{0.69 * 0.975 ** s + 0.2:.4f}", "grad_norm": "1.2", "learning_rate": "1e-05",
                   "epoch": f"{s / 100:.2f}", "global_step/max_steps": f"{s}/100"}) for s in range(1, 101)]
    (tmp_path / "run" / "output").mkdir(parents=True)
    (tmp_path / "run" / "output" / "train.log").write_text("\n".join(lines) + "\n")
    profile = forensics.analyze(tmp_path / "run").run_profile
    assert (profile.objective, profile.algorithm) == objective, profile.evidence


def test_a_dpo_loops_mean_reward_is_no_rl_reward_to_judge(tmp_path):
    # review probe p7 (session 29): a DPO log's margins rise while a mean_reward column falls: no reward_decline, the
    # mean of a preference loop's implicit rewards is no RL reward (that needs an RL log or the sampled rewards' spread)
    rows = [{"step": s, "loss": round(0.69 * 0.9876 ** s + 0.1, 4), "rewards/chosen": round(-0.01 * s, 4),
             "rewards/rejected": round(-0.03 * s, 4), "rewards/margins": round(0.02 * s, 4),
             "mean_reward": round(-0.02 * s + 0.05 * (-1) ** s, 4)} for s in range(1, 201)]
    (tmp_path / "run" / "logs").mkdir(parents=True)
    (tmp_path / "run" / "logs" / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    a = forensics.analyze(tmp_path / "run")
    assert a.run_profile.objective == "preference"
    assert "reward_decline" not in _kinds(a), [f.message for f in a.findings]
