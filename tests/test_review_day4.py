"""Review of the day's changes 8776af3..HEAD: inputs that real runs plausibly produce and that the new rules must not
misread. A failing test is a misfire (or a hole the change opened); its docstring says which real input it stands
for, what the tool says instead, and where the fix belongs. The passing ones record shapes that held."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import forensics
from forensics.analyzers.divergence import detect_divergence
from forensics.config import RunConfig, Thresholds
from forensics.ingest.stdout import console_facts
from forensics.timeline import Timeline


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


def _kinds(a):
    return [(f.kind, f.severity, f.step) for f in a.findings]


def _per_step_state(folder, values):
    folder.mkdir(parents=True, exist_ok=True)
    n = len(values)
    hist = [{"loss": round(float(v), 4), "grad_norm": 1.0, "learning_rate": 2e-5, "epoch": (i + 1) / n, "step": i + 1}
            for i, v in enumerate(values)]
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": hist, "global_step": n, "max_steps": n}))
    return folder


def _notebook(folder, cells):
    out = []
    for i, (src, text) in enumerate(cells):
        cell = {"cell_type": "code", "execution_count": i + 1, "metadata": {}, "source": src, "outputs": []}
        if text:
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": text}]
        out.append(cell)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.ipynb").write_text(json.dumps({"cells": out, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return folder


def _model_params(name):
    from forensics.profile import run_profile

    config = RunConfig()
    config.add("model._name_or_path", name, "config.json")
    return run_profile(None, config, Timeline.empty(), []).model_params


# ---- divergence._level_at ------------------------------------------------------------------------------------------


def _sharp_v(n=2000, seed=1):
    """2.3 -> 0.5 by step 100 (a fast first descent), back up to 2.0 by step 160, and 2.0 for the 1,840 steps left."""
    rng = np.random.default_rng(seed)
    x = np.arange(n)
    level = np.where(x < 100, 2.3 - 1.8 * x / 100, np.where(x < 160, 0.5 + 1.5 * (x - 100) / 60, 2.0))
    return level + rng.normal(0, 0.03, n)


def test_a_v_shaped_blow_up_early_in_a_long_per_step_log_still_diverges(tmp_path):
    """A per-step trainer_state.json of 2,000 points whose loss falls fast to 0.5 and blows up to 4x that for the
    rest of the run (a learning rate too high once warmup ends). Before 8776af3..HEAD: broken / divergence at ~116.
    Now healthy with no finding: `_level_at` lifts the low to the median of the +-100 points around the minimum,
    which on a V are the walls of the V (about 1.4), so 2.0 is no longer 1.5x the low. Fix belongs in
    forensics/analyzers/divergence.py:_level_at (lift the low only where the loss held it: e.g. where the window's
    two halves sit at the same level, not on a fall then a rise)."""
    a = _analyze(_per_step_state(tmp_path / "run", _sharp_v()))
    assert a.status == "broken", _kinds(a)
    assert a.first_incident.kind == "divergence"


def test_a_divergence_in_the_last_80_points_of_a_2000_point_log_is_still_found():
    rng = np.random.default_rng(1)
    n = 2000
    values = 2.5 * np.exp(-np.arange(n) / 400) + 0.9 + rng.normal(0, 0.03, n)
    values[-80:] = 3.0 + rng.normal(0, 0.1, 80)
    found = detect_divergence({"loss": pd.Series(values, index=np.arange(1, n + 1))}, Thresholds())
    assert [f.kind for f in found] == ["divergence"] and found[0].step > 1900


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


# ---- profile._DECIMAL_UNDERSCORE --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, params", [("out/llama-3_70b_sft", 70_000_000_000),
                                          ("meta-llama/Llama-2_7b-hf", 7_000_000_000),
                                          ("outputs/llama-3_8b-lora", 8_000_000_000)])
def test_a_family_version_before_an_underscore_is_no_decimal_point(name, params):
    """Output folders named `llama-3_70b_sft`, `Llama-2_7b-hf`, `llama-3_8b-lora` (the family's version, then the
    size): `_DECIMAL_UNDERSCORE` reads `3_70b` as 3.70B (70B before), `2_7b` as 2.7B, `3_8b` as 3.8B. Fix belongs
    in forensics/profile.py:_DECIMAL_UNDERSCORE (a decimal only where the digit before the underscore is not a
    known family's version, `llama-`, `gemma-`, `qwen-`; or only for sizes Pythia/OPT/StableLM/Qwen-1_8B use)."""
    assert _model_params(name) == params


@pytest.mark.parametrize("name, params", [("Qwen/Qwen2_5-1_5B", 1_500_000_000), ("facebook/opt-1_3b", 1_300_000_000),
                                          ("EleutherAI/pythia-1_4b", 1_400_000_000), ("microsoft/phi-1_5", None),
                                          ("Qwen/Qwen-1_8B-Chat", 1_800_000_000)])
def test_underscore_decimal_sizes_that_hold(name, params):
    assert _model_params(name) == params


@pytest.mark.parametrize("name, params", [("outputs/qwen2_5_1_5b_lora", 1_500_000_000),
                                          ("saves/qwen2_5_0_5b_sft", 500_000_000),
                                          ("runs/Phi_1_5b_finetune", 1_500_000_000),
                                          ("out/Llama_3_1_8b", 8_000_000_000), ("out/qwen2_5_7b", 7_000_000_000)])
def test_names_with_underscores_for_every_separator_keep_a_half_size(name, params):
    """`qwen2_5_1_5b` and `Phi_1_5b` (underscores for dots and dashes alike) were read as 5B: `1_5b` after an
    underscore is 1.5B, while `3_1_8b` is still Llama 3.1 8B and `2_5_7b` Qwen2.5 7B."""
    assert _model_params(name) == params


# ---- TensorBoard: bare `Loss` tag ----------------------------------------------------------------------------------


def test_a_loss_tag_in_a_val_writers_folder_is_the_eval_loss(tmp_path):
    """The common two-writer script: `SummaryWriter(f"{logdir}/train")` and `SummaryWriter(f"{logdir}/val")`, each
    `add_scalar("Loss", ...)`: a healthy training loss each step and a validation loss every 30 steps that rises
    (overfitting). The bare `Loss` tag is now read as the loss in both folders, so the val folder's points join the
    training loss: broken / divergence at 90 (before: `Loss` was not read at all; lowercase `loss` had the same
    misreading already). Fix belongs in forensics/ingest/tensorboard.py:_add_scalars_tags (a folder named for a
    held-out split, `val`, `valid`, `validation`, `eval`, `test`, makes its loss tag the eval loss, as
    _keras_callback_names does for Keras' `validation/`)."""
    from torch.utils.tensorboard import SummaryWriter

    rng = np.random.default_rng(0)
    train = SummaryWriter(str(tmp_path / "runs" / "exp1" / "train"))
    val = SummaryWriter(str(tmp_path / "runs" / "exp1" / "val"))
    for i in range(1, 301):
        train.add_scalar("Loss", 2.5 * np.exp(-i / 60) + 0.3 + rng.normal(0, 0.02), i)
        if i % 30 == 0:
            val.add_scalar("Loss", 1.2 + 0.25 * (i / 30 - 1), i)
    train.close()
    val.close()
    a = _analyze(tmp_path)
    assert not any(f.kind == "divergence" for f in a.findings), _kinds(a)
    assert "eval_loss" in a.timeline.metrics


# ---- shapes that held ------------------------------------------------------------------------------------------------

_DS = ("[2025-04-09 14:44:09,450] [INFO] [logging.py:96:log_dist] [Rank 0] step={step}, skipped={skipped}, "
       "lr=[1e-05, 1e-05], mom=[(0.9, 0.99), (0.9, 0.99)]")


def _ds_console(skips_at_start: int, n: int = 400) -> str:
    lines = []
    for s in range(1, n + 1):
        lines.append(f"{{'loss': {2.5 * 0.995 ** s + 0.5:.4f}, 'learning_rate': 2e-05, 'epoch': {s / n:.3f}}}")
        if s % 10 == 0:
            lines.append(_DS.format(step=s, skipped=min(s, skips_at_start)))
    return "\n".join(lines) + "\n"


def test_a_bf16_deepspeed_run_whose_count_stays_zero_is_healthy(tmp_path):
    (tmp_path / "train.log").write_text(_ds_console(0))
    a = _analyze(tmp_path)
    assert a.status == "healthy", _kinds(a)


def test_a_fresh_fp16_scaler_that_skipped_its_first_60_updates_is_no_error(tmp_path):
    (tmp_path / "train.log").write_text(_ds_console(60))
    a = _analyze(tmp_path)
    assert a.status != "broken", _kinds(a)


def test_per_batch_epoch_lines_with_train_and_val_loss_stay_healthy(tmp_path):
    rng = np.random.default_rng(0)
    lines = [f"Epoch {e}, Loss: {2.5 - 0.01 * (e * 50 + b) + rng.normal(0, .05):.4f}, Val Loss: {2.6 - 0.3 * e:.4f}"
             for e in range(3) for b in range(50)]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    a = _analyze(tmp_path)
    assert a.status == "healthy", _kinds(a)


@pytest.mark.parametrize("line, params", [("Total: 1.10B params, trainable: 4.19M params (0.38%)", 1_100_000_000),
                                          ("Trainable params: 4.2M params", None),
                                          ("LoRA: 4.19M params (0.5% of 1.1B)", None)])
def test_scaled_counts_that_name_a_part_are_no_model_size(line, params):
    assert console_facts(line + "\n").get("console_params_said") == params


def test_a_notebook_importing_sfttrainer_but_calling_a_plain_trainer_names_no_trl_trainer(tmp_path):
    dicts = "".join(f"{{'loss': {2.5 - s / 20:.4f}, 'grad_norm': 1.2, 'learning_rate': 2e-05, 'epoch': {s / 30:.2f}}}\n"
                    for s in range(1, 31))
    folder = _notebook(tmp_path / "nb", [
        ("from trl import SFTTrainer\nfrom transformers import Trainer, TrainingArguments", ""),
        ("trainer = Trainer(model=model, args=TrainingArguments(output_dir='out'), train_dataset=ds)\n"
         "trainer.train()", dicts)])
    assert "SFTTrainer" not in str(_analyze(folder).run_profile.evidence)
