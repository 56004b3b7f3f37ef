"""The run profile of a model trained from random weights, told by what the run's own files say of the model rather
than by where its loss starts (a first loss logged after hundreds of steps is far under ln(vocabulary)):
* a saved model config of a GPT-2 / BERT language model with a vocabulary no released checkpoint has and no trained
  model named; a hand-written script's W&B config giving the model's sizes and no weights to start from;
each with a run of the same shape where the sign must not fire (a fine-tune of the released GPT-2).

Every run is written under a folder named `run`: the test's own folder name would otherwise be read as the run's name.
"""
from __future__ import annotations

import json
import math

import pytest

import forensics

transformers = pytest.importorskip("transformers")


def _trainer_state(folder, first_loss: float, last_loss: float, points: int = 40, every: int = 500) -> None:
    """trainer_state.json as the Trainer writes it: a loss every `every` steps falling from `first_loss` to
    `last_loss` along a decaying curve with a little per-point noise."""
    history = []
    for i in range(points):
        share = math.exp(-4 * i / points)
        loss = last_loss + (first_loss - last_loss) * share + 0.01 * ((-1) ** i)
        history.append({"epoch": (i + 1) / 10, "learning_rate": 5e-5 * (1 - i / points), "loss": round(loss, 4),
                        "step": (i + 1) * every})
    state = {"best_metric": None, "epoch": points / 10, "global_step": points * every, "log_history": history,
             "logging_steps": every, "max_steps": points * every}
    (folder / "trainer_state.json").write_text(json.dumps(state, indent=2))


def _saved_model(folder, config, name: str | None = None) -> None:
    """config.json as `save_pretrained` writes it; `name` adds the `_name_or_path` a transformers 4.x
    `from_pretrained` model kept in it (transformers 5 no longer writes it)."""
    config.save_pretrained(folder)
    if name is not None:
        saved = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({"_name_or_path": name, **saved}, indent=2, sort_keys=True))


def test_a_gpt2_saved_with_its_own_226_token_vocabulary_is_profiled_as_trained_from_random_weights(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    _saved_model(run, transformers.GPT2Config(vocab_size=226, n_layer=6, n_embd=512, n_head=8, pad_token_id=3,
                                              architectures=["GPT2LMHeadModel"]))
    _trainer_state(run, first_loss=1.12, last_loss=0.55)
    profile = forensics.analyze(run).run_profile
    assert (profile.method, profile.objective) == ("full", "pretrain")
    assert "226-token vocabulary" in profile.evidence["objective"]


def test_a_bert_masked_lm_with_its_own_97_token_vocabulary_is_profiled_as_masked_lm_pretraining(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    _saved_model(run, transformers.BertConfig(vocab_size=97, num_hidden_layers=4, hidden_size=256,
                                              num_attention_heads=4, architectures=["BertForMaskedLM"]))
    _trainer_state(run, first_loss=0.113, last_loss=0.09)
    profile = forensics.analyze(run).run_profile
    assert (profile.method, profile.objective) == ("full", "pretrain")


def test_a_fine_tune_of_the_released_gpt2_is_not_profiled_as_trained_from_random_weights(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    _saved_model(run, transformers.GPT2Config(architectures=["GPT2LMHeadModel"]), name="gpt2")
    _trainer_state(run, first_loss=3.3, last_loss=2.6)
    assert forensics.analyze(run).run_profile.objective != "pretrain"


def test_a_released_gpt2_saved_by_transformers_5_without_its_name_is_not_profiled_as_trained_from_random_weights(
        tmp_path):
    """transformers 5 drops `_name_or_path` from the saved config: the released 50,257-token vocabulary is what
    says the weights may be GPT-2's own."""
    run = tmp_path / "run"
    run.mkdir()
    _saved_model(run, transformers.GPT2Config(architectures=["GPT2LMHeadModel"]))
    _trainer_state(run, first_loss=3.3, last_loss=2.6)
    assert forensics.analyze(run).run_profile.objective != "pretrain"


def test_a_small_vocabulary_model_loaded_by_name_is_not_profiled_as_trained_from_random_weights(tmp_path):
    """Someone's own music GPT-2, loaded from the hub by its name to be trained further: weights trained elsewhere."""
    run = tmp_path / "run"
    run.mkdir()
    _saved_model(run, transformers.GPT2Config(vocab_size=226, n_layer=6, n_embd=512, n_head=8,
                                              architectures=["GPT2LMHeadModel"]), name="someone/abc-tunes-gpt2")
    _trainer_state(run, first_loss=1.12, last_loss=0.55)
    assert forensics.analyze(run).run_profile.objective != "pretrain"


def _wandb_run(tmp_path, config: dict, first_loss: float):
    """A W&B run's files/ as a hand-written script leaves them: `wandb.init(config=vars(args))` (config.yaml with
    desc/value pairs), its tqdm lines in output.log (an epoch's mean loss, from `first_loss` down towards 1), and
    wandb-summary.json."""
    files = tmp_path / "run" / "wandb" / "run-20241114_020912-n4p38unz" / "files"
    files.mkdir(parents=True)
    (files / "config.yaml").write_text("wandb_version: 1\n\n" + "".join(
        f"{key}:\n  desc: null\n  value: {json.dumps(value)}\n" for key, value in config.items()))
    losses = [1.0 + (first_loss - 1.0) * 0.97 ** e for e in range(60)]
    (files / "output.log").write_text("\n" + "".join(
        f"Epoch: [{e}/2500] Loss: {loss:.4f} Acc: 0.00%: 100%|{'█' * 40}| 24/24 [00:05<00:00,  4.61it/s]\n"
        for e, loss in enumerate(losses)))
    (files / "wandb-summary.json").write_text(json.dumps({"train/loss": round(losses[-1], 4), "_step": 59}))
    return tmp_path / "run"


_SCRIPT_ARGS = {"model": "gpt", "dataset": "reverse", "batch_size": 128, "lr": 1e-05, "epochs": 2500,
                "resume": False, "n_layer": 36, "n_head": 20, "n_embd": 1280, "block_size": 17, "vocab_size": 40032}


def test_a_scripts_wandb_config_with_the_models_sizes_and_no_weights_is_profiled_as_trained_from_random_weights(
        tmp_path):
    profile = forensics.analyze(_wandb_run(tmp_path, _SCRIPT_ARGS, first_loss=8.72)).run_profile
    assert (profile.method, profile.objective) == ("full", "pretrain")
    assert "n_layer=36" in profile.evidence["objective"]


@pytest.mark.parametrize("weights", [{"model": "gpt2-medium"}, {"resume": True}, {"init_from": "gpt2-xl"}])
def test_a_scripts_wandb_config_that_names_weights_to_start_from_is_not_profiled_as_trained_from_random_weights(
        tmp_path, weights):
    """(trained weights start where a fine-tune does, well under ln(vocabulary))"""
    profile = forensics.analyze(_wandb_run(tmp_path, {**_SCRIPT_ARGS, **weights}, first_loss=3.0)).run_profile
    assert profile.objective != "pretrain"
