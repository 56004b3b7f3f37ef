"""Tests of the run profile's start (profile/): a config's `_name_or_path` over random weights.

Session 12: a config.json's `_name_or_path` is no proof of trained weights. A model built from a named
configuration (`AutoConfig.from_pretrained("gpt2")` then `GPT2LMHeadModel(config)`, run_clm's --config_name) saves
the same name over random weights; its first loss at about ln(vocabulary) says it trains from scratch. Only a start
well over the guess makes the name count as the trained base it was loaded from."""
import json
import math
import shutil
from pathlib import Path

import forensics


# a real config.json of a GPT-2 built from the named "gpt2" configuration (vocab 50257)


CONFIG = Path(__file__).parent / "realworld" / "Variant03_AI-Design24-Mid" / "config.json"


def _run(folder: Path, first_scale: float, warmup: int = 0) -> Path:
    folder.mkdir()
    shutil.copy(CONFIG, folder / "config.json")
    guess, total, peak = math.log(50257), 3000, 5e-4
    history = []
    for step in [1] + list(range(10, total + 1, 10)):
        lr = peak * step / warmup if step < warmup else peak * (total - step) / total
        loss = 4.0 + (first_scale * guess - 4.0) * math.exp(-step / 150)
        history.append({"step": step, "epoch": round(step / 1000, 3), "loss": round(loss, 4), "learning_rate": lr,
                        "grad_norm": 2.0})
    state = {"global_step": total, "max_steps": total, "num_train_epochs": 3, "logging_steps": 10,
             "log_history": history}
    (folder / "trainer_state.json").write_text(json.dumps(state))
    return folder


def test_the_config_names_gpt2_but_a_first_loss_at_the_guess_is_pretraining(tmp_path):
    assert json.loads(CONFIG.read_text())["_name_or_path"] == "gpt2"
    a = forensics.analyze(_run(tmp_path / "scratch", 1.02))
    assert a.status == "healthy", [(f.kind, f.step) for f in a.findings]
    assert a.run_profile.objective == "pretrain"


def test_a_start_well_over_the_guess_makes_the_named_config_a_trained_base(tmp_path):
    a = forensics.analyze(_run(tmp_path / "loaded", 1.25))
    assert a.first_incident is not None and a.first_incident.kind == "start_above_uniform_guess"
    assert a.run_profile.objective != "pretrain"


def test_an_eval_that_keeps_pace_with_the_training_loss_is_said_to_be_undecided():
    """An eval loss at the training loss's level over many passes is the training set scored again, or a held-out set
    the model fits as well: the memorization it leaves standing says the log cannot tell which (no "most likely")."""
    a = forensics.analyze(Path(__file__).parent / "realworld" / "quangbmk66dsai02_finetune_llama")
    message = a.first_incident.message
    assert a.first_incident.kind == "memorization" and "keeps pace with the training loss" in message
    assert "the log cannot tell which" in message and "most likely" not in message
